//! The trust line in the code: every SQL statement and every use of the database engine lives
//! in `crates/store` (the seam a second database plugs into). Read from the sources, so a
//! statement added anywhere else fails here with its file and line.
#![cfg(feature = "ssr")]

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_sql_and_no_database_engine_outside_the_store_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    // Every folder named here is in git: a missing one is an error, not a silent skip (a clean
    // clone once lacked a `benches/` folder that only a local checkout still had).
    for dir in [
        "src",
        "crates/model/src",
        "crates/engine/src",
        "crates/evidence/src",
        "crates/bench/src",
        "crates/bench/benches",
    ] {
        let dir = root.join(dir);
        assert!(
            dir.is_dir(),
            "{} is not a folder of the repository",
            dir.display()
        );
        rust_files(&dir, &mut files);
    }
    assert!(files.len() > 50, "the sources were not found: {files:?}");
    let statement = |line: &str| {
        let upper = line.to_ascii_uppercase();
        [
            "SELECT ",
            "INSERT INTO",
            "DELETE FROM",
            "CREATE TABLE",
            "UPDATE ",
        ]
        .iter()
        .any(|keyword| upper.contains(keyword))
            && (line.contains('"') || line.trim_start().starts_with(char::is_uppercase))
            && [" FROM ", "INTO ", " SET ", "TABLE "]
                .iter()
                .any(|part| upper.contains(part))
    };
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("rusqlite") || code.contains("r2d2") || statement(code) {
                found.push(format!(
                    "{}:{}: {}",
                    file.strip_prefix(root).unwrap().display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "SQL or the database engine outside crates/store:\n{}",
        found.join("\n")
    );
}
