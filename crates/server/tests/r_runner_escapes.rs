//! The runner against scripts that try to get out: processes that outlive the run (`setsid`,
//! a server killed mid-run), outputs that point elsewhere (symbolic links, FIFOs, huge files),
//! reads of the data directory, and a script that reaches for the harness's own state. Each
//! hole has its named test; a test that needs root says so in its name and fails when not
//! root. Real R, or a stand-in `Rscript` (a shell script) where the attack is on what the
//! server does with the files a process leaves.

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use adamviz_engine::runner::{sandbox, RunFailure, RunResult, RunStatus};
use adamviz_model::{
    digest::Sha256Digest,
    spec::{LowNAction, YScale},
};
use r_fixtures::*;
use sha2::{Digest, Sha256};

/// A directory everyone may enter and read: as root each run has its own uid, and the
/// stand-in Rscript or the files under test must be reachable by it, so that only the sandbox
/// stands in the way.
fn open_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A stand-in for Rscript: a shell script run in the run's directory (the harness arguments
/// are ignored).
fn fake_rscript(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("fake-rscript");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const VALID_OUTPUTS: &str =
    "printf '{\"cells\":[]}' > statistics.json\nprintf '{}' > environment.json\n";

/// Process ids whose command line contains `needle` (arguments joined by spaces).
fn processes_running(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && pid != std::process::id() {
            found.push(pid);
        }
    }
    found
}

/// Processes whose working directory is beneath `root`.
fn processes_beneath(root: &Path) -> Vec<u32> {
    let root = root.canonicalize().unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) {
            if cwd.starts_with(&root) {
                found.push(pid);
            }
        }
    }
    found
}

fn wait_until(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// Before: without a `go` handshake R was started first and the inputs written after it, so R
/// could read a manifest that was not there yet.
#[test]
fn inputs_are_complete_on_disk_before_r_starts() {
    let dir = open_dir();
    let rscript = fake_rscript(
        dir.path(),
        "for f in manifest.json script.R snapshot.csv; do test -s \"$f\" || { echo \"MISSING $f\"; exit 7; }; done\necho INPUTS COMPLETE",
    );
    let mut config = test_config(&dir.path().join("runs"));
    config.rscript = rscript;
    for _ in 0..5 {
        let result = run_with(config.clone(), script_request("1\n"));
        assert_eq!(result.stdout.text.trim(), "INPUTS COMPLETE", "{result:#?}");
        // The stand-in writes no outputs: the run fails, but only for that.
        assert_eq!(
            result.failure,
            Some(RunFailure::MissingOutput {
                file: "statistics.json".to_owned()
            })
        );
    }
}

fn unsafe_output_run(body: &str, file_size_bytes: Option<u64>) -> RunResult {
    let dir = open_dir();
    let mut config = test_config(&dir.path().join("runs"));
    config.rscript = fake_rscript(dir.path(), body);
    if let Some(bytes) = file_size_bytes {
        config.limits.file_size_bytes = bytes;
    }
    let started = Instant::now();
    let result = run_with(config, script_request("1\n"));
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "reading the outputs must not hang: {:?}",
        started.elapsed()
    );
    result
}

/// Before: `plot.png -> /dev/zero` was read until memory ran out.
#[test]
fn an_output_that_is_a_symlink_to_dev_zero_is_refused_unread() {
    let result = unsafe_output_run(&format!("{VALID_OUTPUTS}ln -s /dev/zero plot.png"), None);
    assert_eq!(result.status, RunStatus::Failed);
    assert_eq!(
        result.failure,
        Some(RunFailure::UnsafeOutput {
            file: "plot.png".to_owned(),
            reason: "it is a symbolic link".to_owned()
        })
    );
    assert!(result.outputs.is_empty());
}

/// Before: a link to a file outside the run directory was read and its bytes hashed as the
/// run's output.
#[test]
fn an_output_that_links_outside_the_run_directory_is_refused_unread() {
    let outside = open_dir();
    let secret = outside.path().join("secret.json");
    std::fs::write(&secret, b"{\"secret\": true}").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let result = unsafe_output_run(
        &format!(
            "printf '{{}}' > environment.json\n: > plot.png\nln -s {} statistics.json",
            secret.display()
        ),
        None,
    );
    assert_eq!(
        result.failure,
        Some(RunFailure::UnsafeOutput {
            file: "statistics.json".to_owned(),
            reason: "it is a symbolic link".to_owned()
        })
    );
}

/// Before: opening a FIFO for reading blocked the server until a writer came.
#[test]
fn an_output_that_is_a_fifo_is_refused_without_blocking() {
    let result = unsafe_output_run(&format!("{VALID_OUTPUTS}mkfifo plot.png"), None);
    assert_eq!(
        result.failure,
        Some(RunFailure::UnsafeOutput {
            file: "plot.png".to_owned(),
            reason: "it is a FIFO".to_owned()
        })
    );
}

/// Before: a 10 GiB output (sparse: it costs no disk) was read whole into memory.
#[test]
fn a_ten_gib_output_is_refused_by_its_size_limit() {
    let result = unsafe_output_run(
        &format!("{VALID_OUTPUTS}truncate -s 10G plot.png"),
        Some(11 << 30),
    );
    assert_eq!(
        result.failure,
        Some(RunFailure::OutputTooLarge {
            file: "plot.png".to_owned(),
            limit: adamviz_engine::runner::OUTPUT_LIMITS[1]
        })
    );
}

#[test]
fn an_output_that_is_a_directory_is_refused() {
    let result = unsafe_output_run(&format!("{VALID_OUTPUTS}mkdir plot.png"), None);
    assert_eq!(
        result.failure,
        Some(RunFailure::UnsafeOutput {
            file: "plot.png".to_owned(),
            reason: "it is a directory".to_owned()
        })
    );
}

/// Before (as non-root): a process that left the run's process group with `setsid` survived
/// the run and held its stdout open. Now the run's pid namespace ends with R.
#[test]
fn a_descendant_that_called_setsid_does_not_outlive_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // Two sleepers: one with its output redirected, one holding R's stdout and stderr.
    let script = "system('setsid sleep 100723 > /dev/null 2>&1 &')\nsystem('setsid sleep 100724 &')\nSys.sleep(0.5)\nstop('the script ends here')\n";
    let started = Instant::now();
    let result = run_with(test_config(dir.path()), script_request(script));
    assert_eq!(
        result.failure,
        Some(RunFailure::Exited { code: 1 }),
        "{result:#?}"
    );
    assert!(result.stderr.text.contains("the script ends here"));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the sleeper holding stdout must not hold the run: {:?}",
        started.elapsed()
    );
    assert!(result.isolation.pid_namespace, "{:?}", result.isolation);
    // Each sleeper by its own argument (another test's sleeper is `sleep 100725`).
    let survivors = || {
        let mut found = processes_running("sleep 100723");
        found.extend(processes_running("sleep 100724"));
        found
    };
    assert!(
        wait_until(Duration::from_secs(5), || survivors().is_empty()),
        "survivors: {:?}",
        survivors()
    );
}

const CHILD_SERVER_ENV: &str = "ADAMVIZ_TEST_CHILD_SERVER_WORK_ROOT";

/// Before: R's process group was killed by the server, so a server killed with SIGKILL left R
/// running with the data extract. Now each process of a run dies with its parent. The test
/// runs itself as a child "server" that starts a long R run, kills that child, and waits for
/// every process of the run to go.
#[test]
fn a_killed_server_takes_its_r_processes_with_it() {
    if let Ok(work_root) = std::env::var(CHILD_SERVER_ENV) {
        // The child: start a run that sleeps far past the test, and wait for it.
        let script = "system('setsid sleep 100725 &')\nSys.sleep(100726)\n";
        let _ = run_with(test_config(Path::new(&work_root)), script_request(script));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work_root = dir.path().join("runs");
    std::fs::create_dir(&work_root).unwrap();
    let mut server = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_killed_server_takes_its_r_processes_with_it",
            "--nocapture",
        ])
        .env(CHILD_SERVER_ENV, &work_root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(30), || processes_running(
            "sleep 100725"
        )
        .len()
            == 1),
        "the child server's run did not start"
    );
    assert!(!processes_beneath(&work_root).is_empty());
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || processes_beneath(&work_root)
            .is_empty()
            && processes_running("sleep 100725").is_empty()),
        "processes of the killed server's run survive: {:?} {:?}",
        processes_beneath(&work_root),
        processes_running("sleep 100725")
    );
}

/// Before: Landlock confined writes only, so a script could read the SQLite database and every
/// stored object (here made readable to everyone, so that only the sandbox stands in the way).
#[test]
fn a_script_cannot_read_the_data_directory() {
    let data_dir = open_dir();
    let database = adamviz_store::db::Database::open_in(data_dir.path()).unwrap();
    drop(database);
    let objects = adamviz_store::objects::ObjectStore::open(data_dir.path()).unwrap();
    let object = objects.put(b"an extract of the data", 1 << 20).unwrap();
    for entry in walk(data_dir.path()) {
        let mode = if entry.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let attempt = |path: &Path| {
        format!(
            "cat(tryCatch({{ readBin('{}', 'raw', 16L); 'READ' }}, error = function(e) 'DENIED', warning = function(w) 'DENIED'), '\\n')\n",
            path.display()
        )
    };
    let script = format!(
        "{}{}{}{}",
        attempt(&data_dir.path().join("adamviz.sqlite3")),
        attempt(&objects.path_of(&object.digest)),
        attempt(Path::new("/etc/hostname")),
        attempt(Path::new("snapshot.csv")),
    );
    let dir = tempfile::tempdir().unwrap();
    let result = run_with(test_config(dir.path()), script_request(&script));
    let lines: Vec<&str> = result.stdout.text.split_whitespace().collect();
    assert_eq!(
        lines,
        ["DENIED", "DENIED", "READ", "READ"],
        "{}",
        result.stderr.text
    );
    assert!(result.isolation.landlock_abi.is_some());
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut all = vec![root.to_path_buf()];
    let mut index = 0;
    while index < all.len() {
        if all[index].is_dir() {
            for entry in std::fs::read_dir(&all[index]).unwrap().flatten() {
                all.push(entry.path());
            }
        }
        index += 1;
    }
    all
}

/// Before: the harness kept its manifest, version and helpers in the global environment, the
/// parent of the script's: a script could read them and change what the harness then wrote.
#[test]
fn the_script_can_neither_see_nor_change_the_harness_state() {
    let spec = spec_from(&SpecTexts::plain(), YScale::Fixed, LowNAction::Annotate);
    let (script, mut request) = compiled(&spec, snapshot_from(&SpecTexts::plain()));
    let hostile = "cat(exists('manifest'), exists('harness_version'), exists('harness_json_number'), exists('harness_mode'), '\\n')\n\
manifest <<- list(image = list(width = 10L, height = 10L, resolution = 10L))\n\
harness_version <<- 'forged'\n";
    let mut bytes = hostile.as_bytes().to_vec();
    bytes.extend_from_slice(&script.bytes);
    request.expected_script_hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
    request.script = bytes;
    let dir = tempfile::tempdir().unwrap();
    let result = run_with(test_config(dir.path()), request);
    assert_eq!(
        result.status,
        RunStatus::Succeeded,
        "{}",
        result.stderr.text
    );
    assert!(
        result.stdout.text.starts_with("FALSE FALSE FALSE FALSE"),
        "{}",
        result.stdout.text
    );
    let environment = result.environment.as_ref().unwrap();
    assert_eq!(environment["harness_version"], "execution-harness-v3");
    assert_eq!(environment["graphics"]["width"], 1200);
    let png = image::load_from_memory(&result.output("plot.png").unwrap().bytes).unwrap();
    assert_eq!((png.width(), png.height()), (1200, 840));
}

/// The pid namespace and the user namespace are what make the runner's guarantees hold for a
/// server that is not root; this machine must have them (CI runs here).
#[test]
fn this_machine_has_every_layer_the_default_policy_requires() {
    let support = sandbox::support();
    assert_eq!(
        support.missing_layers(),
        Vec::<String>::new(),
        "{support:?}"
    );
}

const NON_ROOT_CHILD_ENV: &str = "ADAMVIZ_TEST_NON_ROOT_WORK_ROOT";

/// Before: `RLIMIT_NPROC` was set before the run's user namespace, where the kernel counts
/// every process of the server's user: a non-root server whose user already ran more than the
/// limit (other runs, the server's own threads) could not start a single process in R. Now it is
/// set inside the namespace and counts the run's processes. The test needs root to become
/// another user: it runs itself as `nobody` (with `setpriv`), starts 80 processes as that user,
/// then a run whose R starts a process — which must work under a limit of 64.
#[test]
fn as_root_a_non_root_runner_is_not_starved_by_its_users_other_processes() {
    if let Ok(work_root) = std::env::var(NON_ROOT_CHILD_ENV) {
        // The child, as nobody.
        assert_ne!(unsafe { libc::geteuid() }, 0, "the child must not be root");
        let mut load: Vec<std::process::Child> = (0..80)
            .map(|_| {
                std::process::Command::new("sleep")
                    .arg("60")
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut config = test_config(Path::new(&work_root));
        config.limits.processes = 64;
        let script = "cat(system('echo STARTED', intern = TRUE), '\\n')\n";
        let result = run_with(config, script_request(script));
        for child in &mut load {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(
            result.stdout.text.contains("STARTED"),
            "R could not start a process: {:?} {}",
            result.failure,
            result.stderr.text
        );
        assert!(result.isolation.run_uid.is_none());
        assert!(result.isolation.pid_namespace);
        return;
    }
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test needs root (to run itself as another user); it fails rather than pass vacuously"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "as_root_a_non_root_runner_is_not_starved_by_its_users_other_processes",
            "--nocapture",
        ])
        .env(NON_ROOT_CHILD_ENV, dir.path())
        .env("HOME", dir.path())
        .output()
        .expect("setpriv (util-linux) runs the test as nobody");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}
