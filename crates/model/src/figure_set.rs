//! Figure sets: the same boxplot for every parameter of a dataset, drafted with one set of
//! shared answers (filters, treatment, visits, value, y-scale, low N) and each parameter's own
//! (unit, records per subject and visit), confirmed together as one revision per parameter.
//! Each figure keeps its own run, evidence and approval; the set only links them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    dataset::DatasetSummary,
    draft::{DraftAnswers, FieldError, Preview},
    records::RecordOption,
    revision::{ReviewState, RevisionSummary, RunStatus},
};

/// The answers a figure set's draft form sends about one parameter. The form lists every
/// parameter with a hidden `listed` field, so a parameter listed without `include` was unticked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberAnswers {
    /// Present when the form listed the parameter.
    #[serde(default)]
    pub listed: Option<String>,
    /// Present when its box is ticked.
    #[serde(default)]
    pub include: Option<String>,
    /// The unit (empty: as the data says).
    #[serde(default)]
    pub unit: Option<String>,
    /// `one`, `every` or `COLUMN=VALUE` (empty: as proposed for this parameter).
    #[serde(default)]
    pub records_per_subject_visit: Option<String>,
}

impl MemberAnswers {
    /// Whether the parameter is in the set: as ticked when the form listed it, else `default`.
    pub fn included(answers: Option<&Self>, default: bool) -> bool {
        match answers {
            Some(answers) if answers.listed.is_some() => answers.include.is_some(),
            _ => default,
        }
    }
}

/// Per parameter code, what the set's form answered.
pub type MemberAnswerMap = BTreeMap<String, MemberAnswers>;

/// One shared answer, as the set's draft page shows it once for every figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedAnswer {
    /// The question as asked.
    pub question: String,
    /// The answer in words.
    pub answer: String,
}

/// One parameter of a set's draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberDraft {
    /// The parameter code.
    pub code: String,
    /// Its label.
    pub label: String,
    /// Its category (PARCAT1), when the data says.
    #[serde(default)]
    pub category: Option<String>,
    /// Whether its code looks derived (not ticked unless the question asks for every one).
    pub derived_looking: bool,
    /// Whether it is in the set.
    pub included: bool,
    /// The unit as answered or derived (`none` for none).
    pub unit: String,
    /// The records-per-subject-and-visit answer as applied (empty when open).
    pub records_per_subject_visit: String,
    /// The record choices the data offers for this parameter (empty: one record each already).
    pub record_options: Vec<RecordOption>,
    /// What is still open or wrong for this parameter, per question.
    pub errors: Vec<FieldError>,
    /// Its small preview, when every answer holds.
    pub preview: Option<Preview>,
}

/// The set's draft page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetDraftView {
    /// The dataset.
    pub dataset: DatasetSummary,
    /// The question, verbatim.
    pub question: String,
    /// The shared answers as applied (what every figure gets).
    pub shared_answers: DraftAnswers,
    /// The shared questions with their answers, in words.
    pub shared: Vec<SharedAnswer>,
    /// What is wrong with the shared answers (none of the figures can be confirmed until fixed).
    pub shared_errors: Vec<FieldError>,
    /// The single-figure draft page with the shared answers, where they are changed.
    pub change_shared_href: String,
    /// Every parameter with numbers in the value variable, in code order.
    pub members: Vec<MemberDraft>,
    /// The set this draft re-runs on a newer data cut, if any.
    #[serde(default)]
    pub revises: Option<String>,
    /// The shared questions a re-run left open, and why.
    #[serde(default)]
    pub opened: Vec<String>,
}

impl SetDraftView {
    /// The parameters in the set that confirm as answered.
    pub fn ready(&self) -> usize {
        self.members
            .iter()
            .filter(|m| m.included && m.errors.is_empty())
            .count()
    }

    /// The parameters in the set.
    pub fn included(&self) -> usize {
        self.members.iter().filter(|m| m.included).count()
    }
}

/// What confirming a set did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SetConfirmOutcome {
    /// The set made (its page is opened).
    Created {
        /// `set-…`.
        set_id: String,
    },
    /// Refused; nothing was made. Per parameter code (`shared` for the shared answers), what
    /// is wrong.
    Refused {
        /// The problems.
        errors: Vec<(String, FieldError)>,
    },
}

/// One figure of a set, as the set's page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetMember {
    /// The parameter code.
    pub parameter: String,
    /// The revision.
    pub summary: RevisionSummary,
    /// Where its run stands.
    pub run: RunStatus,
    /// What the viewer may do about its review.
    pub review: ReviewState,
    /// The latest signature's decision, in words (`Approved by …`, `Changes requested by …`).
    pub last_decision: Option<String>,
    /// The revision it revises (in a set re-run on a newer data cut: the earlier cut's figure).
    #[serde(default)]
    pub parent: Option<String>,
    /// What changed per cell against the parent, once both are Verified, in words.
    #[serde(default)]
    pub changes: Option<String>,
}

/// How the figures of a set stand, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetSummary {
    /// Figures in the set.
    pub figures: usize,
    /// Draft, never run.
    pub open: usize,
    /// Queued or running.
    pub running: usize,
    /// The latest run failed.
    pub failed: usize,
    /// Verified, not yet approved.
    pub verified: usize,
    /// Approved.
    pub approved: usize,
    /// Verified, with changes requested.
    pub sent_back: usize,
}

/// A figure set's page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetView {
    /// `set-…`.
    pub id: String,
    /// The dataset's content hash.
    pub dataset_hash: String,
    /// The dataset's file name.
    pub dataset_name: String,
    /// The question the set was drafted from.
    pub question: String,
    /// Who made it.
    pub created_by: String,
    /// When (canonical UTC).
    pub created_at: String,
    /// The figures, in parameter order.
    pub members: Vec<SetMember>,
    /// The counts.
    pub summary: SetSummary,
    /// Whether the viewer may press Run all (an author, with a figure to run).
    pub can_run_all: bool,
    /// A fresh idempotency key for Run all.
    pub run_key: String,
    /// Whether the viewer's next signature opens a signing session (user name and password)
    /// rather than continuing one (password only).
    pub signing_needs_user_name: bool,
    /// The set this one re-runs on a newer data cut, if any.
    #[serde(default)]
    pub revises: Option<String>,
    /// A later delivery of the set's dataset, when there is one.
    #[serde(default)]
    pub newer_cut: Option<super::data_cut::NewerCut>,
    /// Whether the viewer may re-run the set on that newer cut (an author).
    #[serde(default)]
    pub can_rerun: bool,
}

impl SetSummary {
    /// The counts of `members`.
    pub fn of(members: &[SetMember]) -> Self {
        use super::revision::RevisionStatus;
        let mut summary = Self {
            figures: members.len(),
            ..Self::default()
        };
        for member in members {
            match (&member.summary.status, &member.run) {
                (RevisionStatus::Approved, _) => summary.approved += 1,
                (RevisionStatus::Verified, _)
                    if member
                        .last_decision
                        .as_deref()
                        .is_some_and(|d| d.starts_with("Changes requested")) =>
                {
                    summary.sent_back += 1
                }
                (RevisionStatus::Verified, _) => summary.verified += 1,
                (_, run) if run.is_moving() => summary.running += 1,
                (_, RunStatus::Failed { .. }) => summary.failed += 1,
                _ => summary.open += 1,
            }
        }
        summary
    }

    /// The counts in words, e.g. `18 figures: 17 approved, 1 sent back`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            (self.approved, "approved"),
            (self.verified, "verified, waiting for a signature"),
            (self.sent_back, "sent back"),
            (self.running, "running"),
            (self.failed, "failed"),
            (self.open, "not run yet"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        format!(
            "{} figure{}: {}",
            self.figures,
            if self.figures == 1 { "" } else { "s" },
            parts.join(", ")
        )
    }
}
