//! What a process does first when it opens a data directory: removes what processes that are
//! gone left behind — run directories (they hold extracts of the data) and partial object
//! writes — and logs each removal. Leftovers of a process that is still running are kept.

use std::path::{Path, PathBuf};

use adamviz_engine::runner::remove_leftover_work_dirs;
use adamviz_store::objects::{ObjectStore, ObjectStoreError};

/// What was removed.
#[derive(Debug, Default)]
pub struct Leftovers {
    /// Run directories of processes that are gone.
    pub run_dirs: Vec<PathBuf>,
    /// Temporary files in `objects/tmp` of writes that never finished.
    pub temp_objects: Vec<PathBuf>,
}

/// Why the clean-up failed.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// A run directory could not be listed or removed.
    #[error("cannot remove leftover run directories under {work_root}")]
    RunDirs {
        /// The runner's work root.
        work_root: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// The object store's temporary files could not be removed.
    #[error(transparent)]
    Objects(#[from] ObjectStoreError),
}

/// Removes the leftovers of processes that are gone under `work_root` and in `objects`, and
/// logs each one. Blocking: call it from a blocking thread or before the runtime serves.
pub fn remove_leftovers(
    objects: &ObjectStore,
    work_root: &Path,
) -> Result<Leftovers, StartupError> {
    let run_dirs =
        remove_leftover_work_dirs(work_root).map_err(|source| StartupError::RunDirs {
            work_root: work_root.to_path_buf(),
            source,
        })?;
    for dir in &run_dirs {
        tracing::warn!(path = %dir.display(), "removed the run directory a process that is gone left behind");
    }
    let temp_objects = objects.remove_leftover_temp_files()?;
    for file in &temp_objects {
        tracing::warn!(path = %file.display(), "removed a partial object write a process that is gone left behind");
    }
    Ok(Leftovers {
        run_dirs,
        temp_objects,
    })
}
