//! The commands with `--database postgres://…`, against a real PostgreSQL cluster and a real
//! S3 server on loopback (s3s-fs): the governed flow from the command line keeps everything of
//! record in the two shared services — `users add` and `revisions list` find the accounts and
//! revisions there (the data directory's SQLite file has none of them), `run` ends Verified,
//! `ledger verify` passes reading both read-only, and `evidence export` writes a bundle that
//! validates — while a worker refuses a database that is not yet an installation, and a
//! `--database` that is not PostgreSQL is refused with what is wrong.

#[path = "support/cli.rs"]
mod cli;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/s3_server.rs"]
mod s3_server;

use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
};

use s3_server::S3Server;

/// `adamviz ARGS…` with the S3 server's credentials in the environment.
fn adamviz(args: &[&str], data: &Path) -> std::process::Output {
    cli::adamviz_with(args, data, &S3Server::environment())
}

#[test]
fn the_governed_flow_runs_on_postgresql_and_s3_from_the_command_line() {
    let database = postgres::Postgres::start();
    let bucket = S3Server::start();
    let url = database.url();
    let objects = bucket.url("adamviz");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("node");

    // An account added on PostgreSQL is there, not in the node's own SQLite file.
    let mut add = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args([
            "users",
            "add",
            "ann",
            "--role",
            "author",
            "--database",
            &url,
        ])
        .env("ADAMVIZ_DATA_DIR", &data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    add.stdin
        .take()
        .unwrap()
        .write_all(b"a temporary password\n")
        .unwrap();
    cli::ok(add.wait_with_output().unwrap());
    let listed = cli::ok(adamviz(&["users", "list", "--database", &url], &data));
    assert!(listed.contains("ann"), "{listed}");
    let local = cli::ok(adamviz(&["users", "list"], &data));
    assert!(!local.contains("ann"), "{local}");

    let data_file = "../shared/data/adlbc.xpt";
    let question = "ALT over time by arm";
    let draft = cli::ok(adamviz(
        &["spec", "draft", data_file, "--question", question],
        &data,
    ));
    let draft_path = dir.path().join("draft.json");
    std::fs::write(&draft_path, draft).unwrap();
    let spec = cli::ok(adamviz(
        &["spec", "confirm", data_file, draft_path.to_str().unwrap()],
        &data,
    ));
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, spec).unwrap();
    let run = cli::ok(adamviz(
        &[
            "run",
            data_file,
            "--spec",
            spec_path.to_str().unwrap(),
            "--question",
            question,
            "--classification",
            "deidentified",
            "--database",
            &url,
            "--objects",
            &objects,
        ],
        &data,
    ));
    assert!(run.contains("status: Verified (version 2)"), "{run}");
    let id = run.split_whitespace().nth(1).unwrap().to_owned();

    let revisions = cli::ok(adamviz(&["revisions", "list", "--database", &url], &data));
    assert!(
        revisions.contains(&id) && revisions.contains("verified"),
        "{revisions}"
    );
    let shown = cli::ok(adamviz(
        &["revisions", "show", &id, "--database", &url],
        &data,
    ));
    assert!(shown.contains("verification"), "{shown}");
    let local = cli::ok(adamviz(&["revisions", "list"], &data));
    assert!(!local.contains(&id), "{local}");

    // The audit reads PostgreSQL and the bucket, with the node's copies of objects gone.
    std::fs::remove_dir_all(data.join("objects/sha256")).unwrap();
    let audit = cli::ok(adamviz(
        &[
            "ledger",
            "verify",
            "--database",
            &url,
            "--objects",
            &objects,
        ],
        &data,
    ));
    assert!(audit.contains("ledger verify: PASS"), "{audit}");
    assert!(audit.contains("evidence ledger OK"), "{audit}");

    let bundle = dir.path().join("bundle.zip");
    cli::ok(adamviz(
        &[
            "evidence",
            "export",
            &id,
            "-o",
            bundle.to_str().unwrap(),
            "--database",
            &url,
            "--objects",
            &objects,
        ],
        &data,
    ));
    let trusted = cli::trusted_key_of(&data, dir.path());
    cli::assert_bundle_passes(&bundle, &trusted, &data);

    // What the audit read, it read without writing: the chain on the server is as the run left
    // it (one more audit, same head).
    let again = cli::ok(adamviz(
        &[
            "ledger",
            "verify",
            "--database",
            &url,
            "--objects",
            &objects,
        ],
        &data,
    ));
    let head = |report: &str| {
        report
            .lines()
            .find(|line| line.starts_with("evidence ledger OK"))
            .unwrap()
            .to_owned()
    };
    assert_eq!(head(&audit), head(&again));
}

#[test]
fn a_worker_refuses_a_database_that_is_not_an_installation_and_a_bad_url_is_named() {
    let database = postgres::Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let worker = adamviz(&["worker", "--database", &database.url()], dir.path());
    assert!(!worker.status.success());
    let stderr = String::from_utf8_lossy(&worker.stderr);
    assert!(
        stderr.contains("lacks schema migration 1") && stderr.contains("not (yet) an adamviz"),
        "{stderr}"
    );
    let verify = adamviz(
        &["ledger", "verify", "--database", &database.url()],
        dir.path(),
    );
    assert!(!verify.status.success());
    assert!(
        String::from_utf8_lossy(&verify.stderr).contains("lacks schema migration 1"),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );

    for (given, problem) in [
        ("mysql://db.example.org/adamviz", "the scheme is \"mysql\""),
        ("postgres://db.example.org", "no database name"),
        ("not a url", "not a URL"),
    ] {
        let output = adamviz(&["revisions", "list", "--database", given], dir.path());
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(problem), "{given}: {stderr}");
    }
    // A password in the URL is never echoed.
    let output = adamviz(
        &[
            "revisions",
            "list",
            "--database",
            "postgres://ann:s3cret@127.0.0.1:1/adamviz",
        ],
        dir.path(),
    );
    assert!(!output.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!said.contains("s3cret"), "{said}");
}
