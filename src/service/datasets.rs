//! Datasets as plain functions: recording an upload once per content (the same bytes twice are
//! one dataset), listing them, and loading a stored dataset's table and profile, kept in a
//! small cache so a page or an answer does not read the file again.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use super::{accounts::timestamp, upload::ReceivedUpload};
use crate::{
    domain::{
        account::Account,
        dataset::{DatasetSummary, UploadOutcome},
        digest::Sha256Digest,
        profile::{DatasetProfile, DEFAULT_LOW_N_THRESHOLD},
    },
    ingest::{
        profile::profile_table,
        read_dataset_file,
        table::{SourceFormat, Table},
        FileReadError,
    },
    store::objects::ObjectStore,
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

const COLUMNS: &str = "content_hash, file_name, format, classification, row_count, column_count,
                       dataset_name, size, uploaded_by_name, uploaded_at";

fn summary_from(row: &rusqlite::Row<'_>) -> rusqlite::Result<DatasetSummary> {
    Ok(DatasetSummary {
        content_hash: row.get(0)?,
        file_name: row.get(1)?,
        format: row.get(2)?,
        classification: row.get(3)?,
        rows: row.get::<_, i64>(4)? as u64,
        columns: row.get::<_, i64>(5)? as u64,
        dataset_name: row.get(6)?,
        size: row.get::<_, i64>(7)? as u64,
        uploaded_by: row.get(8)?,
        uploaded_at: row.get(9)?,
    })
}

/// The dataset with `content_hash` (64 hex digits), if uploaded.
pub fn dataset(
    connection: &Connection,
    content_hash: &str,
) -> Result<Option<DatasetSummary>, rusqlite::Error> {
    connection
        .query_row(
            &format!("SELECT {COLUMNS} FROM datasets WHERE content_hash = ?1"),
            [content_hash],
            summary_from,
        )
        .optional()
}

/// Every dataset, newest first.
pub fn list_datasets(connection: &Connection) -> Result<Vec<DatasetSummary>, rusqlite::Error> {
    let mut statement = connection.prepare(&format!(
        "SELECT {COLUMNS} FROM datasets ORDER BY uploaded_at DESC, content_hash"
    ))?;
    let rows = statement.query_map([], summary_from)?;
    rows.collect()
}

/// Records a stored and parsed upload as a dataset, unless these bytes are one already (then
/// that dataset, with who uploaded it first and when).
pub fn record_upload(
    connection: &Connection,
    received: &ReceivedUpload,
    file_name: &str,
    uploader: &Account,
    now: DateTime<Utc>,
) -> Result<UploadOutcome, rusqlite::Error> {
    let table = &received.table;
    let inserted = connection.execute(
        "INSERT OR IGNORE INTO datasets
             (content_hash, file_name, format, classification, row_count, column_count,
              dataset_name, size, uploaded_by, uploaded_by_name, uploaded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            received.object.digest.to_hex(),
            clean_file_name(file_name),
            match table.source_format {
                SourceFormat::Csv => "csv",
                SourceFormat::Xpt => "xpt",
            },
            received.classification.as_str(),
            table.row_count as i64,
            table.columns.len() as i64,
            table.dataset_name,
            received.object.size as i64,
            uploader.id,
            uploader.name,
            timestamp(now),
        ],
    )?;
    let dataset = dataset(connection, &received.object.digest.to_hex())?
        .ok_or(rusqlite::Error::QueryReturnedNoRows)?;
    Ok(UploadOutcome {
        dataset,
        new: inserted == 1,
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
        let table = read_dataset_file(&objects.path_of(digest))?;
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
