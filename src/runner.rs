//! The sandboxed R runner: takes a compiled script, the snapshot and the hashes they must have,
//! refuses a mismatch before anything starts, runs the execution harness
//! (`runner/execution-harness-v1.R`) under `Rscript --vanilla` in a fresh private working
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
use sandbox::{IsolationReport, ResourceLimits};

/// Version of the harness the runner executes.
pub const HARNESS_VERSION: &str = "execution-harness-v1";
/// The harness itself (application-owned R code).
pub const HARNESS_SOURCE: &str = include_str!("runner/execution-harness-v1.R");

/// Schema version of [`RunResult`] as JSON.
pub const RESULT_SCHEMA_VERSION: &str = "execution-result-v1";

/// The files a successful run produces, in result order.
pub const OUTPUT_FILES: [&str; 3] = ["statistics.json", "plot.png", "environment.json"];

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
    /// Always `execution-result-v1` (schemas/execution-result-v1.schema.json).
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
            isolation: IsolationReport {
                network_namespace: false,
                landlock_abi: None,
                run_uid: None,
            },
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
        // 1. Re-hash what we were handed; refuse mismatches before R starts.
        let script_hash = Sha256Digest::from_bytes(Sha256::digest(&request.script).into());
        let snapshot = Arc::clone(&request.snapshot);
        let records_hash = tokio::task::spawn_blocking(move || snapshot_hash(&snapshot))
            .await
            .unwrap_or_else(|_| Sha256Digest::from_bytes([0; 32]));
        if script_hash != request.expected_script_hash {
            return RunResult::refused(
                RunFailure::ScriptHashMismatch {
                    expected: request.expected_script_hash,
                    actual: script_hash,
                },
                script_hash,
                records_hash,
                limits,
            );
        }
        if records_hash != request.expected_snapshot_hash {
            return RunResult::refused(
                RunFailure::SnapshotHashMismatch {
                    expected: request.expected_snapshot_hash,
                    actual: records_hash,
                },
                script_hash,
                records_hash,
                limits,
            );
        }
        // 2. Wait for a slot; excess work queues here.
        let _permit = Arc::clone(&self.permits).acquire_owned().await;
        // 3. A pooled process, or a fresh one.
        let prepared = match &self.pool {
            Some(pool) => pool.take().await,
            None => PreparedProcess::spawn(&self.config, "run").await,
        };
        let process = match prepared {
            Ok(process) => process,
            Err(failure) => return RunResult::refused(failure, script_hash, records_hash, limits),
        };
        let inputs = write_inputs(&process.work_dir, &request).await;
        let result = match inputs {
            Err(message) => {
                process.discard().await;
                RunResult::refused(
                    RunFailure::Setup { message },
                    script_hash,
                    records_hash,
                    limits,
                )
            }
            Ok(()) => process.finish(script_hash, records_hash).await,
        };
        result
    }
}

async fn write_inputs(work_dir: &Path, request: &RunRequest) -> Result<(), String> {
    let snapshot = Arc::clone(&request.snapshot);
    let csv = tokio::task::spawn_blocking(move || {
        let mut csv = Vec::new();
        write_csv(&snapshot, &mut csv).map(|()| csv)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    let manifest = HarnessManifest {
        column_names: request
            .snapshot
            .columns
            .iter()
            .map(|c| c.name.as_str())
            .collect(),
        column_classes: request
            .snapshot
            .columns
            .iter()
            .map(|c| c.class.as_str())
            .collect(),
        image: request.image,
    };
    let manifest = serde_json::to_vec(&manifest).map_err(|e| e.to_string())?;
    for (name, bytes) in [
        ("snapshot.csv", csv.as_slice()),
        ("script.R", request.script.as_slice()),
        ("manifest.json", manifest.as_slice()),
    ] {
        tokio::fs::write(work_dir.join(name), bytes)
            .await
            .map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// A started (or startable) R process in its private working directory.
pub(crate) struct PreparedProcess {
    work_dir: PathBuf,
    _work_dir_guard: tempfile::TempDir,
    child: tokio::process::Child,
    stdout: tokio::task::JoinHandle<Diagnostics>,
    stderr: tokio::task::JoinHandle<Diagnostics>,
    limits: ResourceLimits,
    isolation: IsolationReport,
    pooled: bool,
    program: String,
}

impl PreparedProcess {
    /// Creates the working directory and starts `Rscript --vanilla harness.R <mode>` in it.
    pub(crate) async fn spawn(config: &RunnerConfig, mode: &str) -> Result<Self, RunFailure> {
        let config = config.clone();
        let mode = mode.to_owned();
        let setup =
            tokio::task::spawn_blocking(move || prepare_work_dir(&config).map(|d| (d, config)))
                .await
                .map_err(|e| RunFailure::Setup {
                    message: e.to_string(),
                })?;
        let (prepared, config) = setup.map_err(|e| RunFailure::Setup {
            message: e.to_string(),
        })?;
        let WorkDir {
            guard,
            path,
            run_uid,
            landlock,
        } = prepared;
        let support = sandbox::support();
        let mut command = Command::new(&config.rscript);
        command
            .arg("--vanilla")
            .arg("harness.R")
            .arg(&mode)
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
        let network_namespace = support.network_namespace;
        let landlock_fd = landlock.as_ref().map(|l| l.fd());
        // SAFETY: apply_in_child makes only async-signal-safe calls.
        unsafe {
            command
                .pre_exec(move || sandbox::apply_in_child(&limits, network_namespace, landlock_fd));
        }
        let program = config.rscript.display().to_string();
        let mut child = command.spawn().map_err(|e| RunFailure::Spawn {
            program: program.clone(),
            message: e.to_string(),
        })?;
        drop(landlock);
        let bound = limits.diagnostics_bytes;
        let stdout = tokio::spawn(capture(child.stdout.take(), bound));
        let stderr = tokio::spawn(capture(child.stderr.take(), bound));
        Ok(Self {
            work_dir: path,
            _work_dir_guard: guard,
            child,
            stdout,
            stderr,
            limits,
            isolation: IsolationReport {
                network_namespace,
                landlock_abi: (support.landlock_abi > 0).then_some(support.landlock_abi.min(4)),
                run_uid,
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
            // SAFETY: signalling our own child's process group.
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
        let stdout = self.stdout.await.unwrap_or_default();
        let stderr = self.stderr.await.unwrap_or_default();
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
}

async fn collect_outputs(work_dir: &Path, result: &mut RunResult) -> Result<(), RunFailure> {
    for name in OUTPUT_FILES {
        let bytes =
            tokio::fs::read(work_dir.join(name))
                .await
                .map_err(|_| RunFailure::MissingOutput {
                    file: name.to_owned(),
                })?;
        result.outputs.push(RunOutput {
            name: name.to_owned(),
            sha256: Sha256Digest::from_bytes(Sha256::digest(&bytes).into()),
            size: bytes.len() as u64,
            bytes,
        });
    }
    let environment = result.output("environment.json").map(|o| o.bytes.clone());
    let environment: serde_json::Value = serde_json::from_slice(&environment.unwrap_or_default())
        .map_err(|e| RunFailure::BadEnvironmentRecord {
        message: e.to_string(),
    })?;
    result.environment_fingerprint = Some(canonical_hash(&environment));
    result.environment = Some(environment);
    let statistics = result.output("statistics.json").map(|o| o.bytes.clone());
    let statistics: serde_json::Value = serde_json::from_slice(&statistics.unwrap_or_default())
        .map_err(|e| RunFailure::BadStatistics {
            message: e.to_string(),
        })?;
    result.analytical_hash = Some(canonical_hash(&statistics));
    Ok(())
}

/// SHA-256 of the RFC 8785 canonical JSON of `value`.
pub fn canonical_hash(value: &serde_json::Value) -> Sha256Digest {
    let canonical = serde_jcs::to_vec(value).unwrap_or_default();
    Sha256Digest::from_bytes(Sha256::digest(canonical).into())
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

struct WorkDir {
    guard: tempfile::TempDir,
    path: PathBuf,
    run_uid: Option<u32>,
    landlock: Option<sandbox::LandlockRuleset>,
}

/// A fresh private directory with the harness in it, owned by the run's uid when there is one,
/// and the Landlock ruleset that confines writes to it.
fn prepare_work_dir(config: &RunnerConfig) -> std::io::Result<WorkDir> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(&config.work_root)?;
    let guard = tempfile::Builder::new()
        .prefix("adamviz-run-")
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
        Some(sandbox::landlock_ruleset(
            support.landlock_abi.min(4),
            &path,
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
