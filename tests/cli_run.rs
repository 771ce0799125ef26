//! `adamviz run`, `adamviz revisions` and `adamviz ledger verify` as a user drives them: the
//! real binary, a real data directory, real R.
#![cfg(feature = "ssr")]

#[path = "support/evidence_kinds.rs"]
mod evidence_kinds;

use std::process::{Command, Output};

fn adamviz(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("ADAMVIZ_DATA_DIR", dir.join("data"))
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn a_confirmed_spec_runs_to_verified_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = "../shared/data/adlbc.xpt";
    let draft = adamviz(
        &["spec", "draft", data, "--question", "ALT over time by arm"],
        dir.path(),
    );
    let draft_path = dir.path().join("draft.json");
    std::fs::write(&draft_path, stdout(&draft)).unwrap();
    let confirmed = adamviz(
        &["spec", "confirm", data, draft_path.to_str().unwrap()],
        dir.path(),
    );
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, stdout(&confirmed)).unwrap();

    let run = stdout(&adamviz(
        &[
            "run",
            data,
            "--spec",
            spec_path.to_str().unwrap(),
            "--question",
            "ALT over time by arm",
            "--classification",
            "deidentified",
        ],
        dir.path(),
    ));
    assert!(run.contains("status: Verified (version 2)"), "{run}");
    assert_eq!(run.matches(" Pass").count(), 10, "{run}");
    let id = run.split_whitespace().nth(1).unwrap().to_owned();

    let list = stdout(&adamviz(&["revisions", "list"], dir.path()));
    assert!(list.starts_with(&id) && list.contains("verified"), "{list}");
    let shown: serde_json::Value = serde_json::from_str(&stdout(&adamviz(
        &["revisions", "show", &id, "--json"],
        dir.path(),
    )))
    .unwrap();
    assert_eq!(shown["status"], "verified");
    let kinds: Vec<&str> = shown["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, evidence_kinds::VERIFIED);
    let text = stdout(&adamviz(&["revisions", "show", &id], dir.path()));
    assert!(text.contains("draft → verified (version 2)"), "{text}");
    let ledger = stdout(&adamviz(&["ledger", "verify"], dir.path()));
    assert!(
        ledger.starts_with("evidence ledger OK: 8 records"),
        "{ledger}"
    );

    let other_question = adamviz(
        &[
            "run",
            data,
            "--spec",
            spec_path.to_str().unwrap(),
            "--question",
            "AST over time by arm",
            "--classification",
            "deidentified",
        ],
        dir.path(),
    );
    assert_eq!(other_question.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&other_question.stderr)
            .contains("is not the question \"ALT over time by arm\" the spec"),
        "{}",
        String::from_utf8_lossy(&other_question.stderr)
    );

    let refused = adamviz(
        &[
            "run",
            data,
            "--spec",
            spec_path.to_str().unwrap(),
            "--classification",
            "identified",
        ],
        dir.path(),
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not accepted"));
}
