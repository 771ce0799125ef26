//! Data cuts: a later delivery of a dataset (the same dataset name, other bytes, uploaded
//! later), as revision and set pages offer "Re-run on the new data" for it.

use serde::{Deserialize, Serialize};

/// A newer cut of the dataset a revision or set was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewerCut {
    /// Its content hash.
    pub content_hash: String,
    /// Its file name.
    pub file_name: String,
    /// When it was uploaded (canonical UTC).
    pub uploaded_at: String,
}
