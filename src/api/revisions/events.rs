//! `GET /api/revisions/{id}/events` (logged in): the run status as server-sent events, one
//! `status` event (a `RunStatus` as JSON) whenever it changes, ending
//! once the status can no longer change by itself (Verified, failed, not run), or once the
//! session that opened it has ended (logout, the idle or absolute limit, a disabled account):
//! the session is checked again at every look.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::{Path, State},
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
};
use tower_sessions::Session;

use crate::api::{
    boundary::{internal, signed_in, ApiContext},
    error::AppError,
};
use adamviz_model::{ids::RevisionId, revision::RunStatus};

/// The stream looks at the status as soon as this process stores a change of a run's status
/// (`Services::run_status_changes`); a run taken by another process (a worker, another node)
/// is seen at the next look, which comes after this long at the latest.
const LOOK_AT_LEAST_EVERY: Duration = Duration::from_millis(500);

/// The status of `revision` now; `None` when there is no such revision.
pub async fn status_of(
    context: &ApiContext,
    revision: &RevisionId,
) -> Result<Option<RunStatus>, AppError> {
    context
        .services
        .run_status(revision)
        .await
        .map_err(internal)
}

fn refuse(error: AppError) -> Response {
    let status = axum::http::StatusCode::from_u16(error.status())
        .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    (status, error.to_string()).into_response()
}

/// Whether the session that opened a stream may still read it: its record is still stored
/// and unexpired (a logout or a disabled account deletes it; the stream's own copy of the
/// record would not know), and [`signed_in`] still accepts it (lifetime, account not disabled).
async fn still_signed_in(context: &ApiContext, session: &Session) -> bool {
    let Some(id) = session.id().map(|id| id.to_string()) else {
        return false;
    };
    let stored = context.services.session_still_stored(id).await;
    matches!(stored, Ok(true)) && signed_in(session, context).await.is_ok()
}

/// The handler.
pub async fn status_events(
    State(context): State<ApiContext>,
    session: Session,
    Path(id): Path<String>,
) -> Response {
    if let Err(error) = signed_in(&session, &context).await {
        return refuse(error);
    }
    let Ok(revision) = RevisionId::parse(&id) else {
        return refuse(AppError::NotFound(format!("revision {id}")));
    };
    match status_of(&context, &revision).await {
        Ok(Some(_)) => {}
        Ok(None) => return refuse(AppError::NotFound(format!("revision {id}"))),
        Err(error) => return refuse(error),
    }
    // State: the last status sent, and whether the stream is over.
    let changes = context.services.run_status_changes();
    let stream = futures::stream::unfold(
        (
            context,
            session,
            revision,
            changes,
            None::<RunStatus>,
            false,
        ),
        |(context, session, revision, mut changes, last, done)| async move {
            if done {
                return None;
            }
            loop {
                if !still_signed_in(&context, &session).await {
                    return None;
                }
                let status = match status_of(&context, &revision).await {
                    Ok(Some(status)) => status,
                    _ => return None,
                };
                if last.as_ref() != Some(&status) {
                    let finished = !status.is_moving();
                    let event = Event::default()
                        .event("status")
                        .json_data(&status)
                        .unwrap_or_else(|_| Event::default().event("status"));
                    return Some((
                        Ok::<_, Infallible>(event),
                        (context, session, revision, changes, Some(status), finished),
                    ));
                }
                // Wait for a change this process stores, or at most the fallback interval for
                // one another process stores (the sender lives as long as the services).
                if let Ok(Err(_)) =
                    tokio::time::timeout(LOOK_AT_LEAST_EVERY, changes.changed()).await
                {
                    // No sender (the services are gone): look at the fallback pace only.
                    tokio::time::sleep(LOOK_AT_LEAST_EVERY).await;
                }
            }
        },
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
