//! A run's private working directory: created per run, its inputs written and synced before
//! R starts, removed after; leftovers of gone processes found at start.

use super::*;

/// An input of a run that could not be written into its directory.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {source}")]
pub(super) struct InputWriteError {
    /// The file (or the directory) being written.
    file: String,
    /// What the system said.
    source: std::io::Error,
}

/// Writes the snapshot, the script and the manifest into the run's directory, each synced to
/// disk, then the directory itself.
pub(super) async fn write_inputs(
    work_dir: PathBuf,
    request: &RunRequest,
) -> Result<(), InputWriteError> {
    let snapshot = Arc::clone(&request.snapshot);
    let script = request.script.clone();
    let manifest = HarnessManifest {
        column_names: snapshot.columns.iter().map(|c| c.name.as_str()).collect(),
        column_classes: snapshot.columns.iter().map(|c| c.class.as_str()).collect(),
        image: request.image,
        report: request.report.as_ref(),
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

/// A run's private working directory, prepared but with no process yet.
pub(crate) struct WorkDir {
    pub(crate) guard: tempfile::TempDir,
    pub(crate) path: PathBuf,
    pub(crate) run_uid: Option<u32>,
    pub(crate) landlock: Option<sandbox::LandlockRuleset>,
}

impl WorkDir {
    /// A fresh private directory with the harness in it, owned by the run's uid when there is
    /// one, and the Landlock ruleset that confines the run to it.
    pub(crate) async fn create(config: &RunnerConfig) -> Result<Self, RunFailure> {
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

pub(super) fn prepare_work_dir(config: &RunnerConfig) -> std::io::Result<WorkDir> {
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
