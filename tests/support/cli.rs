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
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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
