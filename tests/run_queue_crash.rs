//! The durable run queue against a real crash: a burst of runs pressed through the web on a
//! real `adamviz serve` (real R), the server killed with SIGKILL while one runs and the others
//! wait, then started again: every accepted run ends Verified without anyone pressing Run
//! again, the killed run as a second attempt after a failed first.
#![cfg(feature = "ssr")]

#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/server_process.rs"]
mod server_process;

use std::time::{Duration, Instant};

use adamviz::{
    domain::{ids::RevisionId, revision::RevisionStatus},
    store::{
        repository::{attempt_id_for, get_attempt, get_revision},
        run_queue::{open_request, QueueState, RunPhase},
    },
};
use server_process::*;

const BURST: usize = 4;

/// Presses Run on `id` through the run server function, as the revision page's form does.
fn press_run(server: &Server, cookie: &str, id: &RevisionId, key: &str) {
    let origin = format!("http://{}", server.addr);
    let (status, _, body) = server.request(
        "POST",
        "/api/revisions/run",
        &[
            ("Origin", &origin),
            ("Cookie", cookie),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ],
        &format!("revision_id={id}&idempotency_key={key}"),
    );
    assert_eq!(status, 200, "Run on {id}: {body}");
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
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
        press_run(&server, &cookie, id, &format!("burst-{n:04}"));
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
                get_revision(&connection, id).unwrap().unwrap().status == RevisionStatus::Verified
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
    let (exit, _) = server.stop_with("TERM");
    assert!(exit.success());
}
