//! Confirmation questions as data the UI and the CLI ask: the question, the proposed answer, the
//! allowed answers and why it is asked; the refusal of an answer. Asking them and applying an
//! answer to a draft is the engine's (`question::confirmation`).

use serde::{Deserialize, Serialize};

use super::records::RecordOption;

/// The answers a question allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AllowedAnswers {
    /// Exactly one of these.
    OneOf {
        /// The choices.
        choices: Vec<String>,
    },
    /// An ordered list of distinct items taken from these (a JSON array, or items joined by `|`).
    OrderedSubsetOf {
        /// The items.
        items: Vec<String>,
    },
    /// A whole number in a range.
    WholeNumber {
        /// Smallest allowed.
        min: usize,
        /// Largest allowed.
        max: usize,
    },
    /// Record filters as a JSON object `{"COLUMN": ["value", …]}`, or `none`.
    Filters {
        /// Columns that can be filtered on.
        columns: Vec<String>,
    },
    /// Any non-empty text (`none` for no value where the question says so).
    Text,
    /// One of the ways to keep one record per subject and visit found in the data
    /// (`COLUMN=VALUE`), `every`, or another `COLUMN=VALUE`.
    RecordChoice {
        /// The options, each with what it does to the selection.
        options: Vec<RecordOption>,
    },
}

/// A choice shown but not allowed, with the reason (e.g. a parameter without numbers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnavailableChoice {
    /// The choice.
    pub choice: String,
    /// Why it cannot be chosen.
    pub reason: String,
}

/// One question the user answers or accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmationQuestion {
    /// Identifier used with `--set ID=ANSWER`.
    pub id: String,
    /// The question as asked.
    pub question: String,
    /// The proposed answer, in the answer syntax; `None` when nothing is proposed and the
    /// question must be answered before the spec can be confirmed.
    pub proposed: Option<String>,
    /// What may be answered.
    pub allowed: AllowedAnswers,
    /// Choices that exist in the data but cannot be taken, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<UnavailableChoice>,
    /// Why it is asked.
    pub why: String,
}

/// An answer that does not fit its question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// No question has this id.
    #[error("there is no confirmation question {id:?}; the questions are: {known}")]
    UnknownQuestion {
        /// The id given.
        id: String,
        /// The ids that exist.
        known: String,
    },
    /// The answer has the wrong form.
    #[error("answer {answer:?} to {id}: {reason}")]
    Malformed {
        /// The question id.
        id: String,
        /// The answer given.
        answer: String,
        /// What is wrong.
        reason: String,
    },
}

/// The question ids, in the order questions are asked and answers applied.
pub const QUESTION_IDS: [&str; 13] = [
    "parameter",
    "filters",
    "treatment_variable",
    "treatment_levels",
    "value_variable",
    "visit_variable",
    "visits",
    "records_per_subject_visit",
    "y_scale",
    "unit",
    "low_n_threshold",
    "low_n_action",
    "title",
];
