//! `GET /api/sets/{id}/evidence` (logged in): the figure set's evidence bundle, a zip of each
//! Verified or Approved figure's own bundle and the set manifest, signed with the installation's
//! key (`adamviz_services::set_bundle`).

use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use tower_sessions::Session;

use crate::api::{
    boundary::{signed_in, ApiContext},
    revisions::files::evidence_download,
};
use adamviz_model::ids::FigureSetId;
use adamviz_services::bundle::ExportError;

/// The set's evidence bundle as a download (404 for no such set, 503 without a signing key).
pub async fn set_evidence(
    State(context): State<ApiContext>,
    session: Session,
    Path(id): Path<String>,
) -> Response {
    if let Err(error) = signed_in(&session, &context).await {
        return (StatusCode::UNAUTHORIZED, error.to_string()).into_response();
    }
    let not_found = || {
        (
            StatusCode::NOT_FOUND,
            format!("there is no figure set {id}"),
        )
            .into_response()
    };
    let Ok(set_id) = FigureSetId::parse(&id) else {
        return not_found();
    };
    let set = match context.services.stored_set(&set_id).await {
        Ok(Some(set)) => set,
        Ok(None) => return not_found(),
        Err(error) => {
            tracing::error!(%error, set = %id, "cannot read a figure set");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the figure set cannot be read",
            )
                .into_response();
        }
    };
    match context.services.set_evidence_bundle(&set).await {
        Ok(bytes) => evidence_download(bytes, &id),
        Err(error @ ExportError::NoKey) => {
            (StatusCode::SERVICE_UNAVAILABLE, error.to_string()).into_response()
        }
        Err(error) => {
            tracing::error!(%error, set = %id, "cannot export a figure set's evidence bundle");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the set's evidence bundle cannot be exported; the server log says why",
            )
                .into_response()
        }
    }
}
