//! Drafting against the records: the matcher proposes from the profile, then the draft is
//! settled against the data it will plot — visits where the parameter has no value are left
//! out, and the records per subject and visit decide whether "Which record per subject and
//! visit?" is asked and what it proposes. The questions are asked anew from the same facts
//! after every answer.

use serde::Serialize;

use crate::ingest::{
    records::{analyse_records, values_per_visit},
    table::Table,
};
use crate::question::{confirmation::confirmation_questions, matcher::propose_draft};
use adamviz_model::{
    confirmation::ConfirmationQuestion,
    matcher::{MatchError, MatchNote},
    profile::DatasetProfile,
    records::RecordsAnalysis,
    spec::PlotSpec,
};

/// A draft with its explanations and questions.
#[derive(Debug, Clone, Serialize)]
pub struct Draft {
    /// The proposed spec.
    pub spec: PlotSpec,
    /// Which words chose what, and why.
    pub matches: Vec<MatchNote>,
    /// Every confirmation question, in order.
    pub questions: Vec<ConfirmationQuestion>,
    /// The questions without a proposal: confirmation refuses until they are answered.
    pub open_questions: Vec<String>,
}

/// Proposes a draft for `question` over `table` (profiled as `profile`).
pub fn draft_spec(
    question: &str,
    profile: &DatasetProfile,
    table: &Table,
) -> Result<Draft, MatchError> {
    let (mut spec, mut matches) = propose_draft(question, profile)?;
    leave_out_visits_without_values(&mut spec, &mut matches, table);
    let records = analyse_records(&spec, table);
    spec.records_per_subject_visit = records.proposal.clone();
    matches.push(MatchNote {
        field: "records_per_subject_visit".to_owned(),
        words: Vec::new(),
        chosen: spec
            .records_per_subject_visit
            .as_ref()
            .map_or_else(|| "no proposal".to_owned(), |r| r.answer_text()),
        why: records.why.clone(),
    });
    let questions = confirmation_questions(&spec, profile, &records);
    Ok(Draft {
        open_questions: open_questions(&questions),
        spec,
        matches,
        questions,
    })
}

/// The questions for `spec` as it stands (after answers), from the records it selects.
pub fn questions_for(
    spec: &PlotSpec,
    profile: &DatasetProfile,
    table: &Table,
) -> (Vec<ConfirmationQuestion>, RecordsAnalysis) {
    let records = analyse_records(spec, table);
    (confirmation_questions(spec, profile, &records), records)
}

/// The ids of the questions without a proposal.
pub fn open_questions(questions: &[ConfirmationQuestion]) -> Vec<String> {
    questions
        .iter()
        .filter(|q| q.proposed.is_none())
        .map(|q| q.id.clone())
        .collect()
}

/// Drops proposed visits where the parameter has no value at all (e.g. an ECG parameter
/// recorded at fewer visits than the dataset has), unless that would leave none; the visits
/// note says which and why.
fn leave_out_visits_without_values(spec: &mut PlotSpec, notes: &mut [MatchNote], table: &Table) {
    if spec.parameter.is_none() {
        return;
    }
    let per_visit = values_per_visit(spec, table);
    let (kept, dropped): (Vec<String>, Vec<String>) = spec
        .visit
        .visits
        .iter()
        .cloned()
        .partition(|visit| per_visit.get(visit).is_some_and(|n| *n > 0));
    if dropped.is_empty() || kept.is_empty() {
        return;
    }
    spec.visit.visits = kept;
    if let Some(note) = notes.iter_mut().find(|n| n.field == "visits") {
        note.chosen = spec.visit.visits.join(", ");
        note.why.push_str(&format!(
            "; left out for having no {} value for this parameter: {}",
            spec.value_column,
            dropped.join(", ")
        ));
    }
}
