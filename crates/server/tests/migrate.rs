//! `adamviz migrate`, against a real PostgreSQL cluster and a real S3 server (s3s-fs): an
//! installation made on one machine (an account, a Verified revision through real R) moves into
//! PostgreSQL and the bucket; the target then answers every command (the revision is there, the
//! audit passes reading the bucket, the bundle exported from it validates, and a new governed
//! run appends to the moved chain), while the source's files are byte for byte as they were. A
//! second move into the same database is refused (not empty), and a source whose objects were
//! changed is refused before any row moves.

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
use sha2::{Digest, Sha256};

fn adamviz(args: &[&str], data: &Path) -> std::process::Output {
    cli::adamviz_with(args, data, &S3Server::environment())
}

const DATA_FILE: &str = "../shared/data/adlbc.xpt";

/// A confirmed spec of `question` on the pilot dataset, written under `dir`.
fn spec(dir: &Path, question: &str, name: &str) -> String {
    let data = dir.join("scratch");
    let draft = cli::ok(adamviz(
        &["spec", "draft", DATA_FILE, "--question", question],
        &data,
    ));
    let draft_path = dir.join(format!("{name}.draft.json"));
    std::fs::write(&draft_path, draft).unwrap();
    let spec = cli::ok(adamviz(
        &["spec", "confirm", DATA_FILE, draft_path.to_str().unwrap()],
        &data,
    ));
    let spec_path = dir.join(format!("{name}.json"));
    std::fs::write(&spec_path, spec).unwrap();
    spec_path.to_str().unwrap().to_owned()
}

/// `adamviz run` of `spec`; the revision id.
fn governed_run(data: &Path, spec: &str, question: &str, more: &[&str]) -> String {
    let args = [
        &[
            "run",
            DATA_FILE,
            "--spec",
            spec,
            "--question",
            question,
            "--classification",
            "deidentified",
        ][..],
        more,
    ]
    .concat();
    let run = cli::ok(adamviz(&args, data));
    assert!(run.contains("status: Verified (version 2)"), "{run}");
    run.split_whitespace().nth(1).unwrap().to_owned()
}

fn add_user(data: &Path, name: &str) {
    let mut add = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(["users", "add", name, "--role", "reviewer"])
        .env("ADAMVIZ_DATA_DIR", data)
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
}

/// SHA-256 of every file under `dir`, by path.
fn fingerprint(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.push((
                    path.display().to_string(),
                    hex::encode(Sha256::digest(&bytes)),
                ));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn an_installation_moves_to_postgresql_and_s3_verified_on_both_sides_and_the_old_one_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let question = "ALT over time by arm";
    let alt = spec(dir.path(), question, "alt");
    add_user(&source, "rex");
    let moved_id = governed_run(&source, &alt, question, &[]);
    let before = fingerprint(&source);

    let cluster = postgres::Postgres::start();
    let bucket = S3Server::start();
    let (url, objects) = (cluster.url(), bucket.url("moved"));
    let migrated = cli::ok(adamviz(
        &[
            "migrate",
            "--from",
            source.to_str().unwrap(),
            "--to",
            &url,
            "--objects",
            &objects,
        ],
        dir.path(),
    ));
    assert!(migrated.contains("source "), "{migrated}");
    assert!(migrated.contains("read back intact"), "{migrated}");
    assert!(migrated.contains("target "), "{migrated}");
    assert!(migrated.contains("evidence_ledger: "), "{migrated}");
    assert_eq!(fingerprint(&source), before, "the source changed");

    // The target answers: accounts, revisions, the audit from the bucket, the bundle.
    let node = dir.path().join("node");
    let shared = ["--database", url.as_str(), "--objects", objects.as_str()];
    let users = cli::ok(adamviz(&["users", "list", "--database", &url], &node));
    assert!(users.contains("rex"), "{users}");
    let revisions = cli::ok(adamviz(&["revisions", "list", "--database", &url], &node));
    assert!(revisions.contains(&moved_id), "{revisions}");
    let audit = cli::ok(adamviz(
        &[&["ledger", "verify"][..], &shared[..]].concat(),
        &node,
    ));
    assert!(audit.contains("ledger verify: PASS"), "{audit}");
    let bundle = dir.path().join("bundle.zip");
    cli::ok(adamviz(
        &[
            &[
                "evidence",
                "export",
                &moved_id,
                "-o",
                bundle.to_str().unwrap(),
            ][..],
            &shared[..],
        ]
        .concat(),
        &node,
    ));
    let trusted = cli::trusted_key_of(&node, dir.path());
    cli::assert_bundle_passes(&bundle, &trusted, &node);

    // The moved installation goes on: a new run appends to the moved chain.
    let second = "AST over time by arm";
    let ast = spec(dir.path(), second, "ast");
    let new_id = governed_run(&node, &ast, second, &shared);
    assert_ne!(new_id, moved_id);
    let audit = cli::ok(adamviz(
        &[&["ledger", "verify"][..], &shared[..]].concat(),
        &node,
    ));
    assert!(audit.contains("ledger verify: PASS"), "{audit}");

    // Into a database that holds an installation: refused, nothing added.
    let again = adamviz(
        &[
            "migrate",
            "--from",
            source.to_str().unwrap(),
            "--to",
            &url,
            "--objects",
            &objects,
        ],
        dir.path(),
    );
    assert!(!again.status.success());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("the target database is not empty"), "{said}");
    let revisions = cli::ok(adamviz(&["revisions", "list", "--database", &url], &node));
    assert_eq!(revisions.lines().count(), 2, "{revisions}");
}

#[test]
fn a_source_that_does_not_verify_is_refused_before_anything_moves() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let question = "ALT over time by arm";
    let alt = spec(dir.path(), question, "alt");
    governed_run(&source, &alt, question, &[]);
    // An artifact changed behind the store's back.
    let fan = std::fs::read_dir(source.join("objects/sha256"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let object = std::fs::read_dir(&fan)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&object).unwrap();
    bytes.push(b'!');
    std::fs::write(&object, bytes).unwrap();

    let cluster = postgres::Postgres::start();
    let bucket = S3Server::start();
    let output = adamviz(
        &[
            "migrate",
            "--from",
            source.to_str().unwrap(),
            "--to",
            &cluster.url(),
            "--objects",
            &bucket.url("moved"),
        ],
        dir.path(),
    );
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("does not verify") && said.contains("nothing was moved"),
        "{said}"
    );
    // The target has no rows (its schema was never even created).
    let node = dir.path().join("node");
    let listed = adamviz(&["ledger", "verify", "--database", &cluster.url()], &node);
    assert!(!listed.status.success());
    assert!(
        String::from_utf8_lossy(&listed.stderr).contains("lacks schema migration 1"),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
}
