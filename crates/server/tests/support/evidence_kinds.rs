//! The evidence records a revision has, in ledger order, as the tests expect them.
#![allow(dead_code)] // each test file uses some of these

/// A revision made and promoted to Verified by one passing attempt.
pub const VERIFIED: [&str; 8] = [
    "execution_request",
    "revision_lifecycle",
    "execution_attempt",
    "execution_verification",
    "artifact_bundle",
    "execution_attempt",
    "revision_lifecycle",
    "revision_context",
];

/// A Draft revision whose one attempt failed its verification.
pub const FAILED_ATTEMPT: [&str; 5] = [
    "execution_request",
    "revision_lifecycle",
    "execution_attempt",
    "execution_verification",
    "execution_attempt",
];

/// A Draft revision whose attempt was ended by reconciliation (no verification made).
pub const RECONCILED_ATTEMPT: [&str; 4] = [
    "execution_request",
    "revision_lifecycle",
    "execution_attempt",
    "execution_attempt",
];
