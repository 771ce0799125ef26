//! Every kind of ledger record behind one entry point: [`verify_stored`] reads stored bytes of
//! a named kind through the typed two-step verification of that kind (schema, type, canonical
//! form, self-hash, chain link); [`check_schema_and_type_of`] makes only the first two checks,
//! for `adamviz ledger verify`, whose chain pass makes the others.

use super::{
    approval::ApprovalRecord,
    artifact_bundle::ArtifactBundleRecord,
    execution_attempt::ExecutionAttemptRecord,
    execution_request::ExecutionRequest,
    execution_verification::ExecutionVerificationRecord,
    record::{check_schema_and_type, EvidenceError, EvidenceRecord, Unverified, Verified},
    reproduction::ReproductionRecord,
    revision_context::RevisionContextRecord,
    revision_lifecycle::RevisionLifecycleRecord,
};
use adamviz_model::digest::Sha256Digest;

/// A verified record of any kind.
// Records are read one at a time and matched at once; boxing them would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum AnyRecord {
    /// `execution_request`.
    Request(Verified<ExecutionRequest>),
    /// `execution_attempt`.
    Attempt(Verified<ExecutionAttemptRecord>),
    /// `execution_verification`.
    Verification(Verified<ExecutionVerificationRecord>),
    /// `artifact_bundle`.
    Bundle(Verified<ArtifactBundleRecord>),
    /// `revision_lifecycle`.
    Lifecycle(Verified<RevisionLifecycleRecord>),
    /// `revision_context`.
    Context(Verified<RevisionContextRecord>),
    /// `approval`.
    Approval(Verified<ApprovalRecord>),
    /// `reproduction`.
    Reproduction(Verified<ReproductionRecord>),
}

/// Every kind adamviz writes.
pub const KINDS: [&str; 8] = [
    ExecutionRequest::KIND,
    ExecutionAttemptRecord::KIND,
    ExecutionVerificationRecord::KIND,
    ArtifactBundleRecord::KIND,
    RevisionLifecycleRecord::KIND,
    RevisionContextRecord::KIND,
    ApprovalRecord::KIND,
    ReproductionRecord::KIND,
];

/// Why a stored record did not verify.
#[derive(Debug, thiserror::Error)]
pub enum StoredRecordError {
    /// The kind is not one adamviz writes.
    #[error("unknown record kind {0:?}")]
    UnknownKind(String),
    /// The record of a known kind did not verify.
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
}

fn verify<T: EvidenceRecord>(
    bytes: &[u8],
    previous: &Sha256Digest,
) -> Result<Verified<T>, EvidenceError> {
    Unverified::<T>::parse(bytes)?.verify(previous)
}

/// Verifies `bytes`, stored as a record of `kind`, as the successor of `previous`.
pub fn verify_stored(
    kind: &str,
    bytes: &[u8],
    previous: &Sha256Digest,
) -> Result<AnyRecord, StoredRecordError> {
    Ok(match kind {
        ExecutionRequest::KIND => AnyRecord::Request(verify(bytes, previous)?),
        ExecutionAttemptRecord::KIND => AnyRecord::Attempt(verify(bytes, previous)?),
        ExecutionVerificationRecord::KIND => AnyRecord::Verification(verify(bytes, previous)?),
        ArtifactBundleRecord::KIND => AnyRecord::Bundle(verify(bytes, previous)?),
        RevisionLifecycleRecord::KIND => AnyRecord::Lifecycle(verify(bytes, previous)?),
        RevisionContextRecord::KIND => AnyRecord::Context(verify(bytes, previous)?),
        ApprovalRecord::KIND => AnyRecord::Approval(verify(bytes, previous)?),
        ReproductionRecord::KIND => AnyRecord::Reproduction(verify(bytes, previous)?),
        other => return Err(StoredRecordError::UnknownKind(other.to_owned())),
    })
}

/// The schema and type checks of `kind` on a parsed record (the rest of [`verify_stored`] is
/// the chain check, which `store::ledger::verify_ledger_with` has made already).
pub fn check_schema_and_type_of(
    kind: &str,
    value: &serde_json::Value,
) -> Result<(), StoredRecordError> {
    match kind {
        ExecutionRequest::KIND => check_schema_and_type::<ExecutionRequest>(value).map(drop),
        ExecutionAttemptRecord::KIND => {
            check_schema_and_type::<ExecutionAttemptRecord>(value).map(drop)
        }
        ExecutionVerificationRecord::KIND => {
            check_schema_and_type::<ExecutionVerificationRecord>(value).map(drop)
        }
        ArtifactBundleRecord::KIND => {
            check_schema_and_type::<ArtifactBundleRecord>(value).map(drop)
        }
        RevisionLifecycleRecord::KIND => {
            check_schema_and_type::<RevisionLifecycleRecord>(value).map(drop)
        }
        RevisionContextRecord::KIND => {
            check_schema_and_type::<RevisionContextRecord>(value).map(drop)
        }
        ApprovalRecord::KIND => check_schema_and_type::<ApprovalRecord>(value).map(drop),
        ReproductionRecord::KIND => check_schema_and_type::<ReproductionRecord>(value).map(drop),
        other => return Err(StoredRecordError::UnknownKind(other.to_owned())),
    }
    .map_err(StoredRecordError::from)
}
