//! The execution service end to end with real SQLite, real objects and real R: the pilot's
//! ADLBC through materialize → governed execution → Verified for three parameters, and the
//! refusals and failure paths on the way.
#![cfg(feature = "ssr")]

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

use std::{path::PathBuf, sync::Arc};

use adamviz::{
    domain::{digest::Sha256Digest, matcher::propose_draft, spec::YScale},
    ingest::{confirm::confirm_spec, profile::profile_table, read_dataset, table::Table},
    runner::Runner,
    service::execution::{ExecutionService, ServiceError, UploadInfo},
    store::{
        db::Database, ledger::verify_ledger, objects::ObjectStore, repository::RevisionStatus,
    },
};
use r_fixtures::test_config;
use sha2::{Digest, Sha256};

struct Pilot {
    table: Table,
    upload: UploadInfo,
}

fn pilot() -> Pilot {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/adlbc.xpt");
    let bytes = std::fs::read(&path).expect("the public test data ../shared/data/adlbc.xpt");
    let content_hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
    Pilot {
        table: read_dataset(&bytes).unwrap(),
        upload: UploadInfo {
            content_hash,
            classification: "deidentified".into(),
            file_name: "adlbc.xpt".into(),
            size: bytes.len() as u64,
        },
    }
}

fn service(dir: &std::path::Path) -> ExecutionService {
    let database = Database::open_in(dir).unwrap();
    let objects = ObjectStore::open(dir).unwrap();
    let runner = Runner::new(test_config(&dir.join("runs")));
    ExecutionService::new(database, objects, Arc::new(runner))
}

#[test]
fn three_pilot_parameters_end_verified_and_every_refusal_holds() {
    let pilot = pilot();
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let profile = profile_table(&pilot.table, pilot.upload.content_hash, 5);
    let confirmed = |question: &str| {
        let draft = propose_draft(question, &profile).unwrap().0;
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
                .materialize(&spec, &pilot.table, &pilot.upload)
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
            // The same key again: the same (ended) attempt, nothing re-run.
            let again = service
                .execute(
                    &made.revision.id,
                    "key-1",
                    &spec,
                    made.prepared.script.bytes.clone(),
                    Arc::clone(&made.prepared.snapshot),
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
                        Arc::clone(&made.prepared.snapshot)
                    )
                    .await,
                Err(ServiceError::Repository(_))
            ));
        }

        // A tampered script fails verification: the attempt fails, the revision stays Draft and
        // a retry with the right script succeeds.
        let spec = confirmed("ALT over time by arm");
        let made = service
            .materialize(&spec, &pilot.table, &pilot.upload)
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
            )
            .await
            .unwrap();
        assert_eq!(retried.revision.status, RevisionStatus::Verified);

        // Free scales: Experimental/Draft, no governed execution.
        let mut free = confirmed("ALT over time by arm");
        free.y_scale = YScale::Free;
        let made = service
            .materialize(&free, &pilot.table, &pilot.upload)
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
                    Arc::clone(&made.prepared.snapshot)
                )
                .await,
            Err(ServiceError::ExperimentalRevision(_))
        ));
        assert_eq!(service.reconcile().await.unwrap(), Vec::<String>::new());
    });
    // The ledger: 4 requests + 5 verifications, intact.
    let connection = service.database().connection().unwrap();
    let report = verify_ledger(&connection).unwrap();
    assert_eq!((report.records, report.first_break), (9, None));
}
