//! Tampering with a real data directory after a governed run (real binary, real R), each
//! attack found and named by `adamviz ledger verify`: an artifact file swapped, one removed, a
//! ledger row edited behind SQLite's back, and a forgery that re-seals the whole chain after
//! the edit (caught by the schema check on read).

#[path = "support/cli.rs"]
mod cli;

use cli::{adamviz, ok};
use std::{
    os::unix::fs::PermissionsExt as _,
    path::{Path, PathBuf},
};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `adamviz ledger verify`, which must fail: its stdout.
fn verify_fails(data: &Path) -> String {
    let output = adamviz(&["ledger", "verify"], data);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("ledger verify: FAIL"), "{stdout}");
    stdout
}

fn object_path(data: &Path, hex: &str) -> PathBuf {
    data.join("objects/sha256").join(&hex[..2]).join(&hex[2..])
}

/// Overwrites a stored object (making it writable first, as an attacker with file access can).
fn overwrite(path: &Path, bytes: &[u8]) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn swapped_or_removed_artifacts_and_edited_or_resealed_records_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (spec, _) = {
        // The pilot ALT spec, confirmed from the public data through the CLI.
        let draft = ok(adamviz(
            &[
                "spec",
                "draft",
                "../shared/data/adlbc.xpt",
                "--question",
                "ALT over time by arm",
            ],
            &data,
        ));
        let draft_path = dir.path().join("draft.json");
        std::fs::write(&draft_path, draft).unwrap();
        let spec = ok(adamviz(
            &[
                "spec",
                "confirm",
                "../shared/data/adlbc.xpt",
                draft_path.to_str().unwrap(),
            ],
            &data,
        ));
        let spec_path = dir.path().join("spec.json");
        std::fs::write(&spec_path, spec).unwrap();
        (spec_path, ())
    };
    let run = ok(adamviz(
        &[
            "run",
            "../shared/data/adlbc.xpt",
            "--spec",
            spec.to_str().unwrap(),
            "--classification",
            "deidentified",
        ],
        &data,
    ));
    let id = run.split_whitespace().nth(1).unwrap().to_owned();
    let intact = ok(adamviz(&["ledger", "verify"], &data));
    assert!(intact.contains("records: 8 verified"), "{intact}");
    assert!(
        intact.contains("artifacts: 8 re-hashed intact from 1 accepted bundles, 0 failed"),
        "{intact}"
    );
    let shown: Value =
        serde_json::from_str(&ok(adamviz(&["revisions", "show", &id, "--json"], &data))).unwrap();
    let png = object_path(&data, shown["image_hash"].as_str().unwrap());
    let original_png = std::fs::read(&png).unwrap();

    // 1. The PNG swapped for other bytes.
    overwrite(&png, b"\x89PNG\r\n\x1a\n not the plot that was verified");
    let report = verify_fails(&data);
    assert!(
        report.contains(&format!("artifact plot.png of revision {id}"))
            && report.contains("is corrupt: its bytes hash to"),
        "{report}"
    );
    overwrite(&png, &original_png);
    ok(adamviz(&["ledger", "verify"], &data));

    // 2. The snapshot CSV removed.
    let snapshot = object_path(&data, shown["snapshot_id"].as_str().unwrap());
    let original_snapshot = std::fs::read(&snapshot).unwrap();
    std::fs::remove_file(&snapshot).unwrap();
    let report = verify_fails(&data);
    assert!(
        report.contains(&format!("artifact snapshot.csv of revision {id}"))
            && report.contains("no stored object has digest"),
        "{report}"
    );
    std::fs::write(&snapshot, &original_snapshot).unwrap();
    ok(adamviz(&["ledger", "verify"], &data));

    // 3. The verification record edited in place, behind SQLite's back.
    let database = data.join("adamviz.sqlite3");
    let raw = rusqlite::Connection::open(&database).unwrap();
    raw.execute_batch(
        "PRAGMA foreign_keys = OFF;
         DROP TRIGGER evidence_ledger_refuses_update; DROP TRIGGER evidence_ledger_refuses_delete;",
    )
    .unwrap();
    let rows: Vec<(i64, String, Vec<u8>)> = {
        let mut statement = raw
            .prepare("SELECT seq, kind, record FROM evidence_ledger ORDER BY seq")
            .unwrap();
        let rows = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    };
    let (verification_seq, _, verification) = rows
        .iter()
        .find(|(_, kind, _)| kind == "execution_verification")
        .cloned()
        .unwrap();
    let mut edited: Value = serde_json::from_slice(&verification).unwrap();
    edited["failed"] = serde_json::json!(["image_hash"]);
    raw.execute(
        "UPDATE evidence_ledger SET record = ?1 WHERE seq = ?2",
        rusqlite::params![serde_jcs::to_vec(&edited).unwrap(), verification_seq],
    )
    .unwrap();
    let report = verify_fails(&data);
    assert!(
        report.contains(&format!(
            "evidence ledger BROKEN: evidence ledger record {verification_seq} (execution_verification) is broken: its content hashes to"
        )),
        "{report}"
    );

    // 4. A forger re-seals that record and every one after it (new self-hashes and links, so
    // the chain is intact again): the record now says passed with a failed check, which its
    // schema refuses on read.
    let mut previous = rows[verification_seq as usize - 2].2.clone();
    for (seq, _, bytes) in rows.iter().skip(verification_seq as usize - 1) {
        let mut record: Value = if *seq == verification_seq {
            edited.clone()
        } else {
            serde_json::from_slice(bytes).unwrap()
        };
        let previous_record: Value = serde_json::from_slice(&previous).unwrap();
        record["previous_hash"] = previous_record["record_hash"].clone();
        record.as_object_mut().unwrap().remove("record_hash");
        let hash = hex::encode(Sha256::digest(serde_jcs::to_vec(&record).unwrap()));
        record["record_hash"] = Value::String(hash.clone());
        let canonical = serde_jcs::to_vec(&record).unwrap();
        raw.execute(
            "UPDATE evidence_ledger SET record = ?1, record_hash = ?2, previous_hash = ?3 WHERE seq = ?4",
            rusqlite::params![canonical, hash, record["previous_hash"].as_str().unwrap(), seq],
        )
        .unwrap();
        previous = canonical;
    }
    let report = verify_fails(&data);
    assert!(report.contains("evidence ledger OK: 8 records"), "{report}");
    assert!(
        report.contains(&format!(
            "record {verification_seq} (execution_verification): the execution_verification record breaks its schema"
        )),
        "{report}"
    );
    // The re-sealed bundle record no longer has the hash its bundle row names.
    assert!(
        report.contains("names no readable artifact_bundle record"),
        "{report}"
    );
}
