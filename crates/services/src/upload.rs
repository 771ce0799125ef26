//! Receiving an upload: check the declared classification, stream the raw bytes into the object
//! store (hashed on a second thread as they are written, refused past the size limit), then
//! parse the written file while it is made durable. The raw bytes are written before parsing
//! and are in the store when the upload returns, so a dataset's content hash is always the hash
//! of exactly what was received. With a shared bucket the bytes are published to it only once they
//! have been read and accepted.

use std::io::Read;

use adamviz_engine::ingest::{read_dataset_file, table::Table, FileReadError, ReadError};
use adamviz_model::classification::{DataClassification, UnknownClassification};
use adamviz_store::objects::{ObjectStore, ObjectStoreError, StoredObject};

/// Default upload limit: 1 GiB.
pub const DEFAULT_UPLOAD_LIMIT: u64 = 1 << 30;

/// Why an upload was refused.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The classification is not one adamviz accepts; nothing was stored.
    #[error(transparent)]
    Classification(#[from] UnknownClassification),
    /// Storing failed (including the size limit); nothing was stored.
    #[error(transparent)]
    Store(#[from] ObjectStoreError),
    /// The bytes were stored (under `object`) but are not a dataset adamviz can read.
    #[error("{source}")]
    Unreadable {
        /// The stored raw bytes.
        object: StoredObject,
        /// What is wrong with them.
        #[source]
        source: ReadError,
    },
    /// The dataset could not be recorded (its bytes stay stored: the same upload again is
    /// recorded then).
    #[error("the dataset could not be recorded: {0}")]
    Record(#[source] crate::error::ReadError),
    /// The blocking work stopped before it answered (a panic, or the runtime shutting down).
    #[error("the upload stopped before it was stored: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
}

impl UploadError {
    /// The upload limit in bytes, when the upload was refused for exceeding it (nothing was
    /// stored).
    pub fn limit_exceeded(&self) -> Option<u64> {
        match self {
            UploadError::Store(ObjectStoreError::TooLarge { limit }) => Some(*limit),
            _ => None,
        }
    }
}

/// An upload that was stored and parsed.
#[derive(Debug, Clone)]
pub struct ReceivedUpload {
    /// The raw bytes in the object store; `object.digest` is the dataset content hash.
    pub object: StoredObject,
    /// What the uploader declared.
    pub classification: DataClassification,
    /// The parsed dataset.
    pub table: Table,
}

/// Receives one upload (see the module documentation for the order of the steps).
pub fn receive_upload(
    store: &ObjectStore,
    input: impl Read,
    declared_classification: &str,
    limit: u64,
) -> Result<ReceivedUpload, UploadError> {
    let classification: DataClassification = declared_classification.parse()?;
    // Kept on this node until a reader accepts it: bytes no reader accepts never reach a
    // shared bucket.
    // Parsed from the written file through a read-only mapping, never copied whole into
    // memory, while the file is synced; its bytes were hashed on their way in (the object's
    // name), so they are not hashed a second time here.
    let (object, table) = store.put_stream_local_inspecting(input, limit, read_dataset_file)?;
    let table = table.map_err(|error| match error {
        FileReadError::Content(source) => UploadError::Unreadable { object, source },
        // Read from the temporary file, since renamed: the error names the stored object.
        FileReadError::Io { source, .. } => UploadError::Store(ObjectStoreError::Io {
            path: store.path_of(&object.digest),
            source,
        }),
    })?;
    store.publish(&object.digest)?;
    Ok(ReceivedUpload {
        object,
        classification,
        table,
    })
}
