//! The execution service end to end with real SQLite, real objects and real R: the pilot's
//! ADLBC through materialize → governed execution → Verified for three parameters, and the
//! refusals and failure paths on the way.

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

#[path = "support/evidence_kinds.rs"]
mod evidence_kinds;

use std::{path::PathBuf, sync::Arc};

use adamviz_engine::ingest::{
    confirm::confirm_spec, profile::profile_table, read_dataset, table::Table,
};
use adamviz_engine::runner::{RunFailure, Runner, RunnerConfig};
use adamviz_evidence::{
    kinds::verify_stored, record::Unverified, revision_context::RevisionContextRecord,
};
use adamviz_model::{digest::Sha256Digest, spec::YScale};
use adamviz_services::execution::{ExecutionService, ServiceError, UploadInfo};
use adamviz_store::{
    db::Database,
    ledger::{records_about, verify_ledger},
    objects::ObjectStore,
    repository::{get_attempt, RepositoryError, RevisionStatus},
};
use r_fixtures::test_config;
use sha2::{Digest, Sha256};

struct Pilot {
    table: Arc<Table>,
    upload: UploadInfo,
}

fn pilot_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("../shared/data/adlbc.xpt")
}

fn pilot() -> Pilot {
    let bytes = std::fs::read(pilot_path()).expect("the public test data ../shared/data/adlbc.xpt");
    let content_hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
    Pilot {
        table: Arc::new(read_dataset(&bytes).unwrap()),
        upload: UploadInfo {
            content_hash,
            classification: "deidentified".into(),
            file_name: "adlbc.xpt".into(),
            size: bytes.len() as u64,
        },
    }
}

/// The command line's actor, as `adamviz run` records it.
fn actor() -> adamviz_evidence::actor::Actor {
    adamviz_evidence::actor::Actor::command_line()
}

/// The pilot's ALT spec, as proposed and confirmed.
fn alt_spec(pilot: &Pilot) -> adamviz_model::spec::PlotSpec {
    let profile = profile_table(&pilot.table, pilot.upload.content_hash, 5);
    let draft =
        adamviz_engine::ingest::draft::draft_spec("ALT over time by arm", &profile, &pilot.table)
            .unwrap()
            .spec;
    confirm_spec(&draft, &pilot.table, pilot.upload.content_hash).unwrap()
}

fn service(dir: &std::path::Path) -> ExecutionService {
    service_with(dir, test_config(&dir.join("runs")))
}

fn service_with(dir: &std::path::Path, config: RunnerConfig) -> ExecutionService {
    let database = Database::open_in(dir).unwrap();
    let objects = ObjectStore::open(dir).unwrap();
    // The pilot's raw bytes are in the store, as an upload's are.
    objects
        .put_stream(std::fs::File::open(pilot_path()).unwrap(), 1 << 30)
        .unwrap();
    ExecutionService::new(database, objects, Arc::new(Runner::new(config)))
}

/// The kinds of the records about `revision`, each verified as its typed record.
fn record_kinds(
    service: &ExecutionService,
    revision: &adamviz_model::ids::RevisionId,
) -> Vec<String> {
    let connection = service.database().connection().unwrap();
    records_about(&connection, revision)
        .unwrap()
        .into_iter()
        .map(|stored| {
            let previous = Sha256Digest::try_from(stored.previous_hash.clone()).unwrap();
            verify_stored(&stored.kind, &stored.record, &previous)
                .unwrap_or_else(|e| panic!("record {} does not verify: {e}", stored.seq));
            stored.kind
        })
        .collect()
}

#[test]
fn three_pilot_parameters_end_verified_and_every_refusal_holds() {
    let pilot = pilot();
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let profile = profile_table(&pilot.table, pilot.upload.content_hash, 5);
    let confirmed = |question: &str| {
        let draft = adamviz_engine::ingest::draft::draft_spec(question, &profile, &pilot.table)
            .unwrap()
            .spec;
        confirm_spec(&draft, &pilot.table, pilot.upload.content_hash).unwrap()
    };
    runtime.block_on(async {
        for question in [
            "ALT over time by arm",
            "AST over time by arm",
            "albumin week 12 vs baseline",
        ] {
            let spec = confirmed(question);
            let made = service
                .materialize(&spec, Arc::clone(&pilot.table), &pilot.upload, &actor())
                .await
                .unwrap();
            assert_eq!(made.revision.status, RevisionStatus::Draft, "{question}");
            let outcome = service
                .execute(
                    &made.revision.id,
                    "key-1",
                    &spec,
                    made.prepared.script.bytes.clone(),
                    Arc::clone(&made.prepared.snapshot),
                    &actor(),
                )
                .await
                .unwrap();
            let verification = outcome.verification.unwrap();
            assert!(
                verification.passed,
                "{question}: {:#?}",
                verification.checks
            );
            assert_eq!(
                (outcome.revision.status, outcome.revision.version),
                (RevisionStatus::Verified, 2),
                "{question}"
            );
            assert_eq!(
                record_kinds(&service, &made.revision.id),
                evidence_kinds::VERIFIED
            );
            // The context holds everything to reproduce: spec, source, records, result.
            let connection = service.database().connection().unwrap();
            let context = records_about(&connection, &made.revision.id)
                .unwrap()
                .pop()
                .unwrap();
            let context = Unverified::<RevisionContextRecord>::parse(&context.record)
                .unwrap()
                .verify(&Sha256Digest::try_from(context.previous_hash).unwrap())
                .unwrap();
            let context = context.record();
            assert_eq!(context.question, question);
            assert_eq!(Some(context.record_hash), outcome.context_hash);
            assert_eq!(context.spec_hash, made.prepared.script.spec_hash);
            assert_eq!(context.source.file_name, "adlbc.xpt");
            assert_eq!(context.source.row_count, 74_264);
            assert_eq!(context.snapshot.snapshot_hash, made.prepared.snapshot_hash);
            assert_eq!(
                context.snapshot.row_count,
                made.prepared.snapshot.rows.len() as u64
            );
            assert_eq!(
                context
                    .snapshot
                    .columns
                    .iter()
                    .map(|c| c.role.as_str())
                    .collect::<Vec<_>>(),
                ["subject", "treatment", "visit", "visit_order", "value"]
            );
            let r_version = context.result["environment"]["r_version"].as_str().unwrap();
            assert!(r_version.starts_with("R version "), "{r_version}");
            assert_eq!(
                Some(context.outputs.analytical_hash).map(|h| h.to_hex()),
                outcome.revision.analytical_hash
            );
            drop(connection);
            // The same key again: the same (ended) attempt, nothing re-run.
            let again = service
                .execute(
                    &made.revision.id,
                    "key-1",
                    &spec,
                    made.prepared.script.bytes.clone(),
                    Arc::clone(&made.prepared.snapshot),
                    &actor(),
                )
                .await
                .unwrap();
            assert_eq!(again.attempt_id, outcome.attempt_id);
            assert!(again.result.is_none());
            // Verified is not Draft: a new key is refused.
            assert!(matches!(
                service
                    .execute(
                        &made.revision.id,
                        "key-2",
                        &spec,
                        made.prepared.script.bytes.clone(),
                        Arc::clone(&made.prepared.snapshot),
                        &actor(),
                    )
                    .await,
                Err(ServiceError::Repository(_))
            ));
        }

        // A tampered script fails verification: the attempt fails, the revision stays Draft and
        // a retry with the right script succeeds.
        let spec = confirmed("ALT over time by arm");
        let made = service
            .materialize(&spec, Arc::clone(&pilot.table), &pilot.upload, &actor())
            .await
            .unwrap();
        let mut tampered = made.prepared.script.bytes.clone();
        tampered.extend_from_slice(b"# one more line\n");
        let failed = service
            .execute(
                &made.revision.id,
                "key-1",
                &spec,
                tampered,
                Arc::clone(&made.prepared.snapshot),
                &actor(),
            )
            .await
            .unwrap();
        assert!(!failed.verification.as_ref().unwrap().passed);
        assert_eq!(failed.revision.status, RevisionStatus::Draft);
        assert!(
            failed.result.unwrap().failure.is_some(),
            "the runner refused the mismatching script"
        );
        let retried = service
            .execute(
                &made.revision.id,
                "key-2",
                &spec,
                made.prepared.script.bytes.clone(),
                Arc::clone(&made.prepared.snapshot),
                &actor(),
            )
            .await
            .unwrap();
        assert_eq!(retried.revision.status, RevisionStatus::Verified);
        let kinds = record_kinds(&service, &made.revision.id);
        assert_eq!(kinds[..5], evidence_kinds::FAILED_ATTEMPT);
        assert_eq!(kinds[5..], evidence_kinds::VERIFIED[2..]);

        // Free scales: Experimental/Draft, no governed execution.
        let mut free = confirmed("ALT over time by arm");
        free.y_scale = YScale::Free;
        let made = service
            .materialize(&free, Arc::clone(&pilot.table), &pilot.upload, &actor())
            .await
            .unwrap();
        assert_eq!(made.revision.status, RevisionStatus::ExperimentalDraft);
        assert!(matches!(
            service
                .execute(
                    &made.revision.id,
                    "key-1",
                    &free,
                    made.prepared.script.bytes.clone(),
                    Arc::clone(&made.prepared.snapshot),
                    &actor(),
                )
                .await,
            Err(ServiceError::ExperimentalRevision(_))
        ));
        assert!(service.reconcile().await.unwrap().is_empty());
    });
    // The ledger: three verified revisions (8 records each), the failed and retried one (5 + 6)
    // and the free-scale one (its creation), intact.
    let connection = service.database().connection().unwrap();
    let report = verify_ledger(&connection).unwrap();
    assert_eq!((report.records, report.first_break), (3 * 8 + 11 + 1, None));
}

#[test]
fn a_runner_timeout_fails_the_attempt_and_a_retry_succeeds() {
    let pilot = pilot();
    let dir = tempfile::tempdir().unwrap();
    // R cannot even start in 50 ms: the run times out.
    let mut hurried = test_config(&dir.path().join("runs"));
    hurried.limits.wall_clock_ms = 50;
    let impatient = service_with(dir.path(), hurried);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let spec = alt_spec(&pilot);
    runtime.block_on(async {
        let made = impatient
            .materialize(&spec, Arc::clone(&pilot.table), &pilot.upload, &actor())
            .await
            .unwrap();
        let run = |service: ExecutionService, key: &'static str| {
            let (id, spec) = (made.revision.id.clone(), spec.clone());
            let (script, snapshot) = (
                made.prepared.script.bytes.clone(),
                Arc::clone(&made.prepared.snapshot),
            );
            async move {
                service
                    .execute(&id, key, &spec, script, snapshot, &actor())
                    .await
            }
        };
        let timed_out = run(impatient.clone(), "key-1").await.unwrap();
        let result = timed_out.result.unwrap();
        assert!(
            matches!(result.failure, Some(RunFailure::TimedOut { .. })),
            "{:?}",
            result.failure
        );
        let verification = timed_out.verification.unwrap();
        assert!(verification.failed.contains(&"runner_success".to_owned()));
        assert_eq!(timed_out.revision.status, RevisionStatus::Draft);
        let connection = impatient.database().connection().unwrap();
        let attempt = get_attempt(&connection, &timed_out.attempt_id)
            .unwrap()
            .unwrap();
        assert_eq!(attempt.state, "failed");
        assert!(
            attempt
                .reason
                .as_deref()
                .unwrap_or_default()
                .contains("runner_success"),
            "{:?}",
            attempt.reason
        );
        drop(connection);
        // The same store with a patient runner: a new key succeeds.
        let patient = service(dir.path());
        let retried = run(patient, "key-2").await.unwrap();
        assert_eq!(retried.revision.status, RevisionStatus::Verified);
    });
}

#[test]
fn concurrent_attempts_for_one_revision_run_one_at_a_time() {
    let pilot = pilot();
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let spec = alt_spec(&pilot);
    runtime.block_on(async {
        let made = service
            .materialize(&spec, Arc::clone(&pilot.table), &pilot.upload, &actor())
            .await
            .unwrap();
        let run = |key: &'static str| {
            let service = service.clone();
            let (id, spec) = (made.revision.id.clone(), spec.clone());
            let (script, snapshot) = (
                made.prepared.script.bytes.clone(),
                Arc::clone(&made.prepared.snapshot),
            );
            tokio::spawn(async move {
                service
                    .execute(&id, key, &spec, script, snapshot, &actor())
                    .await
            })
        };
        // Two keys and a repeat of the first, all at once: one attempt runs, the other key is
        // refused while it is active, and the repeated key is told its attempt is running.
        let (a, b, again) = (run("key-a"), run("key-b"), run("key-a"));
        let outcomes = [a.await.unwrap(), b.await.unwrap(), again.await.unwrap()];
        let verified = outcomes
            .iter()
            .filter(|o| {
                matches!(o, Ok(outcome) if outcome.revision.status == RevisionStatus::Verified
                    && outcome.result.is_some())
            })
            .count();
        assert_eq!(verified, 1, "{outcomes:#?}");
        for outcome in &outcomes {
            match outcome {
                Ok(_) => {}
                Err(ServiceError::Repository(RepositoryError::AnotherActiveAttempt { .. }))
                | Err(ServiceError::AttemptRunning(_)) => {}
                // Started after the winner ended: the revision is Verified, no longer Draft.
                Err(ServiceError::Repository(RepositoryError::NotDraft { .. })) => {}
                Err(other) => panic!("unexpected refusal: {other}"),
            }
        }
        let connection = service.database().connection().unwrap();
        let attempts: i64 = connection
            .as_sqlite()
            .unwrap()
            .query_row("SELECT count(*) FROM attempts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(attempts, 1, "only one attempt was ever started");
    });
}

/// Before: when the repository refused the completion, the passing verification record was
/// rolled back with it, so the ledger no longer said that R's output had been verified. Here
/// the database refuses every bundle (a trigger the test adds), the attempt fails, and the
/// verdict stays in the ledger, named by the failure record.
#[test]
fn a_refused_completion_keeps_the_passing_verification_record() {
    let pilot = pilot();
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let spec = alt_spec(&pilot);
    service
        .database()
        .connection()
        .unwrap()
        .as_sqlite()
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER test_refuses_bundles BEFORE INSERT ON artifact_bundles
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
        )
        .unwrap();
    runtime.block_on(async {
        let made = service
            .materialize(&spec, Arc::clone(&pilot.table), &pilot.upload, &actor())
            .await
            .unwrap();
        let refused = service
            .execute(
                &made.revision.id,
                "key",
                &spec,
                made.prepared.script.bytes.clone(),
                Arc::clone(&made.prepared.snapshot),
                &actor(),
            )
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains("refused by the test"),
            "{refused}"
        );
        let connection = service.database().connection().unwrap();
        let attempt_id = adamviz_store::repository::attempt_id_for(&made.revision.id, "key");
        let attempt = get_attempt(&connection, &attempt_id).unwrap().unwrap();
        assert_eq!(attempt.state, "failed");
        assert!(attempt
            .reason
            .as_deref()
            .unwrap()
            .starts_with("completion refused:"));
        let records = records_about(&connection, &made.revision.id).unwrap();
        let verification = records
            .iter()
            .find(|r| r.kind == "execution_verification")
            .expect("the verification record is kept");
        let verdict: serde_json::Value = serde_json::from_slice(&verification.record).unwrap();
        assert_eq!(verdict["passed"], true);
        let failed = records
            .iter()
            .filter(|r| r.kind == "execution_attempt")
            .map(|r| serde_json::from_slice::<serde_json::Value>(&r.record).unwrap())
            .find(|r| r["event"] == "failed")
            .expect("the attempt's failure record");
        assert_eq!(failed["verification_hash"], verdict["record_hash"]);
        assert_eq!(
            adamviz_store::repository::get_revision(&connection, &made.revision.id)
                .unwrap()
                .unwrap()
                .status,
            RevisionStatus::Draft
        );
        verify_ledger(&connection).unwrap();
    });
}

/// Before: `adamviz run` recorded an upload row for a file it had only read, so the store held
/// an `uploads` row whose raw bytes were never kept. Now a revision is made only from an upload
/// whose bytes are in the object store.
#[test]
fn a_dataset_whose_raw_bytes_are_not_stored_is_not_materialized() {
    let pilot = pilot();
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open_in(dir.path()).unwrap();
    let objects = ObjectStore::open(dir.path()).unwrap();
    let service = ExecutionService::new(
        database,
        objects,
        Arc::new(Runner::new(test_config(&dir.path().join("runs")))),
    );
    let spec = alt_spec(&pilot);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let refused = runtime
        .block_on(service.materialize(&spec, Arc::clone(&pilot.table), &pilot.upload, &actor()))
        .unwrap_err();
    assert!(
        matches!(refused, ServiceError::UploadNotStored(hash) if hash == pilot.upload.content_hash),
        "{refused}"
    );
    let connection = service.database().connection().unwrap();
    let uploads: i64 = connection
        .as_sqlite()
        .unwrap()
        .query_row("SELECT count(*) FROM uploads", [], |row| row.get(0))
        .unwrap();
    assert_eq!(uploads, 0, "no uploads row without its object");
}

/// Before: an error after the attempt started (here the snapshot object the request names is
/// gone when the passing run's outputs are stored) returned at once and left the attempt
/// active; with recovery sparing a live owner's attempts, a server would have kept it active
/// for good and refused every retry. Now the attempt ends, failed, with the error.
#[test]
fn an_error_after_the_attempt_started_ends_the_attempt() {
    let pilot = pilot();
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let spec = alt_spec(&pilot);
    runtime.block_on(async {
        let made = service
            .materialize(&spec, Arc::clone(&pilot.table), &pilot.upload, &actor())
            .await
            .unwrap();
        let objects = ObjectStore::open(dir.path()).unwrap();
        let snapshot_id = Sha256Digest::try_from(made.revision.snapshot_id.clone()).unwrap();
        let snapshot_object = objects.path_of(&snapshot_id);
        std::fs::remove_file(&snapshot_object).unwrap();
        let failed = service
            .execute(
                &made.revision.id,
                "key",
                &spec,
                made.prepared.script.bytes.clone(),
                Arc::clone(&made.prepared.snapshot),
                &actor(),
            )
            .await
            .unwrap_err();
        assert!(failed.to_string().contains("no stored object"), "{failed}");
        let connection = service.database().connection().unwrap();
        let attempt_id = adamviz_store::repository::attempt_id_for(&made.revision.id, "key");
        let attempt = get_attempt(&connection, &attempt_id).unwrap().unwrap();
        assert_eq!(attempt.state, "failed");
        assert!(attempt.reason.unwrap().starts_with("the execution failed:"));
        verify_ledger(&connection).unwrap();
    });
}
