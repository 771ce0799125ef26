//! Shared by the tests that drive the real `adamviz` binary on a data directory.
#![allow(dead_code)]

use std::{
    path::Path,
    process::{Command, Output},
};

/// `adamviz ARGS…` run from the repository root with `ADAMVIZ_DATA_DIR=data`.
pub fn adamviz(args: &[&str], data: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("ADAMVIZ_DATA_DIR", data)
        .output()
        .unwrap()
}

/// The stdout of a command that must have succeeded (its output shown if not).
pub fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// [`adamviz`] with more environment variables (an S3 server's credentials).
pub fn adamviz_with(args: &[&str], data: &Path, environment: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("ADAMVIZ_DATA_DIR", data)
        .envs(environment.iter().copied())
        .output()
        .unwrap()
}

/// The public key of the installation in `data` (`adamviz key show`), written to a file in
/// `dir` for `--trusted-key`.
pub fn trusted_key_of(data: &Path, dir: &Path) -> std::path::PathBuf {
    let shown = ok(adamviz(&["key", "show"], data));
    let public_key = shown
        .lines()
        .find_map(|line| line.strip_prefix("public key"))
        .expect("key show prints the public key")
        .trim()
        .to_owned();
    let file = dir.join("installation-key.pub");
    std::fs::write(&file, public_key).unwrap();
    file
}

/// Checks `bundle` offline under the key in `trusted_key`: the verdict must be PASS.
pub fn assert_bundle_passes(bundle: &Path, trusted_key: &Path, data: &Path) {
    let validated = ok(adamviz(
        &[
            "evidence",
            "validate",
            bundle.to_str().unwrap(),
            "--trusted-key",
            trusted_key.to_str().unwrap(),
        ],
        data,
    ));
    assert!(
        validated.lines().last().unwrap().starts_with("PASS: "),
        "{}: {validated}",
        bundle.display()
    );
}
