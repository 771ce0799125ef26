//! The signed-in home page's work list: what waits for the viewer (their drafts, the runs in
//! progress, the revisions waiting for their signature, sent back to them, recently approved,
//! made on data that has a newer cut), each section with its count.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::work_list::WorkList;

/// The logged-in account's work list.
#[server(prefix = "/api", endpoint = "work/list")]
pub async fn my_work_list() -> Result<WorkList, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let account = current_account().await?;
        context()?
            .services
            .work_list(account)
            .await
            .map_err(internal)
    })
    .await
}
