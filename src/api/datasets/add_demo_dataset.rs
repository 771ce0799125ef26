//! `add_demo_dataset`: adds the synthetic demo dataset (an ADLB-like XPORT file generated from a
//! fixed seed, the same bytes as `public/demo/adlb-synthetic.xpt`) and opens its page.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::dataset::UploadOutcome;

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
