//! Drafts from the browser, as plain functions: a question and the confirmation form's answers
//! become a draft spec through the existing matcher, typed answers and `confirm_spec` (no second
//! implementation of any step), each refusal mapped to the question it is about, and a confirmed
//! spec becomes the preview's cell statistics (the verifier's own statistics, with whiskers and
//! outliers as ggplot2 draws them).

use adamviz_engine::ingest::{
    confirm::{confirm_spec, SpecError},
    draft::{draft_spec, questions_for},
    records::analyse_records,
    snapshot::{take_snapshot, SnapshotError},
    table::Table,
};
use adamviz_engine::question::answer::{apply_answer, Answer};
use adamviz_engine::verify::independent_statistics::{records_by_cell, IndependentStatisticsError};
use adamviz_model::{
    confirmation::{AllowedAnswers, AnswerError, ConfirmationQuestion},
    digest::Sha256Digest,
    draft::{DraftAnswers, FieldError, FilterColumn, Preview, PreviewCell, PREVIEW_POINT_CAP},
    matcher::{MatchError, MatchNote},
    profile::DatasetProfile,
    spec::{LowNAction, PlotSpec, RecordFilter, YScale},
    statistics::cell_statistics,
};

/// A draft after the form's answers.
#[derive(Debug, Clone)]
pub struct AnsweredDraft {
    /// The spec as answered (a draft).
    pub spec: PlotSpec,
    /// The spec confirmed, when every answer holds.
    pub confirmed: Option<PlotSpec>,
    /// The matcher's explanations.
    pub matches: Vec<MatchNote>,
    /// Every question, as the answers leave them.
    pub questions: Vec<ConfirmationQuestion>,
    /// The answers as applied.
    pub answers: DraftAnswers,
    /// What is wrong, per question.
    pub errors: Vec<FieldError>,
}

/// The draft for `question` over `table` with the form's `answers` applied (none: the
/// proposals as they are).
pub fn answer_draft(
    question: &str,
    profile: &DatasetProfile,
    table: &Table,
    content_hash: Sha256Digest,
    answers: Option<&DraftAnswers>,
) -> Result<AnsweredDraft, MatchError> {
    let draft = draft_spec(question, profile, table)?;
    let mut spec = draft.spec;
    let mut errors = Vec::new();
    if let Some(answers) = answers {
        apply_form(&mut spec, profile, table, answers, &mut errors);
    }
    let (questions, _) = questions_for(&spec, profile, table);
    let confirmed = match confirm_spec(&spec, table, content_hash) {
        Ok(confirmed) => errors.is_empty().then_some(confirmed),
        Err(refusals) => {
            for refusal in &refusals {
                let error = field_error(refusal);
                if !errors.contains(&error) {
                    errors.push(error);
                }
            }
            None
        }
    };
    Ok(AnsweredDraft {
        answers: answers_of(&spec),
        spec,
        confirmed,
        matches: draft.matches,
        questions,
        errors,
    })
}

/// Why the matcher's proposal for a question does not confirm.
#[derive(Debug, thiserror::Error)]
pub enum ProposalRefused {
    /// The question gives no draft on this dataset.
    #[error(transparent)]
    Question(#[from] MatchError),
    /// Some questions are open or their proposed answers do not hold.
    #[error("the proposed spec does not confirm: {}", .0.iter().map(|e| format!("{}: {}", e.question, e.message)).collect::<Vec<_>>().join("; "))]
    Refused(Vec<FieldError>),
}

/// The matcher's proposal for `question`, confirmed as Confirm confirms a draft whose answers
/// nobody changed (the path of [`answer_draft`] the web's Confirm takes; the benchmarks use it).
pub fn confirm_proposal(
    question: &str,
    profile: &DatasetProfile,
    table: &Table,
    content_hash: Sha256Digest,
) -> Result<PlotSpec, ProposalRefused> {
    let answered = answer_draft(question, profile, table, content_hash, None)?;
    answered
        .confirmed
        .ok_or(ProposalRefused::Refused(answered.errors))
}

/// Applies the form's answers in question order. Lists built for a variable the user has since
/// changed are not applied (the new variable's own levels or visits stand); a record choice the
/// form did not ask is proposed anew for the selection as answered. The form's lists and choices
/// are typed already; its free-text fields (scale, unit, low N) are read by [`Answer::parse`].
fn apply_form(
    spec: &mut PlotSpec,
    profile: &DatasetProfile,
    table: &Table,
    answers: &DraftAnswers,
    errors: &mut Vec<FieldError>,
) {
    let mut apply = |spec: &mut PlotSpec, answer: Result<Answer, AnswerError>| {
        if let Err(error) = answer.and_then(|answer| apply_answer(spec, profile, answer)) {
            errors.push(answer_error(&error));
        }
    };
    if let Some(parameter) = &answers.parameter {
        apply(spec, Ok(Answer::Parameter(parameter.clone())));
    }
    let filters = answers
        .filters
        .iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(column, values)| RecordFilter {
            column: column.clone(),
            values: values.clone(),
        })
        .collect();
    apply(spec, Ok(Answer::Filters(filters)));
    if let Some(variable) = &answers.treatment_variable {
        if *variable != spec.treatment.column {
            apply(spec, Ok(Answer::TreatmentVariable(variable.clone())));
        }
    }
    if answers.levels_of.as_deref() == Some(spec.treatment.column.as_str()) {
        let levels = answers.treatment_levels.clone();
        apply(spec, Ok(Answer::TreatmentLevels(levels)));
    }
    if let Some(value) = &answers.value_variable {
        apply(spec, Ok(Answer::ValueVariable(value.clone())));
    }
    if let Some(variable) = &answers.visit_variable {
        if *variable != spec.visit.column {
            apply(spec, Ok(Answer::VisitVariable(variable.clone())));
        }
    }
    if answers.visits_of.as_deref() == Some(spec.visit.column.as_str()) {
        apply(spec, Ok(Answer::Visits(answers.visits.clone())));
    }
    match answers
        .records_per_subject_visit
        .as_deref()
        .filter(|a| !a.is_empty())
    {
        Some(choice) => apply(spec, Answer::parse("records_per_subject_visit", choice)),
        None => spec.records_per_subject_visit = analyse_records(spec, table).proposal,
    }
    for (id, answer) in [
        ("y_scale", &answers.y_scale),
        ("unit", &answers.unit),
        ("low_n_threshold", &answers.low_n_threshold),
        ("low_n_action", &answers.low_n_action),
    ] {
        if let Some(answer) = answer {
            apply(spec, Answer::parse(id, answer.trim()));
        }
    }
    if let Some(title) = &answers.title {
        apply(spec, Ok(Answer::Title(title.trim().to_owned())));
    }
}

/// The answers that reproduce `spec` in the form.
pub fn answers_of(spec: &PlotSpec) -> DraftAnswers {
    DraftAnswers {
        parameter: spec.parameter.as_ref().map(|p| p.value.clone()),
        filters: spec
            .filters
            .iter()
            .map(|f| (f.column.clone(), f.values.clone()))
            .collect(),
        treatment_variable: Some(spec.treatment.column.clone()),
        treatment_levels: spec.treatment.levels.clone(),
        levels_of: Some(spec.treatment.column.clone()),
        value_variable: Some(spec.value_column.clone()),
        visit_variable: Some(spec.visit.column.clone()),
        visits: spec.visit.visits.clone(),
        visits_of: Some(spec.visit.column.clone()),
        records_per_subject_visit: spec
            .records_per_subject_visit
            .as_ref()
            .map(|r| r.answer_text()),
        y_scale: Some(
            match spec.y_scale {
                YScale::Fixed => "fixed",
                YScale::Free => "free",
            }
            .to_owned(),
        ),
        unit: Some(spec.unit.clone().unwrap_or_else(|| "none".to_owned())),
        low_n_threshold: Some(spec.low_n.threshold.to_string()),
        low_n_action: Some(low_n_action_text(spec.low_n.below).to_owned()),
        title: Some(spec.title.clone()),
    }
}

fn low_n_action_text(action: LowNAction) -> &'static str {
    match action {
        LowNAction::Annotate => "annotate",
        LowNAction::PointsOnly => "points_only",
        LowNAction::SuppressBox => "suppress_box",
    }
}

/// The question an answer's error is about, and what is wrong.
fn answer_error(error: &AnswerError) -> FieldError {
    match error {
        AnswerError::Malformed { id, reason, .. } => FieldError {
            question: id.clone(),
            message: reason.clone(),
        },
        other => FieldError {
            question: "general".to_owned(),
            message: other.to_string(),
        },
    }
}

/// The question a confirmation refusal is about, and its message without the id in front.
pub fn field_error(refusal: &SpecError) -> FieldError {
    let question = match refusal {
        SpecError::UnknownColumn { role, .. }
        | SpecError::WrongColumnType { role, .. }
        | SpecError::ValueNotInData { role, .. }
        | SpecError::Duplicate { role, .. }
        | SpecError::Empty { role } => match *role {
            "visit order" => "visits",
            "subject" => "general",
            other => other,
        },
        SpecError::NoRecordLeft => "filters",
        SpecError::UnitContradictsData { .. } => "unit",
        SpecError::Unanswered { question, .. } => question,
        SpecError::RecordChoice(_) | SpecError::SeveralRecordsPerSubjectVisit { .. } => {
            "records_per_subject_visit"
        }
        SpecError::NoValueToPlot { .. } => "parameter",
        SpecError::EmptyTitle => "title",
        SpecError::ZeroThreshold => "low_n_threshold",
        SpecError::OtherDataset { .. } => "general",
    };
    let text = refusal.to_string();
    let message = text
        .strip_prefix(&format!("{question}: "))
        .map(str::to_owned)
        .unwrap_or(text);
    FieldError {
        question: question.to_owned(),
        message,
    }
}

/// The filter columns the filters question offers, with their values from the profile.
pub fn filter_columns(
    questions: &[ConfirmationQuestion],
    profile: &DatasetProfile,
) -> Vec<FilterColumn> {
    let columns = questions.iter().find_map(|q| match &q.allowed {
        AllowedAnswers::Filters { columns } => Some(columns.clone()),
        _ => None,
    });
    columns
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| {
            let column = profile.columns.iter().find(|c| c.name == name)?;
            Some(FilterColumn {
                column: name,
                label: column.label.clone(),
                values: column.examples.clone(),
            })
        })
        .collect()
}

/// Why a confirmed spec has no preview.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// Its records could not be selected.
    #[error("selecting the records: {0}")]
    Snapshot(#[from] SnapshotError),
    /// The statistics could not be computed.
    #[error("computing the cells: {0}")]
    Statistics(#[from] IndependentStatisticsError),
}

/// The preview of confirmed `spec` over `table`: per treatment panel, per visit, the cell
/// statistics the verifier computes, with ggplot2's whiskers (the most extreme values within
/// 1.5 IQR of the quartiles) and the values beyond them.
pub fn preview(spec: &PlotSpec, table: &Table) -> Result<Preview, PreviewError> {
    let snapshot = take_snapshot(spec, table)?;
    let by_cell = records_by_cell(&snapshot)?;
    let panels = spec
        .treatment
        .levels
        .iter()
        .map(|level| {
            let cells = spec
                .visit
                .visits
                .iter()
                .map(|visit| {
                    let records: Vec<(Option<f64>, &str)> = by_cell
                        .get(&(level.clone(), visit.clone()))
                        .map(|r| r.iter().map(|(v, s)| (*v, s.as_str())).collect())
                        .unwrap_or_default();
                    preview_cell(level, visit, &records, spec.low_n.threshold)
                })
                .collect();
            (level.clone(), cells)
        })
        .collect();
    Ok(Preview {
        title: spec.title.clone(),
        y_label: match &spec.unit {
            Some(unit) => format!("{} ({unit})", spec.value_column),
            None => spec.value_column.clone(),
        },
        free_scale: spec.y_scale == YScale::Free,
        low_n_threshold: spec.low_n.threshold,
        low_n_action: low_n_action_text(spec.low_n.below).to_owned(),
        panels,
        records: snapshot.rows.len(),
    })
}

fn preview_cell(
    level: &str,
    visit: &str,
    records: &[(Option<f64>, &str)],
    threshold: usize,
) -> PreviewCell {
    let statistics = cell_statistics(level, visit, records, threshold);
    let mut values: Vec<f64> = records.iter().filter_map(|(v, _)| *v).collect();
    values.sort_by(f64::total_cmp);
    let (whisker_low, whisker_high, outliers) = match (statistics.q1, statistics.q3) {
        (Some(q1), Some(q3)) => {
            let reach = 1.5 * (q3 - q1);
            let inside = |v: &&f64| **v >= q1 - reach && **v <= q3 + reach;
            let low = values.iter().find(inside).copied();
            let high = values.iter().rev().find(inside).copied();
            let outside: Vec<f64> = values
                .iter()
                .filter(|v| !inside(v))
                .copied()
                .take(PREVIEW_POINT_CAP)
                .collect();
            (low, high, outside)
        }
        _ => (None, None, Vec::new()),
    };
    let points = if statistics.low_n {
        values.iter().copied().take(PREVIEW_POINT_CAP).collect()
    } else {
        Vec::new()
    };
    PreviewCell {
        statistics,
        whisker_low,
        whisker_high,
        outliers,
        points,
    }
}
