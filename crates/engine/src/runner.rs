//! The sandboxed R runner: takes a compiled script, the snapshot and the hashes they must have,
//! refuses a mismatch before anything starts, runs the execution harness
//! (`runner/execution-harness-v2.R`) under `Rscript --vanilla` in a fresh private working
//! directory with an empty environment plus an allowlist and the sandbox of `runner/sandbox.rs`,
//! and returns a typed [`RunResult`]: every failure is a result, never a panic.
//!
//! Concurrency is bounded by a semaphore (default: the number of cores); excess runs queue.
//! With a pool (`runner/pool.rs`) processes are started ahead of time with the packages
//! loaded; each takes exactly one run and is then discarded, so isolation is unchanged.

pub mod capture;
pub mod pool;
pub mod sandbox;

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::{io::AsyncWriteExt, process::Command, sync::Semaphore};

use crate::{
    compiler::ImageSize,
    domain::digest::Sha256Digest,
    ingest::snapshot::{snapshot_hash, write_csv, Snapshot},
};
use capture::{capture, Diagnostics};
use sandbox::{IsolationPolicy, IsolationReport, ResourceLimits};

/// Version of the harness the runner executes.
pub const HARNESS_VERSION: &str = "execution-harness-v2";
/// The harness itself (application-owned R code).
pub const HARNESS_SOURCE: &str = include_str!("runner/execution-harness-v2.R");

/// Schema version of [`RunResult`] as JSON.
pub const RESULT_SCHEMA_VERSION: &str = "execution-result-v2";

/// The files a successful run produces, in result order.
pub const OUTPUT_FILES: [&str; 3] = ["statistics.json", "plot.png", "environment.json"];

/// The largest each output may be, in [`OUTPUT_FILES`] order: a run whose output is larger
/// fails (`output_too_large`) and the server reads no more than the limit and one byte.
pub const OUTPUT_LIMITS: [u64; 3] = [64 << 20, 64 << 20, 1 << 20];

/// How long the server spends reading the outputs of one run before it gives up
/// (`unsafe_output`).
pub const OUTPUT_READ_DEADLINE: Duration = Duration::from_secs(20);

/// How long stdout and stderr are still read after R has ended (a descendant that holds the
/// pipe cannot keep the capture open longer).
pub const CAPTURE_GRACE: Duration = Duration::from_secs(2);

/// Prefix of every run's working directory; the server's pid follows, so that leftovers of a
/// process that is gone can be told from the directories of one still running.
pub const WORK_DIR_PREFIX: &str = "adamviz-run-";

/// The variables R sees; nothing else of the server's environment reaches it.
fn allowed_environment(work_dir: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("HOME", work_dir.display().to_string()),
        ("TMPDIR", work_dir.join("tmp").display().to_string()),
        ("XDG_CACHE_HOME", work_dir.join("tmp").display().to_string()),
        ("LANG", "C.UTF-8".to_owned()),
        ("LC_ALL", "C.UTF-8".to_owned()),
        ("TZ", "UTC".to_owned()),
    ]
}

/// How the runner runs R.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// The Rscript executable.
    pub rscript: PathBuf,
    /// Where private working directories are created (one per run, removed after it).
    pub work_root: PathBuf,
    /// Limits for each process.
    pub limits: ResourceLimits,
    /// Runs at the same time; the rest queue.
    pub max_concurrent: usize,
    /// Processes kept started ahead of time (0: no pool).
    pub pool_size: usize,
    /// Whether a run needs every layer of isolation (the default) or takes what the machine
    /// allows.
    pub isolation: IsolationPolicy,
}

impl RunnerConfig {
    /// Defaults: `Rscript` from PATH, the system temp dir, default limits, one run per core,
    /// no pool.
    pub fn new() -> Self {
        Self {
            rscript: PathBuf::from("Rscript"),
            work_root: std::env::temp_dir(),
            limits: ResourceLimits::default(),
            max_concurrent: std::thread::available_parallelism().map_or(2, |n| n.get()),
            pool_size: 0,
            isolation: IsolationPolicy::Require,
        }
    }
}

impl Default for RunnerConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// One execution to run.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The script bytes.
    pub script: Vec<u8>,
    /// The hash they must have.
    pub expected_script_hash: Sha256Digest,
    /// The selected records.
    pub snapshot: Arc<Snapshot>,
    /// The snapshot hash they must have.
    pub expected_snapshot_hash: Sha256Digest,
    /// PNG size.
    pub image: ImageSize,
}

/// Succeeded or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// R exited 0 within the limits and wrote every output.
    Succeeded,
    /// Anything else; see the failure.
    Failed,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RunFailure {
    /// The script bytes do not hash to the expected hash; R was not started.
    #[error("the script hashes to {actual}, not the expected {expected}; not run")]
    ScriptHashMismatch {
        /// Expected.
        expected: Sha256Digest,
        /// Actual.
        actual: Sha256Digest,
    },
    /// The records do not hash to the expected snapshot hash; R was not started.
    #[error("the records hash to {actual}, not the expected snapshot hash {expected}; not run")]
    SnapshotHashMismatch {
        /// Expected.
        expected: Sha256Digest,
        /// Actual.
        actual: Sha256Digest,
    },
    /// The working directory could not be prepared.
    #[error("cannot prepare the working directory: {message}")]
    Setup {
        /// What failed.
        message: String,
    },
    /// R could not be started.
    #[error("cannot start {program}: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
    /// The wall-clock limit passed; the process group was killed.
    #[error("killed after the wall-clock limit of {limit_ms} ms")]
    TimedOut {
        /// The limit.
        limit_ms: u64,
    },
    /// R exited with a non-zero status.
    #[error("R exited with status {code}")]
    Exited {
        /// The status.
        code: i32,
    },
    /// R was killed by a signal (a resource limit: SIGXCPU for CPU, SIGXFSZ for file size,
    /// SIGKILL, SIGSEGV …).
    #[error("R was killed by signal {signal} ({name})")]
    Signalled {
        /// The signal number.
        signal: i32,
        /// Its name.
        name: String,
    },
    /// R exited 0 but an output is missing or unreadable.
    #[error("R exited 0 but did not write {file}")]
    MissingOutput {
        /// The file.
        file: String,
    },
    /// The statistics are not JSON.
    #[error("statistics.json is not valid JSON: {message}")]
    BadStatistics {
        /// The parse error.
        message: String,
    },
    /// The environment record is not JSON.
    #[error("environment.json is not valid JSON: {message}")]
    BadEnvironmentRecord {
        /// The parse error.
        message: String,
    },
    /// The policy requires a layer of isolation this machine cannot apply; R was not started.
    #[error("isolation required but not available here: {}; not run (`--isolation best-effort` runs without it, recorded in the evidence)", missing.join(", "))]
    IsolationUnavailable {
        /// The layers that are missing.
        missing: Vec<String>,
    },
    /// An output is not a regular file of the run directory (a symlink, a FIFO, a directory
    /// …) or could not be read within the deadline; nothing outside the run directory is read.
    #[error("{file} is not a readable regular file of the run: {reason}")]
    UnsafeOutput {
        /// The file.
        file: String,
        /// What it is, or what failed.
        reason: String,
    },
    /// An output is larger than its limit; it was not read.
    #[error("{file} is larger than its limit of {limit} bytes")]
    OutputTooLarge {
        /// The file.
        file: String,
        /// The limit.
        limit: u64,
    },
}

/// One output file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOutput {
    /// File name.
    pub name: String,
    /// SHA-256 of its bytes.
    pub sha256: Sha256Digest,
    /// Size in bytes.
    pub size: u64,
    /// The bytes (not serialized: the result JSON names them by hash).
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// The typed result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// The harness version that ran.
    pub harness_version: String,
    /// Always `execution-result-v2` (schemas/execution-result-v2.schema.json).
    pub schema_version: String,
    /// Succeeded or failed.
    pub status: RunStatus,
    /// Why it failed.
    pub failure: Option<RunFailure>,
    /// Hash of the script bytes the runner was handed (re-computed).
    pub script_hash: Sha256Digest,
    /// Snapshot hash of the records the runner was handed (re-computed).
    pub snapshot_hash: Sha256Digest,
    /// R's exit status, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended R, when one did.
    pub signal: Option<i32>,
    /// Wall time from handing the run to R until it ended, in milliseconds.
    pub duration_ms: u64,
    /// Whether the process came from the pool (started ahead of time).
    pub pooled: bool,
    /// Outputs, in [`OUTPUT_FILES`] order (only on success).
    pub outputs: Vec<RunOutput>,
    /// The environment record R wrote.
    pub environment: Option<serde_json::Value>,
    /// SHA-256 of the canonical JSON of the statistics R wrote (what the verifier re-derives).
    pub analytical_hash: Option<Sha256Digest>,
    /// SHA-256 of the canonical JSON of the environment record.
    pub environment_fingerprint: Option<Sha256Digest>,
    /// R's standard output, bounded.
    pub stdout: Diagnostics,
    /// R's standard error, bounded.
    pub stderr: Diagnostics,
    /// The limits it ran under.
    pub limits: ResourceLimits,
    /// The isolation it got.
    pub isolation: IsolationReport,
}

impl RunResult {
    fn refused(
        failure: RunFailure,
        script_hash: Sha256Digest,
        snapshot_hash: Sha256Digest,
        limits: ResourceLimits,
        policy: IsolationPolicy,
    ) -> Self {
        Self {
            harness_version: HARNESS_VERSION.to_owned(),
            schema_version: RESULT_SCHEMA_VERSION.to_owned(),
            status: RunStatus::Failed,
            failure: Some(failure),
            script_hash,
            snapshot_hash,
            exit_code: None,
            signal: None,
            duration_ms: 0,
            pooled: false,
            outputs: Vec::new(),
            environment: None,
            analytical_hash: None,
            environment_fingerprint: None,
            stdout: Diagnostics::default(),
            stderr: Diagnostics::default(),
            limits,
            isolation: IsolationReport::not_started(policy),
        }
    }

    /// The output called `name`, if the run produced it.
    pub fn output(&self, name: &str) -> Option<&RunOutput> {
        self.outputs.iter().find(|o| o.name == name)
    }
}

/// The runner: bounded concurrency over sandboxed R processes.
pub struct Runner {
    config: RunnerConfig,
    permits: Arc<Semaphore>,
    pool: Option<pool::RProcessPool>,
}

/// The manifest the harness reads.
#[derive(Serialize)]
struct HarnessManifest<'a> {
    column_names: Vec<&'a str>,
    column_classes: Vec<&'static str>,
    image: ImageSize,
}

impl Runner {
    /// A runner with `config`; starts the pool's processes when `pool_size` > 0 (needs a tokio
    /// runtime).
    pub fn new(config: RunnerConfig) -> Self {
        let permits = Arc::new(Semaphore::new(config.max_concurrent.max(1)));
        let pool = (config.pool_size > 0).then(|| pool::RProcessPool::start(config.clone()));
        Self {
            config,
            permits,
            pool,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// Waits until the pool holds `count` ready processes (for benchmarks and tests).
    pub async fn wait_for_pool(&self, count: usize) {
        if let Some(pool) = &self.pool {
            pool.wait_until_ready(count).await;
        }
    }

    /// Runs one execution. Hash checks come first: a mismatch returns a failed result without
    /// starting anything.
    pub async fn run(&self, request: RunRequest) -> RunResult {
        let limits = self.config.limits;
        let policy = self.config.isolation;
        // 1. Re-hash what we were handed; refuse mismatches before R starts.
        let script_hash = Sha256Digest::from_bytes(Sha256::digest(&request.script).into());
        let snapshot = Arc::clone(&request.snapshot);
        let records_hash = match tokio::task::spawn_blocking(move || snapshot_hash(&snapshot)).await
        {
            Ok(hash) => hash,
            // A panic while hashing is a bug: never a hash of nothing.
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        };
        let refuse =
            |failure| RunResult::refused(failure, script_hash, records_hash, limits, policy);
        if script_hash != request.expected_script_hash {
            return refuse(RunFailure::ScriptHashMismatch {
                expected: request.expected_script_hash,
                actual: script_hash,
            });
        }
        if records_hash != request.expected_snapshot_hash {
            return refuse(RunFailure::SnapshotHashMismatch {
                expected: request.expected_snapshot_hash,
                actual: records_hash,
            });
        }
        // 2. Fail closed: the isolation the policy asks for, or no run.
        if let Some(failure) = isolation_refusal(policy, &sandbox::support()) {
            return refuse(failure);
        }
        // 3. Wait for a slot; excess work queues here.
        let _permit = Arc::clone(&self.permits).acquire_owned().await;
        // 4. Inputs are complete on disk before R can read them: a fresh process starts after
        //    they are written; a pooled one waits for "go".
        let process = match &self.pool {
            Some(pool) => match pool.take().await {
                Ok(process) => match write_inputs(process.work_dir.clone(), &request).await {
                    Ok(()) => Ok(process),
                    Err(error) => {
                        process.discard().await;
                        Err(RunFailure::Setup {
                            message: error.to_string(),
                        })
                    }
                },
                Err(failure) => Err(failure),
            },
            None => match WorkDir::create(&self.config).await {
                Ok(work_dir) => match write_inputs(work_dir.path.clone(), &request).await {
                    Ok(()) => PreparedProcess::start(&self.config, work_dir, "run"),
                    Err(error) => Err(RunFailure::Setup {
                        message: error.to_string(),
                    }),
                },
                Err(failure) => Err(failure),
            },
        };
        match process {
            Ok(process) => process.finish(script_hash, records_hash).await,
            Err(failure) => refuse(failure),
        }
    }
}

/// The failure of a run that `policy` does not allow on a machine with `support`.
fn isolation_refusal(
    policy: IsolationPolicy,
    support: &sandbox::SandboxSupport,
) -> Option<RunFailure> {
    let missing = support.missing_layers();
    (policy == IsolationPolicy::Require && !missing.is_empty())
        .then_some(RunFailure::IsolationUnavailable { missing })
}

/// An input of a run that could not be written into its directory.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {source}")]
struct InputWriteError {
    /// The file (or the directory) being written.
    file: String,
    /// What the system said.
    source: std::io::Error,
}

/// Writes the snapshot, the script and the manifest into the run's directory, each synced to
/// disk, then the directory itself.
async fn write_inputs(work_dir: PathBuf, request: &RunRequest) -> Result<(), InputWriteError> {
    let snapshot = Arc::clone(&request.snapshot);
    let script = request.script.clone();
    let manifest = HarnessManifest {
        column_names: snapshot.columns.iter().map(|c| c.name.as_str()).collect(),
        column_classes: snapshot.columns.iter().map(|c| c.class.as_str()).collect(),
        image: request.image,
    };
    let failed = |file: &str| {
        let file = file.to_owned();
        move |source: std::io::Error| InputWriteError { file, source }
    };
    let manifest = serde_json::to_vec(&manifest).map_err(|e| failed("manifest.json")(e.into()))?;
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let create = |name: &str| std::fs::File::create(work_dir.join(name)).map_err(failed(name));
        let mut csv = std::io::BufWriter::new(create("snapshot.csv")?);
        write_csv(&snapshot, &mut csv).map_err(failed("snapshot.csv"))?;
        let csv = csv
            .into_inner()
            .map_err(|e| failed("snapshot.csv")(e.into_error()))?;
        csv.sync_all().map_err(failed("snapshot.csv"))?;
        for (name, bytes) in [("script.R", &script), ("manifest.json", &manifest)] {
            let mut file = create(name)?;
            file.write_all(bytes).map_err(failed(name))?;
            file.sync_all().map_err(failed(name))?;
        }
        std::fs::File::open(&work_dir)
            .and_then(|dir| dir.sync_all())
            .map_err(failed(&work_dir.display().to_string()))
    })
    .await
    .unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()))
}

/// A started R process in its private working directory.
pub(crate) struct PreparedProcess {
    work_dir: PathBuf,
    _work_dir_guard: tempfile::TempDir,
    child: tokio::process::Child,
    stdout: tokio::task::JoinHandle<Diagnostics>,
    stderr: tokio::task::JoinHandle<Diagnostics>,
    stop_capture: tokio::sync::watch::Sender<bool>,
    limits: ResourceLimits,
    isolation: IsolationReport,
    pooled: bool,
    program: String,
}

impl PreparedProcess {
    /// Creates a working directory and starts `Rscript --vanilla harness.R wait` in it (a
    /// process of the pool: its inputs come later, then "go").
    pub(crate) async fn spawn_waiting(config: &RunnerConfig) -> Result<Self, RunFailure> {
        let work_dir = WorkDir::create(config).await?;
        Self::start(config, work_dir, "wait")
    }

    /// Starts `Rscript --vanilla harness.R <mode>` in `work_dir`, inside the sandbox.
    fn start(config: &RunnerConfig, work_dir: WorkDir, mode: &str) -> Result<Self, RunFailure> {
        let WorkDir {
            guard,
            path,
            run_uid,
            landlock,
        } = work_dir;
        let support = sandbox::support();
        let namespaces = support.namespaces;
        let mut command = Command::new(&config.rscript);
        command
            .arg("--vanilla")
            .arg("harness.R")
            .arg(mode)
            .current_dir(&path)
            .env_clear()
            .envs(allowed_environment(&path))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(uid) = run_uid {
            command.uid(uid).gid(uid);
        }
        let limits = config.limits;
        let child_sandbox = sandbox::ChildSandbox {
            limits,
            namespaces,
            landlock_fd: landlock.as_ref().map(|l| l.fd()),
            // SAFETY: getpid has no preconditions.
            server_pid: unsafe { libc::getpid() },
        };
        // SAFETY: enter_sandbox_in_child makes only async-signal-safe calls. This runs on the
        // async task's thread (a runtime worker), which outlives the run: the parent-death
        // signal is tied to the spawning thread.
        unsafe {
            command.pre_exec(move || sandbox::enter_sandbox_in_child(&child_sandbox));
        }
        let program = config.rscript.display().to_string();
        let mut child = command.spawn().map_err(|e| RunFailure::Spawn {
            program: program.clone(),
            message: e.to_string(),
        })?;
        drop(landlock);
        let bound = limits.diagnostics_bytes;
        let (stop_capture, stop) = tokio::sync::watch::channel(false);
        let stdout = tokio::spawn(capture(child.stdout.take(), bound, stop.clone()));
        let stderr = tokio::spawn(capture(child.stderr.take(), bound, stop));
        Ok(Self {
            work_dir: path,
            _work_dir_guard: guard,
            child,
            stdout,
            stderr,
            stop_capture,
            limits,
            isolation: IsolationReport {
                policy: config.isolation,
                network_namespace: namespaces,
                pid_namespace: namespaces,
                landlock_abi: (support.landlock_abi > 0).then_some(support.landlock_abi.min(4)),
                no_new_privs: true,
                run_uid,
                missing_layers: support.missing_layers(),
            },
            pooled: mode == "wait",
            program,
        })
    }

    /// Whether the process is still alive (a pooled process waiting for its run).
    pub(crate) fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the process and everything it started, and removes its directory.
    pub(crate) async fn discard(mut self) {
        self.kill_everything();
        let _ = self.child.wait().await;
    }

    fn kill_everything(&mut self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: signalling our own child's process group. The run's init goes with it,
            // and with it (in a pid namespace) every process of the run.
            unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
        }
        if let Some(uid) = self.isolation.run_uid {
            sandbox::kill_all_of_uid(uid);
        }
    }

    /// Says go (pooled) or closes stdin, waits within the wall-clock limit, and collects the
    /// result.
    async fn finish(mut self, script_hash: Sha256Digest, snapshot_hash: Sha256Digest) -> RunResult {
        let started = Instant::now();
        if let Some(mut stdin) = self.child.stdin.take() {
            if self.pooled {
                let _ = stdin.write_all(b"go\n").await;
            }
            drop(stdin);
        }
        let limit = Duration::from_millis(self.limits.wall_clock_ms);
        let waited = tokio::time::timeout(limit, self.child.wait()).await;
        let duration_ms = started.elapsed().as_millis() as u64;
        // Whatever happened, nothing the run started survives it.
        self.kill_everything();
        let timed_out = waited.is_err();
        let status = match waited {
            Ok(status) => status.ok(),
            Err(_) => {
                let _ = self.child.wait().await;
                None
            }
        };
        let (stdout, stderr) = self.end_capture().await;
        let mut result = RunResult {
            harness_version: HARNESS_VERSION.to_owned(),
            schema_version: RESULT_SCHEMA_VERSION.to_owned(),
            status: RunStatus::Failed,
            failure: None,
            script_hash,
            snapshot_hash,
            exit_code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)),
            duration_ms,
            pooled: self.pooled,
            outputs: Vec::new(),
            environment: None,
            analytical_hash: None,
            environment_fingerprint: None,
            stdout,
            stderr,
            limits: self.limits,
            isolation: self.isolation.clone(),
        };
        result.failure = match (timed_out, result.exit_code, result.signal) {
            (true, _, _) => Some(RunFailure::TimedOut {
                limit_ms: self.limits.wall_clock_ms,
            }),
            (false, Some(0), _) => collect_outputs(&self.work_dir, &mut result).await.err(),
            (false, Some(code), _) => Some(RunFailure::Exited { code }),
            (false, None, Some(signal)) => Some(RunFailure::Signalled {
                signal,
                name: signal_name(signal).to_owned(),
            }),
            (false, None, None) => Some(RunFailure::Spawn {
                program: self.program.clone(),
                message: "the process status could not be read".to_owned(),
            }),
        };
        if result.failure.is_none() {
            result.status = RunStatus::Succeeded;
        }
        result
    }

    /// Reads what is left of stdout and stderr for at most [`CAPTURE_GRACE`], then stops: a
    /// process that escaped with the pipe open cannot hold the run.
    async fn end_capture(&mut self) -> (Diagnostics, Diagnostics) {
        let both = async {
            (
                Self::join(&mut self.stdout).await,
                Self::join(&mut self.stderr).await,
            )
        };
        let mut both = Box::pin(both);
        match tokio::time::timeout(CAPTURE_GRACE, &mut both).await {
            Ok(captured) => captured,
            Err(_) => {
                let _ = self.stop_capture.send(true);
                both.await
            }
        }
    }

    async fn join(handle: &mut tokio::task::JoinHandle<Diagnostics>) -> Diagnostics {
        match handle.await {
            Ok(diagnostics) => diagnostics,
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        }
    }
}

/// Reads the outputs without following links or reading anything but a regular file of the
/// run's directory, each within its size limit, all within [`OUTPUT_READ_DEADLINE`].
async fn collect_outputs(work_dir: &Path, result: &mut RunResult) -> Result<(), RunFailure> {
    let dir = work_dir.to_path_buf();
    let reading = tokio::task::spawn_blocking(move || {
        OUTPUT_FILES
            .iter()
            .zip(OUTPUT_LIMITS)
            .map(|(name, limit)| read_output(&dir, name, limit))
            .collect::<Result<Vec<_>, _>>()
    });
    let outputs = match tokio::time::timeout(OUTPUT_READ_DEADLINE, reading).await {
        Ok(Ok(outputs)) => outputs?,
        Ok(Err(error)) => std::panic::resume_unwind(error.into_panic()),
        Err(_) => {
            return Err(RunFailure::UnsafeOutput {
                file: "outputs".to_owned(),
                reason: format!("not read within {} s", OUTPUT_READ_DEADLINE.as_secs()),
            })
        }
    };
    for (name, bytes) in OUTPUT_FILES.iter().zip(outputs) {
        result.outputs.push(RunOutput {
            name: (*name).to_owned(),
            sha256: Sha256Digest::from_bytes(Sha256::digest(&bytes).into()),
            size: bytes.len() as u64,
            bytes,
        });
    }
    let bytes_of = |name: &str| {
        result
            .output(name)
            .map(|o| o.bytes.as_slice())
            .ok_or(RunFailure::MissingOutput {
                file: name.to_owned(),
            })
    };
    let environment: serde_json::Value = serde_json::from_slice(bytes_of("environment.json")?)
        .map_err(|e| RunFailure::BadEnvironmentRecord {
            message: e.to_string(),
        })?;
    let statistics: serde_json::Value = serde_json::from_slice(bytes_of("statistics.json")?)
        .map_err(|e| RunFailure::BadStatistics {
            message: e.to_string(),
        })?;
    result.environment_fingerprint =
        Some(
            canonical_hash(&environment).map_err(|e| RunFailure::BadEnvironmentRecord {
                message: e.to_string(),
            })?,
        );
    result.environment = Some(environment);
    result.analytical_hash =
        Some(
            canonical_hash(&statistics).map_err(|e| RunFailure::BadStatistics {
                message: e.to_string(),
            })?,
        );
    Ok(())
}

/// One output: opened without following a link and without blocking (a FIFO), required to be
/// a regular file no larger than `limit`, and read to at most `limit` bytes.
fn read_output(dir: &Path, name: &str, limit: u64) -> Result<Vec<u8>, RunFailure> {
    use std::{
        io::Read,
        os::unix::fs::{FileTypeExt, OpenOptionsExt},
    };
    let unsafe_output = |reason: String| RunFailure::UnsafeOutput {
        file: name.to_owned(),
        reason,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(dir.join(name));
    let file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(RunFailure::MissingOutput {
                file: name.to_owned(),
            })
        }
        Err(error) if error.raw_os_error() == Some(libc::ELOOP) => {
            return Err(unsafe_output("it is a symbolic link".to_owned()))
        }
        Err(error) => return Err(unsafe_output(error.to_string())),
    };
    let metadata = file.metadata().map_err(|e| unsafe_output(e.to_string()))?;
    let kind = metadata.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(unsafe_output(format!("it is {what}")));
    }
    if metadata.len() > limit {
        return Err(RunFailure::OutputTooLarge {
            file: name.to_owned(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unsafe_output(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(RunFailure::OutputTooLarge {
            file: name.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

/// SHA-256 of the RFC 8785 canonical JSON of `value`.
pub fn canonical_hash(value: &serde_json::Value) -> Result<Sha256Digest, serde_json::Error> {
    let canonical = serde_jcs::to_vec(value)?;
    Ok(Sha256Digest::from_bytes(Sha256::digest(canonical).into()))
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGXCPU => "SIGXCPU: CPU limit",
        libc::SIGXFSZ => "SIGXFSZ: file size limit",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        _ => "other",
    }
}

/// A run's private working directory, prepared but with no process yet.
pub(crate) struct WorkDir {
    guard: tempfile::TempDir,
    path: PathBuf,
    run_uid: Option<u32>,
    landlock: Option<sandbox::LandlockRuleset>,
}

impl WorkDir {
    /// A fresh private directory with the harness in it, owned by the run's uid when there is
    /// one, and the Landlock ruleset that confines the run to it.
    async fn create(config: &RunnerConfig) -> Result<Self, RunFailure> {
        let config = config.clone();
        let created = tokio::task::spawn_blocking(move || prepare_work_dir(&config)).await;
        match created {
            Ok(created) => created.map_err(|e| RunFailure::Setup {
                message: e.to_string(),
            }),
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        }
    }
}

fn prepare_work_dir(config: &RunnerConfig) -> std::io::Result<WorkDir> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(&config.work_root)?;
    let guard = tempfile::Builder::new()
        .prefix(&format!("{WORK_DIR_PREFIX}{}-", std::process::id()))
        .tempdir_in(&config.work_root)?;
    let path = guard.path().canonicalize()?;
    std::fs::write(path.join("harness.R"), HARNESS_SOURCE)?;
    std::fs::create_dir(path.join("tmp"))?;
    let support = sandbox::support();
    let run_uid = support.per_run_uid.then(sandbox::next_run_uid);
    if let Some(uid) = run_uid {
        std::os::unix::fs::chown(&path, Some(uid), Some(uid))?;
        std::os::unix::fs::chown(path.join("tmp"), Some(uid), Some(uid))?;
        // The run's uid must be able to reach its directory.
        let root = config.work_root.canonicalize()?;
        let mode = std::fs::metadata(&root)?.permissions().mode();
        if mode & 0o001 == 0 {
            std::fs::set_permissions(&root, std::fs::Permissions::from_mode(mode | 0o711))?;
        }
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
    let landlock = if support.landlock_abi > 0 {
        // A configured Rscript outside the system's directories must stay readable.
        let rscript_dir = config
            .rscript
            .is_absolute()
            .then(|| config.rscript.parent().map(Path::to_path_buf))
            .flatten();
        let extra: Vec<&Path> = rscript_dir.iter().map(PathBuf::as_path).collect();
        Some(sandbox::landlock_ruleset(
            support.landlock_abi.min(4),
            &path,
            &extra,
        )?)
    } else {
        None
    };
    Ok(WorkDir {
        guard,
        path,
        run_uid,
        landlock,
    })
}

/// Removes the working directories that processes which are gone left in `work_root` (they
/// hold data extracts), and returns their paths. Directories of a live adamviz process are
/// kept.
pub fn remove_leftover_work_dirs(work_root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries = match std::fs::read_dir(work_root) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
        Err(error) => return Err(error),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(WORK_DIR_PREFIX)) else {
            continue;
        };
        let owner = rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok());
        if owner.is_some_and(process_is_alive) {
            continue;
        }
        std::fs::remove_dir_all(entry.path())?;
        removed.push(entry.path());
    }
    Ok(removed)
}

/// Whether a process with `pid` exists (it may be another program that took a reused pid:
/// then its directory is kept, the safe side).
pub fn process_is_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_refuses_a_machine_without_a_layer_and_best_effort_runs() {
        assert_eq!(RunnerConfig::new().isolation, IsolationPolicy::Require);
        let complete = sandbox::SandboxSupport {
            namespaces: true,
            landlock_abi: 4,
            per_run_uid: false,
        };
        assert_eq!(isolation_refusal(IsolationPolicy::Require, &complete), None);
        for (namespaces, landlock_abi, missing) in [
            (false, 4, vec!["user, network and pid namespaces"]),
            (true, 0, vec!["Landlock"]),
            (
                false,
                0,
                vec!["user, network and pid namespaces", "Landlock"],
            ),
        ] {
            let support = sandbox::SandboxSupport {
                namespaces,
                landlock_abi,
                per_run_uid: false,
            };
            let failure = isolation_refusal(IsolationPolicy::Require, &support);
            assert_eq!(
                failure,
                Some(RunFailure::IsolationUnavailable {
                    missing: missing.iter().map(|m| m.to_string()).collect()
                })
            );
            assert!(failure
                .unwrap()
                .to_string()
                .contains("--isolation best-effort"));
            assert_eq!(
                isolation_refusal(IsolationPolicy::BestEffort, &support),
                None
            );
        }
    }
}
