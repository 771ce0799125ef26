//! The plot spec: every choice that changes the boxplot, from the dataset it reads to the title
//! it carries. A spec starts as a `draft` proposed from the user's question and becomes
//! `confirmed` (frozen) once every confirmation question has an answer; the spec hash is the
//! SHA-256 of the confirmed spec's RFC 8785 canonical JSON.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::digest::Sha256Digest;

/// Draft (still being answered) or confirmed (frozen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecState {
    /// Proposed; answers may still change it.
    Draft,
    /// Frozen: validated against the data, hashed, ready to compile.
    Confirmed,
}

/// The parameter plotted: records where `column` equals `value` (e.g. PARAMCD = ALT).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParameterChoice {
    /// The parameter code column.
    pub column: String,
    /// The code.
    pub value: String,
    /// The parameter's label, as the data gives it (for titles and reviewers).
    pub label: Option<String>,
}

/// Keeps the records whose `column` is one of `values`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordFilter {
    /// The column.
    pub column: String,
    /// The values kept.
    pub values: Vec<String>,
}

/// The treatment variable and its levels, in panel order; records of other levels are dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreatmentChoice {
    /// The column, e.g. TRTA.
    pub column: String,
    /// The levels kept, in order.
    pub levels: Vec<String>,
}

/// Where the visit order comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum VisitOrderSource {
    /// A numeric column (e.g. AVISITN) gave the proposed order.
    Column {
        /// The order column.
        column: String,
    },
    /// The order is the confirmed list itself.
    AsListed,
}

/// The visit variable and the visits kept, in axis order. Visit labels are compared with their
/// leading and trailing blanks removed (XPT labels are often right-aligned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisitChoice {
    /// The label column, e.g. AVISIT.
    pub column: String,
    /// Where the order came from.
    pub order_source: VisitOrderSource,
    /// The visits kept, in order (blank-trimmed labels).
    pub visits: Vec<String>,
}

/// Which records of one subject at one visit are plotted, when the selection holds several
/// (time points, positions, a derived average, replicates). The answer to "Which record per
/// subject and visit?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordsPerSubjectVisit {
    /// One record each: the selection already holds at most one record per subject × visit.
    One,
    /// One record each: the records whose `column` holds `value` (an empty `value` is a blank
    /// cell), e.g. `DTYPE = AVERAGE` or `ANL02FL = Y`.
    OneWhere {
        /// The column that tells the records apart.
        column: String,
        /// The value kept.
        value: String,
    },
    /// Every record is kept: a box pools several records of a subject, so N counts records as
    /// well as subjects, and the plot says so.
    Every,
}

impl RecordsPerSubjectVisit {
    /// The answer syntax: `one`, `every`, or `COLUMN=VALUE`.
    pub fn answer_text(&self) -> String {
        match self {
            Self::One => "one".to_owned(),
            Self::Every => "every".to_owned(),
            Self::OneWhere { column, value } => format!("{column}={value}"),
        }
    }

    /// Whether the plot must hold at most one record per subject × visit.
    pub fn requires_one(&self) -> bool {
        !matches!(self, Self::Every)
    }
}

/// Shared or per-panel y axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum YScale {
    /// One y axis for every panel: the governed default.
    Fixed,
    /// Each panel its own axis: exploratory only, never Verified.
    Free,
}

/// What a cell with fewer subjects than the threshold shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LowNAction {
    /// The box is drawn and marked as low N.
    Annotate,
    /// Only the individual points are drawn.
    PointsOnly,
    /// Nothing is drawn for the cell; a footnote says so.
    SuppressBox,
}

/// The low-N policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LowNPolicy {
    /// Cells with fewer subjects than this are low N.
    pub threshold: usize,
    /// What they show.
    pub below: LowNAction,
}

/// The whole plot spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Draft or confirmed.
    pub state: SpecState,
    /// SHA-256 of the uploaded bytes this spec reads.
    pub dataset_content_hash: Sha256Digest,
    /// The user's question, verbatim.
    pub question: String,
    /// The parameter plotted; `None` in a draft whose question named no plottable parameter
    /// (the question stays open and confirmation refuses until it is answered).
    pub parameter: Option<ParameterChoice>,
    /// Population and record filters, all applied (AND).
    pub filters: Vec<RecordFilter>,
    /// Which record per subject and visit; `None` in a draft while that question is open.
    pub records_per_subject_visit: Option<RecordsPerSubjectVisit>,
    /// Treatment variable and ordered levels.
    pub treatment: TreatmentChoice,
    /// The numeric column plotted, e.g. AVAL or CHG.
    pub value_column: String,
    /// The subject identifier column (cells count subjects, not records).
    pub subject_column: String,
    /// Visit variable and ordered visits.
    pub visit: VisitChoice,
    /// Fixed or free y axes.
    pub y_scale: YScale,
    /// The unit shown in the y label.
    pub unit: Option<String>,
    /// Low-N threshold and action.
    pub low_n: LowNPolicy,
    /// The plot title.
    pub title: String,
}

/// Why a spec could not be hashed.
#[derive(Debug, thiserror::Error)]
#[error("the spec cannot be written as canonical JSON")]
pub struct CanonicalJsonError(#[source] pub serde_json::Error);

/// A confirmed spec lacks a choice only a draft may leave open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the spec leaves {0} open; confirm it first (adamviz spec confirm)")]
pub struct OpenChoice(pub &'static str);

impl PlotSpec {
    /// The parameter, which a confirmed spec always has.
    pub fn parameter_choice(&self) -> Result<&ParameterChoice, OpenChoice> {
        self.parameter.as_ref().ok_or(OpenChoice("the parameter"))
    }

    /// The record choice, which a confirmed spec always has.
    pub fn records_choice(&self) -> Result<&RecordsPerSubjectVisit, OpenChoice> {
        self.records_per_subject_visit
            .as_ref()
            .ok_or(OpenChoice("which record per subject and visit"))
    }

    /// RFC 8785 canonical JSON of the spec.
    pub fn canonical_json(&self) -> Result<Vec<u8>, CanonicalJsonError> {
        serde_jcs::to_vec(self).map_err(CanonicalJsonError)
    }

    /// SHA-256 of [`PlotSpec::canonical_json`]: the spec hash once confirmed.
    pub fn spec_hash(&self) -> Result<Sha256Digest, CanonicalJsonError> {
        Ok(Sha256Digest::from_bytes(
            Sha256::digest(self.canonical_json()?).into(),
        ))
    }
}
