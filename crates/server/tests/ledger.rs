//! The SQLite store and the evidence ledger on real database files: migrations, the
//! append-only triggers, and tampering behind SQLite's back (each attack named and found by
//! `verify_ledger` and `adamviz ledger verify`).

use std::process::Command;

use adamviz_store::{
    db::{Database, DatabaseError, DATABASE_FILE},
    ledger::{append_record, verify_ledger, AppendError, LedgerProblem, GENESIS_HASH},
};
use serde_json::{json, Map, Value};

fn body(n: u64) -> Map<String, Value> {
    match json!({
        "revision_id": format!("rev-{n}"),
        "spec_hash": "ab".repeat(32),
        "note": format!("record {n} with \"quotes\" and é"),
        "n": n,
    }) {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

/// A database with `count` records; returns it and its directory.
fn ledger_with(count: u64) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open_in(dir.path()).unwrap();
    let mut connection = database.connection().unwrap();
    for n in 1..=count {
        let transaction = connection.transaction().unwrap();
        append_record(&transaction, "execution_request", body(n)).unwrap();
        transaction.commit().unwrap();
    }
    drop(connection);
    (dir, database)
}

/// A raw connection to the file, as an attacker with file access would have, triggers dropped.
fn raw_without_triggers(dir: &std::path::Path) -> rusqlite::Connection {
    let raw = rusqlite::Connection::open(dir.join(DATABASE_FILE)).unwrap();
    raw.execute_batch(
        "DROP TRIGGER evidence_ledger_refuses_update; DROP TRIGGER evidence_ledger_refuses_delete;",
    )
    .unwrap();
    raw
}

fn first_break(database: &Database) -> Option<(i64, LedgerProblem)> {
    let connection = database.connection().unwrap();
    verify_ledger(&connection)
        .unwrap()
        .first_break
        .map(|b| (b.seq, b.problem))
}

#[test]
fn records_chain_from_genesis_and_verify() {
    let (_dir, database) = ledger_with(5);
    let connection = database.connection().unwrap();
    let report = verify_ledger(&connection).unwrap();
    assert_eq!((report.records, report.first_break), (5, None));
    let (first_previous, last_hash): (String, String) = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT (SELECT previous_hash FROM evidence_ledger WHERE seq = 1),
                    (SELECT record_hash FROM evidence_ledger WHERE seq = 5)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(first_previous, GENESIS_HASH);
    assert_eq!(report.head, last_hash);
}

#[test]
fn the_body_cannot_set_the_fields_the_ledger_owns() {
    let (_dir, database) = ledger_with(0);
    let mut connection = database.connection().unwrap();
    let transaction = connection.transaction().unwrap();
    let mut forged = body(1);
    forged.insert("record_hash".into(), json!("00"));
    assert!(matches!(
        append_record(&transaction, "execution_request", forged),
        Err(AppendError::ReservedField {
            field: "record_hash"
        })
    ));
}

#[test]
fn triggers_refuse_update_and_delete() {
    let (_dir, database) = ledger_with(2);
    let connection = database.connection().unwrap();
    let update = connection
        .as_sqlite()
        .unwrap()
        .execute("UPDATE evidence_ledger SET kind = 'x' WHERE seq = 1", [])
        .unwrap_err();
    assert!(
        update.to_string().contains("append-only: UPDATE refused"),
        "{update}"
    );
    let delete = connection
        .as_sqlite()
        .unwrap()
        .execute("DELETE FROM evidence_ledger WHERE seq = 2", [])
        .unwrap_err();
    assert!(
        delete.to_string().contains("append-only: DELETE refused"),
        "{delete}"
    );
    drop(connection);
    assert_eq!(first_break(&database), None);
}

#[test]
fn tampering_behind_sqlites_back_is_found_and_named() {
    // Each attack on a fresh ledger of five records; the expected first broken record.
    type Attack = fn(&rusqlite::Connection);
    let attacks: [(&str, Attack, i64); 6] = [
        (
            "edit a value in record 3",
            |raw| {
                raw.execute(
                "UPDATE evidence_ledger SET record = replace(record, 'rev-3', 'rev-9') WHERE seq = 3",
                [],
            )
            .unwrap();
            },
            3,
        ),
        (
            "edit record 3 and recompute its self-hash",
            |raw| {
                let bytes: Vec<u8> = raw
                    .query_row(
                        "SELECT record FROM evidence_ledger WHERE seq = 3",
                        [],
                        |r| r.get(0),
                    )
                    .unwrap();
                let mut record: Map<String, Value> = serde_json::from_slice(&bytes).unwrap();
                record.insert("note".into(), json!("rewritten"));
                record.remove("record_hash");
                let hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
                    serde_jcs::to_vec(&record).unwrap(),
                ));
                record.insert("record_hash".into(), json!(hash));
                raw.execute(
                    "UPDATE evidence_ledger SET record = ?1, record_hash = ?2 WHERE seq = 3",
                    rusqlite::params![serde_jcs::to_vec(&record).unwrap(), hash],
                )
                .unwrap();
            },
            4,
        ),
        (
            "delete record 3",
            |raw| {
                raw.execute("DELETE FROM evidence_ledger WHERE seq = 3", [])
                    .unwrap();
            },
            4,
        ),
        (
            "delete the last record",
            |raw| {
                raw.execute("DELETE FROM evidence_ledger WHERE seq = 5", [])
                    .unwrap();
            },
            5,
        ),
        (
            "change the kind column of record 2",
            |raw| {
                raw.execute(
                    "UPDATE evidence_ledger SET kind = 'approval' WHERE seq = 2",
                    [],
                )
                .unwrap();
            },
            2,
        ),
        (
            "store record 1 in a non-canonical form",
            |raw| {
                raw.execute(
                    "UPDATE evidence_ledger SET record = replace(record, '{', '{ ') WHERE seq = 1",
                    [],
                )
                .unwrap();
            },
            1,
        ),
    ];
    for (name, attack, expected_seq) in attacks {
        let (dir, database) = ledger_with(5);
        attack(&raw_without_triggers(dir.path()));
        let found = first_break(&database);
        let Some((seq, problem)) = found else {
            panic!("{name}: not detected");
        };
        assert_eq!(seq, expected_seq, "{name}: {problem}");
        let expected_kind = match name {
            n if n.starts_with("edit a value") => {
                matches!(problem, LedgerProblem::SelfHashMismatch { .. })
            }
            n if n.contains("recompute") => matches!(problem, LedgerProblem::BrokenLink { .. }),
            n if n.starts_with("delete") => matches!(problem, LedgerProblem::Gap { .. }),
            n if n.contains("kind column") => matches!(
                problem,
                LedgerProblem::ColumnMismatch { column: "kind", .. }
            ),
            _ => matches!(problem, LedgerProblem::NotCanonical),
        };
        assert!(expected_kind, "{name}: wrong problem {problem:?}");

        // The CLI says the same and exits 1.
        let output = Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .args(["ledger", "verify", "--data-dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{name}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(&format!(
                "evidence ledger BROKEN: evidence ledger record {expected_seq} "
            )),
            "{name}: {stdout}"
        );
    }
}

#[test]
fn the_cli_checks_each_records_schema_beyond_the_chain() {
    // An intact chain of records that are not valid execution_request records (the bodies of
    // these tests are free-form): the chain passes, every record fails its schema, exit 1.
    let (dir, _database) = ledger_with(3);
    let output = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(["ledger", "verify", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.starts_with("evidence ledger OK: 3 records"),
        "{stdout}"
    );
    assert!(
        stdout.contains("records: 0 verified against their schemas and types, 3 failed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("record 1 (execution_request): the execution_request record breaks its schema execution-request-v5.schema.json"),
        "{stdout}"
    );
    assert!(stdout.contains("ledger verify: FAIL"), "{stdout}");
}

#[test]
fn migrations_apply_once_and_a_changed_or_unknown_one_stops_the_open() {
    let (dir, database) = ledger_with(1);
    drop(database);
    // Reopening applies nothing new and keeps the records.
    let database = Database::open_in(dir.path()).unwrap();
    assert_eq!(first_break(&database), None);
    drop(database);
    let raw = rusqlite::Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    raw.execute(
        "UPDATE schema_migrations SET sha256 = 'x' WHERE version = 1",
        [],
    )
    .unwrap();
    assert!(matches!(
        Database::open_in(dir.path()),
        Err(DatabaseError::MigrationChanged { version: 1, .. })
    ));
    raw.execute_batch(
        "UPDATE schema_migrations SET sha256 = (SELECT sha256 FROM schema_migrations) WHERE 0;
         INSERT INTO schema_migrations VALUES (99, 'future', 'y', 'now');",
    )
    .unwrap();
    let error = Database::open_in(dir.path()).unwrap_err();
    assert!(
        matches!(
            error,
            DatabaseError::MigrationChanged { .. }
                | DatabaseError::UnknownMigration { version: 99 }
        ),
        "{error}"
    );
}

#[test]
fn connections_use_wal_foreign_keys_and_a_busy_timeout() {
    let (_dir, database) = ledger_with(0);
    let connection = database.connection().unwrap();
    let mode: String = connection
        .as_sqlite()
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    let foreign_keys: i64 = connection
        .as_sqlite()
        .unwrap()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    let timeout: i64 = connection
        .as_sqlite()
        .unwrap()
        .query_row("PRAGMA busy_timeout", [], |r| r.get(0))
        .unwrap();
    assert_eq!((mode.as_str(), foreign_keys, timeout), ("wal", 1, 5000));
}
