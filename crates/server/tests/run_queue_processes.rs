//! The durable run queue across real processes (real `adamviz serve`, real R):
//! - a burst of runs pressed through the web, the server killed with SIGKILL while one runs and
//!   the others wait, then started again: every accepted run ends Verified without anyone
//!   pressing Run again, the killed run as a second attempt after a failed first;
//! - a server stopped with SIGTERM mid-run gives the run back to the queue without using up one
//!   of its tries, and the next start runs it;
//! - a server that only serves (`--runners 0`) leaves pressed runs queued, and an
//!   `adamviz worker` process on the same installation runs them.

#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/server_process.rs"]
mod server_process;

use std::{process::Command, time::Duration};

use adamviz_model::{
    ids::RevisionId,
    revision::{RevisionStatus, RunStatus},
};
use adamviz_services::runs::status_of_revision;
use adamviz_store::{
    repository::{attempt_id_for, get_attempt, get_revision},
    run_queue::{latest_request, open_request, request_by_seq, QueueState, RunPhase},
};
use server_process::*;

const BURST: usize = 4;

/// A child process killed when the test ends, also when it fails (a worker left behind would
/// poll a removed data directory for ever).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn runs_accepted_before_a_sigkill_end_verified_after_the_restart_without_a_new_press() {
    let fixture = flow_server::server(1);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ids: Vec<RevisionId> = (0..BURST)
        .map(|_| runtime.block_on(fixture.revision(None)))
        .collect();
    let data_dir = &fixture._dir.path().join("data");
    add_author(data_dir, "ann");

    // One runner, so that when the first run is in R the others are still queued.
    let server = Server::start(data_dir, &["--runners", "1"]);
    let cookie = server.login("ann", PASSWORD);
    for (n, id) in ids.iter().enumerate() {
        server.press_run(&cookie, id, &format!("burst-{n:04}"));
    }
    let connection = fixture.database.connection().unwrap();
    wait_for("the first run in R", Duration::from_secs(120), || {
        open_request(&connection, &ids[0])
            .unwrap()
            .is_some_and(|(request, _)| request.phase == Some(RunPhase::Running))
    });
    let (exit, _) = server.stop_with("KILL");
    assert!(!exit.success());

    // Every press is in the database: one claimed by the dead server, the rest queued.
    let open: Vec<QueueState> = ids
        .iter()
        .map(|id| {
            open_request(&connection, id)
                .unwrap()
                .expect("recorded")
                .0
                .state
        })
        .collect();
    assert_eq!(open[0], QueueState::Claimed);
    assert!(
        open[1..].iter().all(|s| *s == QueueState::Queued),
        "{open:?}"
    );

    let server = Server::start(data_dir, &["--runners", "2"]);
    wait_for(
        "every accepted run Verified",
        Duration::from_secs(300),
        || {
            ids.iter().all(|id| {
                // Verified first (the completion's commit), then the runner marks its request done.
                get_revision(&connection, id).unwrap().unwrap().status == RevisionStatus::Verified
                    && latest_request(&connection, id).unwrap().unwrap().state == QueueState::Done
            })
        },
    );
    // The killed run: its first attempt failed, its second (a new attempt) made it Verified.
    let first = get_attempt(&connection, &attempt_id_for(&ids[0], "burst-0000"))
        .unwrap()
        .unwrap();
    assert_eq!(first.state, "failed");
    let second = get_attempt(&connection, &attempt_id_for(&ids[0], "burst-0000#claim2"))
        .unwrap()
        .unwrap();
    assert_eq!(second.state, "succeeded");
    // The others ran once, under the attempt their press named.
    for (n, id) in ids.iter().enumerate().skip(1) {
        let attempt = get_attempt(&connection, &attempt_id_for(id, &format!("burst-{n:04}")))
            .unwrap()
            .unwrap();
        assert_eq!(attempt.state, "succeeded");
    }
    // Every request ended as it should, in the queue as in the evidence.
    for id in &ids {
        let done = latest_request(&connection, id).unwrap().unwrap();
        assert_eq!(done.state, QueueState::Done);
        assert_eq!(done.outcome.as_deref(), Some("verified"), "{id}");
    }
    let (exit, _) = server.stop_with("TERM");
    assert!(exit.success());
}

#[test]
fn a_server_stopped_with_sigterm_gives_its_run_back_without_using_up_a_try() {
    let fixture = flow_server::server(1);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let id = runtime.block_on(fixture.revision(None));
    let data_dir = &fixture._dir.path().join("data");
    add_author(data_dir, "ann");
    let server = Server::start(data_dir, &["--runners", "1"]);
    let cookie = server.login("ann", PASSWORD);
    server.press_run(&cookie, &id, "stopped-0001");
    let connection = fixture.database.connection().unwrap();
    wait_for("the run in R", Duration::from_secs(120), || {
        open_request(&connection, &id)
            .unwrap()
            .is_some_and(|(request, _)| request.phase == Some(RunPhase::Running))
    });
    let (exit, _) = server.stop_with("TERM");
    assert!(exit.success());
    let (request, position) = open_request(&connection, &id).unwrap().expect("still open");
    assert_eq!((request.state, position), (QueueState::Queued, 1));
    assert_eq!(
        (request.claims, request.max_claims),
        (1, 4),
        "the stop did not use up a try"
    );
    assert!(request
        .requeued_because
        .unwrap()
        .contains("SIGTERM or SIGINT"));
    let first = get_attempt(&connection, &attempt_id_for(&id, "stopped-0001"))
        .unwrap()
        .unwrap();
    assert_eq!(first.state, "failed");

    let server = Server::start(data_dir, &["--runners", "1"]);
    wait_for(
        "the run Verified after the restart",
        Duration::from_secs(120),
        || get_revision(&connection, &id).unwrap().unwrap().status == RevisionStatus::Verified,
    );
    let (exit, _) = server.stop_with("TERM");
    assert!(exit.success());
}

#[test]
fn a_server_that_only_serves_leaves_runs_queued_and_a_worker_process_runs_them() {
    let fixture = flow_server::server(1);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ids: Vec<RevisionId> = (0..2)
        .map(|_| runtime.block_on(fixture.revision(None)))
        .collect();
    let data_dir = &fixture._dir.path().join("data");
    add_author(data_dir, "ann");
    let server = Server::start(data_dir, &["--runners", "0"]);
    let cookie = server.login("ann", PASSWORD);
    for (n, id) in ids.iter().enumerate() {
        server.press_run(&cookie, id, &format!("worker-{n:04}"));
    }
    // Nobody takes them: they wait, in order, and the status the page reads says so.
    std::thread::sleep(Duration::from_millis(1500));
    let connection = fixture.database.connection().unwrap();
    let mut seqs = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let (request, position) = open_request(&connection, id).unwrap().expect("recorded");
        assert_eq!((request.state, position), (QueueState::Queued, n + 1));
        seqs.push(request.seq);
        let status = runtime
            .block_on(status_of_revision(&fixture.database, id))
            .unwrap();
        assert!(
            matches!(status, Some(RunStatus::Queued { position, .. }) if position == n + 1),
            "{status:?}"
        );
    }

    let mut worker = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .args(["worker", "--runners", "1", "--data-dir"])
            .arg(data_dir)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .spawn()
            .expect("adamviz worker starts"),
    );
    wait_for(
        "both runs Verified by the worker",
        Duration::from_secs(180),
        || {
            ids.iter().all(|id| {
                // Verified first (the completion's commit), then the runner marks its request done.
                get_revision(&connection, id).unwrap().unwrap().status == RevisionStatus::Verified
                    && latest_request(&connection, id).unwrap().unwrap().state == QueueState::Done
            })
        },
    );
    for seq in seqs {
        let done = request_by_seq(&connection, seq).unwrap().unwrap();
        assert_eq!(done.state, QueueState::Done);
        assert_eq!(done.outcome.as_deref(), Some("verified"));
        let runner_pid = done.runner.as_deref().and_then(|r| r.split('/').nth(1));
        assert_eq!(
            runner_pid,
            Some(worker.0.id().to_string().as_str()),
            "run by the worker"
        );
    }
    let stopped = Command::new("kill")
        .args(["-TERM", &worker.0.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    assert!(worker.0.wait().unwrap().success());
    let (exit, _) = server.stop_with("TERM");
    assert!(exit.success());
}

#[test]
fn a_worker_refuses_a_directory_that_holds_no_installation() {
    let empty = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(["worker", "--runners", "1", "--data-dir"])
        .arg(empty.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("holds no adamviz installation (no adamviz.sqlite3)"),
        "{said}"
    );
}
