//! The execution service: a confirmed spec becomes a revision (materialize), and a Draft
//! revision becomes Verified only through a governed execution: attempt started under an
//! idempotency key → sandboxed R run → verification recorded for either outcome → on success,
//! one transaction binding the bundle, ending the attempt and promoting the revision. At start,
//! [`ExecutionService::reconcile`] ends attempts a crash left active.
//!
//! Not yet recorded (next step): execution_attempt, artifact_bundle, revision_lifecycle and
//! revision_context evidence records; the attempt, bundle and promotion are rows whose rules the
//! database enforces, and the request and verification are chained evidence.

use std::sync::Arc;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::prepare::{prepare_execution, PrepareError, PreparedExecution};
use crate::{
    compiler::ImageSize,
    domain::{
        digest::Sha256Digest,
        spec::{PlotSpec, YScale},
    },
    evidence::{
        execution_request::ExecutionRequest,
        execution_verification::ExecutionVerificationRecord,
        record::{EvidenceError, EvidenceRecord, Unverified, Verified},
    },
    ingest::{
        snapshot::{snapshot_hash, write_csv, Snapshot},
        table::Table,
    },
    runner::{RunRequest, RunResult, Runner},
    store::{
        db::{Database, DatabaseError},
        ledger::{append_evidence, utc_now, AppendEvidenceError},
        objects::{ObjectStore, ObjectStoreError},
        repository::{
            attempt_id_for, complete_verified, create_revision, fail_attempt, get_attempt,
            get_revision, insert_spec, insert_upload, new_revision_id, reconcile_active_attempts,
            start_attempt, BundleToAccept, NewRevision, RepositoryError, Revision, StartOutcome,
        },
    },
    verify::execution::{verify_execution_result, ExecutionVerification, VerificationInput},
};

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
    ExperimentalRevision(String),
    /// The revision has no execution request.
    #[error("revision {0} has no execution request")]
    NoRequest(String),
    /// The same key names an attempt still running.
    #[error("attempt {0} for this idempotency key is still running")]
    AttemptRunning(String),
}

impl From<rusqlite::Error> for ServiceError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Database(DatabaseError::Sqlite(error))
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
    pub attempt_id: String,
    /// The revision after it.
    pub revision: Revision,
    /// The verdict (absent when the same key named an attempt that had already ended).
    pub verification: Option<ExecutionVerification>,
    /// The runner's result (absent likewise).
    pub result: Option<RunResult>,
}

/// The service over one data directory's database, objects and runner.
#[derive(Clone)]
pub struct ExecutionService {
    database: Database,
    objects: ObjectStore,
    runner: Arc<Runner>,
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
        }
    }

    /// The database.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// Compiles `spec` for `table`, stores the script and the snapshot CSV, and creates the
    /// revision with its execution request (fixed scales) in one transaction.
    pub async fn materialize(
        &self,
        spec: &PlotSpec,
        table: &Table,
        upload: &UploadInfo,
    ) -> Result<Materialized, ServiceError> {
        let prepared = prepare_execution(spec, table, &upload.content_hash, ImageSize::default())?;
        let mut csv = Vec::new();
        write_csv(&prepared.snapshot, &mut csv).map_err(|source| ObjectStoreError::Io {
            path: "snapshot.csv".into(),
            source,
        })?;
        let objects = self.objects.clone();
        let script = prepared.script.bytes.clone();
        let (snapshot_id, _) = tokio::task::spawn_blocking(move || {
            let snapshot = objects.put(&csv, ARTIFACT_LIMIT)?;
            let script = objects.put(&script, ARTIFACT_LIMIT)?;
            Ok::<_, ObjectStoreError>((snapshot.digest, script.digest))
        })
        .await
        .map_err(|e| DatabaseError::Task(e.to_string()))??;
        let canonical_spec = spec
            .canonical_json()
            .map_err(|e| PrepareError::Compile(e.into()))?;
        let upload = upload.clone();
        let free_scale = spec.y_scale == YScale::Free;
        let spec_hash = prepared.script.spec_hash;
        let script_hash = prepared.script.script_hash;
        let snapshot_hash = prepared.snapshot_hash;
        let image = prepared.image;
        let revision = self
            .database
            .call(move |connection| {
                let transaction = connection.transaction()?;
                let result = (|| -> Result<Revision, ServiceError> {
                    insert_upload(
                        &transaction,
                        &upload.content_hash,
                        &upload.classification,
                        &upload.file_name,
                        upload.size,
                    )?;
                    insert_spec(
                        &transaction,
                        &spec_hash,
                        &upload.content_hash,
                        &canonical_spec,
                    )?;
                    let id = new_revision_id();
                    let request_hash = if free_scale {
                        None
                    } else {
                        let request = ExecutionRequest::new(
                            id.clone(),
                            spec_hash,
                            script_hash,
                            snapshot_id,
                            snapshot_hash,
                            image,
                            utc_now(),
                        );
                        Some(*append_evidence(&transaction, request)?.record_hash())
                    };
                    Ok(create_revision(
                        &transaction,
                        &NewRevision {
                            id,
                            spec_hash,
                            free_scale,
                            script_hash,
                            snapshot_id,
                            snapshot_hash,
                            request_hash,
                        },
                    )?)
                })();
                let revision = result?;
                transaction.commit()?;
                Ok::<_, ServiceError>(revision)
            })
            .await?;
        Ok(Materialized { revision, prepared })
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
                Ok::<_, ServiceError>(connection.query_row(
                    "SELECT record, previous_hash FROM evidence_ledger
                     WHERE record_hash = ?1 AND kind = ?2",
                    rusqlite::params![hash, ExecutionRequest::KIND],
                    |row| Ok((row.get(0)?, row.get(1)?)),
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
        revision_id: &str,
        idempotency_key: &str,
        spec: &PlotSpec,
        script: Vec<u8>,
        snapshot: Arc<Snapshot>,
    ) -> Result<ExecutionOutcome, ServiceError> {
        let id = revision_id.to_owned();
        let revision = self
            .database
            .call(move |connection| {
                get_revision(connection, &id)?
                    .ok_or_else(|| ServiceError::from(RepositoryError::NoRevision(id)))
            })
            .await?;
        if revision.status == crate::store::repository::RevisionStatus::ExperimentalDraft {
            return Err(ServiceError::ExperimentalRevision(revision.id));
        }
        let request = self.request_of(&revision).await?;
        // The fingerprint binds the request and the hashes of what is actually supplied.
        let supplied_snapshot = Arc::clone(&snapshot);
        let supplied_hash = tokio::task::spawn_blocking(move || snapshot_hash(&supplied_snapshot))
            .await
            .map_err(|e| DatabaseError::Task(e.to_string()))?;
        let fingerprint = sha256(
            &serde_jcs::to_vec(&json!({
                "request": request.record_hash().to_hex(),
                "script": sha256(&script).to_hex(),
                "snapshot": supplied_hash.to_hex(),
            }))
            .unwrap_or_default(),
        );
        let attempt_id = attempt_id_for(revision_id, idempotency_key);
        let (rev, att) = (revision_id.to_owned(), attempt_id.clone());
        let started = self
            .database
            .call(move |connection| {
                let transaction = connection.transaction()?;
                let outcome = start_attempt(&transaction, &rev, &att, &fingerprint)?;
                transaction.commit()?;
                Ok::<_, ServiceError>(outcome)
            })
            .await?;
        if let StartOutcome::Existing(existing) = started {
            if existing.state == "active" {
                return Err(ServiceError::AttemptRunning(existing.id));
            }
            let rev = revision_id.to_owned();
            let revision = self
                .database
                .call(move |c| get_revision(c, &rev).map_err(ServiceError::from))
                .await?
                .ok_or_else(|| RepositoryError::NoRevision(revision_id.to_owned()))?;
            return Ok(ExecutionOutcome {
                attempt_id: existing.id,
                revision,
                verification: None,
                result: None,
            });
        }

        crash_point("after_attempt_started");
        let record = request.record();
        let result = self
            .runner
            .run(RunRequest {
                script: script.clone(),
                expected_script_hash: record.script_hash,
                snapshot: Arc::clone(&snapshot),
                expected_snapshot_hash: record.snapshot_hash,
                image: record.image,
            })
            .await;
        let verification = verify_execution_result(&VerificationInput {
            request: &request,
            spec,
            snapshot: &snapshot,
            script: &script,
            result: &result,
        });

        crash_point("after_run");
        // Store the outputs first (content-addressed: a crash leaves only unreferenced objects).
        let mut stored = Vec::new();
        if verification.passed {
            let objects = self.objects.clone();
            let outputs = result.outputs.clone();
            stored = tokio::task::spawn_blocking(move || {
                outputs
                    .iter()
                    .map(|o| objects.put(&o.bytes, ARTIFACT_LIMIT).map(|s| s.digest))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
            .map_err(|e| DatabaseError::Task(e.to_string()))??;
        }
        crash_point("after_outputs_stored");
        let verification_record = ExecutionVerificationRecord::new(
            revision_id.to_owned(),
            attempt_id.clone(),
            *request.record_hash(),
            &verification,
            &result,
            utc_now(),
        );
        let passed = verification.passed;
        let reason = if passed {
            String::new()
        } else {
            format!(
                "verification failed: {}{}",
                verification.failed.join(", "),
                result
                    .failure
                    .as_ref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            )
        };
        let bundle = (passed && stored.len() == 3).then(|| BundleToAccept {
            script_hash: record.script_hash,
            png_hash: stored[1],
            statistics_hash: stored[0],
            analytical_hash: result.analytical_hash.unwrap_or(stored[0]),
            snapshot_id: record.snapshot_id,
            verification_hash: Sha256Digest::from_bytes([0; 32]),
        });
        let att = attempt_id.clone();
        let revision = self
            .database
            .call(move |connection| {
                let transaction = connection.transaction()?;
                let step = (|| -> Result<(), ServiceError> {
                    let sealed = append_evidence(&transaction, verification_record)?;
                    match bundle {
                        Some(mut bundle) => {
                            bundle.verification_hash = *sealed.record_hash();
                            complete_verified(&transaction, &att, &bundle)?;
                        }
                        None => fail_attempt(&transaction, &att, &reason)?,
                    }
                    Ok(())
                })();
                step?;
                crash_point("before_completion_commit");
                transaction.commit()?;
                crash_point("after_completion_commit");
                let attempt = get_attempt(connection, &att)?;
                let revision_id = attempt.map(|a| a.revision_id).unwrap_or_default();
                get_revision(connection, &revision_id).map_err(ServiceError::from)
            })
            .await?
            .ok_or_else(|| RepositoryError::NoRevision(revision_id.to_owned()))?;
        Ok(ExecutionOutcome {
            attempt_id,
            revision,
            verification: Some(verification),
            result: Some(result),
        })
    }

    /// Ends every attempt left active by a crash as failed; returns their ids (logged).
    pub async fn reconcile(&self) -> Result<Vec<String>, ServiceError> {
        let ids = self
            .database
            .call(|connection| {
                let transaction = connection.transaction()?;
                let ids = reconcile_active_attempts(
                    &transaction,
                    "the server stopped before this attempt ended; reconciled at start",
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
