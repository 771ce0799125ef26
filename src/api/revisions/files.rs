//! `GET /api/revisions/{id}/files/{name}` (logged in): one artifact of a revision — `script.R`
//! and `snapshot.csv` from its creation, `plot.png`, `statistics.json` and `environment.json`
//! once Verified — read from the object store re-hashed (corrupt bytes are an error, never
//! served), with its media type. A revision's artifacts never change, so the response may be
//! cached for good, keyed by its hash (the `ETag`). `?download` asks for an attachment.

use axum::{
    extract::{Path, Query, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use tower_sessions::Session;

use crate::{
    api::boundary::{signed_in, ApiContext},
    domain::ids::RevisionId,
    service::revisions::artifact_bytes,
};

/// The media type of an artifact by its name.
pub fn media_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("png") => "image/png",
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
    let (artifact, bytes) =
        match artifact_bytes(&context.database, &context.objects, &revision, &name).await {
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
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=31536000, immutable"),
    );
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    if query.contains_key("download") {
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

/// `GET /api/revisions/{id}/evidence` (logged in): the revision's evidence bundle, a zip signed
/// with the installation's key (409 before the revision is Verified).
pub async fn revision_evidence(
    State(context): State<ApiContext>,
    session: Session,
    Path(id): Path<String>,
) -> Response {
    use crate::service::bundle::{export_bundle, ExportError};
    if let Err(error) = signed_in(&session, &context).await {
        return (StatusCode::UNAUTHORIZED, error.to_string()).into_response();
    }
    let Ok(revision) = RevisionId::parse(&id) else {
        return (StatusCode::NOT_FOUND, format!("there is no revision {id}")).into_response();
    };
    let exists = {
        let id = revision.clone();
        context
            .database
            .call(move |c| {
                crate::store::repository::get_revision(c, &id).map_err(anyhow::Error::from)
            })
            .await
    };
    if !matches!(exists, Ok(Some(_))) {
        return (StatusCode::NOT_FOUND, format!("there is no revision {id}")).into_response();
    }
    let Some(key) = context.key.clone() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "this server has no signing key: evidence bundles cannot be signed",
        )
            .into_response();
    };
    let (database, objects) = (context.database.clone(), context.objects.clone());
    let exported = database
        .call(move |connection| {
            Ok::<_, crate::store::db::DatabaseError>(export_bundle(
                connection, &objects, &key, &revision,
            ))
        })
        .await;
    match exported {
        Ok(Ok(bytes)) => {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/zip"),
            );
            if let Ok(value) =
                HeaderValue::from_str(&format!("attachment; filename=\"evidence-{id}.zip\""))
            {
                headers.insert(header::CONTENT_DISPOSITION, value);
            }
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            (StatusCode::OK, headers, bytes).into_response()
        }
        Ok(Err(ExportError::NoRevision(_))) => {
            (StatusCode::NOT_FOUND, format!("there is no revision {id}")).into_response()
        }
        Ok(Err(error @ ExportError::NotVerified(_))) => {
            (StatusCode::CONFLICT, error.to_string()).into_response()
        }
        Ok(Err(error)) => {
            tracing::error!(%error, revision = %id, "cannot export an evidence bundle");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the evidence bundle cannot be exported; the server log says why",
            )
                .into_response()
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
