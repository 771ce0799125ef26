//! Datasets as plain functions: recording an upload once per content (the same bytes twice are
//! one dataset), listing them, and loading a stored dataset's table and profile, kept in a
//! small cache so a page or an answer does not read the file again.

use adamviz_store::sql::Sql;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use super::{clock::timestamp, upload::ReceivedUpload};
use adamviz_engine::ingest::{
    profile::profile_table, read_dataset_file, table::Table, FileReadError,
};
use adamviz_model::{
    account::Account,
    dataset::UploadOutcome,
    digest::Sha256Digest,
    profile::{DatasetProfile, DEFAULT_LOW_N_THRESHOLD},
};
use adamviz_store::{
    datasets::{insert_dataset, NewDataset},
    db::DbError,
    objects::ObjectStore,
};

/// The file name as stored: its last path component (browsers may send a path), at most 255
/// characters, never empty.
pub fn clean_file_name(given: &str) -> String {
    let last = given.rsplit(['/', '\\']).next().unwrap_or_default().trim();
    let name: String = last.chars().filter(|c| !c.is_control()).take(255).collect();
    if name.is_empty() {
        "upload".to_owned()
    } else {
        name
    }
}

pub use adamviz_store::datasets::{dataset, list_datasets};

/// Records a stored and parsed upload as a dataset, unless these bytes are one already (then
/// that dataset, with who uploaded it first and when).
pub fn record_upload(
    connection: &impl Sql,
    received: &ReceivedUpload,
    file_name: &str,
    uploader: &Account,
    now: DateTime<Utc>,
) -> Result<UploadOutcome, DbError> {
    let table = &received.table;
    let content_hash = received.object.digest.to_hex();
    let inserted = insert_dataset(
        connection,
        &NewDataset {
            content_hash: &content_hash,
            file_name: &clean_file_name(file_name),
            format: table.source_format.as_str(),
            classification: received.classification.as_str(),
            rows: table.row_count as u64,
            columns: table.columns.len() as u64,
            dataset_name: table.dataset_name.as_deref(),
            size: received.object.size,
            uploaded_by: (uploader.id, &uploader.name),
            uploaded_at: &timestamp(now),
        },
    )?;
    let dataset = dataset(connection, &received.object.digest.to_hex())?.ok_or(DbError::NoRows)?;
    Ok(UploadOutcome {
        dataset,
        new: inserted,
    })
}

/// A stored dataset read back: its table and its profile.
#[derive(Debug)]
pub struct LoadedDataset {
    /// The table.
    pub table: Arc<Table>,
    /// Its profile (low-N threshold: the default).
    pub profile: DatasetProfile,
}

/// The last few datasets read, by content hash: reading and profiling a 34 MB XPORT file takes
/// about a second, an answer on its page must not.
#[derive(Debug)]
pub struct DatasetCache {
    capacity: usize,
    entries: Mutex<Vec<(Sha256Digest, Arc<LoadedDataset>)>>,
}

impl DatasetCache {
    /// A cache of at most `capacity` datasets.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The dataset `digest` from `objects` (blocking: call it off the async executor).
    pub fn load(
        &self,
        objects: &ObjectStore,
        digest: &Sha256Digest,
    ) -> Result<Arc<LoadedDataset>, FileReadError> {
        if let Some(found) = self.find(digest) {
            return Ok(found);
        }
        let path = objects
            .local_path(digest)
            .map_err(|error| FileReadError::Io {
                path: objects.path_of(digest),
                source: std::io::Error::other(error),
            })?;
        let table = read_dataset_file(&path)?;
        let profile = profile_table(&table, *digest, DEFAULT_LOW_N_THRESHOLD);
        let loaded = Arc::new(LoadedDataset {
            table: Arc::new(table),
            profile,
        });
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(d, _)| d != digest);
            entries.push((*digest, Arc::clone(&loaded)));
            let excess = entries.len().saturating_sub(self.capacity);
            entries.drain(..excess);
        }
        Ok(loaded)
    }

    fn find(&self, digest: &Sha256Digest) -> Option<Arc<LoadedDataset>> {
        let mut entries = self.entries.lock().ok()?;
        let at = entries.iter().position(|(d, _)| d == digest)?;
        // Most recently used last.
        let entry = entries.remove(at);
        let found = Arc::clone(&entry.1);
        entries.push(entry);
        Some(found)
    }
}
