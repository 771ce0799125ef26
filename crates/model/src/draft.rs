//! A draft as the browser edits it: the answers of the confirmation form (one field per
//! question, in the shape the form sends), the errors beside each control, and the preview the
//! server computes from the answers. Shared by the page and the server functions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    confirmation::ConfirmationQuestion, dataset::DatasetSummary, matcher::MatchNote,
    statistics::CellStatistics,
};

/// The confirmation form's answers. The form sends every control, so a list that arrives empty
/// was emptied by the user; `levels_of` and `visits_of` say which variable the lists were built
/// for, so lists of a variable the user just changed are not applied to the new one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DraftAnswers {
    /// The parameter code.
    #[serde(default)]
    pub parameter: Option<String>,
    /// Values kept per filter column (a column without values is not filtered).
    #[serde(default)]
    pub filters: BTreeMap<String, Vec<String>>,
    /// The treatment variable.
    #[serde(default)]
    pub treatment_variable: Option<String>,
    /// The treatment levels kept, in panel order.
    #[serde(default)]
    pub treatment_levels: Vec<String>,
    /// The treatment variable the levels were listed for.
    #[serde(default)]
    pub levels_of: Option<String>,
    /// The value variable.
    #[serde(default)]
    pub value_variable: Option<String>,
    /// The visit variable.
    #[serde(default)]
    pub visit_variable: Option<String>,
    /// The visits kept, in axis order.
    #[serde(default)]
    pub visits: Vec<String>,
    /// The visit variable the visits were listed for.
    #[serde(default)]
    pub visits_of: Option<String>,
    /// `one`, `every` or `COLUMN=VALUE`.
    #[serde(default)]
    pub records_per_subject_visit: Option<String>,
    /// `fixed` or `free`.
    #[serde(default)]
    pub y_scale: Option<String>,
    /// The unit, or `none`.
    #[serde(default)]
    pub unit: Option<String>,
    /// A whole number.
    #[serde(default)]
    pub low_n_threshold: Option<String>,
    /// `annotate`, `points_only` or `suppress_box`.
    #[serde(default)]
    pub low_n_action: Option<String>,
    /// The title.
    #[serde(default)]
    pub title: Option<String>,
}

/// What is wrong with one answer, shown beside its control (`question` is a question id, or
/// `general` for what belongs to no single control).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The question id.
    pub question: String,
    /// The message.
    pub message: String,
}

/// One flag column the filters question offers, with its values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterColumn {
    /// The column, e.g. SAFFL.
    pub column: String,
    /// Its SAS label.
    pub label: Option<String>,
    /// Its values (blank included as "").
    pub values: Vec<String>,
}

/// One box of the preview: a treatment × visit cell, drawn as the R script draws it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviewCell {
    /// The statistics (adamviz's own, the ones the verifier uses).
    pub statistics: CellStatistics,
    /// Lower whisker: the smallest value within 1.5 IQR below Q1 (ggplot2's default).
    pub whisker_low: Option<f64>,
    /// Upper whisker: the largest value within 1.5 IQR above Q3.
    pub whisker_high: Option<f64>,
    /// Values beyond the whiskers (at most [`PREVIEW_POINT_CAP`]).
    pub outliers: Vec<f64>,
    /// Every value, for a low-N cell drawn as points (at most [`PREVIEW_POINT_CAP`]).
    pub points: Vec<f64>,
}

/// At most this many points per cell travel to the browser.
pub const PREVIEW_POINT_CAP: usize = 200;

/// The preview of a draft: cell statistics per treatment panel, ready to draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preview {
    /// The title.
    pub title: String,
    /// The y-axis label (value variable and unit).
    pub y_label: String,
    /// Panels with their own y axis (Experimental/Draft, never executed).
    pub free_scale: bool,
    /// Cells below this many subjects are low N.
    pub low_n_threshold: usize,
    /// `annotate`, `points_only` or `suppress_box`.
    pub low_n_action: String,
    /// The panels in order, each with its cells in visit order.
    pub panels: Vec<(String, Vec<PreviewCell>)>,
    /// Records in the selection.
    pub records: usize,
}

/// A draft as the page shows it: the explanations, the questions with the current answers,
/// the errors beside them, and the preview when the answers confirm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DraftView {
    /// The dataset.
    pub dataset: DatasetSummary,
    /// The question, verbatim.
    pub question: String,
    /// Which words chose what.
    pub matches: Vec<MatchNote>,
    /// Every question, in order, as the current answers leave them.
    pub questions: Vec<ConfirmationQuestion>,
    /// The current answers.
    pub answers: DraftAnswers,
    /// The filter columns with their values.
    pub filter_columns: Vec<FilterColumn>,
    /// What is wrong, per question.
    pub errors: Vec<FieldError>,
    /// The preview, when the answers confirm.
    pub preview: Option<Preview>,
    /// The revision this draft revises (`rev-…`), when it was started with "Revise".
    #[serde(default)]
    pub parent: Option<String>,
    /// The questions a re-run on a newer data cut left open, and why.
    #[serde(default)]
    pub opened: Vec<String>,
}

impl DraftView {
    /// The errors about `question`.
    pub fn errors_about(&self, question: &str) -> Vec<String> {
        errors_about(&self.errors, question)
    }
}

/// The messages of `errors` about `question`.
pub fn errors_about(errors: &[FieldError], question: &str) -> Vec<String> {
    errors
        .iter()
        .filter(|e| e.question == question)
        .map(|e| e.message.clone())
        .collect()
}

/// What a change of answers sends back: the questions (their choices can follow an answer),
/// the errors and the preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreviewOutcome {
    /// Every question, as the answers leave them.
    pub questions: Vec<ConfirmationQuestion>,
    /// The answers as applied (lists of a changed variable reset to its own).
    pub answers: DraftAnswers,
    /// What is wrong, per question.
    pub errors: Vec<FieldError>,
    /// The preview, when the answers confirm.
    pub preview: Option<Preview>,
}
