//! Check 9: the confirmed spec recompiles to the bundle's script.R byte for byte; when it
//! does, the validator's own compiled script is what `--replay` may run.

use super::*;

impl Validation {
    /// Check 9, on the snapshot (and its hash) check 7 read and the context's spec.
    pub(super) fn check_provenance(
        &mut self,
        archive: &Archive,
        records: &Records,
        request: &serde_json::Value,
        spec: &Result<PlotSpec, serde_json::Error>,
        snapshot: Snapshot,
        hash: Sha256Digest,
    ) {
        let before = self.failures.len();
        let mut compiled_script = None;
        let image: ImageSize = serde_json::from_value(request["image"].clone()).unwrap_or_default();
        match &spec {
            // Without a spec there is nothing to compile: the check fails rather than pass
            // vacuously (and a replay has no script of the validator's own to run).
            Err(e) => self.failure(
                Code::Provenance,
                None,
                "$.spec",
                format!("the context's spec is not a plot spec, so no script can be compiled: {e}"),
            ),
            Ok(spec) => match compile_boxplot_script(spec, &snapshot.columns, &hash, image) {
                Ok(compiled) => {
                    let script = archive.bytes("artifacts/script.R");
                    if script != Some(compiled.bytes.as_slice()) {
                        self.failure(Code::Provenance, None, "artifacts/script.R", format!("the spec compiles (compiler {}) to a script of {} bytes with SHA-256 {}; the bundle's differs", request["compiler_version"], compiled.bytes.len(), compiled.script_hash));
                    }
                    if request["script_hash"].as_str()
                        != Some(compiled.script_hash.to_hex().as_str())
                    {
                        self.failure(
                            Code::Provenance,
                            None,
                            "$.script_hash",
                            "the request names another script".to_owned(),
                        );
                    }
                    compiled_script = Some(compiled);
                }
                Err(e) => self.failure(
                    Code::Provenance,
                    None,
                    "$.spec",
                    format!("the spec does not compile: {e}"),
                ),
            },
        }
        self.close(
            9,
            before,
            Code::Provenance,
            "the spec recompiles to script.R byte for byte".to_owned(),
        );
        let check_9_failed = self.failures[before..]
            .iter()
            .any(|f| f.code == Code::Provenance);
        self.replay = match compiled_script {
            Some(compiled) if !check_9_failed => records
                .iter()
                .rev()
                .find(|(k, _)| k == "artifact_bundle")
                .and_then(|(_, bundle)| bundle["analytical_hash"].as_str())
                .map(|expected| ReplayPlan {
                    request: RunRequest {
                        script: compiled.bytes,
                        expected_script_hash: compiled.script_hash,
                        snapshot: Arc::new(snapshot),
                        expected_snapshot_hash: hash,
                        image,
                        report: serde_json::from_value(request["report"].clone()).ok(),
                    },
                    expected_analytical_hash: expected.to_owned(),
                })
                .ok_or(ReplayRefusal::NoAnalyticalHash),
            _ => Err(ReplayRefusal::CheckNineFailed),
        };
    }
}
