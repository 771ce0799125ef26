//! The object store with a shared S3-compatible bucket (`--objects s3://…`), against a real
//! S3 server on loopback (s3s-fs):
//! - what one node writes another reads, re-hashed, and keeps as its own copy;
//! - writes are create-only: an object in the bucket is never replaced, and a corrupt one is
//!   refused on read with the bucket named;
//! - an upload no reader accepts never reaches the bucket;
//! - the governed flow from the command line with the objects in the bucket: `adamviz run`
//!   ends Verified, then with this node's folder of objects removed `ledger verify` and
//!   `evidence export` work from the bucket alone (and the exported bundle validates), while
//!   without `--objects` the audit reports every object missing.

#[path = "support/cli.rs"]
mod cli;
#[path = "support/s3_server.rs"]
mod s3_server;

use adamviz_store::objects::{ObjectStore, ObjectStoreError};
use s3_server::S3Server;

/// The client reads its credentials from the AWS variables, as in a deployment. (Set once,
/// before any store is opened, to the same values by every test of this binary.)
fn credentials() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        for (name, value) in S3Server::environment() {
            // SAFETY: edition 2021; every test calls this before opening a store or starting a
            // process, and all set the same values.
            std::env::set_var(name, value);
        }
    });
}

fn node(server: &S3Server, prefix: &str) -> (tempfile::TempDir, ObjectStore) {
    credentials();
    let dir = tempfile::tempdir().unwrap();
    let store = ObjectStore::open_shared(dir.path(), Some(&server.url(prefix))).unwrap();
    (dir, store)
}

#[test]
fn what_one_node_writes_another_reads_rehashed_and_keeps() {
    let server = S3Server::start();
    let (_a_dir, a) = node(&server, "study-1");
    let (_b_dir, b) = node(&server, "study-1");
    let stored = a.put(b"the plot's bytes", 1024).unwrap();
    assert!(
        stored.created,
        "the first write puts the object in the bucket"
    );
    let hex = stored.digest.to_hex();
    assert_eq!(
        std::fs::read(server.object_file("study-1", &hex)).unwrap(),
        b"the plot's bytes",
        "the bucket holds the bytes under sha256/<2>/<62> below the prefix"
    );
    assert!(!b.path_of(&stored.digest).exists());
    assert_eq!(b.size_of(&stored.digest).unwrap(), Some(16));
    assert_eq!(b.get(&stored.digest).unwrap(), b"the plot's bytes");
    assert_eq!(
        std::fs::read(b.path_of(&stored.digest)).unwrap(),
        b"the plot's bytes",
        "the reading node keeps a copy"
    );
    // The same bytes again, from the other node: nothing is written.
    assert!(!b.put(b"the plot's bytes", 1024).unwrap().created);

    let absent = adamviz_model::digest::Sha256Digest::from_bytes([7; 32]);
    assert!(matches!(
        b.get(&absent),
        Err(ObjectStoreError::NotFound { .. })
    ));
    assert_eq!(b.size_of(&absent).unwrap(), None);
}

/// Above 64 MiB an object goes to the bucket in parts (no single request of its size); it reads
/// back whole and re-hashed on another node.
#[test]
fn a_large_object_goes_in_parts_and_reads_back_whole() {
    let server = S3Server::start();
    let (_a_dir, a) = node(&server, "");
    let (_b_dir, b) = node(&server, "");
    // 65 MiB and a bit of bytes that do not repeat within a part.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let bytes: Vec<u8> = (0..(65 << 20) + 12_345)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let stored = a.put(&bytes, 1 << 30).unwrap();
    assert!(stored.created);
    let in_bucket = server.object_file("", &stored.digest.to_hex());
    assert_eq!(
        std::fs::metadata(&in_bucket).unwrap().len(),
        bytes.len() as u64
    );
    assert!(b.get(&stored.digest).unwrap() == bytes, "read back whole");
    assert!(!b.put(&bytes, 1 << 30).unwrap().created, "written once");
}

#[test]
fn the_bucket_is_written_create_only_and_a_corrupt_object_is_refused_with_the_bucket_named() {
    let server = S3Server::start();
    let (_a_dir, a) = node(&server, "");
    let stored = a.put(b"original", 1024).unwrap();
    let in_bucket = server.object_file("", &stored.digest.to_hex());
    std::fs::write(&in_bucket, b"tampered").unwrap();

    // Another node storing the same bytes finds the name taken and replaces nothing.
    let (_b_dir, b) = node(&server, "");
    assert!(!b.put(b"original", 1024).unwrap().created);
    assert_eq!(std::fs::read(&in_bucket).unwrap(), b"tampered");

    // A node without a copy of its own refuses the bucket's bytes.
    let (_c_dir, c) = node(&server, "");
    let error = c.get(&stored.digest).unwrap_err();
    assert!(
        matches!(error, ObjectStoreError::RemoteCorrupt { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("is corrupt") && message.contains("s3://adamviz-objects"),
        "{message}"
    );
    assert!(
        !c.path_of(&stored.digest).exists(),
        "refused bytes are not kept"
    );
    // The writer's own true copy still reads.
    assert_eq!(a.get(&stored.digest).unwrap(), b"original");
}

#[test]
fn an_upload_no_reader_accepts_never_reaches_the_bucket() {
    let server = S3Server::start();
    let (_dir, store) = node(&server, "");
    let refused = adamviz_services::upload::receive_upload(
        &store,
        &b"\x00\x01 not a dataset"[..],
        "deidentified",
        1 << 20,
    );
    assert!(refused.is_err());
    let bucket = server.root.join(s3_server::BUCKET);
    assert!(
        std::fs::read_dir(&bucket)
            .unwrap()
            .filter_map(Result::ok)
            .all(|entry| entry.file_name().to_string_lossy().starts_with('.')),
        "the bucket holds no object"
    );
}

#[test]
fn a_bad_objects_url_is_refused_with_what_is_wrong() {
    for (url, problem) in [
        ("file:///tmp/x", "the scheme \"file\" is not supported"),
        ("s3:///prefix", "no bucket is named"),
        ("s3://b/p?endpoint=ftp://h", "http or https"),
        ("s3://b/p?endpont=http://h", "unknown parameter \"endpont\""),
    ] {
        let output = cli::adamviz(
            &["ledger", "verify", "--objects", url],
            std::path::Path::new("/nonexistent"),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(stderr.contains(problem), "{url}: {stderr}");
    }
}

#[test]
fn the_governed_flow_keeps_its_objects_in_the_bucket_and_checks_them_from_there() {
    let server = S3Server::start();
    credentials();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let objects = server.url("adamviz");
    let data_file = "../shared/data/adlbc.xpt";
    let draft = cli::ok(cli::adamviz(
        &[
            "spec",
            "draft",
            data_file,
            "--question",
            "ALT over time by arm",
        ],
        &data,
    ));
    let draft_path = dir.path().join("draft.json");
    std::fs::write(&draft_path, draft).unwrap();
    let spec = cli::ok(cli::adamviz(
        &["spec", "confirm", data_file, draft_path.to_str().unwrap()],
        &data,
    ));
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, spec).unwrap();
    let run = cli::ok(cli::adamviz(
        &[
            "run",
            data_file,
            "--spec",
            spec_path.to_str().unwrap(),
            "--question",
            "ALT over time by arm",
            "--classification",
            "deidentified",
            "--objects",
            &objects,
        ],
        &data,
    ));
    assert!(run.contains("status: Verified (version 2)"), "{run}");
    let id = run.split_whitespace().nth(1).unwrap().to_owned();

    // Every object of this node is in the bucket: the upload, script, snapshot and outputs.
    let local = data.join("objects/sha256");
    let mut names = Vec::new();
    for fan in std::fs::read_dir(&local).unwrap() {
        let fan = fan.unwrap();
        for object in std::fs::read_dir(fan.path()).unwrap() {
            let hex = format!(
                "{}{}",
                fan.file_name().to_string_lossy(),
                object.unwrap().file_name().to_string_lossy()
            );
            assert!(
                server.object_file("adamviz", &hex).is_file(),
                "{hex} is not in the bucket"
            );
            names.push(hex);
        }
    }
    assert!(names.len() >= 6, "{names:?}");

    // This node's copies gone: the bucket alone answers.
    std::fs::remove_dir_all(&local).unwrap();
    let audit = cli::ok(cli::adamviz(
        &["ledger", "verify", "--objects", &objects],
        &data,
    ));
    assert!(audit.contains("ledger verify: PASS"), "{audit}");
    assert!(
        !local.exists(),
        "ledger verify reads only: it keeps no copies"
    );
    let without_bucket = cli::adamviz(&["ledger", "verify"], &data);
    assert!(!without_bucket.status.success());
    let report = String::from_utf8_lossy(&without_bucket.stdout);
    assert!(report.contains("ledger verify: FAIL"), "{report}");

    let bundle = dir.path().join("bundle.zip");
    cli::ok(cli::adamviz(
        &[
            "evidence",
            "export",
            &id,
            "-o",
            bundle.to_str().unwrap(),
            "--objects",
            &objects,
        ],
        &data,
    ));
    let trusted = cli::trusted_key_of(&data, dir.path());
    cli::assert_bundle_passes(&bundle, &trusted, &data);
}
