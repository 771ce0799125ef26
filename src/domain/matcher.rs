//! The deterministic question matcher: the user's words plus the dataset profile give a draft
//! plot spec and notes saying which words chose what. No network and no model: word matching
//! against parameter codes and labels, visit labels and a few fixed phrases.

use serde::{Deserialize, Serialize};

use super::{
    profile::{DatasetProfile, ParameterProfile, DEFAULT_LOW_N_THRESHOLD},
    spec::{
        LowNAction, LowNPolicy, ParameterChoice, PlotSpec, RecordFilter, SpecState,
        TreatmentChoice, VisitChoice, VisitOrderSource, YScale,
    },
};

/// One decision the matcher took, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchNote {
    /// The spec field decided, e.g. `parameter`.
    pub field: String,
    /// The words of the question that decided it; empty when a default was taken.
    pub words: Vec<String>,
    /// What was chosen, e.g. `PARAMCD = ALT (Alanine Aminotransferase (U/L))`.
    pub chosen: String,
}

/// Why no draft could be proposed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    /// The dataset lacks a column the plot cannot do without.
    #[error("the dataset has no {role} column (looked for {looked_for}); it cannot be plotted as a boxplot by visit and treatment")]
    MissingRole {
        /// The role, e.g. `treatment`.
        role: &'static str,
        /// The names looked for.
        looked_for: &'static str,
    },
    /// The question is empty.
    #[error("the question is empty: say what to plot, e.g. \"ALT over time by arm\"")]
    EmptyQuestion,
}

/// Lowercase words of `text` (letters, digits and `_`).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Common other names of lab parameters, mapped to their CDISC codes.
const SYNONYMS: [(&str, &str); 6] = [
    ("sgpt", "ALT"),
    ("sgot", "AST"),
    ("bilirubin", "BILI"),
    ("urea", "BUN"),
    ("potassium", "K"),
    ("sodium", "SODIUM"),
];

/// Visit labels that are not scheduled visits and are left out of "over time" unless named.
fn is_unscheduled(label: &str) -> bool {
    let lower = label.to_lowercase();
    label.trim_matches('.').is_empty()
        || ["unscheduled", "end of", "early termination", "retrieval"]
            .iter()
            .any(|p| lower.contains(p))
}

fn label_name_words(label: &str) -> Vec<String> {
    let name = label.split('(').next().unwrap_or(label);
    words(name)
}

/// The parameter the question names, with the words that named it.
fn match_parameter<'a>(
    question: &[String],
    parameters: &'a [ParameterProfile],
) -> Option<(&'a ParameterProfile, Vec<String>)> {
    let mut best: Option<(u32, &ParameterProfile, Vec<String>)> = None;
    for parameter in parameters {
        let code = parameter.code.to_lowercase();
        let mut score = 0;
        let mut matched = Vec::new();
        if question.contains(&code) {
            score = 30;
            matched.push(code.clone());
        } else if let Some((word, _)) = SYNONYMS
            .iter()
            .find(|(word, target)| *target == parameter.code && question.iter().any(|q| q == word))
        {
            score = 25;
            matched.push((*word).to_owned());
        } else if let Some(label) = parameter.labels.first() {
            let name = label_name_words(label);
            if !name.is_empty() && name.iter().all(|w| question.contains(w)) {
                score = 20 + name.len() as u32;
                matched = name;
            }
        }
        if score == 0 {
            continue;
        }
        if !parameter.derived_looking {
            score += 5;
        }
        if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
            best = Some((score, parameter, matched));
        }
    }
    best.map(|(_, p, w)| (p, w))
}

fn contains_phrase(question: &[String], phrase: &[&str]) -> bool {
    question
        .windows(phrase.len())
        .any(|window| window.iter().zip(phrase).all(|(a, b)| a == b))
}

/// Proposes a draft spec for `question` over the dataset `profile`.
pub fn propose_draft(
    question: &str,
    profile: &DatasetProfile,
) -> Result<(PlotSpec, Vec<MatchNote>), MatchError> {
    if question.trim().is_empty() {
        return Err(MatchError::EmptyQuestion);
    }
    let q = words(question);
    let roles = &profile.roles;
    let mut notes = Vec::new();
    let mut note = |field: &str, words: Vec<String>, chosen: String| {
        notes.push(MatchNote {
            field: field.to_owned(),
            words,
            chosen,
        })
    };

    // Parameter: a code, a synonym or every word of a label's name; else the first measured one.
    let parameter_column = roles
        .parameter_code
        .first()
        .ok_or(MatchError::MissingRole {
            role: "parameter code",
            looked_for: "PARAMCD",
        })?;
    let (parameter, parameter_words) = match match_parameter(&q, &profile.parameters) {
        Some(found) => found,
        None => {
            let fallback = profile
                .parameters
                .iter()
                .find(|p| !p.derived_looking)
                .or(profile.parameters.first())
                .ok_or(MatchError::MissingRole {
                    role: "parameter code",
                    looked_for: "PARAMCD with values",
                })?;
            (fallback, Vec::new())
        }
    };
    let parameter_label = parameter.labels.first().cloned();
    note(
        "parameter",
        parameter_words,
        format!(
            "{parameter_column} = {}{}",
            parameter.code,
            parameter_label
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default()
        ),
    );

    // Value: change, percent change, or the analysis value.
    let has = |name: &str| roles.value.iter().any(|v| v == name);
    let (value_column, value_words) = if (contains_phrase(&q, &["percent", "change"])
        || q.iter().any(|w| w == "pchg"))
        && has("PCHG")
    {
        (
            "PCHG".to_owned(),
            vec!["percent".to_owned(), "change".to_owned()],
        )
    } else if (q.iter().any(|w| w == "change" || w == "chg")) && has("CHG") {
        ("CHG".to_owned(), vec!["change".to_owned()])
    } else {
        let first = roles.value.first().ok_or(MatchError::MissingRole {
            role: "numeric value",
            looked_for: "AVAL, CHG, PCHG, BASE",
        })?;
        (first.clone(), Vec::new())
    };
    note("value_variable", value_words, value_column.clone());

    // Treatment: "planned" or "actual" pick TRTP or TRTA; "arm" prefers ARM/ACTARM.
    let treatment_pick = |names: &[&str]| {
        names
            .iter()
            .find(|n| roles.treatment.iter().any(|t| t == *n))
            .map(|n| (*n).to_owned())
    };
    let (treatment_column, treatment_words) = if let Some(t) = q
        .iter()
        .any(|w| w == "planned")
        .then(|| treatment_pick(&["TRTP", "TRT01P", "ARM"]))
        .flatten()
    {
        (t, vec!["planned".to_owned()])
    } else if let Some(t) = q
        .iter()
        .any(|w| w == "arm")
        .then(|| treatment_pick(&["ACTARM", "ARM"]))
        .flatten()
    {
        (t, vec!["arm".to_owned()])
    } else {
        let first = roles.treatment.first().ok_or(MatchError::MissingRole {
            role: "treatment",
            looked_for: "TRTA, TRTP, TRT01A, TRT01P, ACTARM, ARM",
        })?;
        let words = ["arm", "treatment", "actual"]
            .iter()
            .filter(|w| q.iter().any(|q| q == *w))
            .map(|w| (*w).to_owned())
            .collect();
        (first.clone(), words)
    };
    let levels = profile
        .treatment_levels
        .iter()
        .find(|l| l.column == treatment_column)
        .map(|l| l.levels.clone())
        .unwrap_or_default();
    note(
        "treatment_variable",
        treatment_words,
        treatment_column.clone(),
    );

    // Visits: those named ("week 12", "baseline"), else every scheduled visit in order.
    let visit_candidate = roles.visit.first().ok_or(MatchError::MissingRole {
        role: "visit",
        looked_for: "AVISIT, VISIT, ATPT",
    })?;
    let visits_of = profile
        .visit_levels
        .iter()
        .find(|v| v.column == visit_candidate.label);
    let all_visits: Vec<&super::profile::VisitLevel> = visits_of
        .map(|v| v.visits.iter().collect())
        .unwrap_or_default();
    // "change from baseline" names the value, not a visit: drop that "baseline" here.
    let visit_words_of_question: Vec<String> = q
        .iter()
        .enumerate()
        .filter(|(i, w)| !(*w == "baseline" && *i > 0 && q[i - 1] == "from"))
        .map(|(_, w)| w.clone())
        .collect();
    let mut named = Vec::new();
    let mut named_words = Vec::new();
    for visit in &all_visits {
        let label_words = words(&visit.label);
        if !label_words.is_empty()
            && contains_phrase(
                &visit_words_of_question,
                &label_words.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        {
            named.push(visit.label.clone());
            named_words.push(label_words.join(" "));
        }
    }
    let change_value = value_column == "CHG" || value_column == "PCHG";
    let visits: Vec<String> = if named.is_empty() {
        all_visits
            .iter()
            .filter(|v| v.order.is_some() && !is_unscheduled(&v.label))
            .filter(|v| !(change_value && v.label.eq_ignore_ascii_case("baseline")))
            .map(|v| v.label.clone())
            .collect()
    } else {
        named
    };
    let visit_words = if named_words.is_empty() {
        ["over", "time", "visit", "visits"]
            .iter()
            .filter(|w| q.iter().any(|q| q == *w))
            .map(|w| (*w).to_owned())
            .collect()
    } else {
        named_words
    };
    note("visits", visit_words, visits.join(", "));
    let order_source = match &visit_candidate.order {
        Some(column) => VisitOrderSource::Column {
            column: column.clone(),
        },
        None => VisitOrderSource::AsListed,
    };

    // Filters: the safety population when flagged; ANL01FL only when it keeps the baseline.
    let mut filters = Vec::new();
    if roles.population_flags.iter().any(|f| f == "SAFFL") {
        filters.push(RecordFilter {
            column: "SAFFL".to_owned(),
            values: vec!["Y".to_owned()],
        });
    }
    let baseline_kept = visits.iter().any(|v| v.eq_ignore_ascii_case("baseline"));
    let anl_removes_baseline = profile.warnings.iter().any(|w| {
        matches!(w, super::profile::ProfileWarning::FlagRemovesBaseline { flag, .. } if flag == "ANL01FL")
    });
    if roles.record_flags.iter().any(|f| f == "ANL01FL") && !(baseline_kept && anl_removes_baseline)
    {
        filters.push(RecordFilter {
            column: "ANL01FL".to_owned(),
            values: vec!["Y".to_owned()],
        });
    }
    note(
        "filters",
        Vec::new(),
        if filters.is_empty() {
            "none".to_owned()
        } else {
            filters
                .iter()
                .map(|f| format!("{} = {}", f.column, f.values.join("|")))
                .collect::<Vec<_>>()
                .join(", ")
        },
    );

    let y_scale = if q.iter().any(|w| w == "free") {
        note("y_scale", vec!["free".to_owned()], "free".to_owned());
        YScale::Free
    } else {
        YScale::Fixed
    };
    let unit = match parameter.units.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    };
    let subject_column = roles.subject.first().ok_or(MatchError::MissingRole {
        role: "subject",
        looked_for: "USUBJID, SUBJID",
    })?;
    let what = parameter_label
        .clone()
        .unwrap_or_else(|| parameter.code.clone());
    let title = match value_column.as_str() {
        "CHG" => format!("Change from baseline in {what} by visit and treatment"),
        "PCHG" => format!("Percent change from baseline in {what} by visit and treatment"),
        _ => format!("{what} by visit and treatment"),
    };
    let spec = PlotSpec {
        state: SpecState::Draft,
        dataset_content_hash: profile.content_hash,
        question: question.to_owned(),
        parameter: ParameterChoice {
            column: parameter_column.clone(),
            value: parameter.code.clone(),
            label: parameter_label,
        },
        filters,
        treatment: TreatmentChoice {
            column: treatment_column,
            levels,
        },
        value_column,
        subject_column: subject_column.clone(),
        visit: VisitChoice {
            column: visit_candidate.label.clone(),
            order_source,
            visits,
        },
        y_scale,
        unit,
        low_n: LowNPolicy {
            threshold: DEFAULT_LOW_N_THRESHOLD,
            below: LowNAction::Annotate,
        },
        title,
    };
    Ok((spec, notes))
}
