//! Confirmation questions: every choice of a draft spec that changes the plot, as data the UI
//! and the CLI ask (question, proposed answer, allowed answers, why it is asked), and applying
//! an answer to a draft.

use crate::domain::{
    confirmation::{
        AllowedAnswers, AnswerError, ConfirmationQuestion, UnavailableChoice, QUESTION_IDS,
    },
    profile::DatasetProfile,
    records::RecordsAnalysis,
    spec::{
        LowNAction, ParameterChoice, PlotSpec, RecordFilter, RecordsPerSubjectVisit, SpecState,
        VisitOrderSource, YScale,
    },
};
use crate::question::matcher::default_title;

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

/// The questions for `spec` over `profile`, in [`QUESTION_IDS`] order. `records` is what the
/// selection holds per subject and visit: the record question is asked when some subject has
/// several records at a visit (or when the spec already answers it with a choice).
pub fn confirmation_questions(
    spec: &PlotSpec,
    profile: &DatasetProfile,
    records: &RecordsAnalysis,
) -> Vec<ConfirmationQuestion> {
    let q = |id: &str, question: &str, proposed: Option<String>, allowed, why: &str| {
        ConfirmationQuestion {
            id: id.to_owned(),
            question: question.to_owned(),
            proposed,
            allowed,
            unavailable: Vec::new(),
            why: why.to_owned(),
        }
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
    let unit_choices = spec
        .parameter
        .as_ref()
        .and_then(|chosen| profile.parameters.iter().find(|p| p.code == chosen.value))
        .map(|p| p.units.clone())
        .unwrap_or_default();
    let (plottable, not_plottable): (Vec<_>, Vec<_>) = profile
        .parameters
        .iter()
        .partition(|p| p.has_values_in(&spec.value_column));
    let mut parameter = q(
        "parameter",
        "Which parameter is plotted?",
        spec.parameter.as_ref().map(|p| p.value.clone()),
        AllowedAnswers::OneOf {
            choices: plottable.iter().map(|p| p.code.clone()).collect(),
        },
        "The plot shows one parameter; the question's words were matched to a code, a label's words or a synonym.",
    );
    parameter.unavailable = not_plottable
        .iter()
        .map(|p| UnavailableChoice {
            choice: p.code.clone(),
            reason: format!(
                "no numbers in {} ({} records; a text result is not plotted as a boxplot)",
                spec.value_column, p.records
            ),
        })
        .collect();
    let (usable_treatments, empty_treatments): (Vec<_>, Vec<_>) =
        profile.roles.treatment.iter().partition(|t| {
            profile
                .treatment_levels
                .iter()
                .any(|l| &l.column == *t && !l.levels.is_empty())
        });
    let mut treatment_variable = q(
        "treatment_variable",
        "Which variable gives the treatment panels?",
        Some(spec.treatment.column.clone()),
        AllowedAnswers::OneOf {
            choices: usable_treatments.into_iter().cloned().collect(),
        },
        "Actual and planned treatment can differ for some subjects.",
    );
    treatment_variable.unavailable = empty_treatments
        .into_iter()
        .map(|t| UnavailableChoice {
            choice: t.clone(),
            reason: "every value is missing".to_owned(),
        })
        .collect();
    let (usable_visits, empty_visits): (Vec<_>, Vec<_>) =
        profile.roles.visit.iter().partition(|v| {
            profile
                .visit_levels
                .iter()
                .any(|l| l.column == v.label && !l.visits.is_empty())
        });
    let mut visit_variable = q(
        "visit_variable",
        "Which variable gives the visits?",
        Some(spec.visit.column.clone()),
        AllowedAnswers::OneOf {
            choices: usable_visits.iter().map(|v| v.label.clone()).collect(),
        },
        "The visit variable and its order variable set the x axis.",
    );
    visit_variable.unavailable = empty_visits
        .iter()
        .map(|v| UnavailableChoice {
            choice: v.label.clone(),
            reason: "every value is missing".to_owned(),
        })
        .collect();
    let mut questions = vec![
        parameter,
        q(
            "filters",
            "Which population and record filters apply?",
            Some(filters_text(&spec.filters)),
            AllowedAnswers::Filters { columns: flag_columns },
            "Filters decide which subjects and records are counted; a record flag can remove the baseline visit.",
        ),
        treatment_variable,
        q(
            "treatment_levels",
            "Which treatment levels are shown, in which panel order?",
            Some(list_text(&spec.treatment.levels)),
            AllowedAnswers::OrderedSubsetOf { items: treatment_levels },
            "Panel order and the levels kept change the plot; records of other levels are dropped.",
        ),
        q(
            "value_variable",
            "Which value is plotted?",
            Some(spec.value_column.clone()),
            AllowedAnswers::OneOf {
                choices: profile.roles.value.clone(),
            },
            "Analysis value, change from baseline and percent change answer different questions.",
        ),
        visit_variable,
        q(
            "visits",
            "Which visits are shown, in which order?",
            Some(list_text(&spec.visit.visits)),
            AllowedAnswers::OrderedSubsetOf { items: visits },
            "Unscheduled and end-of-treatment visits repeat or scatter scheduled ones; the proposal keeps scheduled visits in order.",
        ),
    ];
    let answered_with_a_choice = spec
        .records_per_subject_visit
        .as_ref()
        .is_some_and(|r| *r != RecordsPerSubjectVisit::One);
    if records.with_several > 0 || answered_with_a_choice {
        questions.push(q(
            "records_per_subject_visit",
            "Which record per subject and visit?",
            spec.records_per_subject_visit
                .as_ref()
                .map(RecordsPerSubjectVisit::answer_text),
            AllowedAnswers::RecordChoice {
                options: records.options.clone(),
            },
            &format!(
                "{} of {} subject × visit combinations have several records (time points, positions, a derived average or replicates), e.g. {}. A box that pools them counts a subject several times; keep one record each, or keep every record and let N count records. {}",
                records.with_several,
                records.subject_visits,
                records.examples.join(", "),
                records.why
            ),
        ));
    }
    questions.extend([
        q(
            "y_scale",
            "Do the panels share one y axis?",
            Some(
                match spec.y_scale {
                    YScale::Fixed => "fixed",
                    YScale::Free => "free",
                }
                .to_owned(),
            ),
            AllowedAnswers::OneOf {
                choices: vec!["fixed".to_owned(), "free".to_owned()],
            },
            "A free y axis makes panels look comparable when they are not; free-scale plots stay experimental and are never Verified.",
        ),
        q(
            "unit",
            "Which unit does the y axis show?",
            Some(spec.unit.clone().unwrap_or_else(|| "none".to_owned())),
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
            Some(spec.low_n.threshold.to_string()),
            AllowedAnswers::WholeNumber { min: 1, max: 1000 },
            "A box drawn from very few subjects suggests a spread that is not there.",
        ),
        q(
            "low_n_action",
            "What does a low-N cell show?",
            Some(low_n_action_text(spec.low_n.below).to_owned()),
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
            Some(spec.title.clone()),
            AllowedAnswers::Text,
            "The title is part of the governed output.",
        ),
    ]);
    questions
}

/// The answer `every`, `one` or `COLUMN=VALUE` as a record choice.
pub fn parse_records_answer(answer: &str) -> Result<RecordsPerSubjectVisit, String> {
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
                "expected every, one, or COLUMN=VALUE (e.g. DTYPE=AVERAGE; DTYPE= for a blank DTYPE)"
                    .to_owned(),
            ),
        },
    }
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
            let column = match (&spec.parameter, profile.roles.parameter_code.first()) {
                (Some(chosen), _) => chosen.column.clone(),
                (None, Some(column)) => column.clone(),
                (None, None) => return Err(malformed("the dataset has no parameter code column")),
            };
            let find = |code: &str| profile.parameters.iter().find(|p| p.code == code);
            let before = spec.parameter.as_ref().and_then(|p| find(&p.value));
            let after = find(answer);
            // A title or unit the draft derived from the old parameter follows the new one;
            // one the user wrote stays.
            if spec.title == default_title(before, &spec.value_column) {
                spec.title = default_title(after, &spec.value_column);
            }
            let single_unit = |p: Option<&crate::domain::profile::ParameterProfile>| match p
                .map(|p| p.units.as_slice())
            {
                Some([one]) => Some(one.clone()),
                _ => None,
            };
            if spec.unit.is_none() || spec.unit == single_unit(before) {
                spec.unit = single_unit(after);
            }
            spec.parameter = Some(ParameterChoice {
                column,
                value: answer.to_owned(),
                label: after.and_then(|p| p.labels.first().cloned()),
            });
        }
        "records_per_subject_visit" => {
            spec.records_per_subject_visit =
                Some(parse_records_answer(answer).map_err(|r| malformed(&r))?)
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
            // Ordered visits only when there is an order column; without one, all of them in
            // order of first appearance.
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
