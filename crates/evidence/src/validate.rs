//! `adamviz evidence validate`: an evidence bundle checked offline, without trusting the server
//! that made it. The checks run in a fixed order and collect every failure (record index, code,
//! JSON path, message) instead of stopping at the first. Each check is a file of its own under
//! `validate/`, named by the number the report gives it (check 1, the archive and manifest,
//! is `validate/archive.rs` with [`validate_reader`]; check 10, the replay, is run by the caller:
//! [`Report::record_replay`]).
//!
//! What the verdict proves: checks 1–11 show that the bundle agrees with itself, which anyone
//! can arrange (a forger signs with a key of their own). Only a signature that verifies under a
//! key the auditor obtained out of band proves where the bundle came from, so only that is a
//! `PASS`; without it a clean bundle is `CONSISTENT_ORIGIN_NOT_PROVEN`.

pub mod archive;
mod check_02_schemas;
mod check_03_self_hashes;
mod check_04_chain;
mod check_05_links;
mod check_06_artifacts;
mod check_07_snapshot;
mod check_08_statistics;
mod check_09_provenance;
mod check_10_reproductions;
mod check_11_repository;
mod check_12_signature;
mod report;
mod retained_inputs;
pub mod terminal;

pub use report::report_json;
pub use retained_inputs::{run_request_from, RetainedInputError};

use std::{
    collections::BTreeMap,
    io::{Cursor, Read, Seek},
    sync::Arc,
};

use ed25519_dalek::VerifyingKey;
use serde::Serialize;
use sha2::{Digest, Sha256};

use self::{
    archive::{read_archive, sha256_of, Archive},
    terminal::visible,
};
use super::{
    dsse::{self, Envelope},
    kinds::check_schema_and_type_of,
    schemas::ALL_SCHEMAS,
};
use crate::bundle_format::{Manifest, BUNDLE_FORMAT};
use adamviz_engine::compiler::{compile_boxplot_script, ImageSize};
use adamviz_engine::ingest::snapshot::{
    snapshot_hash, ColumnClass, Snapshot, SnapshotColumn, SnapshotValue,
};
use adamviz_engine::runner::RunRequest;
use adamviz_engine::verify::independent_statistics::{compare_with_r, compute_cell_statistics};
use adamviz_model::{digest::Sha256Digest, spec::PlotSpec};

/// A failure's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// The archive or its manifest cannot be read (or an entry is unsafe).
    Invocation,
    /// A record or schema file breaks its schema or identity.
    Schema,
    /// A record's self-hash does not match its content.
    SelfHash,
    /// Records out of ledger order, or a broken link between neighbours.
    Chain,
    /// Records that should name each other do not.
    Link,
    /// An artifact differs from the manifest or the records, or a file is unknown.
    Artifact,
    /// The snapshot hash recomputed from snapshot.csv differs.
    Snapshot,
    /// The statistics recomputed from snapshot.csv differ from statistics.json.
    Statistics,
    /// The spec recompiled is not the script.
    Provenance,
    /// The script re-run gives another analytical hash (or a recorded reproduction failed).
    Replay,
    /// `--replay` refused: the script the spec compiles to is not the bundle's (check 9
    /// failed or could not run), and code taken from a bundle is never run.
    ReplayRefused,
    /// The recorded source commit is not in the repository.
    Git,
    /// The manifest's signature does not verify (or not by the trusted key).
    Signature,
}

/// One failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The record's index in the manifest (1-based), when it is about one.
    pub record: Option<usize>,
    /// Its code.
    pub code: Code,
    /// A JSON path (or an archive path).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Its number (1–12).
    pub number: u8,
    /// Its name.
    pub name: &'static str,
    /// `pass`, `fail`, `not_proven` (check 12 without a trusted key), `not_applicable` or
    /// `not_run`.
    pub outcome: &'static str,
    /// A line on what it found.
    pub detail: String,
}

/// What was asked.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Pin the signing key.
    pub trusted_key: Option<VerifyingKey>,
    /// A git repository the recorded source commits must exist in.
    pub repository: Option<std::path::PathBuf>,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// SHA-256 of the bundle's bytes.
    pub bundle_sha256: String,
    /// The revision, when the manifest names one.
    pub revision_id: Option<String>,
    /// Every check, in order.
    pub checks: Vec<CheckReport>,
    /// Every failure.
    pub failures: Vec<Failure>,
    /// Records, artifacts and schemas read.
    pub counts: BTreeMap<&'static str, usize>,
    /// The signatures the `approval` records carry, in words (name, date and time, meaning).
    pub signatures: Vec<String>,
    /// `PASS`, `CONSISTENT_ORIGIN_NOT_PROVEN` or `FAIL`.
    pub verdict: Verdict,
    /// The verdict in words: what it proves and what it does not.
    pub verdict_meaning: String,
}

/// What a bundle was found to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// No failure, and the manifest's signature verifies under the key the auditor supplied.
    Pass,
    /// No failure, but no trusted key was supplied: the bundle is consistent with itself and
    /// signed by the key it names, which anyone can arrange. Its origin is not proven.
    ConsistentOriginNotProven,
    /// At least one failure.
    Fail,
}

impl Verdict {
    /// As the text report's last line begins: `PASS`, `CONSISTENT, ORIGIN NOT PROVEN`, `FAIL`.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::ConsistentOriginNotProven => "CONSISTENT, ORIGIN NOT PROVEN",
            Verdict::Fail => "FAIL",
        }
    }
}

/// Exit status of `adamviz evidence validate`: PASS.
pub const EXIT_PASS: i32 = 0;
/// Exit status: a bad invocation, or an archive refused before any check (unreadable, unsafe
/// entry names, over the caps in [`archive`]).
pub const EXIT_INVOCATION: i32 = 2;
/// Exit status: consistent, origin not proven (no `--trusted-key`).
pub const EXIT_ORIGIN_NOT_PROVEN: i32 = 3;
/// Exit status: FAIL.
pub const EXIT_FAIL: i32 = 5;

/// What a replay runs: the script the validator compiled itself from the bundle's spec (never
/// the bundle's script.R), on the snapshot it read from snapshot.csv, and the analytical hash
/// the bundle records. Made only when check 9 passed.
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    /// The run: the validator's own script and the snapshot, with their recomputed hashes.
    pub request: RunRequest,
    /// The `artifact_bundle` record's analytical hash.
    pub expected_analytical_hash: String,
}

/// Why `--replay` may not run: the validator runs only a script it compiled itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReplayRefusal {
    /// The checks stopped before check 9.
    #[error("check 9 (spec recompiled to the script) did not run")]
    CheckNineDidNotRun,
    /// The archive could not be read at all.
    #[error("the archive could not be read")]
    ArchiveUnreadable,
    /// The bundle's script is not the one its spec compiles to.
    #[error("check 9 failed: the bundle's script.R is not the script its spec compiles to")]
    CheckNineFailed,
    /// Nothing to compare the replay's statistics with.
    #[error("no artifact_bundle record names an analytical hash")]
    NoAnalyticalHash,
}

/// Why a replay that was allowed did not reproduce the bundle.
#[derive(Debug, thiserror::Error)]
pub enum ReplayFailure {
    /// No temporary directory to run in.
    #[error("no work directory for the replay: {0}")]
    WorkDir(#[from] std::io::Error),
    /// The statistics hash to another value than the bundle records.
    #[error("the re-run's statistics hash to {actual}, the bundle records {expected}")]
    Differs {
        /// What the replay's statistics hash to.
        actual: Sha256Digest,
        /// What the bundle records.
        expected: String,
    },
    /// The replay gave no statistics.
    #[error("the re-run gave no statistics ({0})")]
    NoStatistics(String),
}

/// A report and, when check 9 passed, what `--replay` may run (else why it may not).
#[derive(Debug)]
pub struct Validated {
    /// The report.
    pub report: Report,
    /// The replay, or why there is none.
    pub replay: Result<ReplayPlan, ReplayRefusal>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Validates `bytes` (an evidence bundle).
pub fn validate(bytes: &[u8], options: &Options) -> Report {
    validate_reader(Cursor::new(bytes), options).report
}

/// Validates the bundle `reader` holds (e.g. a `BufReader<File>`): the archive is read once
/// within the caps of [`archive`] (nothing inflated before the caps hold, no entry twice), then
/// the bytes are hashed in one sequential pass (not when the archive was refused: a refusal
/// reads no more than it must), and every check runs on what was read. Also returns what
/// `--replay` may run.
pub fn validate_reader<R: Read + Seek>(mut reader: R, options: &Options) -> Validated {
    let mut v = Validation::default();
    let parsed = read_archive(&mut reader)
        .map_err(|e| e.to_string())
        .and_then(|archive| {
            let digest = sha256_of(&mut reader).map_err(|e| e.to_string())?;
            let manifest_bytes = archive
                .bytes("manifest.json")
                .map(<[u8]>::to_vec)
                .ok_or("no manifest.json")?;
            let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
                .map_err(|e| format!("manifest.json: {e}"))?;
            if manifest.format != BUNDLE_FORMAT {
                return Err(format!(
                    "manifest.json: format {:?}, this build reads {BUNDLE_FORMAT}",
                    manifest.format
                ));
            }
            Ok((digest, archive, manifest, manifest_bytes))
        });
    let (digest, archive, manifest, manifest_bytes) = match parsed {
        Ok(parts) => {
            v.pass(
                1,
                "archive and manifest readable",
                "every entry safe and within its limits".to_owned(),
            );
            parts
        }
        Err(message) => {
            v.refuse(message);
            return v.validated("not computed: the archive was refused".to_owned(), None);
        }
    };
    let records = v.check_schemas(&archive, &manifest);
    let records_for_git = records.clone();
    v.check_self_hashes(&archive, &manifest);
    v.check_chain(&manifest, &records);
    v.check_links(&manifest, &records);
    v.check_artifacts(&archive, &manifest, &records);
    v.check_recomputed(&archive, &records);
    v.check_reproductions(&records);
    match &options.repository {
        Some(path) => v.check_repository(path, &records_for_git),
        None => v.not_run(
            11,
            "source commit in a repository",
            "not asked (--repository)",
        ),
    }
    v.check_signature(&archive, &manifest, &manifest_bytes, options);
    v.counts.insert("records", manifest.records.len());
    v.counts.insert("artifacts", manifest.artifacts.len());
    v.counts.insert("schemas", manifest.schemas.len());
    v.validated(digest, Some(manifest.revision_id.clone()))
}

const CHECKS: [(u8, &str); 12] = [
    (1, "archive and manifest readable"),
    (2, "records against their schemas"),
    (3, "self-hashes"),
    (4, "chain links"),
    (5, "cross-record links"),
    (6, "artifacts against manifest and records"),
    (7, "snapshot hash recomputed"),
    (8, "independent statistics recomputed"),
    (9, "spec recompiled to the script"),
    (10, "replay in the sandbox"),
    (11, "source commit in a repository"),
    (12, "manifest signature"),
];

struct Validation {
    checks: Vec<CheckReport>,
    failures: Vec<Failure>,
    counts: BTreeMap<&'static str, usize>,
    signatures: Vec<String>,
    /// Check 12 verified the manifest under the key the auditor supplied.
    origin_proven: bool,
    /// What `--replay` may run: set by check 9 when it passed, else why not.
    replay: Result<ReplayPlan, ReplayRefusal>,
}

impl Default for Validation {
    fn default() -> Self {
        Self {
            checks: Vec::new(),
            failures: Vec::new(),
            counts: BTreeMap::new(),
            signatures: Vec::new(),
            origin_proven: false,
            replay: Err(ReplayRefusal::CheckNineDidNotRun),
        }
    }
}

/// The records by kind, parsed.
type Records = Vec<(String, serde_json::Value)>;

impl Validation {
    fn pass(&mut self, number: u8, name: &'static str, detail: String) {
        self.checks.push(CheckReport {
            number,
            name,
            outcome: "pass",
            detail,
        });
    }

    fn not_run(&mut self, number: u8, name: &'static str, detail: &str) {
        self.checks.push(CheckReport {
            number,
            name,
            outcome: "not_run",
            detail: detail.to_owned(),
        });
    }

    fn fail(
        &mut self,
        number: u8,
        name: &'static str,
        code: Code,
        record: Option<usize>,
        path: &str,
        message: String,
    ) {
        self.failure(code, record, path, message.clone());
        self.checks.push(CheckReport {
            number,
            name,
            outcome: "fail",
            detail: message,
        });
    }

    fn failure(&mut self, code: Code, record: Option<usize>, path: &str, message: String) {
        self.failures.push(Failure {
            record,
            code,
            path: path.to_owned(),
            message,
        });
    }

    /// Closes check `number`: passed unless failures of `code` were added since `before`.
    fn close(&mut self, number: u8, before: usize, code: Code, pass_detail: String) {
        let name = CHECKS[number as usize - 1].1;
        let failed = self.failures[before..]
            .iter()
            .filter(|f| f.code == code)
            .count();
        self.checks.push(CheckReport {
            number,
            name,
            outcome: if failed == 0 { "pass" } else { "fail" },
            detail: if failed == 0 {
                pass_detail
            } else {
                format!("{failed} failures")
            },
        });
    }

    /// Check 1 failed: the archive is refused, nothing else runs.
    fn refuse(&mut self, message: String) {
        self.fail(1, CHECKS[0].1, Code::Invocation, None, "$", message);
        for (number, name) in CHECKS.iter().skip(1) {
            self.not_run(*number, name, "the archive could not be read");
        }
        self.replay = Err(ReplayRefusal::ArchiveUnreadable);
    }

    fn validated(self, bundle_sha256: String, revision_id: Option<String>) -> Validated {
        let verdict = if !self.failures.is_empty() {
            Verdict::Fail
        } else if self.origin_proven {
            Verdict::Pass
        } else {
            Verdict::ConsistentOriginNotProven
        };
        let mut report = Report {
            bundle_sha256,
            revision_id,
            checks: self.checks,
            failures: self.failures,
            counts: self.counts,
            signatures: self.signatures,
            verdict,
            verdict_meaning: String::new(),
        };
        report.verdict_meaning = report.meaning();
        Validated {
            report,
            replay: self.replay,
        }
    }
}
