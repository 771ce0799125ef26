//! `run_set`: queues every figure of the set that is Draft and not running (authors); how many.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::set_id;
use crate::api::error::AppError;

/// Queues every figure of the set that is Draft and not running (authors); how many.
#[server(prefix = "/api", endpoint = "sets/run")]
pub async fn run_set(set_id: String, idempotency_key: String) -> Result<usize, AppError> {
    use crate::api::boundary::*;
    use adamviz_evidence::actor::Actor;
    use adamviz_model::account::Role;
    use adamviz_services::runs::StartRunError;
    boundary(async move {
        let account = require(&[Role::Author]).await?;
        let context = context()?;
        let id = self::set_id(&set_id)?;
        let set = context
            .services
            .stored_set(&id)
            .await
            .map_err(internal)?
            .ok_or_else(|| AppError::NotFound(format!("figure set {set_id}")))?;
        let queued = context
            .services
            .run_set(&set, &idempotency_key, &Actor::web(&account))
            .await
            .map_err(|error| match error {
                StartRunError::BadKey => AppError::invalid("idempotency_key", error.to_string()),
                other => internal(other),
            })?;
        if accepts_html() {
            leptos_axum::redirect(&format!("/sets/{set_id}"));
        }
        Ok(queued)
    })
    .await
}
