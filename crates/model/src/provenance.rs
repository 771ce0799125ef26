//! The source a build of adamviz came from, as evidence records carry it. Which source *this*
//! binary came from is read at compile time by the web crate's `build.rs` (`provenance` there).

use serde::{Deserialize, Serialize};

/// The source of a build, as evidence records carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceProvenance {
    /// The commit (40 hex digits), or `unknown`.
    pub commit: String,
    /// Its tree (40 hex digits), or `unknown`.
    pub tree: String,
    /// `clean`, `dirty` or `unknown`.
    pub work_tree: String,
}

impl SourceProvenance {
    /// Whether the commit is known (a git checkout).
    pub fn is_known(&self) -> bool {
        self.commit.len() == 40 && self.commit.bytes().all(|b| b.is_ascii_hexdigit())
    }
}
