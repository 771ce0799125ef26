//! The trust line in the code: every SQL statement and every use of the database engine lives
//! in `crates/store` (the seam a second database plugs into). Read from the sources, so a
//! statement added anywhere else fails here with its file and line.

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
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    // Every folder named here is in git: a missing one is an error, not a silent skip (a clean
    // clone once lacked a `benches/` folder that only a local checkout still had).
    for dir in [
        "src",
        "crates/model/src",
        "crates/engine/src",
        "crates/evidence/src",
        "crates/services/src",
        "crates/server/src",
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

/// The web package (`src/`: pages and server functions) reaches the data only through
/// `adamviz-services`: the store, the database drivers and the object store are not among its
/// dependencies (so the compiler refuses a server function that names them), and it does not
/// take the database or the object store out of `Services` either.
#[test]
fn the_web_package_reaches_data_only_through_the_services() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let dependencies = manifest["dependencies"].as_table().unwrap();
    for forbidden in [
        "adamviz-store",
        "rusqlite",
        "r2d2",
        "r2d2_sqlite",
        "tokio-postgres",
        "deadpool-postgres",
        "object_store",
    ] {
        assert!(
            !dependencies.contains_key(forbidden),
            "the web package depends on {forbidden}"
        );
    }
    assert!(dependencies.contains_key("adamviz-services"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if ["adamviz_store", ".database()", ".objects()"]
                .iter()
                .any(|word| code.contains(word))
            {
                found.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the web package reaches around the services:\n{}",
        found.join("\n")
    );
}

/// Modules are `foo.rs` beside `foo/` (no `mod.rs`), and the crates are called by their names
/// (no `use adamviz_model as domain` style aliases).
#[test]
fn no_mod_rs_files_and_no_crate_aliases() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let crate_dir = entry.unwrap().path();
        for dir in ["src", "tests", "benches", "examples"] {
            if crate_dir.join(dir).is_dir() {
                rust_files(&crate_dir.join(dir), &mut files);
            }
        }
    }
    assert!(files.len() > 100, "the sources were not found");
    let mod_rs: Vec<_> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "mod.rs"))
        .collect();
    assert!(mod_rs.is_empty(), "mod.rs files: {mod_rs:?}");
    let mut aliases = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            let is_use = code.starts_with("use adamviz") || code.starts_with("pub use adamviz");
            if is_use && code.contains(" as ") && !code.contains(" as _") {
                aliases.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(aliases.is_empty(), "crate aliases:\n{}", aliases.join("\n"));
}
