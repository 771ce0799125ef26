//! Content-addressed object store: each object is a file named by the SHA-256 of its bytes,
//! under `<data dir>/objects/sha256/<2 hex>/<62 hex>`. Writes stream into a temporary file in
//! the same directory tree while hashing (one pass), then rename into place, so a reader never
//! sees a partial object and a refused or failed write leaves nothing behind.
//!
//! With `--objects s3://…` the store of record is an S3-compatible bucket shared by every node
//! ([`remote`]); the local folder then holds this node's copy of the objects it wrote or read,
//! each fetched object re-hashed before it is kept or used.

mod intake;
mod remote;

pub use remote::{LocationError, RemoteError, RemoteLocation};

use std::{
    fs,
    io::{self, Read},
    path::{Path, PathBuf},
};

use sha2::{Digest, Sha256};

use adamviz_model::digest::Sha256Digest;

/// Why an object could not be stored or read.
#[derive(Debug, thiserror::Error)]
pub enum ObjectStoreError {
    /// The input is larger than the limit; nothing was stored.
    #[error("the upload is larger than the limit of {limit} bytes; nothing was stored")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// No object with this digest.
    #[error("no stored object has digest {digest}")]
    NotFound {
        /// The digest asked for.
        digest: Sha256Digest,
    },
    /// A stored object's bytes no longer hash to its name.
    #[error("stored object {digest} is corrupt: its bytes hash to {actual}")]
    Corrupt {
        /// The name (expected digest).
        digest: Sha256Digest,
        /// What the bytes hash to now.
        actual: Sha256Digest,
    },
    /// The shared copy of an object no longer hashes to its name.
    #[error("stored object {digest} in {location} is corrupt: its bytes hash to {actual}")]
    RemoteCorrupt {
        /// The name (expected digest).
        digest: Sha256Digest,
        /// What the bytes hash to.
        actual: Sha256Digest,
        /// The shared store.
        location: String,
    },
    /// The shared store failed.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The `--objects` location is not one adamviz can use.
    #[error(transparent)]
    Location(#[from] LocationError),
    /// A file-system failure.
    #[error("object store I/O failure at {path}")]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The failure.
        #[source]
        source: io::Error,
    },
}

/// A stored object: its digest and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredObject {
    /// SHA-256 of the bytes (the object's name).
    pub digest: Sha256Digest,
    /// Size in bytes.
    pub size: u64,
    /// Whether this write put the bytes there (false: they were stored already).
    pub created: bool,
}

/// Prefix of a temporary file in `objects/tmp`; the writer's pid follows.
const TEMP_PREFIX: &str = ".tmp-";

/// Syncs a directory, so that the names created in it survive a crash.
fn sync_dir(dir: &Path) -> Result<(), ObjectStoreError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error(dir))
}

/// The object store rooted at `<data dir>/objects`, with the shared bucket behind it when one
/// is configured.
#[derive(Debug, Clone)]
pub struct ObjectStore {
    root: PathBuf,
    remote: Option<std::sync::Arc<remote::Remote>>,
    /// False for a store opened to read only: objects fetched from the bucket are not kept.
    keeps_copies: bool,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> ObjectStoreError + '_ {
    move |source| ObjectStoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl ObjectStore {
    /// Opens (creating if needed) the store under `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Self, ObjectStoreError> {
        let root = data_dir.join("objects");
        for dir in [root.join("sha256"), root.join("tmp")] {
            crate::private_files::create_private_dir_all(&dir).map_err(io_error(&dir))?;
        }
        Ok(Self {
            root,
            remote: None,
            keeps_copies: true,
        })
    }

    /// Opens the store under `data_dir` with the shared bucket at `objects` as its store of
    /// record (`s3://…`), or the local folder alone when `objects` is `None`.
    pub fn open_shared(data_dir: &Path, objects: Option<&str>) -> Result<Self, ObjectStoreError> {
        let mut store = Self::open(data_dir)?;
        store.remote = Self::connect(objects)?;
        Ok(store)
    }

    /// The store under `data_dir` as it is, creating nothing (for reading only).
    pub fn at(data_dir: &Path) -> Self {
        Self {
            root: data_dir.join("objects"),
            remote: None,
            keeps_copies: false,
        }
    }

    /// [`ObjectStore::at`] with the shared bucket at `objects`: objects missing here are read
    /// from the bucket (re-hashed) and not kept.
    pub fn at_shared(data_dir: &Path, objects: Option<&str>) -> Result<Self, ObjectStoreError> {
        let mut store = Self::at(data_dir);
        store.remote = Self::connect(objects)?;
        Ok(store)
    }

    fn connect(
        objects: Option<&str>,
    ) -> Result<Option<std::sync::Arc<remote::Remote>>, ObjectStoreError> {
        let Some(url) = objects else {
            return Ok(None);
        };
        let location = RemoteLocation::parse(url)?;
        Ok(Some(std::sync::Arc::new(remote::Remote::connect(
            location,
        )?)))
    }

    /// Where the objects of record are, for logs: the folder, or the bucket and this node's
    /// folder of copies.
    pub fn describe(&self) -> String {
        match &self.remote {
            None => self.root.display().to_string(),
            Some(remote) => format!(
                "{} (this node's copies in {})",
                remote.location().display(),
                self.root.display()
            ),
        }
    }

    /// Every object in this store's folder (by name; not re-hashed here), in name order.
    pub fn local_digests(&self) -> Result<Vec<Sha256Digest>, ObjectStoreError> {
        let mut digests = Vec::new();
        let top = self.root.join("sha256");
        let fans = match fs::read_dir(&top) {
            Ok(fans) => fans,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(digests),
            Err(source) => return Err(ObjectStoreError::Io { path: top, source }),
        };
        for fan in fans {
            let fan = fan.map_err(io_error(&top))?.path();
            for object in fs::read_dir(&fan).map_err(io_error(&fan))? {
                let object = object.map_err(io_error(&fan))?.path();
                let name = format!(
                    "{}{}",
                    fan.file_name().unwrap_or_default().to_string_lossy(),
                    object.file_name().unwrap_or_default().to_string_lossy()
                );
                match name.parse::<Sha256Digest>() {
                    Ok(digest) => digests.push(digest),
                    Err(_) => {
                        tracing::warn!(path = %object.display(), "not an object's name; left alone")
                    }
                }
            }
        }
        digests.sort();
        Ok(digests)
    }

    /// Where the object with `digest` lives.
    pub fn path_of(&self, digest: &Sha256Digest) -> PathBuf {
        let hex = digest.to_hex();
        self.root.join("sha256").join(&hex[..2]).join(&hex[2..])
    }

    /// Streams `input` into the store, hashing as it goes, and refuses it (keeping nothing) as
    /// soon as it exceeds `limit` bytes. Storing bytes that are already there changes nothing.
    /// With a shared bucket the object is in the bucket when this returns, and `created` says
    /// whether this write put it there.
    pub fn put_stream(
        &self,
        input: impl Read,
        limit: u64,
    ) -> Result<StoredObject, ObjectStoreError> {
        let local = self.put_stream_local(input, limit)?;
        match self.remote {
            None => Ok(local),
            Some(_) => Ok(StoredObject {
                created: self.publish(&local.digest)?,
                ..local
            }),
        }
    }

    /// Copies the local object `digest` to the shared bucket unless it is there already
    /// (create-only); true when this call put it there, false too without a bucket.
    ///
    /// An upload is stored here first and published only once it has been read and accepted,
    /// so that bytes no reader accepts never reach the shared store.
    pub fn publish(&self, digest: &Sha256Digest) -> Result<bool, ObjectStoreError> {
        let Some(remote) = &self.remote else {
            return Ok(false);
        };
        if remote.size_of(digest)?.is_some() {
            return Ok(false);
        }
        // Re-hashed on the way out: only bytes true to their name are shared.
        let path = self.path_of(digest);
        match self.stored_digest(digest)? {
            None => return Err(ObjectStoreError::NotFound { digest: *digest }),
            Some(actual) if actual != *digest => {
                return Err(ObjectStoreError::Corrupt {
                    digest: *digest,
                    actual,
                })
            }
            Some(_) => {}
        }
        let size = fs::metadata(&path).map_err(io_error(&path))?.len();
        remote
            .put_file_if_absent(digest, &path, size)
            .map_err(|error| match error {
                remote::PutError::Remote(error) => error.into(),
                remote::PutError::Local(source) => ObjectStoreError::Io { path, source },
            })
    }

    /// Streams `input` into this node's folder only (see [`ObjectStore::put_stream`] and
    /// [`ObjectStore::publish`]).
    pub fn put_stream_local(
        &self,
        input: impl Read,
        limit: u64,
    ) -> Result<StoredObject, ObjectStoreError> {
        self.put_stream_local_inspecting(input, limit, |_| ())
            .map(|(object, ())| object)
    }

    /// [`ObjectStore::put_stream_local`], calling `inspect` on the complete file (by its
    /// temporary path) while the file is made durable on another thread: an upload's reader
    /// then parses the bytes during the `fsync` instead of after it. The object is in place
    /// when this returns, whatever `inspect` found.
    pub fn put_stream_local_inspecting<T>(
        &self,
        input: impl Read,
        limit: u64,
        inspect: impl FnOnce(&Path) -> T,
    ) -> Result<(StoredObject, T), ObjectStoreError> {
        let tmp_dir = self.root.join("tmp");
        // The writer's pid in the name tells a leftover of a process that is gone from a file
        // another process is writing now (see `remove_leftover_temp_files`).
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
            .tempfile_in(&tmp_dir)
            .map_err(io_error(&tmp_dir))?;
        let intake::Received { tmp, digest, size } = intake::receive(tmp, input, limit)?;
        let (synced, inspected) = std::thread::scope(|scope| {
            let syncing = scope.spawn(|| tmp.as_file().sync_all());
            let inspected = inspect(tmp.path());
            (syncing.join().expect("fsync does not panic"), inspected)
        });
        synced.map_err(io_error(tmp.path()))?;
        // The same bytes there already: nothing changes. Missing, or corrupt: replaced by the
        // bytes just written, which hash to the name. (Streamed: an object is never held whole.)
        let created = self.stored_digest(&digest)? != Some(digest);
        if created {
            self.keep(tmp, &digest)?;
        }
        Ok((
            StoredObject {
                digest,
                size,
                created,
            },
            inspected,
        ))
    }

    /// Removes this node's copy of the object `digest` (for an upload refused after its bytes
    /// were stored here: nothing refers to them; such bytes were never published). Absent
    /// already: nothing to do. The shared bucket is never changed.
    pub fn remove(&self, digest: &Sha256Digest) -> Result<(), ObjectStoreError> {
        let path = self.path_of(digest);
        match fs::remove_file(&path) {
            Ok(()) => sync_dir(path.parent().expect("object paths have a parent")),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ObjectStoreError::Io { path, source }),
        }
    }

    /// Removes the temporary files of writes that a process which is gone left in
    /// `objects/tmp`, and returns their paths; files a live process is writing are kept.
    pub fn remove_leftover_temp_files(&self) -> Result<Vec<PathBuf>, ObjectStoreError> {
        let tmp_dir = self.root.join("tmp");
        let mut removed = Vec::new();
        for entry in fs::read_dir(&tmp_dir).map_err(io_error(&tmp_dir))? {
            let entry = entry.map_err(io_error(&tmp_dir))?;
            let name = entry.file_name();
            let owner = name
                .to_str()
                .and_then(|n| n.strip_prefix(TEMP_PREFIX))
                .and_then(|rest| rest.split_once('-'))
                .and_then(|(pid, _)| pid.parse::<u32>().ok());
            if owner.is_some_and(crate::owner::process_exists) {
                continue;
            }
            let path = entry.path();
            fs::remove_file(&path).map_err(io_error(&path))?;
            removed.push(path);
        }
        Ok(removed)
    }

    /// Stores `bytes` (see [`ObjectStore::put_stream`]).
    pub fn put(&self, bytes: &[u8], limit: u64) -> Result<StoredObject, ObjectStoreError> {
        self.put_stream(bytes, limit)
    }

    /// What the stored object named `digest` hashes to now, reading it in chunks; `None` when
    /// there is no such object.
    pub fn stored_digest(
        &self,
        digest: &Sha256Digest,
    ) -> Result<Option<Sha256Digest>, ObjectStoreError> {
        let path = self.path_of(digest);
        let mut file = match fs::File::open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ObjectStoreError::Io { path, source }),
        };
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match file.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => hasher.update(&buffer[..read]),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => return Err(ObjectStoreError::Io { path, source }),
            }
        }
        Ok(Some(Sha256Digest::from_bytes(hasher.finalize().into())))
    }

    /// The size of the stored object `digest`, or `None` when there is none (not re-hashed:
    /// for a presence check; reading goes through [`ObjectStore::get`]). With a shared bucket
    /// this is the bucket's object (the store of record), not this node's copy.
    pub fn size_of(&self, digest: &Sha256Digest) -> Result<Option<u64>, ObjectStoreError> {
        if let Some(remote) = &self.remote {
            return Ok(remote.size_of(digest)?);
        }
        let path = self.path_of(digest);
        match fs::metadata(&path) {
            Ok(metadata) => Ok(Some(metadata.len())),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ObjectStoreError::Io { path, source }),
        }
    }

    /// A local file holding the object `digest`, for readers that map a file (datasets): this
    /// node's copy, fetched from the shared bucket (re-hashed) first when it has none.
    pub fn local_path(&self, digest: &Sha256Digest) -> Result<PathBuf, ObjectStoreError> {
        let path = self.path_of(digest);
        if self.remote.is_some() && !path.exists() {
            self.fetch(digest)?;
        }
        Ok(path)
    }

    /// Reads an object back, re-hashing it: corrupt bytes are an error, never returned. With a
    /// shared bucket an object this node has no true copy of is read from the bucket.
    pub fn get(&self, digest: &Sha256Digest) -> Result<Vec<u8>, ObjectStoreError> {
        match (self.get_local(digest), &self.remote) {
            (Ok(bytes), _) => Ok(bytes),
            (Err(ObjectStoreError::NotFound { .. }), Some(_)) => self.fetch(digest),
            (Err(ObjectStoreError::Corrupt { actual, .. }), Some(_)) => {
                tracing::warn!(%digest, %actual, "this node's copy of an object is corrupt; reading the shared one");
                self.fetch(digest)
            }
            (Err(error), _) => Err(error),
        }
    }

    /// Reads the object `digest` from the shared bucket, re-hashing it, and keeps it as this
    /// node's copy (unless the store was opened to read only).
    fn fetch(&self, digest: &Sha256Digest) -> Result<Vec<u8>, ObjectStoreError> {
        let remote = self
            .remote
            .as_ref()
            .expect("fetch is only called with a bucket");
        let tmp_dir = if self.keeps_copies {
            self.root.join("tmp")
        } else {
            std::env::temp_dir()
        };
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
            .tempfile_in(&tmp_dir)
            .map_err(io_error(&tmp_dir))?;
        let file = tmp.reopen().map_err(io_error(tmp.path()))?;
        let downloaded = match remote.download(digest, file) {
            Ok(Some(downloaded)) => downloaded,
            Ok(None) => return Err(ObjectStoreError::NotFound { digest: *digest }),
            Err(remote::DownloadError::Remote(error)) => return Err(error.into()),
            Err(remote::DownloadError::Local(source)) => {
                return Err(ObjectStoreError::Io {
                    path: tmp.path().to_path_buf(),
                    source,
                })
            }
        };
        if downloaded.digest != *digest {
            return Err(ObjectStoreError::RemoteCorrupt {
                digest: *digest,
                actual: downloaded.digest,
                location: remote.location().display(),
            });
        }
        let bytes = fs::read(tmp.path()).map_err(io_error(tmp.path()))?;
        if bytes.len() as u64 != downloaded.size {
            return Err(ObjectStoreError::Io {
                path: tmp.path().to_path_buf(),
                source: io::Error::other("the fetched copy changed while it was read"),
            });
        }
        if self.keeps_copies {
            self.keep(tmp, digest)?;
        }
        Ok(bytes)
    }

    /// Moves a complete, hashed temporary file into place as the object `digest`.
    fn keep(
        &self,
        tmp: tempfile::NamedTempFile,
        digest: &Sha256Digest,
    ) -> Result<(), ObjectStoreError> {
        let target = self.path_of(digest);
        let parent = target.parent().expect("object paths have a parent");
        if !parent.exists() {
            crate::private_files::create_private_dir_all(parent).map_err(io_error(parent))?;
            // The new fan-out directory's own entry must be durable too.
            sync_dir(&self.root.join("sha256"))?;
        }
        tmp.persist(&target).map_err(|err| ObjectStoreError::Io {
            path: target.clone(),
            source: err.error,
        })?;
        // The rename is durable only once the directory holding the new name is synced.
        sync_dir(parent)
    }

    /// Reads this node's copy of an object, re-hashing it.
    fn get_local(&self, digest: &Sha256Digest) -> Result<Vec<u8>, ObjectStoreError> {
        let path = self.path_of(digest);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(ObjectStoreError::NotFound { digest: *digest })
            }
            Err(source) => return Err(ObjectStoreError::Io { path, source }),
        };
        let actual = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
        if actual != *digest {
            return Err(ObjectStoreError::Corrupt {
                digest: *digest,
                actual,
            });
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_then_get_round_trips_and_names_the_object_by_its_sha256() {
        let temp = tempfile::tempdir().unwrap();
        let store = ObjectStore::open(temp.path()).unwrap();
        let stored = store.put(b"abc", 1024).unwrap();
        assert_eq!(
            stored.digest.to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(stored.size, 3);
        assert_eq!(store.get(&stored.digest).unwrap(), b"abc");
        assert!(store
            .path_of(&stored.digest)
            .ends_with("sha256/ba/7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    }

    #[test]
    fn storing_the_same_bytes_twice_changes_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let store = ObjectStore::open(temp.path()).unwrap();
        let first = store.put(b"same", 1024).unwrap();
        let modified = fs::metadata(store.path_of(&first.digest))
            .unwrap()
            .modified()
            .unwrap();
        let second = store.put(b"same", 1024).unwrap();
        assert_eq!((first.digest, first.size), (second.digest, second.size));
        // The first write put the bytes there; the second found them.
        assert_eq!((first.created, second.created), (true, false));
        let again = fs::metadata(store.path_of(&first.digest))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(modified, again);
    }

    #[test]
    fn an_input_over_the_limit_is_refused_and_leaves_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let store = ObjectStore::open(temp.path()).unwrap();
        let kept = store.put(b"kept", 1024).unwrap();
        let err = store.put(&[7u8; 2000], 1999).unwrap_err();
        assert!(
            matches!(err, ObjectStoreError::TooLarge { limit: 1999 }),
            "{err:?}"
        );
        assert_eq!(
            fs::read_dir(temp.path().join("objects/tmp"))
                .unwrap()
                .count(),
            0
        );
        assert_eq!(
            store.get(&kept.digest).unwrap(),
            b"kept",
            "what was stored is kept"
        );
        // Exactly at the limit is allowed.
        store.put(&[7u8; 1999], 1999).unwrap();
    }

    /// Before, a put of bytes whose object file already existed kept whatever was there, so a
    /// corrupt object stayed corrupt for good.
    #[test]
    fn a_corrupt_object_at_the_target_is_replaced_by_verified_bytes() {
        let temp = tempfile::tempdir().unwrap();
        let store = ObjectStore::open(temp.path()).unwrap();
        let stored = store.put(b"original", 1024).unwrap();
        fs::write(store.path_of(&stored.digest), b"tampered").unwrap();
        assert!(store.get(&stored.digest).is_err());
        let again = store.put(b"original", 1024).unwrap();
        assert_eq!(again, stored);
        assert_eq!(store.get(&stored.digest).unwrap(), b"original");
    }

    #[test]
    fn leftover_temp_files_of_dead_processes_are_removed_and_live_ones_kept() {
        let temp = tempfile::tempdir().unwrap();
        let store = ObjectStore::open(temp.path()).unwrap();
        let tmp = temp.path().join("objects/tmp");
        // A pid above the kernel's maximum (2^22) belongs to no process.
        let dead = tmp.join(format!("{TEMP_PREFIX}{}-abc", 1 << 23));
        let unnamed = tmp.join(".tmpXYZ");
        let live = tmp.join(format!("{TEMP_PREFIX}{}-def", std::process::id()));
        for path in [&dead, &unnamed, &live] {
            fs::write(path, b"partial upload").unwrap();
        }
        let mut removed = store.remove_leftover_temp_files().unwrap();
        removed.sort();
        let mut expected = vec![dead.clone(), unnamed.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(live.exists() && !dead.exists() && !unnamed.exists());
    }

    #[test]
    fn a_corrupted_object_is_refused_on_read() {
        let temp = tempfile::tempdir().unwrap();
        let store = ObjectStore::open(temp.path()).unwrap();
        let stored = store.put(b"original", 1024).unwrap();
        fs::write(store.path_of(&stored.digest), b"tampered").unwrap();
        let err = store.get(&stored.digest).unwrap_err();
        assert!(matches!(err, ObjectStoreError::Corrupt { .. }), "{err:?}");
    }
}
