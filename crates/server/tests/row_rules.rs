//! Raw SQL against a real data directory after a governed run (real binary, real R): with the
//! database's rules in place every change the evidence does not explain is refused; with the
//! rules dropped, `adamviz ledger verify` finds and names each edited, inserted or deleted row.
//! And the verify itself changes nothing: it opens the database read-only.

#[path = "support/cli.rs"]
mod cli;

use cli::{adamviz, ok};
use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
};

/// One governed run of the pilot's ALT (Verified), shared by the tests; each test works on a
/// copy of its data directory.
fn governed_run() -> &'static (tempfile::TempDir, PathBuf) {
    static RUN: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let pilot = "../shared/data/adlbc.xpt";
        let draft = ok(adamviz(
            &["spec", "draft", pilot, "--question", "ALT over time by arm"],
            &data,
        ));
        let draft_path = dir.path().join("draft.json");
        std::fs::write(&draft_path, draft).unwrap();
        let spec = ok(adamviz(
            &["spec", "confirm", pilot, draft_path.to_str().unwrap()],
            &data,
        ));
        let spec_path = dir.path().join("spec.json");
        std::fs::write(&spec_path, spec).unwrap();
        let run = ok(adamviz(
            &[
                "run",
                pilot,
                "--spec",
                spec_path.to_str().unwrap(),
                "--classification",
                "deidentified",
            ],
            &data,
        ));
        assert!(run.contains("status: Verified"), "{run}");
        (dir, data)
    })
}

/// A copy of the governed run's data directory.
fn copy_of_run() -> (tempfile::TempDir, PathBuf) {
    let (_, data) = governed_run();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("data");
    let status = Command::new("cp")
        .arg("-a")
        .arg(data)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    (dir, copy)
}

fn open(data: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(data.join("adamviz.sqlite3")).unwrap()
}

fn one(connection: &rusqlite::Connection, sql: &str) -> String {
    connection.query_row(sql, [], |row| row.get(0)).unwrap()
}

/// Each statement an attacker with SQL access might try, and the rule that refuses it.
#[test]
fn raw_sql_cannot_make_a_state_the_evidence_does_not_explain() {
    let (_dir, data) = copy_of_run();
    let connection = open(&data);
    let revision = one(&connection, "SELECT id FROM revisions");
    let attempt = one(&connection, "SELECT id FROM attempts");
    let attacks: [(&str, String, &str); 12] = [
        (
            "approve a verified revision",
            format!("UPDATE revisions SET status = 'approved', version = version + 1 WHERE id = '{revision}'"),
            "changes only from draft to verified",
        ),
        (
            "swap a verified revision's script",
            format!("UPDATE revisions SET script_hash = '{}', version = version + 1 WHERE id = '{revision}'", "a".repeat(64)),
            "changes only from draft to verified",
        ),
        (
            "insert a revision already verified",
            format!("INSERT INTO revisions (id, spec_hash, status, version, script_hash, snapshot_id, snapshot_hash, created_at)
                     SELECT 'rev-{}', spec_hash, 'verified', 1, script_hash, snapshot_id, snapshot_hash, created_at FROM revisions", "0".repeat(32)),
            "inserted only as draft or experimental_draft",
        ),
        (
            "insert a draft without its created record",
            format!("INSERT INTO revisions (id, spec_hash, status, version, script_hash, snapshot_id, snapshot_hash, created_at)
                     SELECT 'rev-{}', spec_hash, 'draft', 1, script_hash, snapshot_id, snapshot_hash, created_at FROM revisions", "1".repeat(32)),
            "after its revision_lifecycle created record",
        ),
        (
            "delete a revision",
            format!("DELETE FROM revisions WHERE id = '{revision}'"),
            "never deleted",
        ),
        (
            "reopen a succeeded attempt",
            format!("UPDATE attempts SET state = 'active', ended_at = NULL WHERE id = '{attempt}'"),
            "attempt",
        ),
        (
            "insert an attempt without its started record",
            format!("INSERT INTO attempts (id, revision_id, fingerprint, captured_version, state, started_at, owner, lease_until)
                     SELECT 'att-{}', revision_id, fingerprint, 1, 'active', started_at, 'h/1/1', '2999' FROM attempts", "2".repeat(32)),
            "inserted only active",
        ),
        (
            "insert an attempt already succeeded",
            format!("INSERT INTO attempts (id, revision_id, fingerprint, captured_version, state, started_at)
                     SELECT 'att-{}', revision_id, fingerprint, 1, 'succeeded', started_at FROM attempts", "3".repeat(32)),
            "inserted only active",
        ),
        (
            "delete an attempt",
            format!("DELETE FROM attempts WHERE id = '{attempt}'"),
            "never deleted",
        ),
        (
            "remove the accepted bundle",
            format!("DELETE FROM artifact_bundles WHERE revision_id = '{revision}'"),
            "cannot be removed",
        ),
        ("delete the upload", "DELETE FROM uploads".to_owned(), "never deleted"),
        ("delete the spec", "DELETE FROM specs".to_owned(), "never deleted"),
    ];
    for (name, sql, rule) in &attacks {
        let refused = connection
            .execute_batch(sql)
            .err()
            .unwrap_or_else(|| panic!("{name}: not refused"));
        assert!(refused.to_string().contains(rule), "{name}: {refused}");
    }
    drop(connection);
    let verify = ok(adamviz(&["ledger", "verify"], &data));
    assert!(verify.contains("ledger verify: PASS"), "{verify}");
}

/// An attacker who drops the rules and edits rows is found by the audit, row by row.
#[test]
fn ledger_verify_names_rows_the_records_do_not_explain() {
    let (_dir, data) = copy_of_run();
    let connection = open(&data);
    let revision = one(&connection, "SELECT id FROM revisions");
    let attempt = one(&connection, "SELECT id FROM attempts");
    let triggers: Vec<String> = {
        let mut statement = connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('revisions', 'attempts', 'artifact_bundles')")
            .unwrap();
        let names = statement.query_map([], |row| row.get(0)).unwrap();
        names.collect::<Result<_, _>>().unwrap()
    };
    for trigger in &triggers {
        connection
            .execute_batch(&format!("DROP TRIGGER {trigger}"))
            .unwrap();
    }
    connection
        .execute_batch(&format!(
            "UPDATE revisions SET status = 'approved', version = 3 WHERE id = '{revision}';
             UPDATE attempts SET reason = 'forged' WHERE id = '{attempt}';
             INSERT INTO attempts (id, revision_id, fingerprint, captured_version, state, started_at)
                 SELECT 'att-{}', revision_id, fingerprint, 1, 'failed', started_at FROM attempts;",
            "4".repeat(32)
        ))
        .unwrap();
    drop(connection);
    let output = adamviz(&["ledger", "verify"], &data);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "revisions {revision}: the row says approved at version 3, its records say verified at version 2"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("attempts {attempt}: the row says"))
            && stdout.contains("\"forged\""),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "attempts att-{}: no execution_attempt record started this attempt",
            "4".repeat(32)
        )),
        "{stdout}"
    );
    assert!(stdout.contains("ledger verify: FAIL"), "{stdout}");

    // A deleted attempt row is found too.
    let (_dir, data) = copy_of_run();
    let connection = open(&data);
    connection
        .execute_batch(
            "DROP TRIGGER attempts_are_never_deleted; DROP TRIGGER artifact_bundles_refuse_delete;
             DELETE FROM artifact_bundles; DELETE FROM attempts;",
        )
        .unwrap();
    drop(connection);
    let output = adamviz(&["ledger", "verify"], &data);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "attempts {attempt}: its records say succeeded, but there is no row"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "revisions {revision}: verified without an accepted bundle"
        )),
        "{stdout}"
    );
}

/// Before: `ledger verify` opened the database through the migrating pool (applying migrations
/// and setting WAL), so an audit could change what it audited.
#[test]
fn ledger_verify_leaves_the_database_files_unchanged() {
    let (_dir, data) = copy_of_run();
    let files = |data: &Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(data)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let before = files(&data);
    assert!(before.iter().any(|(name, _)| name == "adamviz.sqlite3"));
    let verify = ok(adamviz(&["ledger", "verify"], &data));
    assert!(verify.contains("ledger verify: PASS"), "{verify}");
    let after = files(&data);
    let names =
        |files: &[(String, Vec<u8>)]| files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&before), names(&after));
    for ((name, bytes), (_, again)) in before.iter().zip(&after) {
        assert!(bytes == again, "{name} changed");
    }
}

/// An uploads row whose raw bytes are gone from the store is named by the audit.
#[test]
fn ledger_verify_names_an_upload_whose_bytes_are_not_stored() {
    let (_dir, data) = copy_of_run();
    let connection = open(&data);
    let hash = one(&connection, "SELECT content_hash FROM uploads");
    drop(connection);
    let object = data
        .join("objects/sha256")
        .join(&hash[..2])
        .join(&hash[2..]);
    std::fs::remove_file(&object).unwrap();
    let output = adamviz(&["ledger", "verify"], &data);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "uploaded dataset (object {hash}, {}): the uploads row names raw bytes that are not in the store",
            object.display()
        )),
        "{stdout}"
    );
}
