//! Datasets: the list, one dataset with its profile, and the synthetic demo dataset in one
//! click. Uploading a file is a streamed route of its own (`upload.rs`): a server function
//! would hold the body whole.

mod add_demo_dataset;
mod get_dataset;
mod list_datasets;

pub use add_demo_dataset::{add_demo_dataset, AddDemoDataset};
pub use get_dataset::{get_dataset, GetDataset};
pub use list_datasets::{list_datasets, ListDatasets};

#[cfg(feature = "ssr")]
pub mod upload;

#[cfg(feature = "ssr")]
use crate::api::error::AppError;
#[cfg(feature = "ssr")]
use adamviz_model::dataset::DatasetSummary;

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
