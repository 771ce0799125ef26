//! Several records per subject and visit: what the selection holds (how many subject × visit
//! combinations have more than one record) and the ways to keep one, each with what it would
//! do, as the "Which record per subject and visit?" question offers them. Computed from the
//! records by `crate::ingest::records`.

use serde::{Deserialize, Serialize};

use super::spec::RecordsPerSubjectVisit;

/// One way to answer "Which record per subject and visit?", with what it does to the selection.
/// Answers that keep exactly the same records are one option: the most telling of them is the
/// answer, the others are its aliases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordOption {
    /// The answer, in the answer syntax: `COLUMN=VALUE` or `every`.
    pub answer: String,
    /// What it keeps, in words.
    pub description: String,
    /// Other `COLUMN=VALUE` answers that keep exactly the same records (e.g. `DOMAIN=` beside
    /// `DTYPE=AVERAGE` when only the derived records lack a domain), most telling first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
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

    /// Whether `answer` is this option: its answer or one of its aliases.
    pub fn stands_for(&self, answer: &str) -> bool {
        self.answer == answer || self.aliases.iter().any(|alias| alias == answer)
    }

    /// The aliases as shown under the option: "also: DOMAIN blank, VISIT blank"; `None` when
    /// there are none.
    pub fn aliases_in_words(&self) -> Option<String> {
        (!self.aliases.is_empty()).then(|| {
            let words: Vec<String> = self
                .aliases
                .iter()
                .map(|alias| record_choice_in_words(alias))
                .collect();
            format!("also: {}", words.join(", "))
        })
    }
}

/// A `COLUMN=VALUE` answer in words: "DTYPE = AVERAGE", or "ATPT blank" for an empty value.
pub fn record_choice_in_words(answer: &str) -> String {
    match answer.split_once('=') {
        Some((column, "")) => format!("{column} blank"),
        Some((column, value)) => format!("{column} = {value}"),
        None => answer.to_owned(),
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
    /// The ways to keep one record, one option per distinct set of records kept (the proposal
    /// first), then `every`.
    pub options: Vec<RecordOption>,
    /// The proposed answer, always an option's own answer: the option an analysis flag = Y
    /// keeps the records of, when it settles it; else the one DTYPE = AVERAGE keeps the records
    /// of, when that settles it; else none (the question stays open).
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
