//! Which adamviz source this binary was built from, as `build.rs` read it with git2: the commit
//! (40 hex digits), its tree and whether the work tree was clean. A binary built outside a git
//! checkout says "unknown" for each, and so does the evidence it writes.

use serde::{Deserialize, Serialize};

/// The commit the binary was built from, or `unknown`.
pub const SOURCE_COMMIT: &str = env!("ADAMVIZ_SOURCE_COMMIT");
/// The commit's tree, or `unknown`.
pub const SOURCE_TREE: &str = env!("ADAMVIZ_SOURCE_TREE");
/// `clean`, `dirty` (uncommitted changes were built in) or `unknown`.
pub const SOURCE_STATE: &str = env!("ADAMVIZ_SOURCE_STATE");

/// `adamviz --version`: the package version and the source it was built from.
pub const VERSION_TEXT: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\nsource commit ",
    env!("ADAMVIZ_SOURCE_COMMIT"),
    "\nsource tree ",
    env!("ADAMVIZ_SOURCE_TREE"),
    "\nwork tree ",
    env!("ADAMVIZ_SOURCE_STATE"),
);

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
    /// This binary's source.
    pub fn of_this_build() -> Self {
        Self {
            commit: SOURCE_COMMIT.to_owned(),
            tree: SOURCE_TREE.to_owned(),
            work_tree: SOURCE_STATE.to_owned(),
        }
    }

    /// Whether the commit is known (a git checkout).
    pub fn is_known(&self) -> bool {
        self.commit.len() == 40 && self.commit.bytes().all(|b| b.is_ascii_hexdigit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_names_a_commit_or_says_unknown() {
        let source = SourceProvenance::of_this_build();
        assert!(
            source.is_known() || source.commit == "unknown",
            "{source:?}"
        );
        assert!(["clean", "dirty", "unknown"].contains(&source.work_tree.as_str()));
        assert!(VERSION_TEXT.starts_with(env!("CARGO_PKG_VERSION")));
    }
}
