//! A revision's status: the states a governed plot moves through.

use serde::{Deserialize, Serialize};

/// A revision's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevisionStatus {
    /// Fixed scales, not yet verified: governed execution may start.
    Draft,
    /// Free scales: preview only, never Verified.
    ExperimentalDraft,
    /// Promoted through passing verification and an accepted bundle.
    Verified,
    /// Approved by a second person (a later capability).
    Approved,
}

impl RevisionStatus {
    /// The stored form (also the serialized one).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::ExperimentalDraft => "experimental_draft",
            Self::Verified => "verified",
            Self::Approved => "approved",
        }
    }

    /// The status stored as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Draft,
            Self::ExperimentalDraft,
            Self::Verified,
            Self::Approved,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}
