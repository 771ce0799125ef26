//! Datasets: the list, one dataset with its profile, and the synthetic demo dataset in one
//! click. Uploading a file is a streamed route of its own (`upload.rs`): a server function
//! would hold the body whole.

#[cfg(feature = "ssr")]
pub mod upload;

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::dataset::{DatasetDetail, DatasetSummary, UploadOutcome};

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

/// The dataset `content_hash` as listed and as read (table and profile, from the cache when
/// it was read before); 404 when no dataset has that hash.
#[cfg(feature = "ssr")]
pub(crate) async fn loaded_dataset(
    api: &crate::api::boundary::ApiContext,
    content_hash: &str,
) -> Result<
    (
        DatasetSummary,
        std::sync::Arc<adamviz_services::datasets::LoadedDataset>,
    ),
    AppError,
> {
    use crate::api::boundary::internal;
    use adamviz_model::digest::Sha256Digest;
    let not_found = || AppError::NotFound(format!("dataset {content_hash}"));
    let digest = Sha256Digest::try_from(content_hash.to_owned()).map_err(|_| not_found())?;
    let summary = api
        .services
        .dataset(content_hash.to_owned())
        .await
        .map_err(internal)?
        .ok_or_else(not_found)?;
    let loaded = api.services.load_dataset(digest).await.map_err(internal)?;
    Ok((summary, loaded))
}

/// Adds the synthetic demo dataset (an ADLB-like XPORT file generated from a fixed seed, the
/// same bytes as `public/demo/adlb-synthetic.xpt`) and opens its page.
#[server(prefix = "/api", endpoint = "datasets/demo")]
pub async fn add_demo_dataset() -> Result<UploadOutcome, AppError> {
    use crate::api::boundary::*;
    use adamviz_model::account::Role;
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let outcome = context()?
            .services
            .add_demo_dataset(account)
            .await
            .map_err(internal)?;
        leptos_axum::redirect(&format!("/datasets/{}", outcome.dataset.content_hash));
        Ok(outcome)
    })
    .await
}
