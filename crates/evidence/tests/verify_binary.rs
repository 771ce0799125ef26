//! `adamviz-verify`, the validator an auditor builds from this crate alone, as a process: a
//! bad invocation and an unreadable archive are exit 2 with the reason, before any check. (The
//! whole validation of real bundles is the server's tests and the browser suite's; `make test`
//! also hands this binary to the browser suite, which compares it with `adamviz evidence
//! validate`.)

use std::process::Command;

fn verify(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_adamviz-verify"))
        .args(args)
        .output()
        .expect("adamviz-verify starts")
}

#[test]
fn a_missing_bundle_is_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-bundle.zip");
    let output = verify(&[missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("no-such-bundle.zip"), "{said}");
}

#[test]
fn a_file_that_is_not_a_zip_is_refused_before_any_check() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle.zip");
    std::fs::write(&bundle, b"not a zip archive at all").unwrap();
    let output = verify(&[bundle.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn no_arguments_is_a_usage_error() {
    let output = verify(&[]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("Usage"));
}
