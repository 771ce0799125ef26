//! The sandboxed R runner: takes a compiled script, the snapshot and the hashes they must have,
//! refuses a mismatch before anything starts, runs the execution harness
//! (`runner/execution-harness-v3.R`) under `Rscript --vanilla` in a fresh private working
//! directory with an empty environment plus an allowlist and the sandbox of `runner/sandbox.rs`,
//! and returns a typed [`RunResult`]: every failure is a result, never a panic.
//!
//! Concurrency is bounded by a semaphore (default: the number of cores); excess runs queue.
//! With a pool (`runner/pool.rs`) processes are started ahead of time with the packages
//! loaded; each takes exactly one run and is then discarded, so isolation is unchanged.

pub mod capture;
pub mod pool;
mod process;
pub mod sandbox;
mod work_dir;

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::{io::AsyncWriteExt, process::Command, sync::Semaphore};

use crate::compiler::{report_text::ReportText, ImageSize};
use crate::ingest::snapshot::{snapshot_hash, write_csv, Snapshot};
use adamviz_model::digest::Sha256Digest;
use capture::{capture, Diagnostics};
use process::*;
use sandbox::{IsolationPolicy, IsolationReport, ResourceLimits};
use work_dir::*;
pub use work_dir::{process_is_alive, remove_leftover_work_dirs};

/// Version of the harness the runner executes.
pub const HARNESS_VERSION: &str = "execution-harness-v3";
/// The harness itself (application-owned R code).
pub const HARNESS_SOURCE: &str = include_str!("runner/execution-harness-v3.R");

/// Schema version of [`RunResult`] as JSON.
pub const RESULT_SCHEMA_VERSION: &str = "execution-result-v3";

/// The files a successful run produces, in result order: the statistics, the PNG and the
/// environment record, then the report-ready figure (PDF, SVG) and the statistics as CSV.
pub const OUTPUT_FILES: [&str; 6] = [
    "statistics.json",
    "plot.png",
    "environment.json",
    "plot.pdf",
    "plot.svg",
    "statistics.csv",
];

/// The largest each output may be, in [`OUTPUT_FILES`] order: a run whose output is larger
/// fails (`output_too_large`) and the server reads no more than the limit and one byte.
pub const OUTPUT_LIMITS: [u64; 6] = [64 << 20, 64 << 20, 1 << 20, 64 << 20, 64 << 20, 64 << 20];

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
    /// The title and footnotes of the report-ready figure (none: the spec's title only, as
    /// for requests recorded before report-ready outputs).
    pub report: Option<ReportText>,
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
    /// Always `execution-result-v3` (schemas/execution-result-v3.schema.json).
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
    report: Option<&'a ReportText>,
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

/// SHA-256 of the RFC 8785 canonical JSON of `value`.
pub fn canonical_hash(value: &serde_json::Value) -> Result<Sha256Digest, serde_json::Error> {
    let canonical = serde_jcs::to_vec(value)?;
    Ok(Sha256Digest::from_bytes(Sha256::digest(canonical).into()))
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
