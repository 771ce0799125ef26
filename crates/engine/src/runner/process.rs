//! One R process of a run: started in its sandbox with the harness, awaited within the time
//! limit, its outputs collected within their limits, and everything it started killed.

use super::*;

/// A started R process in its private working directory.
pub(crate) struct PreparedProcess {
    pub(crate) work_dir: PathBuf,
    pub(crate) _work_dir_guard: tempfile::TempDir,
    pub(crate) child: tokio::process::Child,
    pub(crate) stdout: tokio::task::JoinHandle<Diagnostics>,
    pub(crate) stderr: tokio::task::JoinHandle<Diagnostics>,
    pub(crate) stop_capture: tokio::sync::watch::Sender<bool>,
    pub(crate) limits: ResourceLimits,
    pub(crate) isolation: IsolationReport,
    pub(crate) pooled: bool,
    pub(crate) program: String,
}

impl PreparedProcess {
    /// Creates a working directory and starts `Rscript --vanilla harness.R wait` in it (a
    /// process of the pool: its inputs come later, then "go").
    pub(crate) async fn spawn_waiting(config: &RunnerConfig) -> Result<Self, RunFailure> {
        let work_dir = WorkDir::create(config).await?;
        Self::start(config, work_dir, "wait")
    }

    /// Starts `Rscript --vanilla harness.R <mode>` in `work_dir`, inside the sandbox.
    pub(crate) fn start(
        config: &RunnerConfig,
        work_dir: WorkDir,
        mode: &str,
    ) -> Result<Self, RunFailure> {
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

    pub(crate) fn kill_everything(&mut self) {
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
    pub(crate) async fn finish(
        mut self,
        script_hash: Sha256Digest,
        snapshot_hash: Sha256Digest,
    ) -> RunResult {
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
    pub(crate) async fn end_capture(&mut self) -> (Diagnostics, Diagnostics) {
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

    pub(crate) async fn join(handle: &mut tokio::task::JoinHandle<Diagnostics>) -> Diagnostics {
        match handle.await {
            Ok(diagnostics) => diagnostics,
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        }
    }
}

/// Reads the outputs without following links or reading anything but a regular file of the
/// run's directory, each within its size limit, all within [`OUTPUT_READ_DEADLINE`].
pub(super) async fn collect_outputs(
    work_dir: &Path,
    result: &mut RunResult,
) -> Result<(), RunFailure> {
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
pub(super) fn read_output(dir: &Path, name: &str, limit: u64) -> Result<Vec<u8>, RunFailure> {
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

pub(super) fn signal_name(signal: i32) -> &'static str {
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
