//! `adamviz run`, `adamviz revisions` and `adamviz ledger verify` as a user drives them: the
//! real binary, a real data directory, real R.

#[path = "support/evidence_kinds.rs"]
mod evidence_kinds;

use std::process::{Command, Output};

fn adamviz(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
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

/// Drafts and confirms the ALT spec for `data` with the CLI; the spec file's path.
fn confirmed_alt_spec(dir: &std::path::Path, data: &str) -> std::path::PathBuf {
    let draft = adamviz(
        &["spec", "draft", data, "--question", "ALT over time by arm"],
        dir,
    );
    let draft_path = dir.join("draft.json");
    std::fs::write(&draft_path, stdout(&draft)).unwrap();
    let confirmed = adamviz(
        &["spec", "confirm", data, draft_path.to_str().unwrap()],
        dir,
    );
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, stdout(&confirmed)).unwrap();
    spec_path
}

#[test]
fn a_confirmed_spec_runs_to_verified_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = "../shared/data/adlbc.xpt";
    let spec_path = confirmed_alt_spec(dir.path(), data);

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
    assert_eq!(run.matches(" Pass").count(), 11, "{run}");
    let id = run.split_whitespace().nth(1).unwrap().to_owned();

    // The dataset went in through the upload path: its uploads row names raw bytes that are in
    // the object store, byte for byte the file given.
    let database = rusqlite::Connection::open(dir.path().join("data/adamviz.sqlite3")).unwrap();
    let (content_hash, size): (String, i64) = database
        .query_row("SELECT content_hash, size FROM uploads", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    drop(database);
    let object = dir
        .path()
        .join("data/objects/sha256")
        .join(&content_hash[..2])
        .join(&content_hash[2..]);
    let stored = std::fs::read(&object).expect("the upload's raw bytes are stored");
    let original = std::fs::read(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(data),
    )
    .unwrap();
    assert!(stored == original && size as usize == original.len());

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

/// Before: every `adamviz run` and `adamviz serve` ended, at start, every attempt left active
/// in the data directory — including the one another live process was running, whose
/// completion was then refused. Now recovery ends only attempts whose owner is gone. Two runs
/// and a server share one directory, the second run and the server starting while the first
/// run's attempt is active; both runs end Verified.
#[test]
fn two_runs_and_a_server_on_one_data_directory_do_not_fail_each_others_attempts() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let data = "../shared/data/adlbc.xpt";
    let spec_path = confirmed_alt_spec(dir.path(), data);
    let spawn = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .args(args)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .env("ADAMVIZ_DATA_DIR", dir.path().join("data"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let run_args = [
        "run",
        data,
        "--spec",
        spec_path.to_str().unwrap(),
        "--classification",
        "deidentified",
    ];
    let first = spawn(&run_args);
    // Wait until the first run's attempt is active.
    let database = dir.path().join("data/adamviz.sqlite3");
    let started = Instant::now();
    loop {
        let active: i64 = rusqlite::Connection::open_with_flags(
            &database,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .and_then(|c| {
            c.query_row(
                "SELECT count(*) FROM attempts WHERE state = 'active'",
                [],
                |row| row.get(0),
            )
        })
        .unwrap_or(0);
        if active > 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first run never started its attempt"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = spawn(&run_args);
    let mut server = spawn(&["serve", "--addr", "127.0.0.1:0"]);
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    let served = server.wait().unwrap();
    for (name, output) in [("first", &first), ("second", &second)] {
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && text.contains("status: Verified"),
            "the {name} run: {text}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(served.success(), "the server did not stop cleanly");
}

#[path = "support/study_shapes.rs"]
mod study_shapes;

/// Vital signs with three positions and an average per visit, from the command line: the draft
/// asks which record per subject and visit, "one" is refused with the choices listed, a
/// position answered with `--set` confirms, and the run is Verified with N equal to subjects in
/// every cell (R's statistics equal adamviz's own: the independent_statistics check passed).
#[test]
fn vital_signs_run_to_verified_with_one_record_per_subject_and_visit() {
    let dir = tempfile::tempdir().unwrap();
    let data_path = dir.path().join("advs-like.csv");
    std::fs::write(&data_path, study_shapes::csv(&study_shapes::vital_signs())).unwrap();
    let data = data_path.to_str().unwrap();
    let question = "systolic blood pressure by visit and treatment";
    let draft = stdout(&adamviz(
        &["spec", "draft", data, "--question", question],
        dir.path(),
    ));
    let draft_json: serde_json::Value = serde_json::from_str(&draft).unwrap();
    let record_question = draft_json["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["id"] == "records_per_subject_visit")
        .expect("the draft asks which record per subject and visit");
    assert_eq!(record_question["proposed"], "DTYPE=AVERAGE");
    let draft_path = dir.path().join("draft.json");
    std::fs::write(&draft_path, draft).unwrap();

    let refused = adamviz(
        &[
            "spec",
            "confirm",
            data,
            draft_path.to_str().unwrap(),
            "--set",
            "records_per_subject_visit=one",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("420 subject × visit combinations still have several records")
            && stderr.contains("ATPT=AFTER STANDING FOR 1 MINUTE  (ATPT = AFTER STANDING")
            && stderr.contains("every  (keep every record"),
        "{stderr}"
    );

    let confirmed = stdout(&adamviz(
        &[
            "spec",
            "confirm",
            data,
            draft_path.to_str().unwrap(),
            "--set",
            "records_per_subject_visit=ATPT=AFTER STANDING FOR 1 MINUTE",
        ],
        dir.path(),
    ));
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, confirmed).unwrap();
    let run = stdout(&adamviz(
        &[
            "run",
            data,
            "--spec",
            spec_path.to_str().unwrap(),
            "--question",
            question,
            "--classification",
            "synthetic",
        ],
        dir.path(),
    ));
    assert!(run.contains("status: Verified (version 2)"), "{run}");
    assert_eq!(run.matches(" Pass").count(), 11, "{run}");

    let database = rusqlite::Connection::open(dir.path().join("data/adamviz.sqlite3")).unwrap();
    let context: Vec<u8> = database
        .query_row(
            "SELECT record FROM evidence_ledger WHERE kind = 'revision_context'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    let context: serde_json::Value = serde_json::from_slice(&context).unwrap();
    let statistics_hash = context["outputs"]["statistics_sha256"].as_str().unwrap();
    let statistics: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            dir.path()
                .join("data/objects/sha256")
                .join(&statistics_hash[..2])
                .join(&statistics_hash[2..]),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        statistics["records_per_subject_visit"],
        "ATPT=AFTER STANDING FOR 1 MINUTE"
    );
    let cells = statistics["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 15);
    for cell in cells {
        assert_eq!(cell["n"], cell["n_subjects"], "{cell}");
        assert_eq!(cell["n_subjects"], 28, "{cell}");
    }
}

#[test]
fn attack_user_nobody_on_the_command_line_does_not_hide_the_real_author() {
    let dir = tempfile::tempdir().unwrap();
    let data = "../shared/data/adlbc.xpt";
    let spec_path = confirmed_alt_spec(dir.path(), data);
    // The environment claims someone else made the revision.
    let run = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args([
            "run",
            data,
            "--spec",
            spec_path.to_str().unwrap(),
            "--question",
            "ALT over time by arm",
            "--classification",
            "deidentified",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("ADAMVIZ_DATA_DIR", dir.path().join("data"))
        .env("USER", "nobody")
        .env("LOGNAME", "nobody")
        .output()
        .unwrap();
    let run = stdout(&run);
    assert!(run.contains("status: Verified"), "{run}");
    let id = adamviz_model::ids::RevisionId::parse(run.split_whitespace().nth(1).unwrap()).unwrap();
    let real = Command::new("id").arg("-un").output().unwrap();
    let real = String::from_utf8(real.stdout).unwrap().trim().to_owned();
    assert_ne!(real, "nobody", "run this test as a user other than nobody");
    let database = adamviz_store::db::Database::open_in(&dir.path().join("data")).unwrap();
    let mut connection = database.connection().unwrap();
    let author: String = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT author_name FROM revisions WHERE id = ?1",
            [id.as_str()],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(
        author, real,
        "the author comes from the real uid, not $USER"
    );
    // The real user, holding a reviewer account of the same name, cannot sign their own work;
    // a reviewer called "nobody" is not blocked by a claim in the environment.
    use adamviz_services::{accounts, approvals};
    let password = "a password its owner chose";
    let reviewer = |connection: &mut adamviz_store::db::Connection, name: &str| {
        accounts::create_account(
            connection,
            name,
            password,
            &[adamviz_model::account::Role::Reviewer],
            accounts::PasswordOrigin::ChosenByOwner,
            &accounts::Operator::setup(),
            None,
            accounts::now(),
        )
        .unwrap()
    };
    let same = reviewer(&mut connection, &real);
    let request = approvals::SignRequest {
        revision_id: id.clone(),
        decision: adamviz_evidence::approval::Decision::Approved,
        meaning: Some(adamviz_evidence::approval::SignatureMeaning::Approved),
        comment: None,
        password: password.to_owned(),
        evidence_head_seen: None,
        user_name: None,
    };
    let refused =
        approvals::sign(&mut connection, &same, &request, None, accounts::now()).unwrap_err();
    assert!(
        matches!(refused, approvals::SignError::OwnRevision),
        "{refused:?}"
    );
    let nobody = reviewer(&mut connection, "nobody");
    approvals::sign(&mut connection, &nobody, &request, None, accounts::now()).unwrap();
}
