//! Several records per subject and visit: what the selection holds (how many subject × visit
//! combinations have more than one record) and the ways to keep one, each with what it would
//! do, as the "Which record per subject and visit?" question offers them. Computed from the
//! records by `crate::ingest::records`.

use serde::{Deserialize, Serialize};

use super::spec::RecordsPerSubjectVisit;

/// One way to answer "Which record per subject and visit?", with what it does to the selection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordOption {
    /// The answer, in the answer syntax: `COLUMN=VALUE` or `every`.
    pub answer: String,
    /// What it keeps, in words.
    pub description: String,
    /// Of the subject × visit combinations with several records, how many this leaves with one.
    pub resolves: usize,
    /// Subject × visit combinations that would still have several records.
    pub still_several: usize,
    /// Subject × visit combinations that would lose every record.
    pub subject_visits_lost: usize,
    /// Of those, baseline ones.
    pub baseline_lost: usize,
}

impl RecordOption {
    /// Leaves one record per subject × visit without losing a baseline.
    pub fn settles_it(&self) -> bool {
        self.still_several == 0 && self.baseline_lost == 0
    }
}

/// The selection's records per subject × visit (after the parameter, filters, treatment levels
/// and visits; before any record choice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordsAnalysis {
    /// Subject × visit combinations in the selection.
    pub subject_visits: usize,
    /// Of those, combinations with more than one record.
    pub with_several: usize,
    /// Records in the selection.
    pub records: usize,
    /// Some of the combinations with several records, as "subject / visit: n records".
    pub examples: Vec<String>,
    /// The columns whose values tell the records apart, one option per value, then `every`.
    pub options: Vec<RecordOption>,
    /// The proposed answer: an analysis flag that settles it, else DTYPE = AVERAGE when that
    /// does, else none (the question stays open).
    pub proposal: Option<RecordsPerSubjectVisit>,
    /// Why that proposal, or why none.
    pub why: String,
}

impl RecordsAnalysis {
    /// A selection with one record per subject × visit: nothing to ask.
    pub fn one_each(subject_visits: usize, records: usize) -> Self {
        Self {
            subject_visits,
            with_several: 0,
            records,
            examples: Vec::new(),
            options: Vec::new(),
            proposal: Some(RecordsPerSubjectVisit::One),
            why: "the selection holds one record per subject and visit".to_owned(),
        }
    }
}
