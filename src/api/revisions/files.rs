//! `GET /api/revisions/{id}/files/{name}` (logged in): one artifact of a revision — `script.R`
//! and `snapshot.csv` from its creation, `plot.png`, `statistics.json`, `environment.json` and
//! the report-ready `plot.pdf`, `plot.svg` (always as an attachment) and `statistics.csv` once
//! Verified — read from the object store re-hashed (corrupt bytes are an error, never
//! served), with its media type. Artifacts hold subject-level data (`snapshot.csv` is the
//! analysis records): the browser must not keep them, so every one is served
//! `Cache-Control: no-store`; the `ETag` is still its hash, so a client that does keep a copy
//! can ask whether it changed. `?download` asks for an attachment. The database is used only to
//! find the artifact: reading and re-hashing its bytes, like exporting a bundle, holds no
//! connection.

use axum::{
    extract::{Path, Query, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use tower_sessions::Session;

use crate::api::boundary::{signed_in, ApiContext};
use adamviz_model::ids::RevisionId;

/// The media type of an artifact by its name.
pub fn media_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("png") => "image/png",
        Some("pdf") => "application/pdf",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        Some("csv") => "text/csv; charset=utf-8",
        Some("R") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The handler.
pub async fn revision_file(
    State(context): State<ApiContext>,
    session: Session,
    Path((id, name)): Path<(String, String)>,
    Query(query): Query<std::collections::HashMap<String, String>>,
    request_headers: HeaderMap,
) -> Response {
    if let Err(error) = signed_in(&session, &context).await {
        return (StatusCode::UNAUTHORIZED, error.to_string()).into_response();
    }
    let not_found = || {
        (
            StatusCode::NOT_FOUND,
            format!("revision {id} has no artifact {name:?}"),
        )
            .into_response()
    };
    let Ok(revision) = RevisionId::parse(&id) else {
        return not_found();
    };
    let (artifact, bytes) = match context.services.artifact(&revision, &name).await {
        Ok(Some(found)) => found,
        Ok(None) => return not_found(),
        Err(error) => {
            tracing::error!(%error, revision = %id, name, "cannot serve an artifact");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the artifact cannot be read back intact; the server log says why",
            )
                .into_response();
        }
    };
    let etag = format!("\"{}\"", artifact.sha256);
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(media_type(&name)),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    // An SVG is a document that could carry script: it is never rendered from this origin.
    if query.contains_key("download") || name.ends_with(".svg") {
        if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            headers.insert(header::CONTENT_DISPOSITION, value);
        }
    }
    let unchanged = request_headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|given| given == etag);
    if unchanged {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    (StatusCode::OK, headers, bytes).into_response()
}

/// An evidence bundle as a download: `evidence-ID.zip`, a zip, never cached (a revision's or a
/// figure set's).
pub fn evidence_download(bytes: Vec<u8>, id: &str) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"evidence-{id}.zip\""))
    {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    (StatusCode::OK, headers, bytes).into_response()
}

/// `GET /api/revisions/{id}/evidence` (logged in): the revision's evidence bundle, a zip signed
/// with the installation's key (409 before the revision is Verified).
pub async fn revision_evidence(
    State(context): State<ApiContext>,
    session: Session,
    Path(id): Path<String>,
) -> Response {
    use adamviz_services::bundle::ExportError;
    if let Err(error) = signed_in(&session, &context).await {
        return (StatusCode::UNAUTHORIZED, error.to_string()).into_response();
    }
    let Ok(revision) = RevisionId::parse(&id) else {
        return (StatusCode::NOT_FOUND, format!("there is no revision {id}")).into_response();
    };
    let exported = context.services.evidence_bundle(&revision).await;
    match exported {
        Ok(bytes) => evidence_download(bytes, &id),
        Err(ExportError::NoRevision(_)) => {
            (StatusCode::NOT_FOUND, format!("there is no revision {id}")).into_response()
        }
        Err(error @ ExportError::NotVerified(_)) => {
            (StatusCode::CONFLICT, error.to_string()).into_response()
        }
        Err(error @ ExportError::NoKey) => {
            (StatusCode::SERVICE_UNAVAILABLE, error.to_string()).into_response()
        }
        Err(error) => {
            tracing::error!(%error, revision = %id, "cannot export an evidence bundle");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the evidence bundle cannot be exported; the server log says why",
            )
                .into_response()
        }
    }
}
