//! Governed runs through the durable queue (`store::run_queue`): pressing Run records a request
//! in the database, in the transaction that answers the person who pressed it, and wakes this
//! process's runners; a runner claims the oldest request, renews its lease while the run lasts
//! and records how it ended. A run whose runner is lost (the server killed, a worker gone) goes
//! back to the queue by itself as a new attempt, so nothing accepted is forgotten. Where a run
//! stands is read from the database, so every process sharing it answers the same.

use crate::database::on_database;
use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use tokio::sync::{watch, Notify};

use super::{
    datasets::DatasetCache,
    error::ReadError,
    execution::{ExecutionPhase, ExecutionService, PhaseObserver},
};
use adamviz_evidence::actor::Actor;
use adamviz_model::{
    digest::Sha256Digest,
    ids::{AttemptId, RevisionId},
    revision::{RevisionStatus, RunStatus},
    spec::PlotSpec,
};
use adamviz_store::{
    db::Database,
    repository::{get_attempt, get_revision, get_spec, latest_attempt, Revision},
    run_queue::{
        claim_request, enqueue_run, latest_request, open_request, Claimant, QueueState, RunPhase,
        RunRequest,
    },
};

mod runner;

pub use runner::{release_this_process_claims, run_request_now, spawn_runners};

/// How the queue's runners behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// Runners this process starts (`serve --runners`; 0: it only serves).
    pub local_runners: usize,
    /// Claims a request gets: the first and the retries after a lost runner.
    pub max_claims: u32,
    /// How long a claim holds without a renewal (what a runner on another host is judged by).
    pub lease: Duration,
    /// How often a runner renews its claim while it runs.
    pub heartbeat: Duration,
    /// How often an idle runner looks for requests other processes queued (it is woken at once
    /// for its own process's).
    pub idle_poll: Duration,
}

impl Default for QueueSettings {
    fn default() -> Self {
        Self {
            local_runners: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_claims: 3,
            lease: Duration::from_secs(60),
            heartbeat: Duration::from_secs(10),
            idle_poll: Duration::from_secs(1),
        }
    }
}

/// This process's side of the queue: its settings, the wake-up of its idle runners, and the
/// phase each of its running claims reports.
#[derive(Debug)]
pub struct RunQueue {
    settings: QueueSettings,
    wake: Notify,
    phases: Mutex<HashMap<AttemptId, watch::Sender<Option<RunPhase>>>>,
    /// Counts the run-status changes this process stored (a claim, a phase, an end), so that
    /// a page following a run wakes when its status moved instead of on a timer alone.
    status_changes: watch::Sender<u64>,
    runners_started: AtomicBool,
}

impl RunQueue {
    /// A queue with these settings.
    pub fn new(settings: QueueSettings) -> Self {
        Self {
            settings,
            wake: Notify::new(),
            phases: Mutex::new(HashMap::new()),
            status_changes: watch::Sender::new(0),
            runners_started: AtomicBool::new(false),
        }
    }

    /// The settings.
    pub fn settings(&self) -> QueueSettings {
        self.settings
    }

    /// Says that this process stored a change of some run's status.
    pub(crate) fn status_changed(&self) {
        self.status_changes
            .send_modify(|count| *count = count.wrapping_add(1));
    }

    /// A receiver that sees every run-status change this process stores (changes stored by
    /// another process, a worker or another node, are not seen here).
    pub fn status_changes(&self) -> watch::Receiver<u64> {
        self.status_changes.subscribe()
    }

    fn with_phases<T>(
        &self,
        work: impl FnOnce(&mut HashMap<AttemptId, watch::Sender<Option<RunPhase>>>) -> T,
    ) -> T {
        let mut phases = self
            .phases
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&mut phases)
    }

    /// An observer that passes the execution's phases to the runner holding the attempt, which
    /// writes them with its next renewal.
    pub fn observer(self: &Arc<Self>) -> PhaseObserver {
        let queue = Arc::downgrade(self);
        Arc::new(move |attempt_id: &AttemptId, phase: ExecutionPhase| {
            if let Some(queue) = queue.upgrade() {
                let phase = match phase {
                    ExecutionPhase::Running => RunPhase::Running,
                    ExecutionPhase::Verifying => RunPhase::Verifying,
                };
                queue.with_phases(|phases| {
                    if let Some(sender) = phases.get(attempt_id) {
                        sender.send_replace(Some(phase));
                    }
                });
            }
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
    #[error(transparent)]
    Internal(ReadError),
}

/// What the inputs of a run are read from.
#[derive(Clone)]
pub struct RunContext {
    /// The execution service (observed by the queue).
    pub execution: ExecutionService,
    /// This process's side of the queue.
    pub queue: Arc<RunQueue>,
    /// The datasets read.
    pub datasets: Arc<DatasetCache>,
}

impl RunContext {
    /// Starts this process's runners (`QueueSettings::local_runners` of them) once, on the
    /// current tokio runtime; later calls do nothing.
    pub fn ensure_local_runners(&self) {
        let count = self.queue.settings.local_runners;
        if count > 0 && !self.queue.runners_started.swap(true, Ordering::SeqCst) {
            spawn_runners(self.clone(), count);
        }
    }
}

fn valid_key(key: &str) -> bool {
    (8..=128).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Queues the governed execution of Draft revision `revision_id` under `key` and returns its
/// attempt id at once; the request is in the database before this returns. The same revision
/// with a run queued or in progress joins that run; the same key after the run ended names the
/// same (ended) request, so nothing runs twice.
pub async fn start_run(
    context: &RunContext,
    revision_id: &RevisionId,
    key: &str,
    actor: Actor,
) -> Result<AttemptId, StartRunError> {
    if !valid_key(key) {
        return Err(StartRunError::BadKey);
    }
    let (request, _) = queue_run(context, revision_id, key, actor, None).await?;
    context.queue.status_changed();
    context.ensure_local_runners();
    context.queue.wake.notify_waiters();
    Ok(request.attempt_id)
}

/// Records the request (or finds the one it joins) without waking anyone, and, with a claimant
/// and its lease's end, claims it in the same transaction if it is queued (the claimed request;
/// `None` when another runner holds it). A key may not hold `#`, which names the attempts of
/// retries (see `store::run_queue::attempt_key`).
pub async fn queue_run(
    context: &RunContext,
    revision_id: &RevisionId,
    key: &str,
    actor: Actor,
    claim_for: Option<(&Claimant, &str)>,
) -> Result<(RunRequest, Option<RunRequest>), StartRunError> {
    if key.is_empty() || key.contains('#') {
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
    let (id, key, max_claims) = (
        revision_id.clone(),
        key.to_owned(),
        context.queue.settings.max_claims,
    );
    let claim_for = claim_for.map(|(claimant, lease)| (claimant.clone(), lease.to_owned()));
    on_database(&database, move |connection| {
        let transaction = connection.transaction()?;
        let (request, _new) = enqueue_run(&transaction, &id, &key, &actor, max_claims)?;
        let claimed = match &claim_for {
            Some((claimant, lease)) => claim_request(&transaction, request.seq, claimant, lease)?,
            None => None,
        };
        transaction.commit()?;
        Ok::<_, adamviz_store::repository::RepositoryError>((request, claimed))
    })
    .await
    .map_err(StartRunError::Internal)
}

async fn read_revision(
    database: &Database,
    revision_id: &RevisionId,
) -> Result<Revision, StartRunError> {
    let id = revision_id.clone();
    on_database(database, move |connection| get_revision(connection, &id))
        .await
        .map_err(StartRunError::Internal)?
        .ok_or_else(|| StartRunError::NoRevision(revision_id.clone()))
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
    id: &RevisionId,
) -> Result<Option<RunStatus>, ReadError> {
    let key = id.clone();
    let found = on_database(database, move |connection| get_revision(connection, &key)).await?;
    match found {
        Some(revision) => run_status(database, &revision).await.map(Some),
        None => Ok(None),
    }
}

/// Where `revision`'s execution stands: its request in the queue (queued with its position,
/// or claimed by a runner and in which phase), else its latest attempt.
pub async fn run_status(database: &Database, revision: &Revision) -> Result<RunStatus, ReadError> {
    match revision.status {
        RevisionStatus::ExperimentalDraft => return Ok(RunStatus::NotExecutable),
        RevisionStatus::Verified | RevisionStatus::Approved => return Ok(RunStatus::Verified),
        RevisionStatus::Draft => {}
    }
    let id = revision.id.clone();
    let (open, latest, ended_without_attempt) = on_database(database, move |connection| {
        let open = open_request(connection, &id)?;
        let latest = latest_attempt(connection, &id)?;
        // The newest request, when it ended before its claim's attempt started (the spec or
        // the stored upload unreadable, the runner lost before R): its outcome is the news.
        let ended_without_attempt = latest_request(connection, &id)?.filter(|request| {
            request.state == QueueState::Done
                && !request
                    .outcome
                    .as_deref()
                    .is_some_and(|o| o.starts_with("verified"))
                && get_attempt(connection, &request.attempt_id)
                    .ok()
                    .flatten()
                    .is_none()
        });
        Ok::<_, adamviz_store::repository::RepositoryError>((open, latest, ended_without_attempt))
    })
    .await?;
    if let Some((request, position)) = open {
        return Ok(queued_status(request, position));
    }
    if let Some(request) = ended_without_attempt {
        return Ok(RunStatus::Failed {
            attempt_id: request.attempt_id.to_string(),
            reason: request.outcome.unwrap_or_default(),
        });
    }
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

/// The status of a request that is queued or claimed.
fn queued_status(request: RunRequest, position: usize) -> RunStatus {
    let attempt_id = request.attempt_id.to_string();
    if request.state == QueueState::Queued {
        return RunStatus::Queued {
            attempt_id,
            position,
            requeued_because: request.requeued_because,
        };
    }
    let elapsed_seconds = request
        .claimed_at
        .as_deref()
        .and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
        .map_or(0, |at| {
            (chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
                - at.with_timezone(&chrono::Utc))
            .num_seconds()
            .max(0) as u64
        });
    let runner = request.runner.as_deref().map(|process| {
        let process = process.rsplit_once('/').map_or(process, |(p, _)| p);
        format!("{process} runner {}", request.runner_slot.unwrap_or(0))
    });
    match request.phase {
        Some(RunPhase::Verifying) => RunStatus::Verifying {
            attempt_id,
            elapsed_seconds,
            runner,
            claim: request.claims,
        },
        _ => RunStatus::Running {
            attempt_id,
            elapsed_seconds,
            runner,
            claim: request.claims,
        },
    }
}
