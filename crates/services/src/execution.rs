//! The execution service: a confirmed spec becomes a revision (materialize), and a Draft
//! revision becomes Verified only through a governed execution: attempt started under an
//! idempotency key → sandboxed R run → verification recorded for either outcome → on success,
//! one transaction binding the bundle, ending the attempt and promoting the revision. At start,
//! [`ExecutionService::reconcile`] ends attempts a crash left active.
//!
//! Every step appends its evidence in the transaction that makes it: materializing, the
//! execution request and the revision's creation; starting, the attempt's start; ending, the
//! verification and then either the attempt's failure, or the artifact bundle, the attempt's
//! success, the promotion and the revision context (everything needed to reproduce it).

use std::{sync::Arc, time::Duration};

use serde_json::json;
use sha2::{Digest, Sha256};

use super::prepare::{prepare_execution, PrepareError, PreparedExecution};
use adamviz_engine::compiler::{
    report_text::{report_text, ReportFacts},
    ImageSize,
};
use adamviz_engine::ingest::{
    profile::profile_table,
    snapshot::{snapshot_hash, write_csv, Snapshot},
    table::Table,
};
use adamviz_engine::runner::{canonical_hash, RunRequest, RunResult, Runner};
use adamviz_evidence::actor::Actor;
use adamviz_evidence::execution_checks::{
    verify_execution_result, ExecutionVerification, VerificationInput,
};
use adamviz_evidence::{
    artifact_bundle::{ArtifactRef, BundleArtifacts, BundleToAccept},
    execution_request::ExecutionRequest,
    execution_verification::ExecutionVerificationRecord,
    record::{EvidenceError, EvidenceRecord, Unverified, Verified},
    revision_context::{
        ContextColumn, ContextParts, ContextSnapshot, RevisionContextRecord, RevisionInputs,
        SourceMetadata,
    },
};
use adamviz_model::{
    digest::Sha256Digest,
    ids::{AttemptId, RevisionId},
    spec::{PlotSpec, YScale},
};
use adamviz_store::{
    db::{Database, DatabaseError},
    ledger::{append_evidence, utc_now, AppendEvidenceError},
    objects::{ObjectStore, ObjectStoreError},
    repository::{
        attempt_id_for, complete_verified, create_revision, fail_attempt, get_attempt,
        get_revision, get_revision_inputs, insert_spec, insert_upload, new_revision_id,
        reconcile_active_attempts, start_attempt, Attempt, AttemptLease, NewRevision,
        RepositoryError, Revision, RevisionStatus, StartOutcome,
    },
};

mod completion;
mod materialize;

use completion::*;

/// How long an attempt's lease outlasts the run's wall-clock limit: queueing for a runner
/// slot, storing and verifying. Only an owner on another host is judged by its lease; one on
/// this host holds its attempt for as long as it lives.
pub const ATTEMPT_LEASE_MARGIN: Duration = Duration::from_secs(30 * 60);

/// Crash points for the crash-safety tests: when `ADAMVIZ_CRASH_AT` names this point, the
/// process kills itself with SIGKILL right here (no clean-up, no unwinding), as a power cut
/// would. Unset (always, outside those tests) it does nothing.
pub fn crash_point(name: &str) {
    if std::env::var_os("ADAMVIZ_CRASH_AT").is_some_and(|at| at == name) {
        // SAFETY: signalling our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// The crash points, in the order the flow passes them.
pub const CRASH_POINTS: [&str; 5] = [
    "after_attempt_started",
    "after_run",
    "after_outputs_stored",
    "before_completion_commit",
    "after_completion_commit",
];

/// Largest artifact the service stores (scripts, snapshots, outputs).
const ARTIFACT_LIMIT: u64 = 1 << 30;

/// Why a service step failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The spec could not be prepared.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The database.
    #[error(transparent)]
    Database(#[from] DatabaseError),
    /// A repository rule.
    #[error(transparent)]
    Repository(#[from] RepositoryError),
    /// Evidence could not be appended.
    #[error(transparent)]
    Evidence(#[from] AppendEvidenceError),
    /// A stored record did not verify.
    #[error("stored evidence does not verify: {0}")]
    StoredEvidence(#[from] EvidenceError),
    /// The artifact store.
    #[error(transparent)]
    Objects(#[from] ObjectStoreError),
    /// Free-scale revisions get no governed execution.
    #[error("revision {0} has free y-scales (Experimental/Draft): it gets a preview only and can never become Verified")]
    ExperimentalRevision(RevisionId),
    /// The revision has no execution request.
    #[error("revision {0} has no execution request")]
    NoRequest(RevisionId),
    /// The same key names an attempt still running.
    #[error("attempt {0} for this idempotency key is still running")]
    AttemptRunning(AttemptId),
    /// The revision has no stored inputs for its context.
    #[error("revision {0} has no stored source metadata for its context")]
    NoInputs(RevisionId),
    /// A value could not be written as JSON.
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The run's outputs lack a file.
    #[error("the upload {0} is not in the object store: a dataset is materialized only from stored bytes (receive it through the upload path first)")]
    UploadNotStored(Sha256Digest),
    /// A blocking step panicked or was cancelled.
    #[error("a background step failed: {0}")]
    Task(#[source] tokio::task::JoinError),
    /// The run passed but an output is missing.
    #[error("the run passed verification but has no {0}")]
    MissingOutput(&'static str),
}

impl From<adamviz_store::sql::SqlError> for ServiceError {
    fn from(error: adamviz_store::sql::SqlError) -> Self {
        Self::Database(DatabaseError::Sql(error))
    }
}

/// Who uploaded what: recorded with the upload.
#[derive(Debug, Clone)]
pub struct UploadInfo {
    /// SHA-256 of the uploaded bytes.
    pub content_hash: Sha256Digest,
    /// `synthetic` or `deidentified`.
    pub classification: String,
    /// The file name given.
    pub file_name: String,
    /// Size in bytes.
    pub size: u64,
}

/// A materialized revision and what its execution needs.
#[derive(Debug, Clone)]
pub struct Materialized {
    /// The revision (Draft or Experimental/Draft).
    pub revision: Revision,
    /// Snapshot and compiled script.
    pub prepared: PreparedExecution,
}

/// How an execution ended.
#[derive(Debug, Clone)]
pub struct ExecutionOutcome {
    /// The attempt.
    pub attempt_id: AttemptId,
    /// The revision after it.
    pub revision: Revision,
    /// The verdict (absent when the same key named an attempt that had already ended).
    pub verification: Option<ExecutionVerification>,
    /// The runner's result (absent likewise).
    pub result: Option<RunResult>,
    /// The `revision_context` record, when the revision was promoted.
    pub context_hash: Option<Sha256Digest>,
}

/// A step of a governed execution, reported to an observer (the web pages' live status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionPhase {
    /// The sandboxed R process is running.
    Running,
    /// R has ended; the checks are running.
    Verifying,
}

/// Told of every attempt's phases as they begin.
pub type PhaseObserver = Arc<dyn Fn(&AttemptId, ExecutionPhase) + Send + Sync>;

/// The service over one data directory's database, objects and runner.
#[derive(Clone)]
pub struct ExecutionService {
    database: Database,
    objects: ObjectStore,
    runner: Arc<Runner>,
    observer: Option<PhaseObserver>,
}

impl std::fmt::Debug for ExecutionService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionService").finish_non_exhaustive()
    }
}

fn sha256(bytes: &[u8]) -> Sha256Digest {
    Sha256Digest::from_bytes(Sha256::digest(bytes).into())
}

impl ExecutionService {
    /// A service over these stores.
    pub fn new(database: Database, objects: ObjectStore, runner: Arc<Runner>) -> Self {
        Self {
            database,
            objects,
            runner,
            observer: None,
        }
    }

    /// The same service, telling `observer` of each attempt's phases.
    pub fn observed_by(mut self, observer: PhaseObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    fn report(&self, attempt_id: &AttemptId, phase: ExecutionPhase) {
        if let Some(observer) = &self.observer {
            observer(attempt_id, phase);
        }
    }

    /// The runner.
    pub fn runner(&self) -> &Arc<Runner> {
        &self.runner
    }

    /// The object store.
    pub fn objects(&self) -> &ObjectStore {
        &self.objects
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// The revision's execution request, read from the ledger and verified.
    async fn request_of(
        &self,
        revision: &Revision,
    ) -> Result<Verified<ExecutionRequest>, ServiceError> {
        let Some(hash) = revision.request_hash.clone() else {
            return Err(ServiceError::NoRequest(revision.id.clone()));
        };
        let (bytes, previous): (Vec<u8>, String) = self
            .database
            .call(move |connection| {
                Ok::<_, ServiceError>(adamviz_store::ledger::record_by_hash(
                    connection,
                    &hash,
                    ExecutionRequest::KIND,
                )?)
            })
            .await?;
        let previous = Sha256Digest::try_from(previous)
            .map_err(|_| ServiceError::NoRequest(revision.id.clone()))?;
        Ok(Unverified::<ExecutionRequest>::parse(&bytes)?.verify(&previous)?)
    }

    /// Runs the governed execution of Draft revision `revision_id` under `idempotency_key` with
    /// the script and records supplied, verifies the result, and records the outcome.
    pub async fn execute(
        &self,
        revision_id: &RevisionId,
        idempotency_key: &str,
        spec: &PlotSpec,
        script: Vec<u8>,
        snapshot: Arc<Snapshot>,
        actor: &Actor,
    ) -> Result<ExecutionOutcome, ServiceError> {
        // 1. A revision under governed execution, and its verified request.
        let request = self.governed_request(revision_id).await?;
        // 2. The attempt: started, or the one this key already named.
        let attempt_id = match self
            .start_attempt_for(&request, idempotency_key, &script, &snapshot, actor)
            .await?
        {
            StartOutcome::Started(attempt) => attempt.id,
            StartOutcome::Existing(existing) => {
                return self.outcome_of_existing(existing, revision_id).await
            }
        };
        crash_point("after_attempt_started");
        // 3–5. Run, verify, store and record. Whatever fails from here on ends the attempt as
        //      failed (in a live process nothing else would: recovery leaves a live owner's
        //      attempts alone), so the revision stays retryable.
        let outcome = self
            .run_verify_and_record(&request, &attempt_id, spec, script, snapshot, actor)
            .await;
        if let Err(error) = &outcome {
            self.fail_unless_ended(&attempt_id, error, actor).await;
        }
        outcome
    }

    /// The revision's verified execution request; Experimental/Draft revisions have none and
    /// are refused.
    async fn governed_request(
        &self,
        revision_id: &RevisionId,
    ) -> Result<Verified<ExecutionRequest>, ServiceError> {
        let id = revision_id.clone();
        let revision = self
            .database
            .call(move |connection| {
                get_revision(connection, &id)?
                    .ok_or_else(|| ServiceError::from(RepositoryError::NoRevision(id)))
            })
            .await?;
        if revision.status == RevisionStatus::ExperimentalDraft {
            return Err(ServiceError::ExperimentalRevision(revision.id));
        }
        self.request_of(&revision).await
    }

    /// Starts the attempt named by the revision and `idempotency_key`, held by this process,
    /// with the fingerprint that binds the request and the hashes of what is actually supplied.
    async fn start_attempt_for(
        &self,
        request: &Verified<ExecutionRequest>,
        idempotency_key: &str,
        script: &[u8],
        snapshot: &Arc<Snapshot>,
        actor: &Actor,
    ) -> Result<StartOutcome, ServiceError> {
        let actor = actor.clone();
        let supplied_snapshot = Arc::clone(snapshot);
        let supplied_hash = tokio::task::spawn_blocking(move || snapshot_hash(&supplied_snapshot))
            .await
            .map_err(DatabaseError::Task)?;
        let fingerprint = sha256(&serde_jcs::to_vec(&json!({
            "request": request.record_hash().to_hex(),
            "script": sha256(script).to_hex(),
            "snapshot": supplied_hash.to_hex(),
        }))?);
        let revision_id = request.record().revision_id.clone();
        let attempt_id = attempt_id_for(&revision_id, idempotency_key);
        // This process holds the attempt while it lives; an owner elsewhere is trusted for the
        // run's wall-clock limit and a generous margin for queueing and verification.
        let wall_clock = Duration::from_millis(self.runner.config().limits.wall_clock_ms);
        let lease = AttemptLease::of_this_process(wall_clock + ATTEMPT_LEASE_MARGIN);
        self.database
            .call(move |connection| {
                let transaction = connection.transaction()?;
                let outcome = start_attempt(
                    &transaction,
                    &revision_id,
                    &attempt_id,
                    &fingerprint,
                    &lease,
                    &actor,
                )?;
                transaction.commit()?;
                Ok::<_, ServiceError>(outcome)
            })
            .await
    }

    /// The outcome of an attempt the key already named: refused while it runs, else as it
    /// ended.
    async fn outcome_of_existing(
        &self,
        existing: Attempt,
        revision_id: &RevisionId,
    ) -> Result<ExecutionOutcome, ServiceError> {
        if existing.state == "active" {
            return Err(ServiceError::AttemptRunning(existing.id));
        }
        let rev = revision_id.clone();
        let revision = self
            .database
            .call(move |c| get_revision(c, &rev).map_err(ServiceError::from))
            .await?
            .ok_or_else(|| RepositoryError::NoRevision(revision_id.clone()))?;
        Ok(ExecutionOutcome {
            attempt_id: existing.id,
            revision,
            verification: None,
            result: None,
            context_hash: None,
        })
    }

    /// Steps 3 to 5 of [`ExecutionService::execute`].
    async fn run_verify_and_record(
        &self,
        request: &Verified<ExecutionRequest>,
        attempt_id: &AttemptId,
        spec: &PlotSpec,
        script: Vec<u8>,
        snapshot: Arc<Snapshot>,
        actor: &Actor,
    ) -> Result<ExecutionOutcome, ServiceError> {
        // 3. Run in the sandbox, then verify (off the async executor: the checks decode the
        //    PNG and recompute the statistics).
        let record = request.record();
        self.report(attempt_id, ExecutionPhase::Running);
        let result = self
            .runner
            .run(RunRequest {
                script: script.clone(),
                expected_script_hash: record.script_hash,
                snapshot: Arc::clone(&snapshot),
                expected_snapshot_hash: record.snapshot_hash,
                image: record.image,
                report: record.report.clone(),
            })
            .await;
        self.report(attempt_id, ExecutionPhase::Verifying);
        let verification = verify(request, spec, &snapshot, &script, &result).await?;
        crash_point("after_run");
        // 4. A passing run's outputs are stored first (content-addressed: a crash leaves only
        //    unreferenced objects), and the snapshot object the request names is re-read.
        let completion = if verification.passed {
            Some(
                self.store_passing(&result, &script, spec, &snapshot, record)
                    .await?,
            )
        } else {
            None
        };
        crash_point("after_outputs_stored");
        // 5. The verdict, and the attempt's end: completion (bundle, success, promotion,
        //    context) or failure, each in one transaction.
        let verification_record = ExecutionVerificationRecord::new(
            record.revision_id.clone(),
            attempt_id.clone(),
            *request.record_hash(),
            &verification,
            &result,
            utc_now(),
        );
        let failure_reason = format!(
            "verification failed: {}{}",
            verification.failed.join(", "),
            result
                .failure
                .as_ref()
                .map(|f| format!(" ({f})"))
                .unwrap_or_default()
        );
        let (revision, context_hash) = self
            .record_outcome(
                &record.revision_id,
                attempt_id,
                verification_record,
                completion,
                failure_reason,
                actor,
            )
            .await?;
        Ok(ExecutionOutcome {
            attempt_id: attempt_id.clone(),
            revision,
            verification: Some(verification),
            result: Some(result),
            context_hash,
        })
    }

    /// Stores a passing run's outputs beside its script and re-read snapshot (blocking work),
    /// and what its completion records will say.
    async fn store_passing(
        &self,
        result: &RunResult,
        script: &[u8],
        spec: &PlotSpec,
        snapshot: &Snapshot,
        record: &ExecutionRequest,
    ) -> Result<Completion, ServiceError> {
        let objects = self.objects.clone();
        let (stored_result, script_ref, snapshot_id) = (
            result.clone(),
            ArtifactRef::of("script.R", script),
            record.snapshot_id,
        );
        let artifacts = tokio::task::spawn_blocking(move || {
            store_outputs(&objects, &stored_result, script_ref, &snapshot_id)
        })
        .await
        .map_err(DatabaseError::Task)??;
        Completion::of(result, spec, snapshot, record, artifacts)
    }

    /// Ends `attempt_id` as failed because of `error`, unless it has ended already (a refused
    /// completion ends it itself). A failure to record that is logged: recovery at the next
    /// start ends the attempt.
    async fn fail_unless_ended(&self, attempt_id: &AttemptId, error: &ServiceError, actor: &Actor) {
        let (att, reason) = (attempt_id.clone(), format!("the execution failed: {error}"));
        let actor = actor.clone();
        let ended = self
            .database
            .call(move |connection| {
                let transaction = connection.transaction()?;
                let active = get_attempt(&transaction, &att)?.is_some_and(|a| a.state == "active");
                if active {
                    fail_attempt(&transaction, &att, &reason, None, &actor)?;
                    transaction.commit()?;
                }
                Ok::<_, ServiceError>(())
            })
            .await;
        if let Err(failure) = ended {
            tracing::error!(attempt = %attempt_id, %failure, "could not end a failed attempt; recovery at the next start will");
        }
    }

    /// Ends every attempt left active by a crash as failed; returns their ids (logged).
    pub async fn reconcile(&self) -> Result<Vec<AttemptId>, ServiceError> {
        let ids = self
            .database
            .call(|connection| {
                let transaction = connection.transaction()?;
                let ids = reconcile_active_attempts(
                    &transaction,
                    adamviz_store::repository::RECONCILED_AT_START,
                )?;
                transaction.commit()?;
                Ok::<_, ServiceError>(ids)
            })
            .await?;
        for id in &ids {
            tracing::warn!(attempt = %id, "reconciled an attempt left active: marked failed, its revision stays retryable");
        }
        Ok(ids)
    }
}

/// The named checks on a run's `result` (off the async executor: they decode the PNG and
/// recompute the statistics).
async fn verify(
    request: &Verified<ExecutionRequest>,
    spec: &PlotSpec,
    snapshot: &Arc<Snapshot>,
    script: &[u8],
    result: &RunResult,
) -> Result<ExecutionVerification, ServiceError> {
    let (request, spec, snapshot, script, result) = (
        request.clone(),
        spec.clone(),
        Arc::clone(snapshot),
        script.to_vec(),
        result.clone(),
    );
    Ok(tokio::task::spawn_blocking(move || {
        verify_execution_result(&VerificationInput {
            request: &request,
            spec: &spec,
            snapshot: &snapshot,
            script: &script,
            result: &result,
        })
    })
    .await
    .map_err(DatabaseError::Task)?)
}
