//! Crash safety: `adamviz run` (a real child process) is killed with SIGKILL at each step
//! between attempt start and promotion; after a restart's reconciliation there is no Verified
//! revision without an accepted bundle and passing evidence, no attempt left active, nothing
//! recorded is lost, and a retry succeeds.

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

#[path = "support/evidence_kinds.rs"]
mod evidence_kinds;

use std::{os::unix::process::ExitStatusExt, process::Command, sync::Arc};

use adamviz_engine::runner::Runner;
use adamviz_services::execution::{ExecutionService, CRASH_POINTS};
use adamviz_store::{
    db::Database,
    ledger::verify_ledger,
    objects::ObjectStore,
    repository::{list_revisions, RevisionStatus},
};
use r_fixtures::{pilot_alt, test_config};

fn count(connection: &rusqlite::Connection, sql: &str) -> i64 {
    connection.query_row(sql, [], |row| row.get(0)).unwrap()
}

#[test]
fn a_kill_at_any_step_leaves_a_consistent_store_and_a_retry_succeeds() {
    let (spec, pilot) = pilot_alt();
    for point in CRASH_POINTS {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("data");
        let spec_path = dir.path().join("spec.json");
        std::fs::write(&spec_path, serde_json::to_vec(spec).unwrap()).unwrap();
        let status = Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .args(["run", "../shared/data/adlbc.xpt", "--spec"])
            .arg(&spec_path)
            .args(["--classification", "deidentified", "--data-dir"])
            .arg(&data_dir)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .env("ADAMVIZ_CRASH_AT", point)
            .output()
            .unwrap()
            .status;
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "{point}: not killed ({status})"
        );

        // Restart: open, reconcile, check the invariants.
        let database = Database::open_in(&data_dir).unwrap();
        let service = ExecutionService::new(
            database.clone(),
            ObjectStore::open(&data_dir).unwrap(),
            Arc::new(Runner::new(test_config(&dir.path().join("runs")))),
        );
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let reconciled = runtime.block_on(service.reconcile()).unwrap();
        let connection = database.connection().unwrap();
        let committed = point == "after_completion_commit";
        assert_eq!(
            reconciled.len(),
            usize::from(!committed),
            "{point}: reconciled {reconciled:?}"
        );
        assert_eq!(
            count(
                connection.as_sqlite().unwrap(),
                "SELECT count(*) FROM attempts WHERE state = 'active'"
            ),
            0,
            "{point}"
        );
        assert_eq!(
            count(
                connection.as_sqlite().unwrap(),
                "SELECT count(*) FROM revisions r WHERE r.status = 'verified' AND NOT EXISTS (
                     SELECT 1 FROM artifact_bundles b JOIN evidence_ledger e
                       ON e.record_hash = b.verification_hash
                     WHERE b.revision_id = r.id AND json_extract(e.record, '$.passed') = 1)"
            ),
            0,
            "{point}: a Verified revision without its bundle and passing evidence"
        );
        let report = verify_ledger(&connection).unwrap();
        assert_eq!(report.first_break, None, "{point}");
        // What was recorded before the crash is still there (request, creation, attempt start),
        // plus the reconciliation's failure record; the completion's records only if committed.
        let kinds: Vec<String> = {
            let mut statement = connection
                .as_sqlite()
                .unwrap()
                .prepare("SELECT kind FROM evidence_ledger ORDER BY seq")
                .unwrap();
            let rows = statement.query_map([], |row| row.get(0)).unwrap();
            rows.collect::<Result<_, _>>().unwrap()
        };
        let expected_kinds: &[&str] = if committed {
            &evidence_kinds::VERIFIED
        } else {
            &evidence_kinds::RECONCILED_ATTEMPT
        };
        assert_eq!(kinds, expected_kinds, "{point}");
        assert_eq!(report.records, kinds.len() as u64, "{point}");
        let revisions = list_revisions(&connection).unwrap();
        assert_eq!(revisions.len(), 1, "{point}");
        let expected = if committed {
            RevisionStatus::Verified
        } else {
            RevisionStatus::Draft
        };
        assert_eq!(revisions[0].status, expected, "{point}");
        drop(connection);

        if !committed {
            let retried = runtime
                .block_on(service.execute(
                    &revisions[0].id,
                    "after-restart",
                    spec,
                    pilot.script.bytes.clone(),
                    Arc::clone(&pilot.snapshot),
                    &adamviz_evidence::actor::Actor::command_line(),
                ))
                .unwrap();
            assert_eq!(
                retried.revision.status,
                RevisionStatus::Verified,
                "{point}: retry"
            );
            let connection = database.connection().unwrap();
            assert_eq!(
                verify_ledger(&connection).unwrap().first_break,
                None,
                "{point}"
            );
        }
    }
}
