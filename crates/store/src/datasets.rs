//! The `datasets` table: one row per distinct upload (its content hash), listed newest first.

use crate::sql::{Sql, SqlError, SqlRow};
use crate::sql_params;

use adamviz_model::dataset::DatasetSummary;

const COLUMNS: &str = "content_hash, file_name, format, classification, row_count, column_count,
                       dataset_name, size, uploaded_by_name, uploaded_at";

fn summary_from(row: &SqlRow) -> Result<DatasetSummary, SqlError> {
    Ok(DatasetSummary {
        content_hash: row.get(0)?,
        file_name: row.get(1)?,
        format: row.get(2)?,
        classification: row.get(3)?,
        rows: row.get::<i64>(4)? as u64,
        columns: row.get::<i64>(5)? as u64,
        dataset_name: row.get(6)?,
        size: row.get::<i64>(7)? as u64,
        uploaded_by: row.get(8)?,
        uploaded_at: row.get(9)?,
    })
}

/// The dataset with `content_hash` (64 hex digits), if uploaded.
pub fn dataset(
    connection: &impl Sql,
    content_hash: &str,
) -> Result<Option<DatasetSummary>, SqlError> {
    connection
        .query_opt(
            &format!("SELECT {COLUMNS} FROM datasets WHERE content_hash = ?1"),
            sql_params![content_hash],
        )?
        .map(|row| summary_from(&row))
        .transpose()
}

/// Every dataset, newest first.
pub fn list_datasets(connection: &impl Sql) -> Result<Vec<DatasetSummary>, SqlError> {
    connection
        .query(
            &format!("SELECT {COLUMNS} FROM datasets ORDER BY uploaded_at DESC, content_hash"),
            &[],
        )?
        .iter()
        .map(summary_from)
        .collect()
}

/// A dataset row to insert.
#[derive(Debug, Clone)]
pub struct NewDataset<'a> {
    /// SHA-256 of the uploaded bytes, hex.
    pub content_hash: &'a str,
    /// The file name as stored.
    pub file_name: &'a str,
    /// `csv` or `xpt`.
    pub format: &'a str,
    /// The data classification.
    pub classification: &'a str,
    /// Rows read.
    pub rows: u64,
    /// Columns read.
    pub columns: u64,
    /// The dataset name the file carries, if any.
    pub dataset_name: Option<&'a str>,
    /// Bytes.
    pub size: u64,
    /// The uploader's account id and name.
    pub uploaded_by: (i64, &'a str),
    /// When.
    pub uploaded_at: &'a str,
}

/// Inserts `new` unless its content is a dataset already; whether a row was inserted.
pub fn insert_dataset(connection: &impl Sql, new: &NewDataset<'_>) -> Result<bool, SqlError> {
    let inserted = connection.execute(
        "INSERT INTO datasets
             (content_hash, file_name, format, classification, row_count, column_count,
              dataset_name, size, uploaded_by, uploaded_by_name, uploaded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT DO NOTHING",
        sql_params![
            new.content_hash,
            new.file_name,
            new.format,
            new.classification,
            new.rows as i64,
            new.columns as i64,
            new.dataset_name,
            new.size as i64,
            new.uploaded_by.0,
            new.uploaded_by.1,
            new.uploaded_at,
        ],
    )?;
    Ok(inserted == 1)
}
