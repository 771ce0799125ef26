//! Confirmation questions: every choice of a draft spec that changes the plot, as data the UI
//! and the CLI ask (question, proposed answer, allowed answers, why it is asked), and applying
//! an answer to a draft.

use serde::{Deserialize, Serialize};

use super::{
    profile::DatasetProfile,
    spec::{LowNAction, PlotSpec, RecordFilter, SpecState, VisitOrderSource, YScale},
};

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
}

/// One question the user answers or accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmationQuestion {
    /// Identifier used with `--set ID=ANSWER`.
    pub id: String,
    /// The question as asked.
    pub question: String,
    /// The proposed answer, in the answer syntax.
    pub proposed: String,
    /// What may be answered.
    pub allowed: AllowedAnswers,
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
pub const QUESTION_IDS: [&str; 12] = [
    "parameter",
    "filters",
    "treatment_variable",
    "treatment_levels",
    "value_variable",
    "visit_variable",
    "visits",
    "y_scale",
    "unit",
    "low_n_threshold",
    "low_n_action",
    "title",
];

/// A list answer: a JSON array of strings, or items joined by `|`.
pub fn parse_list(answer: &str) -> Result<Vec<String>, String> {
    if answer.trim_start().starts_with('[') {
        serde_json::from_str(answer).map_err(|err| format!("not a JSON array of strings: {err}"))
    } else if answer.is_empty() {
        Ok(Vec::new())
    } else {
        Ok(answer.split('|').map(str::to_owned).collect())
    }
}

fn list_text(items: &[String]) -> String {
    if items
        .iter()
        .any(|i| i.contains('|') || i.is_empty() || i.starts_with('['))
    {
        serde_json::to_string(items).unwrap_or_default()
    } else {
        items.join("|")
    }
}

fn filters_text(filters: &[RecordFilter]) -> String {
    if filters.is_empty() {
        return "none".to_owned();
    }
    let map: serde_json::Map<String, serde_json::Value> = filters
        .iter()
        .map(|f| (f.column.clone(), serde_json::json!(f.values)))
        .collect();
    serde_json::Value::Object(map).to_string()
}

fn low_n_action_text(action: LowNAction) -> &'static str {
    match action {
        LowNAction::Annotate => "annotate",
        LowNAction::PointsOnly => "points_only",
        LowNAction::SuppressBox => "suppress_box",
    }
}

/// The questions for `spec` over `profile`, in [`QUESTION_IDS`] order.
pub fn confirmation_questions(
    spec: &PlotSpec,
    profile: &DatasetProfile,
) -> Vec<ConfirmationQuestion> {
    let q = |id: &str, question: &str, proposed: String, allowed, why: &str| ConfirmationQuestion {
        id: id.to_owned(),
        question: question.to_owned(),
        proposed,
        allowed,
        why: why.to_owned(),
    };
    let treatment_levels = profile
        .treatment_levels
        .iter()
        .find(|l| l.column == spec.treatment.column)
        .map(|l| l.levels.clone())
        .unwrap_or_else(|| spec.treatment.levels.clone());
    let visits = profile
        .visit_levels
        .iter()
        .find(|v| v.column == spec.visit.column)
        .map(|v| v.visits.iter().map(|v| v.label.clone()).collect())
        .unwrap_or_else(|| spec.visit.visits.clone());
    let flag_columns: Vec<String> = profile
        .roles
        .population_flags
        .iter()
        .chain(&profile.roles.record_flags)
        .cloned()
        .collect();
    let unit_choices = profile
        .parameters
        .iter()
        .find(|p| p.code == spec.parameter.value)
        .map(|p| p.units.clone())
        .unwrap_or_default();
    vec![
        q(
            "parameter",
            "Which parameter is plotted?",
            spec.parameter.value.clone(),
            AllowedAnswers::OneOf {
                choices: profile.parameters.iter().map(|p| p.code.clone()).collect(),
            },
            "The plot shows one parameter; the question's words were matched to a code or label.",
        ),
        q(
            "filters",
            "Which population and record filters apply?",
            filters_text(&spec.filters),
            AllowedAnswers::Filters { columns: flag_columns },
            "Filters decide which subjects and records are counted; a record flag can remove the baseline visit.",
        ),
        q(
            "treatment_variable",
            "Which variable gives the treatment panels?",
            spec.treatment.column.clone(),
            AllowedAnswers::OneOf {
                choices: profile.roles.treatment.clone(),
            },
            "Actual and planned treatment can differ for some subjects.",
        ),
        q(
            "treatment_levels",
            "Which treatment levels are shown, in which panel order?",
            list_text(&spec.treatment.levels),
            AllowedAnswers::OrderedSubsetOf { items: treatment_levels },
            "Panel order and the levels kept change the plot; records of other levels are dropped.",
        ),
        q(
            "value_variable",
            "Which value is plotted?",
            spec.value_column.clone(),
            AllowedAnswers::OneOf {
                choices: profile.roles.value.clone(),
            },
            "Analysis value, change from baseline and percent change answer different questions.",
        ),
        q(
            "visit_variable",
            "Which variable gives the visits?",
            spec.visit.column.clone(),
            AllowedAnswers::OneOf {
                choices: profile.roles.visit.iter().map(|v| v.label.clone()).collect(),
            },
            "The visit variable and its order variable set the x axis.",
        ),
        q(
            "visits",
            "Which visits are shown, in which order?",
            list_text(&spec.visit.visits),
            AllowedAnswers::OrderedSubsetOf { items: visits },
            "Unscheduled and end-of-treatment visits repeat or scatter scheduled ones; the proposal keeps scheduled visits in order.",
        ),
        q(
            "y_scale",
            "Do the panels share one y axis?",
            match spec.y_scale {
                YScale::Fixed => "fixed",
                YScale::Free => "free",
            }
            .to_owned(),
            AllowedAnswers::OneOf {
                choices: vec!["fixed".to_owned(), "free".to_owned()],
            },
            "A free y axis makes panels look comparable when they are not; free-scale plots stay experimental and are never Verified.",
        ),
        q(
            "unit",
            "Which unit does the y axis show?",
            spec.unit.clone().unwrap_or_else(|| "none".to_owned()),
            if unit_choices.is_empty() {
                AllowedAnswers::Text
            } else {
                AllowedAnswers::OneOf { choices: unit_choices }
            },
            "The unit must agree with the data; mixed units within a parameter cannot share an axis.",
        ),
        q(
            "low_n_threshold",
            "Below how many subjects is a cell low N?",
            spec.low_n.threshold.to_string(),
            AllowedAnswers::WholeNumber { min: 1, max: 1000 },
            "A box drawn from very few subjects suggests a spread that is not there.",
        ),
        q(
            "low_n_action",
            "What does a low-N cell show?",
            low_n_action_text(spec.low_n.below).to_owned(),
            AllowedAnswers::OneOf {
                choices: vec![
                    "annotate".to_owned(),
                    "points_only".to_owned(),
                    "suppress_box".to_owned(),
                ],
            },
            "The policy is applied visibly, with a footnote.",
        ),
        q(
            "title",
            "What is the title?",
            spec.title.clone(),
            AllowedAnswers::Text,
            "The title is part of the governed output.",
        ),
    ]
}

/// Applies one answer to a draft spec. Changing the treatment or visit variable resets its
/// levels or visits to those the profile lists, so later answers pick from the new variable.
pub fn apply_answer(
    spec: &mut PlotSpec,
    profile: &DatasetProfile,
    id: &str,
    answer: &str,
) -> Result<(), AnswerError> {
    let malformed = |reason: &str| AnswerError::Malformed {
        id: id.to_owned(),
        answer: answer.chars().take(200).collect(),
        reason: reason.to_owned(),
    };
    spec.state = SpecState::Draft;
    match id {
        "parameter" => {
            spec.parameter.value = answer.to_owned();
            spec.parameter.label = profile
                .parameters
                .iter()
                .find(|p| p.code == answer)
                .and_then(|p| p.labels.first().cloned());
        }
        "filters" => {
            spec.filters = if answer == "none" {
                Vec::new()
            } else {
                let map: std::collections::BTreeMap<String, Vec<String>> =
                    serde_json::from_str(answer).map_err(|err| {
                        malformed(&format!(
                            "expected none or a JSON object such as {{\"SAFFL\":[\"Y\"]}}: {err}"
                        ))
                    })?;
                map.into_iter()
                    .map(|(column, values)| RecordFilter { column, values })
                    .collect()
            };
        }
        "treatment_variable" => {
            spec.treatment.column = answer.to_owned();
            spec.treatment.levels = profile
                .treatment_levels
                .iter()
                .find(|l| l.column == answer)
                .map(|l| l.levels.clone())
                .unwrap_or_default();
        }
        "treatment_levels" => {
            spec.treatment.levels = parse_list(answer).map_err(|r| malformed(&r))?
        }
        "value_variable" => spec.value_column = answer.to_owned(),
        "visit_variable" => {
            spec.visit.column = answer.to_owned();
            let visits = profile.visit_levels.iter().find(|v| v.column == answer);
            spec.visit.visits = visits
                .map(|v| {
                    v.visits
                        .iter()
                        .filter(|v| v.order.is_some())
                        .map(|v| v.label.clone())
                        .collect()
                })
                .unwrap_or_default();
            spec.visit.order_source = match visits.and_then(|v| v.order_column.clone()) {
                Some(column) => VisitOrderSource::Column { column },
                None => VisitOrderSource::AsListed,
            };
        }
        "visits" => spec.visit.visits = parse_list(answer).map_err(|r| malformed(&r))?,
        "y_scale" => {
            spec.y_scale = match answer {
                "fixed" => YScale::Fixed,
                "free" => YScale::Free,
                _ => return Err(malformed("expected fixed or free")),
            }
        }
        "unit" => spec.unit = (answer != "none").then(|| answer.to_owned()),
        "low_n_threshold" => {
            spec.low_n.threshold = answer
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=1000).contains(n))
                .ok_or_else(|| malformed("expected a whole number from 1 to 1000"))?
        }
        "low_n_action" => {
            spec.low_n.below = match answer {
                "annotate" => LowNAction::Annotate,
                "points_only" => LowNAction::PointsOnly,
                "suppress_box" => LowNAction::SuppressBox,
                _ => return Err(malformed("expected annotate, points_only or suppress_box")),
            }
        }
        "title" => {
            if answer.trim().is_empty() {
                return Err(malformed("the title cannot be empty"));
            }
            spec.title = answer.to_owned();
        }
        _ => {
            return Err(AnswerError::UnknownQuestion {
                id: id.to_owned(),
                known: QUESTION_IDS.join(", "),
            })
        }
    }
    Ok(())
}
