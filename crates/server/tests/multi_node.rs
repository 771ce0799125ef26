//! Several machines on loopback: two `adamviz serve` nodes that only serve and two
//! `adamviz worker` processes, sharing nothing but one real PostgreSQL cluster and one real S3
//! server (s3s-fs). Twenty runs are pressed through both nodes; one worker is killed with SIGKILL
//! while it runs one, and one node is killed with SIGKILL and started again. Every run ends
//! Verified without anyone pressing Run again (the killed worker's run as a second attempt
//! after a failed first), every bundle exported validates under the installation key, the
//! audit passes, and the chain has no fork.

#[path = "support/cli.rs"]
mod cli;
#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/s3_server.rs"]
mod s3_server;
#[path = "support/server_process.rs"]
mod server_process;

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::Duration,
};

use adamviz_model::{ids::RevisionId, revision::RevisionStatus};
use adamviz_store::{
    db::Database,
    ledger::verify_ledger,
    objects::ObjectStore,
    repository::{attempt_id_for, get_attempt, get_revision},
    run_queue::{latest_request, open_request, QueueState, RunPhase},
    sql::Sql,
};
use s3_server::S3Server;
use server_process::{add_author_to, wait_for, Server, PASSWORD};

const RUNS: usize = 20;

/// A worker process, killed when the test ends (also when it fails).
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(data_dir: &Path, shared: &[&str]) -> Worker {
    Worker(
        Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .args(["worker", "--runners", "1", "--run-lease-seconds", "6"])
            .arg("--data-dir")
            .arg(data_dir)
            .args(shared)
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("adamviz worker starts"),
    )
}

#[test]
fn two_nodes_and_two_workers_on_postgresql_and_s3_finish_every_run_through_sigkills() {
    let cluster = postgres::Postgres::start();
    let bucket = S3Server::start();
    for (name, value) in S3Server::environment() {
        // SAFETY: set before any store is opened or process started; the only test here.
        std::env::set_var(name, value);
    }
    let url = cluster.url();
    let objects_url = bucket.url("adamviz");
    let shared = [
        "--database",
        url.as_str(),
        "--objects",
        objects_url.as_str(),
    ];
    let root = tempfile::tempdir().unwrap();
    let node = |name: &str| {
        let dir = root.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    let (node_a, node_b, worker_1, worker_2) = (node("a"), node("b"), node("w1"), node("w2"));

    // Twenty Draft revisions on the shared installation, made as an author's session would.
    let database = Database::open_postgres(&url).unwrap();
    let fixture_dir = tempfile::tempdir().unwrap();
    let objects = ObjectStore::open_shared(fixture_dir.path(), Some(&objects_url)).unwrap();
    let fixture = flow_server::server_on(fixture_dir, database.clone(), objects, 1, None);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ids: Vec<RevisionId> = (0..RUNS)
        .map(|_| runtime.block_on(fixture.revision(None)))
        .collect();
    add_author_to(&node_a, &shared[..2], "ann", || database.clone());

    // One installation key for every node (as a Secret would give them).
    cli::ok(cli::adamviz(&["key", "show"], &node_a));
    let key_file = adamviz_services::installation_key::KEY_FILE;
    std::fs::copy(node_a.join(key_file), node_b.join(key_file)).unwrap();

    let serve_args = [&shared[..], &["--runners", "0"]].concat();
    let a = Server::start(&node_a, &serve_args);
    let b = Server::start(&node_b, &serve_args);
    let w1 = worker(&worker_1, &shared);
    let _w2 = worker(&worker_2, &shared);
    let (cookie_a, cookie_b) = (a.login("ann", PASSWORD), b.login("ann", PASSWORD));
    for (n, id) in ids.iter().enumerate() {
        let (server, cookie) = if n % 2 == 0 {
            (&a, &cookie_a)
        } else {
            (&b, &cookie_b)
        };
        server.press_run(cookie, id, &format!("press-{n:04}"));
    }

    // Worker 1 killed while R runs one of them.
    let connection = database.connection().unwrap();
    let pid = format!("/{}/", w1.0.id());
    let mut killed = None;
    wait_for("worker 1 running a run", Duration::from_secs(180), || {
        killed = ids.iter().position(|id| {
            open_request(&connection, id)
                .unwrap()
                .is_some_and(|(r, _)| {
                    r.phase == Some(RunPhase::Running)
                        && r.runner
                            .as_deref()
                            .is_some_and(|runner| runner.contains(&pid))
                })
        });
        killed.is_some()
    });
    let killed = killed.unwrap();
    drop(w1); // SIGKILL
              // Node A killed too, and started again on the same directory.
    let (exit, _) = a.stop_with("KILL");
    assert!(!exit.success());
    let a = Server::start(&node_a, &serve_args);

    wait_for(
        "every accepted run Verified",
        Duration::from_secs(600),
        || {
            ids.iter().all(|id| {
                get_revision(&connection, id).unwrap().unwrap().status == RevisionStatus::Verified
                    && latest_request(&connection, id).unwrap().unwrap().state == QueueState::Done
            })
        },
    );
    // The killed run: its first attempt failed, the next claim's attempt made it Verified.
    let key = format!("press-{killed:04}");
    let first = get_attempt(&connection, &attempt_id_for(&ids[killed], &key))
        .unwrap()
        .unwrap();
    assert_eq!(first.state, "failed");
    let second = get_attempt(
        &connection,
        &attempt_id_for(&ids[killed], &format!("{key}#claim2")),
    )
    .unwrap()
    .unwrap();
    assert_eq!(second.state, "succeeded");
    for id in &ids {
        let done = latest_request(&connection, id).unwrap().unwrap();
        assert_eq!(done.outcome.as_deref(), Some("verified"), "{id}");
    }

    // The restarted node answers for runs it never saw; sessions live in the database.
    let (status, page) = a.get_as(&format!("/revisions/{}", ids[1]), &cookie_a);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Verified"), "{page}");

    // Every bundle validates under the installation key; the audit passes; no fork.
    let trusted = cli::trusted_key_of(&node_b, root.path());
    for id in &ids {
        let bundle = root.path().join(format!("{id}.zip"));
        let export = [
            &[
                "evidence",
                "export",
                id.as_str(),
                "-o",
                bundle.to_str().unwrap(),
            ][..],
            &shared[..],
        ]
        .concat();
        cli::ok(cli::adamviz(&export, &node_b));
        cli::assert_bundle_passes(&bundle, &trusted, &node_b);
    }
    let audit = cli::ok(cli::adamviz(
        &[&["ledger", "verify"][..], &shared[..]].concat(),
        &node_b,
    ));
    assert!(audit.contains("ledger verify: PASS"), "{audit}");
    let chain = verify_ledger(&connection).unwrap();
    assert!(chain.first_break.is_none());
    let links = connection
        .query_one(
            "SELECT count(*), count(DISTINCT previous_hash) FROM evidence_ledger",
            &[],
        )
        .unwrap();
    let (records, distinct): (i64, i64) = (links.get(0).unwrap(), links.get(1).unwrap());
    assert_eq!(
        records, distinct,
        "two records name one predecessor: a fork"
    );
    assert_eq!(records as u64, chain.records);
    drop(b);
    drop(a);
}
