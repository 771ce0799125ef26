//! `POST /api/datasets/upload` (authors): a multipart form with `classification` then `file`.
//! The file is streamed into the object store while it is hashed (never held whole in memory),
//! refused past the upload limit (413, nothing kept), then read; a file the readers refuse
//! leaves no dataset and no object behind. The same bytes twice are one dataset.
//!
//! The browser's upload (with its progress bar) and a plain HTML form (without wasm) both post
//! here: the first gets JSON (an `UploadOutcome`, or an `AppError` with its status), the second
//! a redirect to the dataset's page, or back to the upload form with the message.

use axum::{
    body::Bytes,
    extract::{multipart::MultipartRejection, Multipart, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
    Json,
};
use tower_sessions::Session;

use crate::api::{
    boundary::{internal, signed_in, ApiContext},
    error::AppError,
};
use adamviz_model::{account::Role, dataset::UploadOutcome};
use adamviz_services::upload::UploadError;

/// A limit in words: "1 GiB", "512 MiB", else bytes.
pub fn limit_text(limit: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if limit > 0 && limit.is_multiple_of(GIB) {
        format!("{} GiB", limit / GIB)
    } else if limit > 0 && limit.is_multiple_of(MIB) {
        format!("{} MiB", limit / MIB)
    } else {
        format!("{limit} bytes")
    }
}

/// What a query value keeps as it is: RFC 3986's unreserved characters.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A message as a query value.
fn percent_encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, QUERY_VALUE).to_string()
}

fn refuse(error: AppError, html: bool) -> Response {
    if html {
        let to = match &error {
            AppError::NotLoggedIn => "/login?next=/datasets".to_owned(),
            AppError::Invalid { message, .. } => {
                format!("/datasets?upload_error={}", percent_encode(message))
            }
            other => format!(
                "/datasets?upload_error={}",
                percent_encode(&other.to_string())
            ),
        };
        return Redirect::to(&to).into_response();
    }
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(error)).into_response()
}

/// The handler.
pub async fn upload_dataset(
    State(context): State<ApiContext>,
    session: Session,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    let html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    match upload(&context, &session, multipart).await {
        Ok(outcome) if html => {
            Redirect::to(&format!("/datasets/{}", outcome.dataset.content_hash)).into_response()
        }
        Ok(outcome) => Json(outcome).into_response(),
        Err(error) => refuse(error, html),
    }
}

async fn upload(
    context: &ApiContext,
    session: &Session,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<UploadOutcome, AppError> {
    let account = signed_in(session, context).await?;
    if !account.has(Role::Author) {
        return Err(AppError::Forbidden {
            needed: "author".to_owned(),
        });
    }
    let mut multipart = multipart.map_err(|e| AppError::invalid("file", e.body_text()))?;
    let mut classification: Option<String> = None;
    while let Some(mut field) = multipart
        .next_field()
        .await
        .map_err(|e| AppError::invalid("file", e.body_text()))?
    {
        match field.name() {
            Some("classification") => {
                // A word: read at most 64 bytes of it (the route has no body limit).
                let mut value = Vec::new();
                while let Some(chunk) = field
                    .chunk()
                    .await
                    .map_err(|e| AppError::invalid("classification", e.body_text()))?
                {
                    value.extend_from_slice(&chunk);
                    if value.len() > 64 {
                        return Err(AppError::invalid(
                            "classification",
                            "expected synthetic or deidentified",
                        ));
                    }
                }
                classification = Some(String::from_utf8_lossy(&value).into_owned());
            }
            Some("file") => {
                let Some(classification) = classification.take().filter(|c| !c.is_empty()) else {
                    return Err(AppError::invalid(
                        "classification",
                        "choose the data's classification (synthetic or de-identified) before the file",
                    ));
                };
                let file_name = field.file_name().unwrap_or("upload").to_owned();
                // The chunks go through a channel to the blocking store, which reads them as
                // a plain `Read` (the field borrows the request, so it cannot go itself).
                let (sender, chunks) =
                    tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
                let chunks = futures::stream::unfold(chunks, |mut chunks| async move {
                    chunks.recv().await.map(|chunk| (chunk, chunks))
                });
                let reader = tokio_util::io::SyncIoBridge::new(tokio_util::io::StreamReader::new(
                    Box::pin(chunks),
                ));
                let services = context.services.clone();
                let stored = tokio::spawn(async move {
                    services
                        .upload(reader, classification, file_name.clone(), account)
                        .await
                        .map_err(|error| refusal(error, &file_name))
                });
                loop {
                    let chunk = match field.chunk().await {
                        Ok(Some(chunk)) => Ok(chunk),
                        Ok(None) => break,
                        Err(error) => Err(std::io::Error::other(error.body_text())),
                    };
                    let failed = chunk.is_err();
                    // The store stopped reading (refused): the rest is not needed.
                    if sender.send(chunk).await.is_err() || failed {
                        break;
                    }
                }
                drop(sender);
                return stored.await.map_err(internal)?;
            }
            _ => {}
        }
    }
    Err(AppError::invalid("file", "choose a file to upload"))
}

/// What the uploader is told of a refused upload.
fn refusal(error: UploadError, file_name: &str) -> AppError {
    if let Some(limit) = error.limit_exceeded() {
        return AppError::TooLarge(format!(
            "the file is larger than the upload limit of {} ({limit} bytes); nothing was stored",
            limit_text(limit)
        ));
    }
    match error {
        UploadError::Classification(error) => {
            AppError::invalid("classification", error.to_string())
        }
        UploadError::Unreadable { source, .. } => AppError::invalid(
            "file",
            format!("{file_name}: {source}; no dataset was added"),
        ),
        other => internal(other),
    }
}
