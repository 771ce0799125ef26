//! The installation's signing key: an Ed25519 key created at the first start in the data
//! directory (`installation-key.ed25519`, 32 random bytes as hex, mode 0600), never exported by
//! the application. It is written to a temporary file in the same directory, synced, and only
//! then given its name (the directory synced too), so a crash never leaves an empty key file. It signs evidence bundle manifests; its public key and fingerprint are shown
//! by `adamviz key show` and in the pages' footer.

use std::{
    io::Write,
    os::unix::fs::{OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

use ed25519_dalek::{SigningKey, VerifyingKey};

use adamviz_evidence::dsse::{self, Envelope};

/// The key file's name in the data directory.
pub const KEY_FILE: &str = "installation-key.ed25519";

/// Why the key cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Reading or writing the file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a key.
    #[error("{0}: not an installation key (expected 64 hex digits)")]
    Malformed(PathBuf),
    /// Others may read it.
    #[error("{path}: readable by others (mode {mode:o}); it must be 0600")]
    TooOpen {
        /// The file.
        path: PathBuf,
        /// Its mode.
        mode: u32,
    },
}

/// Writes `bytes` as the new file `path` (mode 0600) so that a crash at any moment leaves
/// either no file or the whole file, never an empty or partial one: a temporary file in the
/// same directory is written and synced, then linked to `path` (which fails with
/// `AlreadyExists` if `path` appeared meanwhile, where a rename would replace it), and the
/// directory is synced so that the new name survives a crash too.
fn write_new_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = dir.join(format!(
        ".{KEY_FILE}.{}.{:016x}.tmp",
        std::process::id(),
        rand::random::<u64>()
    ));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::hard_link(&temporary, path)
    })();
    // The temporary name goes whether or not the link was made (the key stays under `path`).
    let removed = std::fs::remove_file(&temporary);
    written?;
    removed?;
    std::fs::File::open(dir)?.sync_all()
}

/// The installation's key.
#[derive(Clone)]
pub struct InstallationKey {
    signing: SigningKey,
}

impl std::fmt::Debug for InstallationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallationKey")
            .field("fingerprint", &self.fingerprint())
            .finish()
    }
}

impl InstallationKey {
    /// The key of the installation at `data_dir`, created when there is none.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, KeyError> {
        let path = data_dir.join(KEY_FILE);
        let io = |source| KeyError::Io {
            path: path.clone(),
            source,
        };
        adamviz_store::private_files::create_private_dir_all(data_dir).map_err(io)?;
        match std::fs::symlink_metadata(&path) {
            Ok(_) => return Self::load(&path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(io(error)),
        }
        let seed: [u8; 32] = rand::random();
        match write_new_atomically(data_dir, &path, hex::encode(seed).as_bytes()) {
            Ok(()) => Ok(Self {
                signing: SigningKey::from_bytes(&seed),
            }),
            // Another process created it meanwhile: its key is the installation's.
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Self::load(&path),
            Err(error) => Err(io(error)),
        }
    }

    fn load(path: &Path) -> Result<Self, KeyError> {
        let io = |source| KeyError::Io {
            path: path.to_owned(),
            source,
        };
        let mode = std::fs::metadata(path).map_err(io)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(KeyError::TooOpen {
                path: path.to_owned(),
                mode,
            });
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        let seed: [u8; 32] = hex::decode(text.trim())
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| KeyError::Malformed(path.to_owned()))?;
        Ok(Self {
            signing: SigningKey::from_bytes(&seed),
        })
    }

    /// The public key.
    pub fn public_key(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// The public key, 64 hex digits.
    pub fn public_hex(&self) -> String {
        hex::encode(self.public_key().as_bytes())
    }

    /// `sha256:` and the SHA-256 of the public key.
    pub fn fingerprint(&self) -> String {
        dsse::fingerprint(&self.public_key())
    }

    /// A DSSE envelope over `payload`.
    pub fn sign(&self, payload_type: &str, payload: &[u8]) -> Envelope {
        dsse::sign(&self.signing, payload_type, payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_with_mode_0600_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let first = InstallationKey::load_or_create(dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = InstallationKey::load_or_create(dir.path()).unwrap();
        assert_eq!(first.public_hex(), again.public_hex());
        assert!(first.fingerprint().starts_with("sha256:"));
        std::fs::set_permissions(
            dir.path().join(KEY_FILE),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        assert!(matches!(
            InstallationKey::load_or_create(dir.path()),
            Err(KeyError::TooOpen { .. })
        ));
    }

    /// Before: the key file was created empty and then written, so a second process starting
    /// at the same moment (or a crash between the two steps) read an empty file.
    #[test]
    fn attack_racing_first_starts_never_read_an_empty_key() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let keys: Vec<String> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..8)
                    .map(|_| {
                        scope.spawn(|| {
                            InstallationKey::load_or_create(dir.path())
                                .map(|key| key.public_hex())
                                .map_err(|error| error.to_string())
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| handle.join().unwrap().unwrap())
                    .collect()
            });
            assert!(keys.iter().all(|key| key == &keys[0]), "{keys:?}");
            // Only the key is left: no temporary file.
            let names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names, [KEY_FILE]);
        }
    }

    #[test]
    fn a_key_is_written_whole_or_not_at_all_and_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        // A crash before the link leaves a temporary file and no key: the next start makes one.
        std::fs::write(dir.path().join(format!(".{KEY_FILE}.1.0.tmp")), b"").unwrap();
        let key = InstallationKey::load_or_create(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().len(), 64);
        // An existing key is never replaced by a second write.
        let error = write_new_atomically(dir.path(), &path, b"another").unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(
            InstallationKey::load_or_create(dir.path())
                .unwrap()
                .public_hex(),
            key.public_hex()
        );
    }
}
