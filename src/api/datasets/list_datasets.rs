//! `list_datasets`: every dataset, newest first.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::dataset::DatasetSummary;

/// Every dataset, newest first.
#[server(prefix = "/api", endpoint = "datasets/list")]
pub async fn list_datasets() -> Result<Vec<DatasetSummary>, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        current_account().await?;
        context()?.services.list_datasets().await.map_err(internal)
    })
    .await
}
