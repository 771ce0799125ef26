//! Which adamviz source this binary was built from, as `build.rs` read it with git2: the commit
//! (40 hex digits), its tree and whether the work tree was clean. A binary built outside a git
//! checkout says "unknown" for each, and so does the evidence it writes.

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

pub use adamviz_model::provenance::SourceProvenance;

/// This binary's source.
pub fn this_build() -> SourceProvenance {
    SourceProvenance {
        commit: SOURCE_COMMIT.to_owned(),
        tree: SOURCE_TREE.to_owned(),
        work_tree: SOURCE_STATE.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_names_a_commit_or_says_unknown() {
        let source = this_build();
        assert!(
            source.is_known() || source.commit == "unknown",
            "{source:?}"
        );
        assert!(["clean", "dirty", "unknown"].contains(&source.work_tree.as_str()));
        assert!(VERSION_TEXT.starts_with(env!("CARGO_PKG_VERSION")));
    }
}
