//! `execution_verification` (schema `execution-verification-v2`, eleven checks; v1's ten are
//! still read): the verifier's verdict on one
//! attempt, recorded for either outcome: every named check with its outcome and reason, the
//! failed names, and the output hashes the verdict is about.

use adamviz_model::ids::{AttemptId, RevisionId};
use serde::{Deserialize, Serialize};

use super::{
    record::EvidenceRecord,
    schemas::{EXECUTION_VERIFICATION_V1, EXECUTION_VERIFICATION_V2},
};
use crate::execution_checks::{CheckResult, ExecutionVerification};
use adamviz_engine::runner::RunResult;
use adamviz_model::digest::Sha256Digest;

/// The output hashes a verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputHashes {
    /// Canonical hash of the statistics.
    pub analytical: Option<Sha256Digest>,
    /// SHA-256 of the PNG.
    pub image: Option<Sha256Digest>,
    /// Canonical hash of the environment record.
    pub environment: Option<Sha256Digest>,
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutionVerificationRecord {
    /// Always `execution_verification`.
    pub kind: String,
    /// `execution-verification-v2` when written (v1 in older records).
    pub schema_version: String,
    /// The revision.
    pub revision_id: RevisionId,
    /// The attempt (`att-` and 32 hex digits).
    pub attempt_id: AttemptId,
    /// The record hash of the execution request verified against.
    pub request_hash: Sha256Digest,
    /// Every check passed.
    pub passed: bool,
    /// Every check, in order.
    pub checks: Vec<CheckResult>,
    /// The failed names.
    pub failed: Vec<String>,
    /// The analytical hash the result reported (checked when passed).
    pub analytical_hash: Option<Sha256Digest>,
    /// The PNG's hash.
    pub image_hash: Option<Sha256Digest>,
    /// The environment fingerprint.
    pub environment_fingerprint: Option<Sha256Digest>,
    /// When it was verified.
    pub verified_at: String,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

impl ExecutionVerificationRecord {
    /// The record of `verification` of `result`, not yet sealed.
    pub fn new(
        revision_id: RevisionId,
        attempt_id: AttemptId,
        request_hash: Sha256Digest,
        verification: &ExecutionVerification,
        result: &RunResult,
        verified_at: String,
    ) -> Self {
        Self::with_hashes(
            revision_id,
            attempt_id,
            request_hash,
            verification,
            OutputHashes {
                analytical: result.analytical_hash,
                image: result.output("plot.png").map(|o| o.sha256),
                environment: result.environment_fingerprint,
            },
            verified_at,
        )
    }

    /// The record of `verification` about outputs with `hashes`, not yet sealed.
    pub fn with_hashes(
        revision_id: RevisionId,
        attempt_id: AttemptId,
        request_hash: Sha256Digest,
        verification: &ExecutionVerification,
        hashes: OutputHashes,
        verified_at: String,
    ) -> Self {
        Self {
            kind: Self::KIND.to_owned(),
            schema_version: "execution-verification-v2".to_owned(),
            revision_id,
            attempt_id,
            request_hash,
            passed: verification.passed,
            checks: verification.checks.clone(),
            failed: verification.failed.clone(),
            analytical_hash: hashes.analytical,
            image_hash: hashes.image,
            environment_fingerprint: hashes.environment,
            verified_at,
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        }
    }
}

crate::record::impl_evidence_record!(
    ExecutionVerificationRecord,
    "execution_verification",
    EXECUTION_VERIFICATION_V2,
    EXECUTION_VERIFICATION_V1
);
