//! Datasets: the list, one dataset with its profile, and the synthetic demo dataset in one
//! click. Uploading a file is a streamed route of its own (`upload.rs`): a server function
//! would hold the body whole.

#[cfg(feature = "ssr")]
pub mod upload;

use leptos::prelude::*;

use crate::{
    api::error::AppError,
    domain::dataset::{DatasetDetail, DatasetSummary, UploadOutcome},
};

/// Every dataset, newest first.
#[server(prefix = "/api", endpoint = "datasets/list")]
pub async fn list_datasets() -> Result<Vec<DatasetSummary>, AppError> {
    use crate::{api::boundary::*, service::datasets};
    boundary(async move {
        current_account().await?;
        let context = context()?;
        with_database(&context, |connection| {
            datasets::list_datasets(connection).map_err(internal)
        })
        .await
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
        std::sync::Arc<crate::service::datasets::LoadedDataset>,
    ),
    AppError,
> {
    use crate::{
        api::boundary::{internal, with_database},
        domain::digest::Sha256Digest,
        service::datasets,
    };
    let not_found = || AppError::NotFound(format!("dataset {content_hash}"));
    let digest = Sha256Digest::try_from(content_hash.to_owned()).map_err(|_| not_found())?;
    let key = content_hash.to_owned();
    let summary = with_database(api, move |connection| {
        datasets::dataset(connection, &key).map_err(internal)
    })
    .await?
    .ok_or_else(not_found)?;
    let (cache, objects) = (api.datasets.clone(), api.objects.clone());
    let loaded = tokio::task::spawn_blocking(move || cache.load(&objects, &digest))
        .await
        .map_err(internal)?
        .map_err(internal)?;
    Ok((summary, loaded))
}

/// Adds the synthetic demo dataset (an ADLB-like XPORT file generated from a fixed seed, the
/// same bytes as `public/demo/adlb-synthetic.xpt`) and opens its page.
#[server(prefix = "/api", endpoint = "datasets/demo")]
pub async fn add_demo_dataset() -> Result<UploadOutcome, AppError> {
    use crate::{
        api::boundary::*,
        domain::account::Role,
        ingest::{demo::generate_demo_table, xpt_writer::write_xpt},
        server::cli::demo::DEMO_SUBJECTS_PER_ARM,
        service::{accounts, datasets, upload::receive_upload},
    };
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let (objects, limit) = (context.objects.clone(), context.upload_limit);
        let received = tokio::task::spawn_blocking(move || {
            let bytes = write_xpt(&generate_demo_table(DEMO_SUBJECTS_PER_ARM));
            receive_upload(&objects, std::io::Cursor::new(bytes), "synthetic", limit)
        })
        .await
        .map_err(internal)?
        .map_err(internal)?;
        let outcome = with_database(&context, move |connection| {
            datasets::record_upload(
                connection,
                &received,
                "adlb-synthetic.xpt",
                &account,
                accounts::now(),
            )
            .map_err(internal)
        })
        .await?;
        leptos_axum::redirect(&format!("/datasets/{}", outcome.dataset.content_hash));
        Ok(outcome)
    })
    .await
}
