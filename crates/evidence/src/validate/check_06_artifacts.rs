//! Check 6: every artifact against the manifest and the records, and no file the manifest does not
//! name.

use super::*;

impl Validation {
    pub(super) fn check_artifacts(
        &mut self,
        archive: &Archive,
        manifest: &Manifest,
        records: &Records,
    ) {
        let before = self.failures.len();
        let mut listed: Vec<&str> = vec!["README.txt", "manifest.json", "manifest.dsse.json"];
        listed.extend(manifest.records.iter().map(|r| r.path.as_str()));
        listed.extend(manifest.schemas.iter().map(|s| s.path.as_str()));
        listed.extend(manifest.artifacts.iter().map(|a| a.path.as_str()));
        for name in archive.files.keys() {
            if !listed.contains(&name.as_str()) {
                self.failure(
                    Code::Artifact,
                    None,
                    name,
                    "a file the manifest does not list".to_owned(),
                );
            }
        }
        let bundle = records
            .iter()
            .rev()
            .find(|(k, _)| k == "artifact_bundle")
            .map(|(_, v)| v);
        for artifact in &manifest.artifacts {
            match archive.files.get(&artifact.path) {
                None => self.failure(
                    Code::Artifact,
                    None,
                    &artifact.path,
                    "listed but absent".to_owned(),
                ),
                Some(file) => {
                    let actual = file.sha256.clone();
                    if actual != artifact.sha256 || file.size != artifact.size {
                        self.failure(
                            Code::Artifact,
                            None,
                            &artifact.path,
                            format!(
                                "hashes to {actual} ({} bytes); the manifest says {} ({} bytes)",
                                file.size, artifact.sha256, artifact.size
                            ),
                        );
                    }
                    let name = artifact.path.trim_start_matches("artifacts/");
                    let recorded = bundle.and_then(|b| {
                        b["artifacts"].as_object().and_then(|roles| {
                            roles
                                .values()
                                .find(|r| r["name"] == name)
                                .map(|r| r["sha256"].clone())
                        })
                    });
                    if recorded.as_ref().and_then(|r| r.as_str()) != Some(actual.as_str()) {
                        self.failure(
                            Code::Artifact,
                            None,
                            &artifact.path,
                            format!(
                                "hashes to {actual}; the artifact_bundle record says {}",
                                recorded.unwrap_or_default()
                            ),
                        );
                    }
                }
            }
        }
        // Every artifact the bundle record binds is in the bundle: a file dropped together with
        // its manifest line is as missing as one dropped alone.
        let named: Vec<String> = bundle
            .and_then(|b| b["artifacts"].as_object())
            .map(|roles| {
                roles
                    .values()
                    .filter_map(|r| r["name"].as_str().map(|n| format!("artifacts/{n}")))
                    .collect()
            })
            .unwrap_or_default();
        for path in named {
            if !manifest.artifacts.iter().any(|a| a.path == path) {
                self.failure(
                    Code::Artifact,
                    None,
                    &path,
                    "the artifact_bundle record binds it; the bundle does not hold it".to_owned(),
                );
            }
        }
        self.check_report_artifacts(archive);
        self.close(
            6,
            before,
            Code::Artifact,
            format!("{} artifacts re-hashed", manifest.artifacts.len()),
        );
    }
}

impl Validation {
    /// The report-ready outputs (bundles from `artifact-bundle-v2` on) are what they claim to
    /// be, by the verifier's own tests: the PDF parses with its fonts embedded, the SVG is an
    /// SVG document, the CSV holds exactly `statistics.json`'s cells.
    fn check_report_artifacts(&mut self, archive: &Archive) {
        use crate::execution_checks::{check_pdf, check_statistics_csv, check_svg};
        let outcomes = [
            (
                "artifacts/plot.pdf",
                archive.bytes("artifacts/plot.pdf").map(check_pdf),
            ),
            (
                "artifacts/plot.svg",
                archive.bytes("artifacts/plot.svg").map(check_svg),
            ),
            (
                "artifacts/statistics.csv",
                archive.bytes("artifacts/statistics.csv").map(|csv| {
                    archive.bytes("artifacts/statistics.json").map_or(
                        Err("there is no statistics.json to hold".to_owned()),
                        |json| check_statistics_csv(csv, json),
                    )
                }),
            ),
        ];
        for (path, outcome) in outcomes {
            if let Some(Err(problem)) = outcome {
                self.failure(Code::Artifact, None, path, problem);
            }
        }
    }
}
