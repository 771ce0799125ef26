//! Records which adamviz source a binary is built from: the commit and tree of the git checkout
//! (read with git2) and whether the work tree was clean. Outside a git checkout each is
//! "unknown", and the evidence says so. The values reach the code as `ADAMVIZ_SOURCE_*`
//! environment variables at compile time (`crates/services/src/provenance.rs`).

use std::path::Path;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    let (commit, tree, state) = match git2::Repository::discover(&root) {
        Ok(repository) => read(&repository),
        Err(_) => unknown(),
    };
    println!("cargo:rustc-env=ADAMVIZ_SOURCE_COMMIT={commit}");
    println!("cargo:rustc-env=ADAMVIZ_SOURCE_TREE={tree}");
    println!("cargo:rustc-env=ADAMVIZ_SOURCE_STATE={state}");
    // Re-read when the checkout moves (HEAD, refs, the index) or the sources change.
    // Paths are this crate's (crates/services); the sources are the whole workspace's.
    for path in [
        "../../src",
        "../model/src",
        "../engine/src",
        "../evidence/src",
        "../store/src",
        "src",
        "../server/src",
        "../../schemas",
        "../../style",
        "../../public",
        "../../Cargo.toml",
        "../../Cargo.lock",
        "build.rs",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
    if let Ok(repository) = git2::Repository::discover(&root) {
        let git = repository.path();
        for name in ["HEAD", "index", "refs", "packed-refs"] {
            let path = git.join(name);
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}

fn unknown() -> (String, String, String) {
    (
        "unknown".to_owned(),
        "unknown".to_owned(),
        "unknown".to_owned(),
    )
}

fn read(repository: &git2::Repository) -> (String, String, String) {
    let Ok(commit) = repository.head().and_then(|head| head.peel_to_commit()) else {
        return unknown();
    };
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true).include_ignored(false);
    let state = match repository.statuses(Some(&mut options)) {
        Ok(statuses) if statuses.is_empty() => "clean",
        Ok(_) => "dirty",
        Err(_) => "unknown",
    };
    (
        commit.id().to_string(),
        commit.tree_id().to_string(),
        state.to_owned(),
    )
}
