//! `get_dataset`: one dataset with its profile (read from the stored bytes once, then cached).

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::loaded_dataset;
use crate::api::error::AppError;
use adamviz_model::dataset::DatasetDetail;

/// One dataset with its profile (read from the stored bytes once, then cached).
#[server(prefix = "/api", endpoint = "datasets/detail")]
pub async fn get_dataset(content_hash: String) -> Result<DatasetDetail, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        current_account().await?;
        let (summary, loaded) = loaded_dataset(&context()?, &content_hash).await?;
        Ok(DatasetDetail {
            summary,
            profile: loaded.profile.clone(),
        })
    })
    .await
}
