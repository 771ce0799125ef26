//! The evidence crate is the part an auditor must trust, and builds alone as `adamviz-verify`:
//! no database, web server, web framework or password hashing may be in its dependency tree.
//! Asked of cargo itself (`cargo tree`), so a dependency added anywhere below it fails here.

use std::process::Command;

#[test]
fn the_evidence_crate_has_no_database_web_or_password_hashing_in_its_tree() {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-p",
            "adamviz-evidence",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(
        names.contains(&"adamviz-evidence") && names.contains(&"adamviz-engine"),
        "the tree does not look like the evidence crate's: {tree}"
    );
    let forbidden = [
        "rusqlite",
        "libsqlite3-sys",
        "r2d2",
        "axum",
        "hyper",
        "tower-sessions",
        "leptos",
        "leptos_axum",
        "argon2",
        "adamviz",
    ];
    let found: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| forbidden.contains(name))
        .collect();
    assert!(
        found.is_empty(),
        "the evidence crate depends on {found:?}: the validator must build without the web application"
    );
}
