//! Answers to confirmation questions, typed: the web form's fields and the command line's
//! `--set QUESTION=ANSWER` texts become one [`Answer`] each (the text syntax is read once, at the
//! edge, by [`Answer::parse`]), and [`apply_answer`] applies an answer to a draft spec.

use crate::question::matcher::default_title;
use adamviz_model::{
    confirmation::{AnswerError, QUESTION_IDS},
    profile::{DatasetProfile, ParameterProfile},
    spec::{
        LowNAction, ParameterChoice, PlotSpec, RecordFilter, RecordsPerSubjectVisit, SpecState,
        VisitOrderSource, YScale,
    },
};

/// The smallest and largest low-N threshold a spec may carry.
pub const LOW_N_THRESHOLD_RANGE: std::ops::RangeInclusive<usize> = 1..=1000;

/// One answer to one confirmation question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `parameter`: the parameter code.
    Parameter(String),
    /// `filters`: the values kept per column (empty: no filter).
    Filters(Vec<RecordFilter>),
    /// `treatment_variable`: the treatment column (its levels reset to the profile's).
    TreatmentVariable(String),
    /// `treatment_levels`: the levels kept, in panel order.
    TreatmentLevels(Vec<String>),
    /// `value_variable`: the column plotted.
    ValueVariable(String),
    /// `visit_variable`: the visit column (its visits reset to the profile's).
    VisitVariable(String),
    /// `visits`: the visits kept, in axis order.
    Visits(Vec<String>),
    /// `records_per_subject_visit`.
    RecordsPerSubjectVisit(RecordsPerSubjectVisit),
    /// `y_scale`.
    YScale(YScale),
    /// `unit` (`None`: no unit).
    Unit(Option<String>),
    /// `low_n_threshold`.
    LowNThreshold(usize),
    /// `low_n_action`.
    LowNAction(LowNAction),
    /// `title`.
    Title(String),
}

impl Answer {
    /// The id of the question this answers, as [`QUESTION_IDS`] lists it.
    pub fn question_id(&self) -> &'static str {
        match self {
            Answer::Parameter(_) => "parameter",
            Answer::Filters(_) => "filters",
            Answer::TreatmentVariable(_) => "treatment_variable",
            Answer::TreatmentLevels(_) => "treatment_levels",
            Answer::ValueVariable(_) => "value_variable",
            Answer::VisitVariable(_) => "visit_variable",
            Answer::Visits(_) => "visits",
            Answer::RecordsPerSubjectVisit(_) => "records_per_subject_visit",
            Answer::YScale(_) => "y_scale",
            Answer::Unit(_) => "unit",
            Answer::LowNThreshold(_) => "low_n_threshold",
            Answer::LowNAction(_) => "low_n_action",
            Answer::Title(_) => "title",
        }
    }

    /// Reads `text` in the answer syntax the questions propose (lists as `a|b` or a JSON array,
    /// filters as `none` or a JSON object, `every`/`one`/`COLUMN=VALUE` for records) as the
    /// answer to question `id`.
    pub fn parse(id: &str, text: &str) -> Result<Answer, AnswerError> {
        let malformed = |reason: &str| malformed(id, text, reason);
        Ok(match id {
            "parameter" => Answer::Parameter(text.to_owned()),
            "filters" => Answer::Filters(parse_filters(id, text)?),
            "treatment_variable" => Answer::TreatmentVariable(text.to_owned()),
            "treatment_levels" => Answer::TreatmentLevels(parse_list(id, text)?),
            "value_variable" => Answer::ValueVariable(text.to_owned()),
            "visit_variable" => Answer::VisitVariable(text.to_owned()),
            "visits" => Answer::Visits(parse_list(id, text)?),
            "records_per_subject_visit" => {
                Answer::RecordsPerSubjectVisit(parse_records_answer(text).map_err(malformed)?)
            }
            "y_scale" => Answer::YScale(match text {
                "fixed" => YScale::Fixed,
                "free" => YScale::Free,
                _ => return Err(malformed("expected fixed or free")),
            }),
            "unit" => Answer::Unit((text != "none").then(|| text.to_owned())),
            "low_n_threshold" => Answer::LowNThreshold(
                text.parse::<usize>()
                    .ok()
                    .filter(|n| LOW_N_THRESHOLD_RANGE.contains(n))
                    .ok_or_else(|| malformed("expected a whole number from 1 to 1000"))?,
            ),
            "low_n_action" => Answer::LowNAction(match text {
                "annotate" => LowNAction::Annotate,
                "points_only" => LowNAction::PointsOnly,
                "suppress_box" => LowNAction::SuppressBox,
                _ => return Err(malformed("expected annotate, points_only or suppress_box")),
            }),
            "title" => Answer::Title(text.to_owned()),
            _ => {
                return Err(AnswerError::UnknownQuestion {
                    id: id.to_owned(),
                    known: QUESTION_IDS.join(", "),
                })
            }
        })
    }
}

/// An answer `text` to question `id` that does not have the form the question expects.
fn malformed(id: &str, text: &str, reason: &str) -> AnswerError {
    AnswerError::Malformed {
        id: id.to_owned(),
        answer: text.chars().take(200).collect(),
        reason: reason.to_owned(),
    }
}

/// A list answer to question `id`: a JSON array of strings, or items joined by `|`.
fn parse_list(id: &str, answer: &str) -> Result<Vec<String>, AnswerError> {
    if answer.trim_start().starts_with('[') {
        serde_json::from_str(answer)
            .map_err(|err| malformed(id, answer, &format!("not a JSON array of strings: {err}")))
    } else if answer.is_empty() {
        Ok(Vec::new())
    } else {
        Ok(answer.split('|').map(str::to_owned).collect())
    }
}

/// A filters answer to question `id`: `none`, or a JSON object of column → values kept.
fn parse_filters(id: &str, answer: &str) -> Result<Vec<RecordFilter>, AnswerError> {
    if answer == "none" {
        return Ok(Vec::new());
    }
    let map: std::collections::BTreeMap<String, Vec<String>> = serde_json::from_str(answer)
        .map_err(|err| {
            let expected = "expected none or a JSON object such as {\"SAFFL\":[\"Y\"]}";
            malformed(id, answer, &format!("{expected}: {err}"))
        })?;
    Ok(map
        .into_iter()
        .map(|(column, values)| RecordFilter { column, values })
        .collect())
}

/// The answer `every`, `one` or `COLUMN=VALUE` as a record choice.
fn parse_records_answer(answer: &str) -> Result<RecordsPerSubjectVisit, &'static str> {
    match answer.trim() {
        "every" => Ok(RecordsPerSubjectVisit::Every),
        "one" => Ok(RecordsPerSubjectVisit::One),
        other => match other.split_once('=') {
            Some((column, value)) if !column.trim().is_empty() => {
                Ok(RecordsPerSubjectVisit::OneWhere {
                    column: column.trim().to_owned(),
                    value: value.to_owned(),
                })
            }
            _ => Err(
                "expected every, one, or COLUMN=VALUE (e.g. DTYPE=AVERAGE; DTYPE= for a blank DTYPE)",
            ),
        },
    }
}

/// Reads `text` as the answer to question `id` and applies it (the command line's `--set`).
pub fn apply_text_answer(
    spec: &mut PlotSpec,
    profile: &DatasetProfile,
    id: &str,
    text: &str,
) -> Result<(), AnswerError> {
    apply_answer(spec, profile, Answer::parse(id, text)?)
}

/// Applies one answer to a draft spec. Changing the treatment or visit variable resets its
/// levels or visits to those the profile lists, so later answers pick from the new variable.
pub fn apply_answer(
    spec: &mut PlotSpec,
    profile: &DatasetProfile,
    answer: Answer,
) -> Result<(), AnswerError> {
    let id = answer.question_id();
    let malformed = |text: &str, reason: &str| malformed(id, text, reason);
    spec.state = SpecState::Draft;
    match answer {
        Answer::Parameter(code) => {
            if !apply_parameter(spec, profile, &code) {
                return Err(malformed(&code, "the dataset has no parameter code column"));
            }
        }
        Answer::RecordsPerSubjectVisit(choice) => spec.records_per_subject_visit = Some(choice),
        Answer::Filters(filters) => spec.filters = filters,
        Answer::TreatmentVariable(column) => {
            spec.treatment.levels = profile
                .treatment_levels
                .iter()
                .find(|l| l.column == column)
                .map(|l| l.levels.clone())
                .unwrap_or_default();
            spec.treatment.column = column;
        }
        Answer::TreatmentLevels(levels) => spec.treatment.levels = levels,
        Answer::ValueVariable(column) => spec.value_column = column,
        Answer::VisitVariable(column) => apply_visit_variable(spec, profile, column),
        Answer::Visits(visits) => spec.visit.visits = visits,
        Answer::YScale(scale) => spec.y_scale = scale,
        Answer::Unit(unit) => spec.unit = unit,
        Answer::LowNThreshold(threshold) => {
            if !LOW_N_THRESHOLD_RANGE.contains(&threshold) {
                return Err(malformed(
                    &threshold.to_string(),
                    "expected a whole number from 1 to 1000",
                ));
            }
            spec.low_n.threshold = threshold;
        }
        Answer::LowNAction(action) => spec.low_n.below = action,
        Answer::Title(title) => {
            if title.trim().is_empty() {
                return Err(malformed(&title, "the title cannot be empty"));
            }
            spec.title = title;
        }
    }
    Ok(())
}

/// Chooses parameter `code`; a title or unit the draft derived from the old parameter follows
/// the new one, one the user wrote stays. `false` when the dataset has no parameter column.
fn apply_parameter(spec: &mut PlotSpec, profile: &DatasetProfile, code: &str) -> bool {
    let column = match (&spec.parameter, profile.roles.parameter_code.first()) {
        (Some(chosen), _) => chosen.column.clone(),
        (None, Some(column)) => column.clone(),
        (None, None) => return false,
    };
    let find = |code: &str| profile.parameters.iter().find(|p| p.code == code);
    let before = spec.parameter.as_ref().and_then(|p| find(&p.value));
    let after = find(code);
    if spec.title == default_title(before, &spec.value_column) {
        spec.title = default_title(after, &spec.value_column);
    }
    let single_unit = |p: Option<&ParameterProfile>| match p.map(|p| p.units.as_slice()) {
        Some([one]) => Some(one.clone()),
        _ => None,
    };
    if spec.unit.is_none() || spec.unit == single_unit(before) {
        spec.unit = single_unit(after);
    }
    spec.parameter = Some(ParameterChoice {
        column,
        value: code.to_owned(),
        label: after.and_then(|p| p.labels.first().cloned()),
    });
    true
}

/// Chooses visit column `column` with its visits: the ordered ones when the profile knows an
/// order column, otherwise all of them in order of first appearance.
fn apply_visit_variable(spec: &mut PlotSpec, profile: &DatasetProfile, column: String) {
    let visits = profile.visit_levels.iter().find(|v| v.column == column);
    spec.visit.visits = visits
        .map(|v| {
            v.visits
                .iter()
                .filter(|level| v.order_column.is_none() || level.order.is_some())
                .map(|level| level.label.clone())
                .collect()
        })
        .unwrap_or_default();
    spec.visit.order_source = match visits.and_then(|v| v.order_column.clone()) {
        Some(column) => VisitOrderSource::Column { column },
        None => VisitOrderSource::AsListed,
    };
    spec.visit.column = column;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_question_id_parses_to_an_answer_that_names_it_back() {
        let texts = [
            ("parameter", "ALB"),
            ("filters", r#"{"SAFFL":["Y"]}"#),
            ("treatment_variable", "TRTA"),
            ("treatment_levels", "Placebo|Xanomeline"),
            ("value_variable", "AVAL"),
            ("visit_variable", "AVISIT"),
            ("visits", r#"["Week 2","Week|4"]"#),
            ("records_per_subject_visit", "DTYPE="),
            ("y_scale", "free"),
            ("unit", "none"),
            ("low_n_threshold", "3"),
            ("low_n_action", "points_only"),
            ("title", "Albumin"),
        ];
        for (id, text) in texts {
            let answer = Answer::parse(id, text).unwrap();
            assert_eq!(answer.question_id(), id);
        }
        assert_eq!(
            Answer::parse("visits", r#"["Week 2","Week|4"]"#).unwrap(),
            Answer::Visits(vec!["Week 2".to_owned(), "Week|4".to_owned()])
        );
        assert_eq!(Answer::parse("unit", "none").unwrap(), Answer::Unit(None));
        assert_eq!(
            Answer::parse("records_per_subject_visit", "DTYPE=").unwrap(),
            Answer::RecordsPerSubjectVisit(RecordsPerSubjectVisit::OneWhere {
                column: "DTYPE".to_owned(),
                value: String::new()
            })
        );
    }

    #[test]
    fn malformed_texts_say_which_question_and_what_was_expected() {
        for (id, text, expected) in [
            ("y_scale", "log", "expected fixed or free"),
            ("low_n_threshold", "0", "from 1 to 1000"),
            ("low_n_threshold", "1001", "from 1 to 1000"),
            ("low_n_action", "hide", "suppress_box"),
            ("filters", "SAFFL=Y", "JSON object"),
            ("visits", "[1,2]", "JSON array of strings"),
            ("records_per_subject_visit", "=Y", "COLUMN=VALUE"),
        ] {
            let error = Answer::parse(id, text).unwrap_err().to_string();
            assert!(error.contains(id), "{error}");
            assert!(error.contains(expected), "{id}: {error}");
        }
        let unknown = Answer::parse("colour", "red").unwrap_err();
        assert!(matches!(unknown, AnswerError::UnknownQuestion { .. }));
        assert!(unknown.to_string().contains("low_n_action"));
    }
}
