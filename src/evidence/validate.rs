//! `adamviz evidence validate`: an evidence bundle checked offline, without trusting the server
//! that made it. The checks run in a fixed order and collect every failure (record index, code,
//! JSON path, message) instead of stopping at the first.

use std::{
    collections::BTreeMap,
    io::{Cursor, Read},
};

use ed25519_dalek::VerifyingKey;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{
    dsse::{self, Envelope},
    kinds::check_schema_and_type_of,
    schemas::ALL_SCHEMAS,
};
use crate::{
    compiler::{compile_boxplot_script, ImageSize},
    domain::spec::PlotSpec,
    ingest::snapshot::{snapshot_hash, ColumnClass, Snapshot, SnapshotColumn, SnapshotValue},
    service::bundle::{Manifest, BUNDLE_FORMAT},
    verify::independent_statistics::{compare_with_r, compute_cell_statistics},
};

/// Largest entry inflated (declared size), and largest whole archive.
const ENTRY_LIMIT: u64 = 1 << 30;
/// Largest compression ratio accepted (a zip bomb has far more).
const RATIO_LIMIT: u64 = 1000;

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
    /// The script re-run gives another analytical hash.
    Replay,
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
    /// `pass`, `fail`, `not_applicable` or `not_run`.
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
    /// `PASS` or `FAIL`.
    pub verdict: &'static str,
}

/// The archive's files, read safely.
struct Archive {
    files: BTreeMap<String, Vec<u8>>,
}

fn unsafe_name(name: &str) -> bool {
    name.starts_with('/')
        || name.contains('\\')
        || name.split('/').any(|part| part == ".." || part.is_empty())
}

fn read_archive(bytes: &[u8]) -> Result<Archive, String> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| format!("not a zip archive: {e}"))?;
    let mut files = BTreeMap::new();
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .map_err(|e| format!("entry {index}: {e}"))?;
        let name = entry.name().to_owned();
        if unsafe_name(&name) {
            return Err(format!(
                "entry {name:?}: an unsafe path (absolute, .. or empty part): refused"
            ));
        }
        let (size, packed) = (entry.size(), entry.compressed_size().max(1));
        if size > ENTRY_LIMIT || size / packed > RATIO_LIMIT {
            return Err(format!(
                "entry {name:?}: declares {size} bytes from {packed} (limit {ENTRY_LIMIT} bytes, ratio {RATIO_LIMIT}): refused before inflating"
            ));
        }
        let mut content = Vec::with_capacity(size as usize);
        (&mut entry)
            .take(size + 1)
            .read_to_end(&mut content)
            .map_err(|e| format!("entry {name:?}: {e}"))?;
        if content.len() as u64 != size {
            return Err(format!(
                "entry {name:?}: holds {} bytes, declares {size}",
                content.len()
            ));
        }
        if files.insert(name.clone(), content).is_some() {
            return Err(format!("entry {name:?} appears twice"));
        }
    }
    Ok(Archive { files })
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Validates `bytes` (an evidence bundle).
pub fn validate(bytes: &[u8], options: &Options) -> Report {
    let mut v = Validation::default();
    let digest = sha256_hex(bytes);
    let parsed = read_archive(bytes).and_then(|archive| {
        let manifest_bytes = archive
            .files
            .get("manifest.json")
            .cloned()
            .ok_or("no manifest.json")?;
        let manifest: Manifest =
            serde_json::from_slice(&manifest_bytes).map_err(|e| format!("manifest.json: {e}"))?;
        if manifest.format != BUNDLE_FORMAT {
            return Err(format!(
                "manifest.json: format {:?}, this build reads {BUNDLE_FORMAT}",
                manifest.format
            ));
        }
        Ok((archive, manifest, manifest_bytes))
    });
    let (archive, manifest, manifest_bytes) = match parsed {
        Ok(parts) => {
            v.pass(
                1,
                "archive and manifest readable",
                "every entry safe and within its limits".to_owned(),
            );
            parts
        }
        Err(message) => {
            v.fail(
                1,
                "archive and manifest readable",
                Code::Invocation,
                None,
                "$",
                message,
            );
            for (number, name) in CHECKS.iter().skip(1) {
                v.checks.push(CheckReport {
                    number: *number,
                    name,
                    outcome: "not_run",
                    detail: "the archive could not be read".to_owned(),
                });
            }
            return v.report(digest, None);
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
    v.report(digest, Some(manifest.revision_id.clone()))
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

#[derive(Default)]
struct Validation {
    checks: Vec<CheckReport>,
    failures: Vec<Failure>,
    counts: BTreeMap<&'static str, usize>,
    signatures: Vec<String>,
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

    fn report(self, bundle_sha256: String, revision_id: Option<String>) -> Report {
        Report {
            bundle_sha256,
            revision_id,
            verdict: if self.failures.is_empty() {
                "PASS"
            } else {
                "FAIL"
            },
            checks: self.checks,
            failures: self.failures,
            counts: self.counts,
            signatures: self.signatures,
        }
    }

    fn check_schemas(&mut self, archive: &Archive, manifest: &Manifest) -> Records {
        let before = self.failures.len();
        for schema in &manifest.schemas {
            let known = ALL_SCHEMAS
                .iter()
                .find(|s| format!("schemas/{}", s.file) == schema.path);
            let Some(known) = known else {
                self.failure(
                    Code::Schema,
                    None,
                    &schema.path,
                    "a schema this build does not know".to_owned(),
                );
                continue;
            };
            match archive.files.get(&schema.path) {
                Some(bytes)
                    if sha256_hex(bytes) == known.raw_sha256
                        && schema.raw_sha256 == known.raw_sha256
                        && schema.canonical_sha256 == known.canonical_sha256 => {}
                Some(_) => self.failure(
                    Code::Schema,
                    None,
                    &schema.path,
                    format!(
                        "differs from the compiled-in schema (raw SHA-256 {})",
                        known.raw_sha256
                    ),
                ),
                None => self.failure(
                    Code::Schema,
                    None,
                    &schema.path,
                    "listed but absent".to_owned(),
                ),
            }
        }
        let mut records = Vec::new();
        for (index, entry) in manifest.records.iter().enumerate() {
            let number = Some(index + 1);
            let Some(bytes) = archive.files.get(&entry.path) else {
                self.failure(
                    Code::Schema,
                    number,
                    &entry.path,
                    "listed but absent".to_owned(),
                );
                continue;
            };
            let value: serde_json::Value = match serde_json::from_slice(bytes) {
                Ok(value) => value,
                Err(e) => {
                    self.failure(Code::Schema, number, "$", format!("not JSON: {e}"));
                    continue;
                }
            };
            if value["kind"] != entry.kind.as_str() {
                self.failure(
                    Code::Schema,
                    number,
                    "$.kind",
                    format!(
                        "{} in the record, {} in the manifest",
                        value["kind"], entry.kind
                    ),
                );
            }
            if let Err(e) = check_schema_and_type_of(&entry.kind, &value) {
                self.failure(Code::Schema, number, "$", e.to_string());
            }
            records.push((entry.kind.clone(), value));
        }
        self.close(
            2,
            before,
            Code::Schema,
            format!(
                "{} records, {} schema files",
                manifest.records.len(),
                manifest.schemas.len()
            ),
        );
        records
    }

    fn check_self_hashes(&mut self, archive: &Archive, manifest: &Manifest) {
        let before = self.failures.len();
        for (index, entry) in manifest.records.iter().enumerate() {
            let Some(bytes) = archive.files.get(&entry.path) else {
                continue;
            };
            let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(bytes) else {
                continue;
            };
            let claimed = value["record_hash"].as_str().unwrap_or_default().to_owned();
            if let Some(object) = value.as_object_mut() {
                object.remove("record_hash");
            }
            let actual = serde_jcs::to_vec(&value)
                .map(|b| sha256_hex(&b))
                .unwrap_or_default();
            if actual != claimed {
                self.failure(
                    Code::SelfHash,
                    Some(index + 1),
                    "$.record_hash",
                    format!("the content hashes to {actual}, the record says {claimed}"),
                );
            }
            if claimed != entry.record_hash {
                self.failure(
                    Code::SelfHash,
                    Some(index + 1),
                    "$.record_hash",
                    format!(
                        "the manifest names {}, the record {claimed}",
                        entry.record_hash
                    ),
                );
            }
        }
        self.close(
            3,
            before,
            Code::SelfHash,
            "every record hashes to its record_hash".to_owned(),
        );
    }

    fn check_chain(&mut self, manifest: &Manifest, records: &Records) {
        let before = self.failures.len();
        for (index, pair) in manifest.records.windows(2).enumerate() {
            let (previous, next) = (&pair[0], &pair[1]);
            if next.ledger_seq <= previous.ledger_seq {
                self.failure(
                    Code::Chain,
                    Some(index + 2),
                    "$",
                    format!(
                        "ledger position {} after {}: out of order",
                        next.ledger_seq, previous.ledger_seq
                    ),
                );
            } else if next.ledger_seq == previous.ledger_seq + 1 {
                let named = records
                    .get(index + 1)
                    .and_then(|(_, v)| v["previous_hash"].as_str())
                    .unwrap_or_default();
                if named != previous.record_hash {
                    self.failure(
                        Code::Chain,
                        Some(index + 2),
                        "$.previous_hash",
                        format!(
                            "names {named}, but the record before it is {}",
                            previous.record_hash
                        ),
                    );
                }
            }
        }
        self.close(
            4,
            before,
            Code::Chain,
            "records in ledger order, neighbours linked".to_owned(),
        );
    }

    fn check_links(&mut self, manifest: &Manifest, records: &Records) {
        let before = self.failures.len();
        let of = |kind: &'static str| {
            records
                .iter()
                .enumerate()
                .filter(move |(_, (k, _))| k == kind)
        };
        for (index, (_, value)) in records.iter().enumerate() {
            if value["revision_id"] != manifest.revision_id.as_str() {
                self.failure(
                    Code::Link,
                    Some(index + 1),
                    "$.revision_id",
                    format!(
                        "{} is not the bundle's revision {}",
                        value["revision_id"], manifest.revision_id
                    ),
                );
            }
        }
        // A Verified revision's records: none may be missing.
        let verified_attempt = of("execution_verification")
            .rfind(|(_, (_, v))| v["passed"] == true)
            .map(|(_, (_, v))| v["attempt_id"].clone());
        let has = |kind: &'static str, field: &str, value: &str| {
            of(kind).any(|(_, (_, v))| {
                v[field] == value
                    && (kind != "execution_attempt"
                        || Some(&v["attempt_id"]) == verified_attempt.as_ref())
            })
        };
        for (kind, field, value, what) in [
            (
                "execution_attempt",
                "event",
                "started",
                "the verified attempt's start",
            ),
            (
                "execution_attempt",
                "event",
                "succeeded",
                "the verified attempt's success",
            ),
            (
                "revision_lifecycle",
                "to_status",
                "draft",
                "the revision's creation",
            ),
            (
                "revision_lifecycle",
                "to_status",
                "verified",
                "the revision's promotion to verified",
            ),
            (
                "revision_context",
                "kind",
                "revision_context",
                "the revision context",
            ),
        ] {
            if !has(kind, field, value) {
                self.failure(
                    Code::Link,
                    None,
                    "$",
                    format!("the bundle lacks {what} (an {kind} record with {field} {value})"),
                );
            }
        }
        let request = of("execution_request")
            .next_back()
            .map(|(_, (_, v))| v["record_hash"].clone());
        let verification = of("execution_verification").rfind(|(_, (_, v))| v["passed"] == true);
        let bundle = of("artifact_bundle").next_back();
        match (&request, verification, bundle) {
            (Some(request), Some((vi, (_, verification))), Some((bi, (_, bundle)))) => {
                if verification["request_hash"] != *request {
                    self.failure(Code::Link, Some(vi + 1), "$.request_hash", "does not name the execution request".to_owned());
                }
                if bundle["verification_hash"] != verification["record_hash"] {
                    self.failure(Code::Link, Some(bi + 1), "$.verification_hash", "does not name the passing verification".to_owned());
                }
                if bundle["attempt_id"] != verification["attempt_id"] {
                    self.failure(Code::Link, Some(bi + 1), "$.attempt_id", "not the verified attempt".to_owned());
                }
                for (ci, (_, context)) in of("revision_context") {
                    for (field, expected) in [("request_hash", request), ("verification_hash", &verification["record_hash"]), ("bundle_hash", &bundle["record_hash"])] {
                        if context[field] != *expected {
                            self.failure(Code::Link, Some(ci + 1), &format!("$.{field}"), "does not name the bundle's record".to_owned());
                        }
                    }
                }
            }
            _ => self.failure(Code::Link, None, "$", "the bundle lacks an execution request, a passing verification or an artifact bundle record".to_owned()),
        }
        self.link_signatures(records);
        self.close(
            5,
            before,
            Code::Link,
            "request → verification → bundle → context linked; signatures bound".to_owned(),
        );
    }

    /// Each `approval` record: signed by a reviewer other than the revision's author, of the
    /// Verified version it names, bound to the head of the records before it; an approving one
    /// followed by the `approved` lifecycle record naming it, and every `approved` lifecycle
    /// record naming an approving signature in the bundle.
    fn link_signatures(&mut self, records: &Records) {
        let author = records
            .iter()
            .find(|(k, v)| k == "revision_lifecycle" && v["event"] == "created")
            .map(|(_, v)| v["actor"].clone());
        // Four eyes: the same account, or an account named as the operating-system user that
        // made the revision on the command line.
        let by_author = |signer: &serde_json::Value| {
            author.as_ref().is_some_and(|actor| {
                (!actor["account_id"].is_null() && actor["account_id"] == signer["account_id"])
                    || actor["account_name"]
                        .as_str()
                        .zip(signer["account_name"].as_str())
                        .is_some_and(|(a, s)| a.eq_ignore_ascii_case(s))
            })
        };
        let mut status = serde_json::Value::Null;
        let mut version = serde_json::Value::Null;
        for (index, (kind, value)) in records.iter().enumerate() {
            let record = Some(index + 1);
            if kind == "revision_lifecycle" {
                if value["event"] == "approved" {
                    let named = records.iter().any(|(k, v)| {
                        k == "approval"
                            && v["record_hash"] == value["approval_hash"]
                            && v["decision"] == "approved"
                    });
                    if !named {
                        self.failure(
                            Code::Link,
                            record,
                            "$.approval_hash",
                            "names no approving signature in the bundle".to_owned(),
                        );
                    }
                }
                status = value["to_status"].clone();
                version = value["version"].clone();
                continue;
            }
            if kind != "approval" {
                continue;
            }
            let signer = &value["signer"];
            self.signatures.push(format!(
                "{} by {} ({}) at {}{}",
                value["decision"]
                    .as_str()
                    .unwrap_or_default()
                    .replace('_', " "),
                signer["printed_name"].as_str().unwrap_or_default(),
                signer["account_name"].as_str().unwrap_or_default(),
                value["signed_at"].as_str().unwrap_or_default(),
                value["meaning"]
                    .as_str()
                    .map(|m| format!(", meaning: {m}"))
                    .unwrap_or_default()
            ));
            if by_author(signer) {
                self.failure(
                    Code::Link,
                    record,
                    "$.signer.account_id",
                    format!(
                        "signed by the revision's author (account {}): a second person must sign",
                        signer["account_id"]
                    ),
                );
            }
            let reviewer = signer["roles"]
                .as_array()
                .is_some_and(|roles| roles.iter().any(|r| r == "reviewer"));
            if !reviewer {
                self.failure(
                    Code::Link,
                    record,
                    "$.signer.roles",
                    format!(
                        "the signer {} did not have the reviewer role",
                        signer["account_name"]
                    ),
                );
            }
            let head = index
                .checked_sub(1)
                .map(|i| records[i].1["record_hash"].clone())
                .unwrap_or_default();
            if value["evidence_head"] != head {
                self.failure(
                    Code::Link,
                    record,
                    "$.evidence_head",
                    format!(
                        "bound to {}, but the revision's evidence before it ends at {head}",
                        value["evidence_head"]
                    ),
                );
            }
            if status != "verified" || value["revision_version"] != version {
                self.failure(
                    Code::Link,
                    record,
                    "$.revision_version",
                    format!(
                        "signs version {} but the revision was {status} at version {version}",
                        value["revision_version"]
                    ),
                );
            }
            if value["decision"] == "approved" {
                let followed = records[index + 1..].iter().any(|(k, v)| {
                    k == "revision_lifecycle"
                        && v["event"] == "approved"
                        && v["approval_hash"] == value["record_hash"]
                });
                if !followed {
                    self.failure(
                        Code::Link,
                        record,
                        "$.record_hash",
                        "an approval no approved lifecycle record names".to_owned(),
                    );
                }
            }
        }
    }

    /// Check 10, offline part: every `reproduction` record reproduced the bundle's analytical
    /// hash (and, in the same environment, its image hash).
    fn check_reproductions(&mut self, records: &Records) {
        let before = self.failures.len();
        let bundle = records
            .iter()
            .rev()
            .find(|(k, _)| k == "artifact_bundle")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let mut count = 0;
        for (index, (kind, value)) in records.iter().enumerate() {
            if kind != "reproduction" {
                continue;
            }
            count += 1;
            let record = Some(index + 1);
            for side in ["original", "reproduced"] {
                if value[side]["analytical_hash"] != bundle["analytical_hash"] {
                    self.failure(
                        Code::Replay,
                        record,
                        &format!("$.{side}.analytical_hash"),
                        format!(
                            "{} is not the bundle's analytical hash {}",
                            value[side]["analytical_hash"], bundle["analytical_hash"]
                        ),
                    );
                }
            }
            if value["same_environment"] == true
                && value["reproduced"]["image_hash"] != bundle["image_hash"]
            {
                self.failure(
                    Code::Replay,
                    record,
                    "$.reproduced.image_hash",
                    format!(
                        "in the same environment the image hashes to {}, the bundle's to {}",
                        value["reproduced"]["image_hash"], bundle["image_hash"]
                    ),
                );
            }
            if value["outcome"] != "reproduced" {
                self.failure(
                    Code::Replay,
                    record,
                    "$.outcome",
                    format!("the reproduction failed: {}", value["failures"]),
                );
            }
        }
        if count == 0 {
            self.not_run(
                10,
                "replay in the sandbox",
                "no reproduction records; live replay not asked (--replay)",
            );
        } else {
            self.close(
                10,
                before,
                Code::Replay,
                format!("{count} reproduction records reproduce the analytical hash"),
            );
        }
    }

    fn check_artifacts(&mut self, archive: &Archive, manifest: &Manifest, records: &Records) {
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
                Some(bytes) => {
                    let actual = sha256_hex(bytes);
                    if actual != artifact.sha256 || bytes.len() as u64 != artifact.size {
                        self.failure(
                            Code::Artifact,
                            None,
                            &artifact.path,
                            format!(
                                "hashes to {actual} ({} bytes); the manifest says {} ({} bytes)",
                                bytes.len(),
                                artifact.sha256,
                                artifact.size
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
        self.close(
            6,
            before,
            Code::Artifact,
            format!("{} artifacts re-hashed", manifest.artifacts.len()),
        );
    }

    /// Checks 7–9: the snapshot hash, the statistics and the script, recomputed from the
    /// bundle's own snapshot.csv and the confirmed spec in its context record.
    fn check_recomputed(&mut self, archive: &Archive, records: &Records) {
        let context = records
            .iter()
            .rev()
            .find(|(k, _)| k == "revision_context")
            .map(|(_, v)| v);
        let request = records
            .iter()
            .rev()
            .find(|(k, _)| k == "execution_request")
            .map(|(_, v)| v);
        let (Some(context), Some(request)) = (context, request) else {
            for (number, name) in &CHECKS[6..9] {
                self.fail(
                    *number,
                    name,
                    Code::Link,
                    None,
                    "$",
                    "no revision_context or execution_request record to recompute from".to_owned(),
                );
            }
            return;
        };
        let csv = archive.files.get("artifacts/snapshot.csv");
        let columns = snapshot_columns(&context["snapshot"]["columns"]);
        let snapshot = match (csv, columns) {
            (Some(csv), Ok(columns)) => read_snapshot_csv(csv, columns),
            (None, _) => Err("artifacts/snapshot.csv is absent".to_owned()),
            (_, Err(e)) => Err(e),
        };
        let snapshot = match snapshot {
            Ok(snapshot) => snapshot,
            Err(message) => {
                self.fail(
                    7,
                    CHECKS[6].1,
                    Code::Snapshot,
                    None,
                    "artifacts/snapshot.csv",
                    message,
                );
                self.not_run(8, CHECKS[7].1, "no snapshot to recompute from");
                self.not_run(9, CHECKS[8].1, "no snapshot to recompute from");
                return;
            }
        };
        let hash = snapshot_hash(&snapshot);
        let before = self.failures.len();
        for (path, named) in [
            ("$.snapshot_hash", &request["snapshot_hash"]),
            (
                "$.snapshot.snapshot_hash",
                &context["snapshot"]["snapshot_hash"],
            ),
        ] {
            if named.as_str() != Some(hash.to_hex().as_str()) {
                self.failure(
                    Code::Snapshot,
                    None,
                    path,
                    format!("snapshot.csv hashes (canonically) to {hash}; the record says {named}"),
                );
            }
        }
        self.close(
            7,
            before,
            Code::Snapshot,
            format!("{} records hash to {hash}", snapshot.rows.len()),
        );

        let before = self.failures.len();
        let spec: Result<PlotSpec, _> = serde_json::from_value(context["spec"].clone());
        match &spec {
            Ok(spec) => match (
                compute_cell_statistics(spec, &snapshot),
                archive
                    .files
                    .get("artifacts/statistics.json")
                    .map(|b| serde_json::from_slice::<serde_json::Value>(b)),
            ) {
                (Ok(ours), Some(Ok(statistics))) => {
                    for difference in compare_with_r(&ours, &statistics["cells"]) {
                        self.failure(
                            Code::Statistics,
                            None,
                            "artifacts/statistics.json",
                            difference,
                        );
                    }
                }
                (Err(e), _) => self.failure(
                    Code::Statistics,
                    None,
                    "artifacts/snapshot.csv",
                    e.to_string(),
                ),
                (_, other) => self.failure(
                    Code::Statistics,
                    None,
                    "artifacts/statistics.json",
                    format!("absent or not JSON: {other:?}"),
                ),
            },
            Err(e) => self.failure(
                Code::Statistics,
                None,
                "$.spec",
                format!("the context's spec is not a plot spec: {e}"),
            ),
        }
        self.close(
            8,
            before,
            Code::Statistics,
            "every cell agrees with statistics.json (relative 1e-9)".to_owned(),
        );

        let before = self.failures.len();
        if let Ok(spec) = &spec {
            let image: ImageSize =
                serde_json::from_value(request["image"].clone()).unwrap_or_default();
            match compile_boxplot_script(spec, &snapshot.columns, &hash, image) {
                Ok(compiled) => {
                    let script = archive.files.get("artifacts/script.R");
                    if script.map(Vec::as_slice) != Some(compiled.bytes.as_slice()) {
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
                }
                Err(e) => self.failure(
                    Code::Provenance,
                    None,
                    "$.spec",
                    format!("the spec does not compile: {e}"),
                ),
            }
        }
        self.close(
            9,
            before,
            Code::Provenance,
            "the spec recompiles to script.R byte for byte".to_owned(),
        );
    }

    fn check_repository(&mut self, path: &std::path::Path, records: &Records) {
        let before = self.failures.len();
        let commits: Vec<(usize, String)> = records
            .iter()
            .enumerate()
            .filter_map(|(i, (_, v))| {
                v["adamviz_source"]["commit"]
                    .as_str()
                    .map(|c| (i, c.to_owned()))
            })
            .collect();
        let known: Vec<&(usize, String)> = commits.iter().filter(|(_, c)| c != "unknown").collect();
        if known.is_empty() {
            self.checks.push(CheckReport {
                number: 11,
                name: CHECKS[10].1,
                outcome: "not_applicable",
                detail: "no record names a known source commit (built outside a git checkout, or records older than execution-request-v4)".to_owned(),
            });
            return;
        }
        match git2::Repository::open(path) {
            Err(e) => self.failure(
                Code::Git,
                None,
                &path.display().to_string(),
                format!("not a git repository: {}", e.message()),
            ),
            Ok(repository) => {
                for (index, commit) in &known {
                    let found = git2::Oid::from_str(commit)
                        .ok()
                        .and_then(|oid| repository.find_commit(oid).ok());
                    if found.is_none() {
                        self.failure(
                            Code::Git,
                            Some(index + 1),
                            "$.adamviz_source.commit",
                            format!("commit {commit} is not in {}", path.display()),
                        );
                    }
                }
            }
        }
        let first = known[0].1.clone();
        self.close(
            11,
            before,
            Code::Git,
            format!("source commit {first} found in {}", path.display()),
        );
    }

    fn check_signature(
        &mut self,
        archive: &Archive,
        manifest: &Manifest,
        manifest_bytes: &[u8],
        options: &Options,
    ) {
        let before = self.failures.len();
        let mut detail = String::new();
        let envelope = archive
            .files
            .get("manifest.dsse.json")
            .ok_or_else(|| "manifest.dsse.json is absent".to_owned())
            .and_then(|b| {
                serde_json::from_slice::<Envelope>(b)
                    .map_err(|e| format!("manifest.dsse.json: {e}"))
            });
        let key =
            dsse::public_key_from_hex(&manifest.signing_key.public_key).map_err(|e| e.to_string());
        match (envelope, key) {
            (Ok(envelope), Ok(key)) => {
                let signer = if let Some(trusted) = &options.trusted_key {
                    if trusted != &key {
                        self.failure(
                            Code::Signature,
                            None,
                            "manifest.json#/signing_key",
                            format!(
                                "signed by {}, not by the trusted key {}",
                                dsse::fingerprint(&key),
                                dsse::fingerprint(trusted)
                            ),
                        );
                    }
                    *trusted
                } else {
                    detail = format!(
                        "signed by {} (not pinned: pass --trusted-key to require a key)",
                        dsse::fingerprint(&key)
                    );
                    key
                };
                match dsse::verify(&envelope, &signer) {
                    Ok(payload) if payload == manifest_bytes => {}
                    Ok(_) => self.failure(
                        Code::Signature,
                        None,
                        "manifest.dsse.json",
                        "the signed payload is not manifest.json".to_owned(),
                    ),
                    Err(e) => {
                        self.failure(Code::Signature, None, "manifest.dsse.json", e.to_string())
                    }
                }
                if detail.is_empty() {
                    detail = format!("signed by the trusted key {}", dsse::fingerprint(&signer));
                }
            }
            (Err(message), _) | (_, Err(message)) => {
                self.failure(Code::Signature, None, "manifest.dsse.json", message)
            }
        }
        self.close(12, before, Code::Signature, detail);
    }
}

fn snapshot_columns(columns: &serde_json::Value) -> Result<Vec<SnapshotColumn>, String> {
    let columns = columns
        .as_array()
        .ok_or("the context names no snapshot columns")?;
    columns
        .iter()
        .map(|column| {
            let role = match column["role"].as_str() {
                Some("subject") => "subject",
                Some("treatment") => "treatment",
                Some("visit") => "visit",
                Some("visit_order") => "visit_order",
                Some("value") => "value",
                other => return Err(format!("unknown snapshot column role {other:?}")),
            };
            let class = match column["class"].as_str() {
                Some("character") => ColumnClass::Character,
                Some("numeric") => ColumnClass::Numeric,
                other => return Err(format!("unknown column class {other:?}")),
            };
            Ok(SnapshotColumn {
                name: column["name"].as_str().unwrap_or_default().to_owned(),
                class,
                role,
            })
        })
        .collect()
}

/// Reads snapshot.csv as `write_csv` writes it: a quoted header, text quoted, numbers bare, a
/// missing value as an empty bare field.
fn read_snapshot_csv(bytes: &[u8], columns: Vec<SnapshotColumn>) -> Result<Snapshot, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "snapshot.csv is not UTF-8".to_owned())?;
    let mut rows: Vec<Vec<(bool, String)>> = Vec::new();
    let mut row = Vec::new();
    let (mut field, mut quoted, mut in_quotes) = (String::new(), false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                in_quotes = true;
                quoted = true;
            }
            ',' => row.push((quoted, std::mem::take(&mut field))),
            '\n' => {
                row.push((quoted, std::mem::take(&mut field)));
                rows.push(std::mem::take(&mut row));
            }
            other => field.push(other),
        }
        if c == ',' || c == '\n' {
            quoted = false;
        }
    }
    if in_quotes || !field.is_empty() || !row.is_empty() {
        return Err("snapshot.csv does not end with a complete line".to_owned());
    }
    let mut lines = rows.into_iter();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    if header != names {
        return Err(format!(
            "snapshot.csv's header {header:?} is not the context's columns {names:?}"
        ));
    }
    let mut values = Vec::new();
    for (line, fields) in lines.enumerate() {
        if fields.len() != columns.len() {
            return Err(format!(
                "snapshot.csv line {}: {} fields, {} columns",
                line + 2,
                fields.len(),
                columns.len()
            ));
        }
        let mut out = Vec::with_capacity(fields.len());
        for ((quoted, text), column) in fields.into_iter().zip(&columns) {
            out.push(match (quoted, column.class) {
                (true, ColumnClass::Character) => SnapshotValue::Text(text.into()),
                (false, _) if text.is_empty() => SnapshotValue::Missing,
                (false, ColumnClass::Numeric) => {
                    SnapshotValue::Number(text.parse::<f64>().map_err(|_| {
                        format!("snapshot.csv line {}: {text:?} is not a number", line + 2)
                    })?)
                }
                _ => {
                    return Err(format!(
                        "snapshot.csv line {}: {text:?} does not fit column {} ({})",
                        line + 2,
                        column.name,
                        column.class.as_str()
                    ))
                }
            });
        }
        values.push(out);
    }
    Ok(Snapshot {
        columns,
        rows: values,
    })
}

impl Code {
    /// The code as the report writes it, e.g. `ARTIFACT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Invocation => "INVOCATION",
            Code::Schema => "SCHEMA",
            Code::SelfHash => "SELF_HASH",
            Code::Chain => "CHAIN",
            Code::Link => "LINK",
            Code::Artifact => "ARTIFACT",
            Code::Snapshot => "SNAPSHOT",
            Code::Statistics => "STATISTICS",
            Code::Provenance => "PROVENANCE",
            Code::Replay => "REPLAY",
            Code::Git => "GIT",
            Code::Signature => "SIGNATURE",
        }
    }
}

impl Report {
    /// The report in words, as `adamviz evidence validate` prints it.
    pub fn text(&self) -> String {
        let mut out = format!(
            "evidence bundle {} (SHA-256 {})\n",
            self.revision_id.as_deref().unwrap_or("?"),
            self.bundle_sha256
        );
        for check in &self.checks {
            out.push_str(&format!(
                "{:>2}. {:<40} {:<14} {}\n",
                check.number, check.name, check.outcome, check.detail
            ));
        }
        for failure in &self.failures {
            out.push_str(&format!(
                "FAIL {} {}{}: {}\n",
                failure.code.as_str(),
                failure
                    .record
                    .map(|r| format!("record {r} "))
                    .unwrap_or_default(),
                failure.path,
                failure.message
            ));
        }
        for signature in &self.signatures {
            out.push_str(&format!("signature: {signature}\n"));
        }
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        out.push_str(&format!(
            "{}; {} failures\n{}\n",
            counts.join(", "),
            self.failures.len(),
            self.verdict
        ));
        out
    }
}

/// The digest the JSON report carries of itself: SHA-256 of its canonical JSON.
pub fn report_json(report: &Report) -> Result<Vec<u8>, serde_json::Error> {
    let mut value = serde_json::to_value(report)?;
    let digest = sha256_hex(&serde_jcs::to_vec(&value)?);
    value["report_sha256"] = serde_json::Value::String(digest);
    serde_jcs::to_vec(&value)
}

/// What a replay needs from a bundle: the run request (script, snapshot, image, expected
/// hashes) and the analytical hash the bundle records.
pub fn replay_request(bytes: &[u8]) -> Result<(crate::runner::RunRequest, String), String> {
    let archive = read_archive(bytes)?;
    let manifest: Manifest = serde_json::from_slice(
        archive
            .files
            .get("manifest.json")
            .ok_or("no manifest.json")?,
    )
    .map_err(|e| format!("manifest.json: {e}"))?;
    let record = |kind: &str| -> Result<serde_json::Value, String> {
        let entry = manifest
            .records
            .iter()
            .rev()
            .find(|r| r.kind == kind)
            .ok_or(format!("no {kind} record"))?;
        serde_json::from_slice(
            archive
                .files
                .get(&entry.path)
                .ok_or(format!("{} is absent", entry.path))?,
        )
        .map_err(|e| format!("{}: {e}", entry.path))
    };
    let (request, context, bundle) = (
        record("execution_request")?,
        record("revision_context")?,
        record("artifact_bundle")?,
    );
    let file = |name: &str| {
        archive
            .files
            .get(&format!("artifacts/{name}"))
            .ok_or(format!("no {name}"))
    };
    Ok((
        run_request_from(
            &request,
            &context,
            file("script.R")?.clone(),
            file("snapshot.csv")?,
        )?,
        bundle["analytical_hash"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    ))
}

/// The run request of a retained result: the script's bytes and the snapshot read from its
/// CSV with the column classes its `revision_context` record names, checked against the hashes
/// its `execution_request` record names (the runner re-hashes both). Used by the bundle's
/// replay and by the reproduction of a stored revision.
pub fn run_request_from(
    request: &serde_json::Value,
    context: &serde_json::Value,
    script: Vec<u8>,
    snapshot_csv: &[u8],
) -> Result<crate::runner::RunRequest, String> {
    let columns = snapshot_columns(&context["snapshot"]["columns"])?;
    let snapshot = read_snapshot_csv(snapshot_csv, columns)?;
    let hash = |field: &str| -> Result<crate::domain::digest::Sha256Digest, String> {
        crate::domain::digest::Sha256Digest::try_from(
            request[field].as_str().unwrap_or_default().to_owned(),
        )
        .map_err(|_| format!("the request's {field} is not a hash"))
    };
    Ok(crate::runner::RunRequest {
        script,
        expected_script_hash: hash("script_hash")?,
        snapshot: std::sync::Arc::new(snapshot),
        expected_snapshot_hash: hash("snapshot_hash")?,
        image: serde_json::from_value(request["image"].clone()).unwrap_or_default(),
    })
}

impl Report {
    /// Records check 10 (the replay): its outcome replaces "not asked".
    pub fn record_replay(&mut self, outcome: Result<String, String>) {
        let check = self.checks.iter_mut().find(|c| c.number == 10);
        match outcome {
            Ok(detail) => {
                if let Some(check) = check {
                    // Recorded reproductions that failed keep the check failed.
                    if check.outcome != "fail" {
                        check.outcome = "pass";
                        check.detail = detail;
                    }
                }
            }
            Err(message) => {
                if let Some(check) = check {
                    check.outcome = "fail";
                    check.detail = message.clone();
                }
                self.failures.push(Failure {
                    record: None,
                    code: Code::Replay,
                    path: "artifacts/statistics.json".to_owned(),
                    message,
                });
                self.verdict = "FAIL";
            }
        }
    }
}
