//! A person's work list, the home page of a signed-in account: what waits for them, in named
//! sections with their counts, each row a revision as the history shows it.

use serde::{Deserialize, Serialize};

use crate::revision::HistoryRow;

/// What a section of the work list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkKind {
    /// The viewer's Draft revisions with no run under way (not Experimental/Draft ones, which
    /// never run).
    MyDrafts,
    /// Revisions with a run queued or under way (anyone's: the team's runs).
    RunsInProgress,
    /// Verified revisions the viewer may sign: made by someone else, not yet signed or sent
    /// back (reviewers only).
    AwaitingMySignature,
    /// The viewer's Verified revisions a reviewer sent back (changes requested), not yet
    /// revised.
    SentBackToMe,
    /// Approved revisions, newest first.
    RecentlyApproved,
    /// The viewer's revisions whose dataset has a newer delivery: an upload with the same
    /// dataset name (a CSV file, which has none: the same file name), other bytes, later.
    NewerDataCut,
}

impl WorkKind {
    /// Every section, in the order the page shows them.
    pub const ALL: [WorkKind; 6] = [
        WorkKind::AwaitingMySignature,
        WorkKind::SentBackToMe,
        WorkKind::MyDrafts,
        WorkKind::RunsInProgress,
        WorkKind::NewerDataCut,
        WorkKind::RecentlyApproved,
    ];

    /// The section's heading.
    pub fn heading(self) -> &'static str {
        match self {
            WorkKind::MyDrafts => "My drafts",
            WorkKind::RunsInProgress => "Runs in progress",
            WorkKind::AwaitingMySignature => "Waiting for my signature",
            WorkKind::SentBackToMe => "Sent back to me",
            WorkKind::RecentlyApproved => "Recently approved",
            WorkKind::NewerDataCut => "Made on data that has a newer cut",
        }
    }

    /// What the section means, in one sentence.
    pub fn description(self) -> &'static str {
        match self {
            WorkKind::MyDrafts => "Draft revisions you made that are not running: run them.",
            WorkKind::RunsInProgress => "Runs queued or under way, anyone's.",
            WorkKind::AwaitingMySignature => {
                "Verified revisions made by someone else that nobody has signed or sent back yet."
            }
            WorkKind::SentBackToMe => {
                "Your Verified revisions a reviewer sent back with changes requested, not yet revised."
            }
            WorkKind::RecentlyApproved => "Approved revisions, anyone's, newest made first.",
            WorkKind::NewerDataCut => {
                "Your revisions whose dataset was delivered again later: same dataset name (for a CSV file, the same file name), other bytes."
            }
        }
    }

    /// The history's filters that list the same revisions, where they can say it: the status,
    /// and whether only the viewer's own.
    pub fn history_filter(self) -> Option<(&'static str, bool)> {
        match self {
            WorkKind::MyDrafts => Some(("draft", true)),
            WorkKind::AwaitingMySignature => Some(("verified", false)),
            WorkKind::RecentlyApproved => Some(("approved", false)),
            _ => None,
        }
    }

    /// The section's name in addresses and element ids.
    pub fn key(self) -> &'static str {
        match self {
            WorkKind::MyDrafts => "my-drafts",
            WorkKind::RunsInProgress => "runs-in-progress",
            WorkKind::AwaitingMySignature => "awaiting-my-signature",
            WorkKind::SentBackToMe => "sent-back-to-me",
            WorkKind::RecentlyApproved => "recently-approved",
            WorkKind::NewerDataCut => "newer-data-cut",
        }
    }
}

/// One section: how many revisions it holds and the newest of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkSection {
    /// What it holds.
    pub kind: WorkKind,
    /// How many revisions it holds in all.
    pub count: usize,
    /// The newest of them (at most [`WORK_ROWS`]).
    pub rows: Vec<HistoryRow>,
}

/// Rows shown per section.
pub const WORK_ROWS: usize = 8;

/// The work list of one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkList {
    /// Whose list it is (account name).
    pub viewer: String,
    /// The sections that apply to the viewer, in [`WorkKind::ALL`] order.
    pub sections: Vec<WorkSection>,
}
