//! The sandboxed runner against hostile scripts, with real R: each attack gets the typed
//! failure it must, and nothing it started survives the run.

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

use std::{path::Path, time::Instant};

use adamviz_engine::runner::{RunFailure, RunResult, RunStatus, Runner};
use adamviz_model::{
    digest::Sha256Digest,
    spec::{LowNAction, YScale},
};
use r_fixtures::*;

/// Live processes whose real uid is `uid`, from /proc. A zombie has exited already (the run's
/// init, killed with the supervisor, waits there to be reaped by whoever inherited it).
fn processes_of_uid(uid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let real_uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        let zombie = status
            .lines()
            .find_map(|l| l.strip_prefix("State:"))
            .is_some_and(|state| state.trim_start().starts_with('Z'));
        if real_uid == Some(uid) && !zombie {
            found.push(pid);
        }
    }
    found
}

fn assert_nothing_left(result: &RunResult, work_root: &Path) {
    if let Some(uid) = result.isolation.run_uid {
        assert_eq!(
            processes_of_uid(uid),
            Vec::<u32>::new(),
            "processes of the run's uid survive"
        );
    }
    let left: Vec<_> = std::fs::read_dir(work_root).unwrap().flatten().collect();
    assert!(left.is_empty(), "working directories left behind: {left:?}");
}

#[test]
fn an_endless_loop_is_killed_at_the_wall_clock_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.limits.wall_clock_ms = 3_000;
    let started = Instant::now();
    let result = run_with(config, script_request("repeat {}\n"));
    let elapsed = started.elapsed().as_millis();
    assert_eq!(result.status, RunStatus::Failed);
    assert_eq!(
        result.failure,
        Some(RunFailure::TimedOut { limit_ms: 3_000 })
    );
    assert!((3_000..15_000).contains(&elapsed), "took {elapsed} ms");
    assert_nothing_left(&result, dir.path());
}

#[test]
fn a_memory_hog_is_stopped_by_the_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.limits.address_space_bytes = 2 << 30;
    // 16 GB of doubles.
    let result = run_with(config, script_request("x <- numeric(2e9)\nx[1] <- 1\n"));
    assert_eq!(result.failure, Some(RunFailure::Exited { code: 1 }));
    assert!(
        result
            .stderr
            .text
            .contains("cannot allocate vector of size"),
        "{}",
        result.stderr.text
    );
    assert_nothing_left(&result, dir.path());
}

#[test]
fn a_fork_bomb_is_contained_and_nothing_survives() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.limits.wall_clock_ms = 5_000;
    let script =
        "system2('/bin/sh', c('-c', shQuote('bomb() { bomb | bomb & }; bomb')), wait = FALSE)\n\
                  Sys.sleep(30)\n";
    let result = run_with(config, script_request(script));
    assert_eq!(
        result.failure,
        Some(RunFailure::TimedOut { limit_ms: 5_000 })
    );
    // As root every run has its own uid, which is what makes "nothing survives" checkable.
    assert!(result.isolation.run_uid.is_some() || not_root());
    assert!(
        result.stderr.text.contains("fork"),
        "the bomb never hit the process limit: {}",
        result.stderr.text
    );
    assert_nothing_left(&result, dir.path());
    // The machine still starts processes.
    assert!(std::process::Command::new("/bin/true")
        .status()
        .unwrap()
        .success());
}

fn not_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) != 0)
        .unwrap_or(true)
}

#[test]
fn network_connections_fail_where_isolation_is_available() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "outcome <- tryCatch({{ con <- socketConnection('127.0.0.1', {port}, blocking = TRUE, timeout = 3); close(con); 'CONNECTED' }}, \
         error = function(e) paste('FAILED:', conditionMessage(e)), warning = function(w) paste('FAILED:', conditionMessage(w)))\n\
         cat(outcome, '\\n')\n"
    );
    let result = run_with(test_config(dir.path()), script_request(&script));
    let isolated = result.isolation.network_namespace || result.isolation.landlock_abi >= Some(4);
    assert!(
        isolated,
        "this machine allows network isolation; the runner must use it"
    );
    assert!(
        result.stdout.text.contains("FAILED:"),
        "{}",
        result.stdout.text
    );
    assert!(listener.accept().is_err(), "the listener was reached");
    assert_nothing_left(&result, dir.path());
}

#[test]
fn writes_outside_the_working_directory_fail() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let work_root = dir.path().join("runs");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    // Open to everyone: only the sandbox stands in the way.
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o777)).unwrap();
    let tmp_target = std::env::temp_dir().join(format!("adamviz-escape-{}", std::process::id()));
    let attempt = |path: &Path| {
        format!(
            "cat(tryCatch({{ writeLines('x', '{}'); 'WROTE' }}, error = function(e) 'FAILED', warning = function(w) 'FAILED'), '\\n')\n",
            path.display()
        )
    };
    let script = format!(
        "{}{}{}",
        attempt(&outside.join("escape.txt")),
        attempt(&tmp_target),
        attempt(Path::new("inside.txt"))
    );
    let result = run_with(test_config(&work_root), script_request(&script));
    let lines: Vec<&str> = result.stdout.text.split_whitespace().collect();
    assert_eq!(
        lines,
        ["FAILED", "FAILED", "WROTE"],
        "{}",
        result.stderr.text
    );
    assert!(!outside.join("escape.txt").exists());
    assert!(!tmp_target.exists());
    assert!(result.isolation.landlock_abi.is_some());
    assert_nothing_left(&result, &work_root);
}

#[test]
fn a_script_or_snapshot_whose_hash_does_not_match_is_refused_before_r_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut request = script_request("cat('ran')\n");
    let wrong = Sha256Digest::from_bytes([1; 32]);
    request.expected_script_hash = wrong;
    let result = run_with(test_config(dir.path()), request);
    assert!(matches!(
        result.failure,
        Some(RunFailure::ScriptHashMismatch { expected, .. }) if expected == wrong
    ));
    assert_eq!((result.exit_code, result.duration_ms), (None, 0));

    let mut request = script_request("cat('ran')\n");
    request.expected_snapshot_hash = wrong;
    let result = run_with(test_config(dir.path()), request);
    assert!(matches!(
        result.failure,
        Some(RunFailure::SnapshotHashMismatch { expected, .. }) if expected == wrong
    ));
    assert_eq!(result.exit_code, None);
    // No working directory was even created.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_script_without_the_required_objects_fails_with_the_harness_message() {
    let dir = tempfile::tempdir().unwrap();
    let result = run_with(test_config(dir.path()), script_request("x <- 1\n"));
    assert_eq!(result.failure, Some(RunFailure::Exited { code: 1 }));
    assert!(
        result
            .stderr
            .text
            .contains("did not create `boxplot_analysis`"),
        "{}",
        result.stderr.text
    );
}

#[test]
fn diagnostics_are_truncated_to_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.limits.diagnostics_bytes = 4_096;
    let result = run_with(
        config,
        script_request("for (i in 1:20000) cat(i, 'xxxxxxxxxxxxxxxxxxxx\\n')\n"),
    );
    assert!(result.stdout.truncated);
    assert!(
        result.stdout.total_bytes > 400_000,
        "{}",
        result.stdout.total_bytes
    );
    assert!(result.stdout.text.len() < 4_096 + 100);
    assert!(result.stdout.text.starts_with("1 xxx"));
    assert!(result
        .stdout
        .text
        .trim_end()
        .ends_with("20000 xxxxxxxxxxxxxxxxxxxx"));
}

#[test]
fn excess_runs_queue_behind_the_concurrency_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.max_concurrent = 1;
    let script = "cat(sprintf('%.3f', as.numeric(Sys.time())), ''); Sys.sleep(1); cat(sprintf('%.3f', as.numeric(Sys.time())))\n";
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let results = runtime.block_on(async {
        let runner = Runner::new(config);
        tokio::join!(
            runner.run(script_request(script)),
            runner.run(script_request(script))
        )
    });
    let interval = |r: &RunResult| -> (f64, f64) {
        let times: Vec<f64> = r
            .stdout
            .text
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        (times[0], times[1])
    };
    let (a, b) = (interval(&results.0), interval(&results.1));
    assert!(
        a.1 <= b.0 || b.1 <= a.0,
        "the two runs overlapped: {a:?} {b:?}"
    );
}

#[test]
fn pooled_processes_run_once_each_with_the_same_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.pool_size = 1;
    let texts = SpecTexts::plain();
    let spec = spec_from(&texts, YScale::Fixed, LowNAction::Annotate);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (first, second, fresh) = runtime.block_on(async {
        let runner = Runner::new(config.clone());
        runner.wait_for_pool(1).await;
        let first = runner.run(compiled(&spec, snapshot_from(&texts)).1).await;
        runner.wait_for_pool(1).await;
        let second = runner.run(compiled(&spec, snapshot_from(&texts)).1).await;
        let fresh = Runner::new(test_config(dir.path()))
            .run(compiled(&spec, snapshot_from(&texts)).1)
            .await;
        (first, second, fresh)
    });
    for result in [&first, &second] {
        assert_eq!(
            result.status,
            RunStatus::Succeeded,
            "{:?} {}",
            result.failure,
            result.stderr.text
        );
        assert!(result.pooled);
        assert_eq!(
            result.isolation.network_namespace,
            fresh.isolation.network_namespace
        );
        assert_eq!(result.isolation.landlock_abi, fresh.isolation.landlock_abi);
    }
    // One process per run: different uids, and the same outputs as a fresh process.
    assert_ne!(first.isolation.run_uid, second.isolation.run_uid);
    assert!(!fresh.pooled);
    for name in ["statistics.json", "plot.png"] {
        assert_eq!(
            first.output(name).unwrap().sha256,
            fresh.output(name).unwrap().sha256,
            "{name}"
        );
    }
}
