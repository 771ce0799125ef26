//! Confirmation questions: every choice of a draft spec that changes the plot, as data the UI
//! and the CLI ask (question, proposed answer, allowed answers, why it is asked). Answers are
//! read and applied in [`crate::question::answer`].

use crate::question::matcher::parameters_named_equally;
use adamviz_model::{
    confirmation::{AllowedAnswers, ConfirmationQuestion, UnavailableChoice},
    profile::{DatasetProfile, ParameterProfile},
    records::RecordsAnalysis,
    spec::{LowNAction, PlotSpec, RecordFilter, RecordsPerSubjectVisit, YScale},
};

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

/// The questions for `spec` over `profile`, in [`QUESTION_IDS`](adamviz_model::confirmation::QUESTION_IDS) order. `records` is what the
/// selection holds per subject and visit: the record question is asked when some subject has
/// several records at a visit (or when the spec already answers it with a choice).
pub fn confirmation_questions(
    spec: &PlotSpec,
    profile: &DatasetProfile,
    records: &RecordsAnalysis,
) -> Vec<ConfirmationQuestion> {
    let levels_of = profile
        .treatment_levels
        .iter()
        .find(|l| l.column == spec.treatment.column);
    let treatment_levels = levels_of
        .map(|l| l.levels.clone())
        .unwrap_or_else(|| spec.treatment.levels.clone());
    // Which rule ordered the levels offered (an order variable, placebo and doses, first
    // appearance), so the order can be checked rather than trusted.
    let levels_why = match levels_of.filter(|l| !l.order_why.is_empty()) {
        Some(l) => format!("Panel order and the levels kept change the plot; records of other levels are dropped. Proposed: {}.", l.order_why),
        None => "Panel order and the levels kept change the plot; records of other levels are dropped.".to_owned(),
    };
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
    let mut questions = vec![
        parameter_question(spec, profile),
        q(
            "filters",
            "Which population and record filters apply?",
            Some(filters_text(&spec.filters)),
            AllowedAnswers::Filters { columns: flag_columns },
            "Filters decide which subjects and records are counted; a record flag can remove the baseline visit.",
        ),
        treatment_variable_question(spec, profile),
        q(
            "treatment_levels",
            "Which treatment levels are shown, in which panel order?",
            Some(list_text(&spec.treatment.levels)),
            AllowedAnswers::OrderedSubsetOf { items: treatment_levels },
            &levels_why,
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
        visit_variable_question(spec, profile),
        q(
            "visits",
            "Which visits are shown, in which order?",
            Some(list_text(&spec.visit.visits)),
            AllowedAnswers::OrderedSubsetOf { items: visits },
            "Unscheduled and end-of-treatment visits repeat or scatter scheduled ones; the proposal keeps scheduled visits in order.",
        ),
    ];
    questions.extend(record_question(spec, records));
    questions.extend(display_questions(spec, profile));
    questions
}

/// A question with nothing unavailable.
fn q(
    id: &str,
    question: &str,
    proposed: Option<String>,
    allowed: AllowedAnswers,
    why: &str,
) -> ConfirmationQuestion {
    ConfirmationQuestion {
        id: id.to_owned(),
        question: question.to_owned(),
        proposed,
        allowed,
        unavailable: Vec::new(),
        why: why.to_owned(),
    }
}

/// Which parameter: those with numbers in the value column; the others listed as unavailable.
/// Left open by a tie, it names the parameters the question named equally well.
fn parameter_question(spec: &PlotSpec, profile: &DatasetProfile) -> ConfirmationQuestion {
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
    if spec.parameter.is_none() {
        let tied = parameters_named_equally(&spec.question, profile, &spec.value_column);
        if let Some(names) = names_of_tied(&tied) {
            parameter.why = format!(
                "The question names {names} equally well: choose one. {}",
                parameter.why
            );
        }
    }
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
    parameter
}

/// `DIABP (Diastolic Blood Pressure (mmHg)) and SYSBP (Systolic Blood Pressure (mmHg))`, when
/// there are two or more.
fn names_of_tied(tied: &[&ParameterProfile]) -> Option<String> {
    let named: Vec<String> = tied
        .iter()
        .map(|p| match p.labels.first() {
            Some(label) => format!("{} ({label})", p.code),
            None => p.code.clone(),
        })
        .collect();
    match named.as_slice() {
        [] | [_] => None,
        [first @ .., last] => Some(format!("{} and {last}", first.join(", "))),
    }
}

/// Which treatment variable: those with a value; the empty ones listed as unavailable.
fn treatment_variable_question(spec: &PlotSpec, profile: &DatasetProfile) -> ConfirmationQuestion {
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
    treatment_variable
}

/// Which visit variable: those with a value; the empty ones listed as unavailable.
fn visit_variable_question(spec: &PlotSpec, profile: &DatasetProfile) -> ConfirmationQuestion {
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
    visit_variable
}

/// Which record per subject and visit, when the selection holds several (or the spec already
/// answers with a choice).
fn record_question(spec: &PlotSpec, records: &RecordsAnalysis) -> Option<ConfirmationQuestion> {
    let answered_with_a_choice = spec
        .records_per_subject_visit
        .as_ref()
        .is_some_and(|r| *r != RecordsPerSubjectVisit::One);
    (records.with_several > 0 || answered_with_a_choice).then(|| {
        q(
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
        )
    })
}

/// How the plot shows the values: y scale, unit, low N, title.
fn display_questions(spec: &PlotSpec, profile: &DatasetProfile) -> [ConfirmationQuestion; 5] {
    let unit_choices = spec
        .parameter
        .as_ref()
        .and_then(|chosen| profile.parameters.iter().find(|p| p.code == chosen.value))
        .map(|p| p.units.clone())
        .unwrap_or_default();
    [
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
    ]
}
