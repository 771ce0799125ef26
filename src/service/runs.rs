//! Governed runs started from the web: the board of runs in progress on this server (queued
//! with a position, running, verifying) and starting one in the background, so it goes on
//! when the browser closes. The board queues at the runner's own concurrency bound: many
//! people pressing Run at once wait their turn instead of getting an error. What the board
//! does not hold (finished runs, runs of another process) comes from the database.

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

use tokio::sync::Semaphore;

use super::{
    datasets::DatasetCache,
    error::ReadError,
    execution::{ExecutionPhase, ExecutionService, PhaseObserver, ServiceError},
    prepare::{prepare_execution, PrepareError},
};
use crate::{
    compiler::ImageSize,
    domain::{
        digest::Sha256Digest,
        ids::{AttemptId, RevisionId},
        revision::{RevisionStatus, RunStatus},
        spec::PlotSpec,
    },
    evidence::actor::Actor,
    ingest::FileReadError,
    store::{
        db::{Database, DatabaseError},
        repository::{attempt_id_for, get_revision, get_spec, latest_attempt, Revision},
    },
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Queued,
    Running,
    Verifying,
}

#[derive(Debug)]
struct LiveRun {
    revision_id: RevisionId,
    attempt_id: AttemptId,
    ticket: u64,
    phase: Phase,
    started: Option<Instant>,
}

#[derive(Debug, Default)]
struct Board {
    runs: Vec<LiveRun>,
    next_ticket: u64,
}

/// The runs in progress on this server.
#[derive(Debug)]
pub struct RunBoard {
    slots: Arc<Semaphore>,
    board: Mutex<Board>,
}

impl RunBoard {
    /// A board letting `max_concurrent` runs go at once (the runner's bound).
    pub fn new(max_concurrent: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max_concurrent.max(1))),
            board: Mutex::new(Board::default()),
        }
    }

    fn with_board<T>(&self, work: impl FnOnce(&mut Board) -> T) -> T {
        let mut board = self
            .board
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&mut board)
    }

    /// An observer that moves the board's runs through the execution's phases.
    pub fn observer(self: &Arc<Self>) -> PhaseObserver {
        let board = Arc::downgrade(self);
        Arc::new(move |attempt_id: &AttemptId, phase: ExecutionPhase| {
            if let Some(board) = board.upgrade() {
                board.set_phase(
                    attempt_id,
                    match phase {
                        ExecutionPhase::Running => Phase::Running,
                        ExecutionPhase::Verifying => Phase::Verifying,
                    },
                );
            }
        })
    }

    /// Puts a run of `revision_id` on the board as queued, unless one is there already (then
    /// its attempt: a double click joins the run in progress).
    fn enter(&self, revision_id: &RevisionId, attempt_id: &AttemptId) -> Result<(), AttemptId> {
        self.with_board(|board| {
            if let Some(live) = board.runs.iter().find(|r| &r.revision_id == revision_id) {
                return Err(live.attempt_id.clone());
            }
            board.next_ticket += 1;
            let ticket = board.next_ticket;
            board.runs.push(LiveRun {
                revision_id: revision_id.clone(),
                attempt_id: attempt_id.clone(),
                ticket,
                phase: Phase::Queued,
                started: None,
            });
            Ok(())
        })
    }

    fn set_phase(&self, attempt_id: &AttemptId, phase: Phase) {
        self.with_board(|board| {
            if let Some(run) = board.runs.iter_mut().find(|r| &r.attempt_id == attempt_id) {
                run.phase = phase;
                run.started.get_or_insert_with(Instant::now);
            }
        });
    }

    fn leave(&self, attempt_id: &AttemptId) {
        self.with_board(|board| board.runs.retain(|r| &r.attempt_id != attempt_id));
    }

    /// The live status of `revision_id`'s run on this server, if one is on the board.
    pub fn live_status(&self, revision_id: &RevisionId) -> Option<RunStatus> {
        self.with_board(|board| {
            let run = board.runs.iter().find(|r| &r.revision_id == revision_id)?;
            let attempt_id = run.attempt_id.to_string();
            let elapsed_seconds = run.started.map_or(0, |s| s.elapsed().as_secs());
            Some(match run.phase {
                Phase::Queued => RunStatus::Queued {
                    attempt_id,
                    position: board
                        .runs
                        .iter()
                        .filter(|r| r.phase == Phase::Queued && r.ticket <= run.ticket)
                        .count(),
                },
                Phase::Running => RunStatus::Running {
                    attempt_id,
                    elapsed_seconds,
                },
                Phase::Verifying => RunStatus::Verifying {
                    attempt_id,
                    elapsed_seconds,
                },
            })
        })
    }
}

/// Why a run cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartRunError {
    /// No such revision.
    #[error("there is no revision {0}")]
    NoRevision(RevisionId),
    /// Only a Draft revision runs.
    #[error("revision {id} is {status}: only a Draft revision gets a governed execution")]
    NotDraft {
        /// The revision.
        id: RevisionId,
        /// Its status in words.
        status: &'static str,
    },
    /// The idempotency key is not usable.
    #[error("the idempotency key must be 8 to 128 letters, digits, '-' or '_'")]
    BadKey,
    /// Anything else (stored state, the dataset): details in the log.
    #[error("{0}")]
    Internal(String),
}

/// What the inputs of a run are read from.
#[derive(Clone)]
pub struct RunContext {
    /// The execution service (observed by the board).
    pub execution: ExecutionService,
    /// The board.
    pub board: Arc<RunBoard>,
    /// The datasets read.
    pub datasets: Arc<DatasetCache>,
}

fn valid_key(key: &str) -> bool {
    (8..=128).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Starts the governed execution of Draft revision `revision_id` under `key` in the
/// background and returns its attempt id at once. The same revision with a run in progress
/// joins that run; the same key after the run ended names the same (ended) attempt, so
/// nothing runs twice.
pub async fn start_run(
    context: &RunContext,
    revision_id: &RevisionId,
    key: &str,
    actor: Actor,
) -> Result<AttemptId, StartRunError> {
    if !valid_key(key) {
        return Err(StartRunError::BadKey);
    }
    let database = context.execution.database().clone();
    let revision = read_revision(&database, revision_id).await?;
    if revision.status != RevisionStatus::Draft {
        return Err(StartRunError::NotDraft {
            id: revision.id,
            status: revision.status.label(),
        });
    }
    let attempt_id = attempt_id_for(revision_id, key);
    if let Err(running) = context.board.enter(revision_id, &attempt_id) {
        return Ok(running);
    }
    let context = context.clone();
    let (revision_id, key, attempt) = (revision_id.clone(), key.to_owned(), attempt_id.clone());
    // The run belongs to the server, not to the request: it goes on when the browser closes.
    tokio::spawn(async move {
        let outcome = run_in_background(&context, &revision, &key, &actor).await;
        if let Err(error) = outcome {
            tracing::warn!(revision = %revision_id, attempt = %attempt, %error, "governed run ended in an error");
        }
        context.board.leave(&attempt);
    });
    Ok(attempt_id)
}

/// Runs `work` on a pooled connection off the async executor.
pub async fn on_database<T: Send + 'static, E: Into<ReadError> + Send + 'static>(
    database: &Database,
    work: impl FnOnce(&mut crate::store::db::Connection) -> Result<T, E> + Send + 'static,
) -> Result<T, ReadError> {
    database
        .call(move |connection| Ok::<_, DatabaseError>(work(connection).map_err(Into::into)))
        .await?
}

async fn read_revision(
    database: &Database,
    revision_id: &RevisionId,
) -> Result<Revision, StartRunError> {
    let id = revision_id.clone();
    on_database(database, move |connection| get_revision(connection, &id))
        .await
        .map_err(|e| StartRunError::Internal(e.to_string()))?
        .ok_or_else(|| StartRunError::NoRevision(revision_id.clone()))
}

/// Reads the confirmed spec, selects its records again from the stored upload and runs them;
/// the execution service checks that script and snapshot are the ones the request names.
async fn run_in_background(
    context: &RunContext,
    revision: &Revision,
    key: &str,
    actor: &Actor,
) -> Result<(), BackgroundRunError> {
    let _slot = Arc::clone(&context.board.slots)
        .acquire_owned()
        .await
        .map_err(|_| BackgroundRunError::ShuttingDown)?;
    let spec = stored_spec(context.execution.database(), &revision.spec_hash).await?;
    let (datasets, objects, for_spec) = (
        Arc::clone(&context.datasets),
        context.execution.objects().clone(),
        spec.clone(),
    );
    let prepared = tokio::task::spawn_blocking(move || {
        let digest = for_spec.dataset_content_hash;
        let loaded = datasets.load(&objects, &digest)?;
        Ok::<_, BackgroundRunError>(prepare_execution(
            &for_spec,
            &loaded.table,
            &digest,
            ImageSize::default(),
        )?)
    })
    .await
    .map_err(ReadError::from)??;
    context
        .execution
        .execute(
            &revision.id,
            key,
            &spec,
            prepared.script.bytes.clone(),
            Arc::clone(&prepared.snapshot),
            actor,
        )
        .await?;
    Ok(())
}

/// Why a run accepted in the background ended without an outcome of its own (logged; the
/// attempt's evidence says what it can).
#[derive(Debug, thiserror::Error)]
enum BackgroundRunError {
    /// The run slots were closed: the server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// The spec or the revision could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The stored upload could not be read again.
    #[error("reading the stored upload: {0}")]
    Upload(#[from] FileReadError),
    /// Script and snapshot could not be prepared.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The governed execution failed.
    #[error(transparent)]
    Execute(#[from] ServiceError),
}

/// The confirmed spec stored under `spec_hash`, checked against its hash.
pub async fn stored_spec(database: &Database, spec_hash: &str) -> Result<PlotSpec, ReadError> {
    let hash = spec_hash.to_owned();
    let what = || format!("the spec {spec_hash}");
    let bytes = on_database(database, move |connection| get_spec(connection, &hash))
        .await?
        .ok_or_else(|| ReadError::corrupt(what(), "not stored"))?;
    let spec: PlotSpec =
        serde_json::from_slice(&bytes).map_err(|e| ReadError::corrupt(what(), e))?;
    let actual = spec
        .spec_hash()
        .map_err(|e| ReadError::corrupt(what(), e))?;
    if Sha256Digest::try_from(spec_hash.to_owned()).ok() != Some(actual) {
        return Err(ReadError::corrupt(
            what(),
            format!("hashes to {actual}: it was changed"),
        ));
    }
    Ok(spec)
}

/// Where revision `id`'s execution stands; `None` when there is no such revision.
pub async fn status_of_revision(
    database: &Database,
    board: &RunBoard,
    id: &RevisionId,
) -> Result<Option<RunStatus>, ReadError> {
    let key = id.clone();
    let found = on_database(database, move |connection| get_revision(connection, &key)).await?;
    match found {
        Some(revision) => run_status(database, board, &revision).await.map(Some),
        None => Ok(None),
    }
}

/// Where `revision`'s execution stands: the board's live phase, else what the database holds.
pub async fn run_status(
    database: &Database,
    board: &RunBoard,
    revision: &Revision,
) -> Result<RunStatus, ReadError> {
    match revision.status {
        RevisionStatus::ExperimentalDraft => return Ok(RunStatus::NotExecutable),
        RevisionStatus::Verified | RevisionStatus::Approved => return Ok(RunStatus::Verified),
        RevisionStatus::Draft => {}
    }
    if let Some(live) = board.live_status(&revision.id) {
        return Ok(live);
    }
    let id = revision.id.clone();
    let latest = on_database(database, move |connection| latest_attempt(connection, &id)).await?;
    Ok(match latest {
        None => RunStatus::NotRun,
        Some(attempt) if attempt.state == "active" => RunStatus::Active {
            attempt_id: attempt.id.to_string(),
        },
        Some(attempt) if attempt.state == "failed" => RunStatus::Failed {
            attempt_id: attempt.id.to_string(),
            reason: attempt
                .reason
                .unwrap_or_else(|| "no reason recorded".to_owned()),
        },
        // Succeeded while the revision is still Draft: the promotion is being committed.
        Some(attempt) => RunStatus::Active {
            attempt_id: attempt.id.to_string(),
        },
    })
}
