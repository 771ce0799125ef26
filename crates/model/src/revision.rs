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

impl RevisionStatus {
    /// The status in words, as the badge shows it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Draft => "Draft",
            Self::ExperimentalDraft => "Experimental/Draft",
            Self::Verified => "Verified",
            Self::Approved => "Approved",
        }
    }
}

/// Where a revision's governed execution stands, as the live status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RunStatus {
    /// No attempt yet.
    NotRun,
    /// Free y-scales: a preview only, never executed.
    NotExecutable,
    /// Waiting for a runner.
    Queued {
        /// The attempt.
        attempt_id: String,
        /// 1 for the next to run.
        position: usize,
        /// Why it is queued again, after a runner was lost.
        #[serde(default)]
        requeued_because: Option<String>,
    },
    /// A runner prepares the inputs, or R is running.
    Running {
        /// The attempt.
        attempt_id: String,
        /// Since the runner claimed it.
        elapsed_seconds: u64,
        /// Which runner (host, process and runner number).
        #[serde(default)]
        runner: Option<String>,
        /// Which try: 2 and up after a lost runner.
        #[serde(default)]
        claim: u32,
    },
    /// R has ended; the checks run.
    Verifying {
        /// The attempt.
        attempt_id: String,
        /// Since the runner claimed it.
        elapsed_seconds: u64,
        /// Which runner (host, process and runner number).
        #[serde(default)]
        runner: Option<String>,
        /// Which try: 2 and up after a lost runner.
        #[serde(default)]
        claim: u32,
    },
    /// An attempt is active elsewhere (another process, e.g. the command line).
    Active {
        /// The attempt.
        attempt_id: String,
    },
    /// Verified (or approved since).
    Verified,
    /// The latest attempt failed.
    Failed {
        /// The attempt.
        attempt_id: String,
        /// Why.
        reason: String,
    },
}

impl RunStatus {
    /// Whether the status can still change without a new request.
    pub fn is_moving(&self) -> bool {
        matches!(
            self,
            Self::Queued { .. }
                | Self::Running { .. }
                | Self::Verifying { .. }
                | Self::Active { .. }
        )
    }

    /// The status in words.
    pub fn describe(&self) -> String {
        match self {
            Self::NotRun => "Not run yet".to_owned(),
            Self::NotExecutable => {
                "Not executable: free y-scales make this an Experimental/Draft revision".to_owned()
            }
            Self::Queued {
                position,
                requeued_because,
                ..
            } => match requeued_because {
                Some(why) => format!("Queued again (position {position}): {why}"),
                None => format!("Queued (position {position})"),
            },
            Self::Running {
                elapsed_seconds,
                runner,
                claim,
                ..
            } => format!(
                "Running ({elapsed_seconds} s){}",
                where_and_which_try(runner.as_deref(), *claim)
            ),
            Self::Verifying {
                elapsed_seconds,
                runner,
                claim,
                ..
            } => format!(
                "Verifying ({elapsed_seconds} s){}",
                where_and_which_try(runner.as_deref(), *claim)
            ),
            Self::Active { attempt_id } => format!("Running elsewhere (attempt {attempt_id})"),
            Self::Verified => "Verified".to_owned(),
            Self::Failed { reason, .. } => format!("Failed: {reason}"),
        }
    }
}

/// " on RUNNER", and ", try N" from the second try on (after a lost or stopped runner).
fn where_and_which_try(runner: Option<&str>, claim: u32) -> String {
    let mut text = runner.map(|r| format!(" on {r}")).unwrap_or_default();
    if claim > 1 {
        text.push_str(&format!(", try {claim}"));
    }
    text
}

/// One revision in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionSummary {
    /// `rev-…`.
    pub id: String,
    /// Its status.
    pub status: RevisionStatus,
    /// Its version.
    pub version: i64,
    /// The question.
    pub question: String,
    /// The title.
    pub title: String,
    /// Who made it.
    pub author: String,
    /// When (canonical UTC).
    pub created_at: String,
    /// The spec hash.
    pub spec_hash: String,
}

/// One check of the verification, as the page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckView {
    /// Its name.
    pub name: String,
    /// Passed.
    pub passed: bool,
    /// Why it failed (or what it found).
    pub reason: Option<String>,
}

/// One evidence record of a revision, in ledger order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceView {
    /// Ledger position.
    pub seq: i64,
    /// Its kind.
    pub kind: String,
    /// A line on what it says.
    pub summary: String,
    /// Its self-hash.
    pub record_hash: String,
    /// Its canonical JSON.
    pub canonical_json: String,
}

/// A downloadable artifact of a revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactView {
    /// `script.R`, `snapshot.csv`, `statistics.json`, `plot.png`, `environment.json`.
    pub name: String,
    /// SHA-256 (its name in the store).
    pub sha256: String,
    /// Bytes.
    pub size: u64,
}

/// Everything the revision page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisionDetail {
    /// The revision.
    pub summary: RevisionSummary,
    /// The dataset's content hash.
    pub dataset_hash: String,
    /// Where its execution stands.
    pub run: RunStatus,
    /// The preview (until Verified).
    pub preview: Option<super::draft::Preview>,
    /// The statistics R reported (once Verified): per cell.
    pub statistics: Vec<super::statistics::CellStatistics>,
    /// The latest verification's checks.
    pub checks: Vec<CheckView>,
    /// The script.
    pub script: String,
    /// The artifacts: script and snapshot always, the outputs once Verified.
    pub artifacts: Vec<ArtifactView>,
    /// The environment (R, packages, fonts) as R reported it, pretty-printed.
    pub environment: Option<String>,
    /// The evidence records about the revision.
    pub evidence: Vec<EvidenceView>,
    /// Whether the viewer may start a run (an author, on a Draft revision).
    pub can_run: bool,
    /// A fresh idempotency key for this page's Run form.
    pub run_key: String,
    /// The signatures on it, oldest first.
    pub signatures: Vec<SignatureView>,
    /// Its reproductions, oldest first.
    pub reproductions: Vec<ReproductionView>,
    /// What the viewer may do about its review.
    pub review: ReviewState,
    /// The revision it revises.
    pub parent: Option<String>,
    /// The revisions that revise it.
    pub children: Vec<String>,
    /// The draft page that revises it (authors), with its answers.
    pub revise_href: Option<String>,
    /// The confirmed answers (what "Revise" starts from).
    pub answers: super::draft::DraftAnswers,
    /// Every attempt to sign it, good or bad, from the security log.
    pub signing_attempts: Vec<SigningAttempt>,
    /// A later delivery of its dataset, when there is one ("Re-run on the new data").
    #[serde(default)]
    pub newer_cut: Option<super::data_cut::NewerCut>,
}

/// One attempt to sign a revision, as the security log recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigningAttempt {
    /// When (canonical UTC).
    pub at: String,
    /// The account.
    pub account: String,
    /// `success` or `failure`.
    pub outcome: String,
    /// What happened (e.g. `wrong password`, `approved (responsible)`).
    pub detail: String,
}

/// One signature as pages and bundles show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureView {
    /// The printed name.
    pub printed_name: String,
    /// The account name.
    pub account_name: String,
    /// When (canonical UTC).
    pub signed_at: String,
    /// `approved` or `changes_requested`.
    pub decision: String,
    /// `reviewed`, `approved`, `responsible` (approvals).
    pub meaning: Option<String>,
    /// The comment.
    pub comment: Option<String>,
    /// The version signed.
    pub revision_version: i64,
    /// The record's hash.
    pub record_hash: String,
    /// When the signer last chose their own password (canonical UTC; none in records made
    /// before adamviz recorded it).
    #[serde(default)]
    pub password_chosen_at: Option<String>,
    /// When someone other than the signer last set the signer's password before signing, if
    /// anyone did (records from `approval-v3`).
    #[serde(default)]
    pub password_reset_at: Option<String>,
    /// Who set it (an administrator's account name, or `command line: <user>`).
    #[serde(default)]
    pub password_reset_by: Option<String>,
    /// When the reviewer role the signer signed under was granted (canonical UTC).
    #[serde(default)]
    pub reviewer_granted_at: Option<String>,
    /// Who granted it.
    #[serde(default)]
    pub reviewer_granted_by: Option<String>,
}

/// One reproduction as the revision page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReproductionView {
    /// When (canonical UTC).
    pub reproduced_at: String,
    /// Who asked.
    pub by: String,
    /// `reproduced` or `failed`.
    pub outcome: String,
    /// The environment fingerprints match.
    pub same_environment: bool,
    /// The parts of the environment that differ.
    pub environment_differences: Vec<String>,
    /// Why it failed.
    pub failures: Vec<String>,
    /// The record's hash.
    pub record_hash: String,
}

/// What the viewer may do about a revision's review, and why not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewState {
    /// A reviewer other than the author, on a Verified revision, not locked.
    pub can_sign: bool,
    /// Why a reviewer cannot sign (their own revision, the lock), or what signing needs.
    pub sign_note: Option<String>,
    /// An author or reviewer, on a Verified or Approved revision.
    pub can_reproduce: bool,
    /// The head of the revision's evidence (the signature binds it).
    pub evidence_head: String,
    /// Whether the viewer's next signature is the first of a signing session, so the form asks
    /// for the user name as well as the password (21 CFR 11.200(a)(1)).
    #[serde(default)]
    pub first_signature_of_session: bool,
}

/// The history's filters and page (the page's address).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryQuery {
    /// `draft`, `experimental_draft`, `verified` or `approved`.
    #[serde(default)]
    pub status: Option<String>,
    /// A dataset's content hash.
    #[serde(default)]
    pub dataset: Option<String>,
    /// An author's account name.
    #[serde(default)]
    pub author: Option<String>,
    /// `revised_for_newer_cut` (revisions that re-run an earlier one on a newer data cut) or
    /// `approved_on_older_cut` (Approved revisions whose dataset has a newer cut).
    #[serde(default)]
    pub cut: Option<String>,
    /// 1-based.
    #[serde(default)]
    pub page: Option<usize>,
}

/// One revision in the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRow {
    /// `rev-…`.
    pub id: String,
    /// Its status.
    pub status: RevisionStatus,
    /// Its version.
    pub version: i64,
    /// The dataset's file name.
    pub dataset_name: String,
    /// The dataset's content hash.
    pub dataset_hash: String,
    /// The parameter code (or `all`).
    pub parameter: String,
    /// The question.
    pub question: String,
    /// The title.
    pub title: String,
    /// Who made it.
    pub author: String,
    /// Who approved it (printed name), once Approved.
    pub approver: Option<String>,
    /// When it was made (canonical UTC).
    pub created_at: String,
    /// The revision it revises.
    pub parent: Option<String>,
}

/// One page of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryPage {
    /// The revisions on this page, newest first.
    pub rows: Vec<HistoryRow>,
    /// Revisions matching the filters.
    pub total: usize,
    /// This page (1-based).
    pub page: usize,
    /// Pages in all (at least 1).
    pub pages: usize,
    /// The filters applied.
    pub query: HistoryQuery,
    /// Every author, for the filter.
    pub authors: Vec<String>,
    /// Every dataset with revisions: content hash and file name, for the filter.
    pub datasets: Vec<(String, String)>,
}

/// One answer that differs between two revisions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerDifference {
    /// The question in words.
    pub question: String,
    /// The first revision's answer.
    pub a: String,
    /// The second's.
    pub b: String,
}

/// One cell's statistics in two revisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellDifference {
    /// The treatment.
    pub treatment: String,
    /// The visit.
    pub visit: String,
    /// Records (first, second).
    pub n: (Option<usize>, Option<usize>),
    /// Means (first, second).
    pub mean: (Option<f64>, Option<f64>),
    /// Medians (first, second).
    pub median: (Option<f64>, Option<f64>),
    /// First quartiles (first, second).
    #[serde(default)]
    pub q1: (Option<f64>, Option<f64>),
    /// Third quartiles (first, second).
    #[serde(default)]
    pub q3: (Option<f64>, Option<f64>),
    /// What happened to the cell.
    #[serde(default)]
    pub change: CellChange,
}

/// What happened to one cell between two revisions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellChange {
    /// N, mean, median and quartiles are the same.
    #[default]
    Same,
    /// In both, with another N, mean, median or quartile.
    Changed,
    /// Only in the second.
    New,
    /// Only in the first.
    Dropped,
}

impl CellChange {
    /// In words, as the comparison's table says it.
    pub fn words(self) -> &'static str {
        match self {
            Self::Same => "same",
            Self::Changed => "changed",
            Self::New => "new cell",
            Self::Dropped => "dropped cell",
        }
    }
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompareSide {
    /// `rev-…`.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its status.
    pub status: RevisionStatus,
    /// Its version.
    pub version: i64,
    /// The PNG's hash, once Verified.
    pub plot_sha256: Option<String>,
}

/// Two revisions side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The first (older) revision.
    pub a: CompareSide,
    /// The second.
    pub b: CompareSide,
    /// The answers that differ.
    pub answers: Vec<AnswerDifference>,
    /// Every cell of either, in the second's order then the first's.
    pub cells: Vec<CellDifference>,
}

impl Comparison {
    /// The cells that are not the same (changed, new or dropped).
    pub fn differing(&self) -> impl Iterator<Item = &CellDifference> {
        self.cells.iter().filter(|c| c.change != CellChange::Same)
    }

    /// `k of n cells differ (c changed, a new, d dropped)`, or that none does.
    pub fn describe_changes(&self) -> String {
        let count = |kind: CellChange| self.cells.iter().filter(|c| c.change == kind).count();
        let differing = self.differing().count();
        if differing == 0 {
            return format!("All {} cells are the same.", self.cells.len());
        }
        format!(
            "{differing} of {} cells differ: {} changed, {} new, {} dropped.",
            self.cells.len(),
            count(CellChange::Changed),
            count(CellChange::New),
            count(CellChange::Dropped)
        )
    }
}
