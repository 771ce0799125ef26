//! A dataset as the pages list it: what was uploaded, what the reader found, who and when.

use serde::{Deserialize, Serialize};

use super::profile::DatasetProfile;

/// One uploaded dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetSummary {
    /// SHA-256 of the uploaded bytes (64 hex digits): the dataset's identity.
    pub content_hash: String,
    /// The file name given at upload.
    pub file_name: String,
    /// `csv` or `xpt`.
    pub format: String,
    /// `synthetic` or `deidentified`.
    pub classification: String,
    /// Records.
    pub rows: u64,
    /// Columns.
    pub columns: u64,
    /// The XPT member name, if any.
    pub dataset_name: Option<String>,
    /// Bytes.
    pub size: u64,
    /// Who uploaded it first.
    pub uploaded_by: String,
    /// When (canonical UTC).
    pub uploaded_at: String,
}

impl DatasetSummary {
    /// The first 12 hex digits of the content hash, as the pages show it.
    pub fn hash_prefix(&self) -> &str {
        &self.content_hash[..self.content_hash.len().min(12)]
    }
}

/// A dataset with its profile (the dataset page).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetDetail {
    /// The dataset.
    pub summary: DatasetSummary,
    /// Its profile.
    pub profile: DatasetProfile,
}

/// What an upload did: a new dataset, or the one these bytes already are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadOutcome {
    /// The dataset.
    pub dataset: DatasetSummary,
    /// False when the same bytes had been uploaded before (the dataset then says by whom).
    pub new: bool,
}
