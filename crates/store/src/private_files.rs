//! Files only the service can read: the data directory 0700, the database (and the WAL and
//! shared-memory files SQLite gives the database's mode), objects and temporary uploads 0600.
//! The database holds sessions and password hashes, so another local user must not read it.
//!
//! New directories and files are created private; [`tighten`] takes away what an older
//! installation (or a hand-made directory) gives group and others.

use std::{
    fs, io,
    os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

/// The mode of every directory the service creates.
pub const PRIVATE_DIR: u32 = 0o700;
/// The mode of every file the service creates.
pub const PRIVATE_FILE: u32 = 0o600;

/// Creates `path` and the parents it lacks, each 0700 (existing ones are left as they are).
pub fn create_private_dir_all(path: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR)
        .create(path)
}

/// Creates the empty file `path` with mode 0600 unless it exists (an empty file is an empty
/// SQLite database: SQLite then keeps its mode, and gives it to the WAL and shared-memory
/// files).
pub fn create_private_file_if_missing(path: &Path) -> io::Result<()> {
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

/// An entry [`tighten`] changed: its path and the mode it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tightened {
    /// The file or directory.
    pub path: PathBuf,
    /// Its permission bits before (e.g. `0o644`).
    pub was: u32,
}

/// Takes group and other permissions away from `root` and everything under it (without
/// following symbolic links): directories become 0700, files keep only their owner's bits.
/// Returns what it changed; a missing `root` changes nothing.
pub fn tighten(root: &Path) -> io::Result<Vec<Tightened>> {
    let mut changed = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let metadata = match fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        if metadata.file_type().is_symlink() {
            continue;
        }
        let mode = metadata.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            let private = if metadata.is_dir() {
                PRIVATE_DIR
            } else {
                mode & 0o700
            };
            fs::set_permissions(&path, fs::Permissions::from_mode(private))?;
            changed.push(Tightened {
                path: path.clone(),
                was: mode,
            });
        }
        if metadata.is_dir() {
            for entry in fs::read_dir(&path)? {
                pending.push(entry?.path());
            }
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::{create_private_dir_all, create_private_file_if_missing, tighten};
    use std::{fs, os::unix::fs::PermissionsExt, path::Path};

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn new_directories_and_files_are_private() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("data/inner");
        create_private_dir_all(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&temp.path().join("data")), 0o700);
        let file = dir.join("adamviz.sqlite3");
        create_private_file_if_missing(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        // An existing file is left alone (its content too).
        fs::write(&file, b"kept").unwrap();
        create_private_file_if_missing(&file).unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"kept");
    }

    #[test]
    fn tighten_takes_group_and_other_bits_away_and_says_what_it_changed() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("data");
        fs::create_dir_all(root.join("objects/sha256/ab")).unwrap();
        fs::write(root.join("adamviz.sqlite3"), b"").unwrap();
        fs::write(root.join("objects/sha256/ab/cd"), b"x").unwrap();
        fs::write(root.join("installation-key"), b"k").unwrap();
        for (path, mode) in [
            ("", 0o755),
            ("adamviz.sqlite3", 0o644),
            ("objects/sha256/ab/cd", 0o664),
            ("installation-key", 0o600),
        ] {
            fs::set_permissions(root.join(path), fs::Permissions::from_mode(mode)).unwrap();
        }
        let changed = tighten(&root).unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&root.join("adamviz.sqlite3")), 0o600);
        assert_eq!(mode(&root.join("objects/sha256/ab")), 0o700);
        assert_eq!(mode(&root.join("objects/sha256/ab/cd")), 0o600);
        assert!(changed
            .iter()
            .any(|t| t.path == root.join("adamviz.sqlite3") && t.was == 0o644));
        assert!(!changed
            .iter()
            .any(|t| t.path == root.join("installation-key")));
        // A second pass has nothing left to do.
        assert!(tighten(&root).unwrap().is_empty());
    }
}
