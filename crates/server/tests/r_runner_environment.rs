//! The runner's environment allowlist, alone in its test binary because it sets a variable in
//! the test process (no other test thread may read the environment meanwhile).

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

use std::sync::Arc;

use adamviz_engine::compiler::ImageSize;
use adamviz_engine::ingest::snapshot::snapshot_hash;
use adamviz_engine::runner::{RunRequest, Runner};
use adamviz_model::digest::Sha256Digest;
use r_fixtures::*;
use sha2::{Digest, Sha256};

#[test]
fn r_sees_only_the_allowlisted_environment_and_never_the_canary() {
    std::env::set_var("ADAMVIZ_SECRET_CANARY", "canary-7f3a9c");
    let script = "vars <- Sys.getenv()\n\
                  cat('CANARY=', Sys.getenv('ADAMVIZ_SECRET_CANARY', 'absent'), '\\n', sep = '')\n\
                  cat(paste(names(vars), vars, sep = '=', collapse = '\\n'), '\\n')\n";
    let snapshot = snapshot_from(&SpecTexts::plain());
    let hash = snapshot_hash(&snapshot);
    let request = RunRequest {
        script: script.as_bytes().to_vec(),
        expected_script_hash: Sha256Digest::from_bytes(Sha256::digest(script.as_bytes()).into()),
        snapshot: Arc::new(snapshot),
        expected_snapshot_hash: hash,
        image: ImageSize::default(),
        report: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(Runner::new(test_config(dir.path())).run(request));
    let stdout = &result.stdout.text;
    assert!(
        stdout.contains("CANARY=absent"),
        "{stdout}\n{}",
        result.stderr.text
    );
    assert!(!stdout.contains("canary-7f3a9c"));
    assert!(
        stdout.contains("LANG=C.UTF-8") && stdout.contains("TZ=UTC"),
        "{stdout}"
    );
    // Nothing of the test process's own environment (cargo sets these for every test).
    assert!(!stdout.contains("CARGO_MANIFEST_DIR"), "{stdout}");
    assert!(!stdout.contains("CARGO_PKG_NAME"), "{stdout}");
}
