//! `approval` (schema `approval-v1`): an electronic signature on a Verified revision, in the
//! manner 21 CFR Part 11 asks of one: who signed (id, printed name, roles at signing), when,
//! what the signature means, the decision, and what was signed (the revision's version and the
//! head of its evidence at that moment). The signer re-entered the password to make it.

use serde::{Deserialize, Serialize};

use super::{
    record::EvidenceRecord,
    schemas::{APPROVAL_V1, APPROVAL_V2, APPROVAL_V3},
};
use adamviz_model::{digest::Sha256Digest, ids::RevisionId};

/// What the signer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Approved: the revision moves to Approved.
    Approved,
    /// Changes requested (with a comment): the revision stays Verified.
    ChangesRequested,
}

/// What an approving signature means (21 CFR 11.50(a)(3)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureMeaning {
    /// The signer reviewed it.
    Reviewed,
    /// The signer approves it.
    Approved,
    /// The signer takes responsibility for it.
    Responsible,
}

impl SignatureMeaning {
    /// Every meaning, in the order the form offers them.
    pub const ALL: [Self; 3] = [Self::Reviewed, Self::Approved, Self::Responsible];

    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reviewed => "reviewed",
            Self::Approved => "approved",
            Self::Responsible => "responsible",
        }
    }

    /// The meaning stored as `text`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// Who signed, as they were at signing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signer {
    /// The account's id.
    pub account_id: i64,
    /// The account's name.
    pub account_name: String,
    /// The name printed with the signature.
    pub printed_name: String,
    /// The account's roles at signing.
    pub roles: Vec<String>,
    /// When the signer last chose their own password (from `approval-v2`): a password an
    /// administrator set cannot sign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_chosen_at: Option<String>,
    /// When someone other than the signer last set the signer's password (an administrator's
    /// reset, the command line), if anyone ever did (from `approval-v3`): a signature soon
    /// after is one `ledger verify` asks a reviewer to look at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_reset_at: Option<String>,
    /// Who set it then (from `approval-v3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_reset_by: Option<String>,
    /// When the reviewer role the signer signed under was granted (from `approval-v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_granted_at: Option<String>,
    /// Who granted it (from `approval-v2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_granted_by: Option<String>,
}

/// The record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRecord {
    /// Always `approval`.
    pub kind: String,
    /// `approval-v3` when written (`approval-v2`, `approval-v1` in older records).
    pub schema_version: String,
    /// The revision signed.
    pub revision_id: RevisionId,
    /// Its version when signed.
    pub revision_version: i64,
    /// The decision.
    pub decision: Decision,
    /// What the signature means (approvals only).
    pub meaning: Option<SignatureMeaning>,
    /// Why changes are requested (required then), or a note.
    pub comment: Option<String>,
    /// Who signed.
    pub signer: Signer,
    /// When (canonical UTC).
    pub signed_at: String,
    /// The hash of the revision's latest record before this one.
    pub evidence_head: Sha256Digest,
    /// The predecessor's hash.
    pub previous_hash: Sha256Digest,
    /// The self-hash.
    pub record_hash: Sha256Digest,
}

/// What a signature says, before it is sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The revision.
    pub revision_id: RevisionId,
    /// Its version when signed.
    pub revision_version: i64,
    /// The decision.
    pub decision: Decision,
    /// The meaning (approvals).
    pub meaning: Option<SignatureMeaning>,
    /// The comment.
    pub comment: Option<String>,
    /// Who.
    pub signer: Signer,
    /// The revision's evidence head.
    pub evidence_head: Sha256Digest,
}

impl ApprovalRecord {
    /// `signature` made at `signed_at`, not yet sealed.
    pub fn new(signature: Signature, signed_at: String) -> Self {
        Self {
            kind: Self::KIND.to_owned(),
            schema_version: "approval-v3".to_owned(),
            revision_id: signature.revision_id,
            revision_version: signature.revision_version,
            decision: signature.decision,
            meaning: signature.meaning,
            comment: signature.comment,
            signer: signature.signer,
            signed_at,
            evidence_head: signature.evidence_head,
            previous_hash: Sha256Digest::from_bytes([0; 32]),
            record_hash: Sha256Digest::from_bytes([0; 32]),
        }
    }
}

crate::record::impl_evidence_record!(
    ApprovalRecord,
    "approval",
    APPROVAL_V3,
    APPROVAL_V2,
    APPROVAL_V1
);
