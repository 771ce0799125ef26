//! The deterministic question matcher: the user's words plus the dataset profile give a draft
//! plot spec and notes saying which words chose what. No network and no model: word matching
//! against parameter codes and whole labels (every word of the question counts), visit labels
//! and a few fixed phrases.

use adamviz_model::{
    matcher::{MatchError, MatchNote},
    profile::{
        CandidateRoles, DatasetProfile, ParameterProfile, VisitLevel, VisitsOf,
        DEFAULT_LOW_N_THRESHOLD,
    },
    spec::{
        LowNAction, LowNPolicy, ParameterChoice, PlotSpec, RecordFilter, SpecState,
        TreatmentChoice, VisitChoice, VisitOrderSource, YScale,
    },
};

mod parameter;

use parameter::choose_parameter;
pub use parameter::{parameters_named_equally, SYNONYMS};

/// Lowercase words of `text` (letters, digits and `_`): punctuation, apostrophes, hyphens and
/// parentheses separate words, so "Fridericia's" gives "fridericia".
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether the question's words hold `phrase`'s words in a row.
fn contains_phrase(question: &[String], phrase: &[&str]) -> bool {
    !phrase.is_empty()
        && question
            .windows(phrase.len())
            .any(|window| window.iter().zip(phrase).all(|(a, b)| a == b))
}

/// Visit labels that are not scheduled visits and are left out of "over time" unless named.
fn is_unscheduled(label: &str) -> bool {
    let lower = label.to_lowercase();
    label.trim_matches('.').is_empty()
        || ["unscheduled", "end of", "early termination", "retrieval"]
            .iter()
            .any(|p| lower.contains(p))
}

/// The title a draft proposes for `parameter` (its label, else its code) and `value_column`.
pub fn default_title(parameter: Option<&ParameterProfile>, value_column: &str) -> String {
    let what = match parameter {
        Some(p) => p.labels.first().cloned().unwrap_or_else(|| p.code.clone()),
        None => "the chosen parameter".to_owned(),
    };
    match value_column {
        "CHG" => format!("Change from baseline in {what} by visit and treatment"),
        "PCHG" => format!("Percent change from baseline in {what} by visit and treatment"),
        _ => format!("{what} by visit and treatment"),
    }
}

/// The visits a draft proposes for `visits_of`: those the question names, else every scheduled
/// visit in order (with an order column: those with an order value; without one: in order of
/// first appearance). Returns the visits, the words that named them and why.
fn choose_visits(
    question: &[String],
    visits_of: Option<&VisitsOf>,
    change_value: bool,
) -> (Vec<String>, Vec<String>, String) {
    let all_visits: Vec<&VisitLevel> = visits_of
        .map(|v| v.visits.iter().collect())
        .unwrap_or_default();
    // "change from baseline" names the value, not a visit: drop that "baseline" here.
    let visit_words_of_question: Vec<String> = question
        .iter()
        .enumerate()
        .filter(|(i, w)| !(*w == "baseline" && *i > 0 && question[i - 1] == "from"))
        .map(|(_, w)| w.clone())
        .collect();
    let mut named = Vec::new();
    let mut named_words = Vec::new();
    for visit in &all_visits {
        let label_words = words(&visit.label);
        if contains_phrase(
            &visit_words_of_question,
            &label_words.iter().map(String::as_str).collect::<Vec<_>>(),
        ) {
            named.push(visit.label.clone());
            named_words.push(label_words.join(" "));
        }
    }
    if !named.is_empty() {
        let why = format!("the question names {}", named_words.join(", "));
        return (named, named_words, why);
    }
    let order_column = visits_of.and_then(|v| v.order_column.as_deref());
    let visits = all_visits
        .iter()
        .filter(|v| order_column.is_none() || v.order.is_some())
        .filter(|v| !is_unscheduled(&v.label))
        .filter(|v| !(change_value && v.label.eq_ignore_ascii_case("baseline")))
        .map(|v| v.label.clone())
        .collect();
    let words = ["over", "time", "visit", "visits"]
        .iter()
        .filter(|w| question.iter().any(|q| q == *w))
        .map(|w| (*w).to_owned())
        .collect();
    let column = visits_of.map(|v| v.column.as_str()).unwrap_or_default();
    let mut why = match order_column {
        Some(order) => format!(
            "no visit named: every scheduled {column} visit, ordered by {order} (visits without {order} and unscheduled ones left out)"
        ),
        None => format!(
            "no visit named: every scheduled {column} visit in order of first appearance in the data (there is no {column}N to order them; unscheduled ones left out)"
        ),
    };
    if change_value {
        why.push_str("; baseline left out, where the change is zero by definition");
    }
    (visits, words, why)
}

/// Proposes a draft spec for `question` over the dataset `profile`. A choice the question does
/// not settle and no safe default exists for (a parameter, when no word names a plottable one)
/// is left `None`: its confirmation question stays open.
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
    // Value first: which parameters can be plotted depends on it.
    let value = choose_value(&q, roles)?;
    let value_column = value.chosen.clone();
    // Parameter: a code, a synonym or words of a label; never a default that cannot be plotted.
    let parameter_column = roles
        .parameter_code
        .first()
        .ok_or(MatchError::MissingRole {
            role: "parameter code",
            looked_for: "PARAMCD",
        })?;
    let (parameter, parameter_note) =
        choose_parameter(&q, &profile.parameters, parameter_column, &value_column);
    notes.extend([parameter_note, value]);
    let (treatment, treatment_note) = choose_treatment(&q, profile)?;
    notes.push(treatment_note);
    let change_value = value_column == "CHG" || value_column == "PCHG";
    let (visit, visits_note) = choose_visit(&q, profile, change_value)?;
    notes.push(visits_note);
    let visits = &visit.visits;
    let (filters, filters_note) = choose_filters(profile, visits);
    notes.push(filters_note);
    let y_scale = if q.iter().any(|w| w == "free") {
        notes.push(note(
            "y_scale",
            vec!["free".to_owned()],
            "free".to_owned(),
            "\"free\" asks for a y axis per panel".to_owned(),
        ));
        YScale::Free
    } else {
        YScale::Fixed
    };
    let unit = match parameter.map(|p| p.units.as_slice()) {
        Some([one]) => Some(one.clone()),
        _ => None,
    };
    let subject_column = roles.subject.first().ok_or(MatchError::MissingRole {
        role: "subject",
        looked_for: "USUBJID, SUBJID",
    })?;
    let spec = PlotSpec {
        state: SpecState::Draft,
        dataset_content_hash: profile.content_hash,
        question: question.to_owned(),
        parameter: parameter.map(|p| ParameterChoice {
            column: parameter_column.clone(),
            value: p.code.clone(),
            label: p.labels.first().cloned(),
        }),
        filters,
        // Settled against the data by `ingest::draft`, which sees the records.
        records_per_subject_visit: None,
        treatment,
        title: default_title(parameter, &value_column),
        value_column,
        subject_column: subject_column.clone(),
        visit,
        y_scale,
        unit,
        low_n: LowNPolicy {
            threshold: DEFAULT_LOW_N_THRESHOLD,
            below: LowNAction::Annotate,
        },
    };
    Ok((spec, notes))
}

/// The visit column (the first with values) and its visits: those named ("week 12",
/// "baseline"), else every scheduled visit in order.
fn choose_visit(
    q: &[String],
    profile: &DatasetProfile,
    change_value: bool,
) -> Result<(VisitChoice, MatchNote), MatchError> {
    let visit_candidate = profile
        .roles
        .visit
        .iter()
        .find(|v| {
            profile
                .visit_levels
                .iter()
                .any(|l| l.column == v.label && !l.visits.is_empty())
        })
        .ok_or(MatchError::MissingRole {
            role: "visit",
            looked_for: "AVISIT, VISIT, ATPT (with values)",
        })?;
    let visits_of = profile
        .visit_levels
        .iter()
        .find(|v| v.column == visit_candidate.label);
    let (visits, visit_words, visit_why) = choose_visits(q, visits_of, change_value);
    let visits_note = note("visits", visit_words, visits.join(", "), visit_why);
    let order_source = match visits_of.and_then(|v| v.order_column.clone()) {
        Some(column) => VisitOrderSource::Column { column },
        None => VisitOrderSource::AsListed,
    };
    let choice = VisitChoice {
        column: visit_candidate.label.clone(),
        order_source,
        visits,
    };
    Ok((choice, visits_note))
}

/// A note: which words chose what for `field`, and why.
fn note(field: &str, words: Vec<String>, chosen: String, why: String) -> MatchNote {
    MatchNote {
        field: field.to_owned(),
        words,
        chosen,
        why,
    }
}

/// The value column: PCHG for "percent change", CHG for "change", else the analysis value.
fn choose_value(q: &[String], roles: &CandidateRoles) -> Result<MatchNote, MatchError> {
    let has = |name: &str| roles.value.iter().any(|v| v == name);
    let percent = contains_phrase(q, &["percent", "change"]) || q.iter().any(|w| w == "pchg");
    Ok(if percent && has("PCHG") {
        note(
            "value_variable",
            vec!["percent".to_owned(), "change".to_owned()],
            "PCHG".to_owned(),
            "\"percent change\" names PCHG".to_owned(),
        )
    } else if q.iter().any(|w| w == "change" || w == "chg") && has("CHG") {
        note(
            "value_variable",
            vec!["change".to_owned()],
            "CHG".to_owned(),
            "\"change\" names CHG, the change from baseline".to_owned(),
        )
    } else {
        let first = roles.value.first().ok_or(MatchError::MissingRole {
            role: "numeric value",
            looked_for: "AVAL, CHG, PCHG, BASE",
        })?;
        note(
            "value_variable",
            Vec::new(),
            first.clone(),
            format!("no change named: the analysis value {first}"),
        )
    })
}

/// The treatment column and its levels: "planned" picks TRTP, "arm" prefers ARM/ACTARM, else
/// the first treatment column with values.
fn choose_treatment(
    q: &[String],
    profile: &DatasetProfile,
) -> Result<(TreatmentChoice, MatchNote), MatchError> {
    let roles = &profile.roles;
    let usable = |name: &str| {
        profile
            .treatment_levels
            .iter()
            .any(|l| l.column == name && !l.levels.is_empty())
    };
    let pick = |word: &str, names: &[&str]| {
        q.iter().any(|w| w == word).then_some(())?;
        names
            .iter()
            .find(|n| roles.treatment.iter().any(|t| t == *n) && usable(n))
            .map(|n| ((*n).to_owned(), vec![word.to_owned()]))
    };
    let (column, words) = match pick("planned", &["TRTP", "TRT01P", "ARM"])
        .or_else(|| pick("arm", &["ACTARM", "ARM"]))
    {
        Some(picked) => picked,
        None => {
            let first =
                roles
                    .treatment
                    .iter()
                    .find(|t| usable(t))
                    .ok_or(MatchError::MissingRole {
                        role: "treatment",
                        looked_for: "TRTA, TRTP, TRT01A, TRT01P, ACTARM, ARM (with values)",
                    })?;
            let words = ["arm", "treatment", "actual"]
                .iter()
                .filter(|w| q.iter().any(|q| q == *w))
                .map(|w| (*w).to_owned())
                .collect();
            (first.clone(), words)
        }
    };
    let levels_of = profile.treatment_levels.iter().find(|l| l.column == column);
    // The profile names the rule that ordered the levels (their own order variable, a related
    // one, placebo and doses, first appearance); an older profile without it, the order column.
    let level_order = match levels_of {
        Some(levels) if !levels.order_why.is_empty() => levels.order_why.clone(),
        _ => match levels_of.and_then(|l| l.order_column.as_deref()) {
            Some(order) => format!("levels ordered by {order}"),
            None => format!(
                "levels in order of first appearance in the data (there is no {column}N to order them)"
            ),
        },
    };
    let why = format!("{column}: {level_order}");
    let treatment = TreatmentChoice {
        levels: levels_of.map(|l| l.levels.clone()).unwrap_or_default(),
        column: column.clone(),
    };
    Ok((treatment, note("treatment_variable", words, column, why)))
}

/// The filters: the safety population when flagged; ANL01FL only when it keeps the baseline
/// among `visits`.
fn choose_filters(profile: &DatasetProfile, visits: &[String]) -> (Vec<RecordFilter>, MatchNote) {
    let roles = &profile.roles;
    let saffl = roles.population_flags.iter().any(|f| f == "SAFFL");
    let anl01fl = roles.record_flags.iter().any(|f| f == "ANL01FL");
    let baseline_kept = visits.iter().any(|v| v.eq_ignore_ascii_case("baseline"));
    let anl_removes_baseline = profile.warnings.iter().any(|w| {
        matches!(w, adamviz_model::profile::ProfileWarning::FlagRemovesBaseline { flag, .. } if flag == "ANL01FL")
    });
    let flag = |column: &str| RecordFilter {
        column: column.to_owned(),
        values: vec!["Y".to_owned()],
    };
    let mut filters = Vec::new();
    if saffl {
        filters.push(flag("SAFFL"));
    }
    if anl01fl && !(baseline_kept && anl_removes_baseline) {
        filters.push(flag("ANL01FL"));
    }
    let chosen = if filters.is_empty() {
        "none".to_owned()
    } else {
        filters
            .iter()
            .map(|f| format!("{} = {}", f.column, f.values.join("|")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let why = match (saffl, anl01fl) {
        (_, true) if anl_removes_baseline && baseline_kept => {
            "the safety population when flagged (SAFFL); not ANL01FL, which would remove every baseline record"
        }
        (_, true) => "the safety population when flagged (SAFFL) and the analysis flag ANL01FL",
        (true, false) => "the safety population (SAFFL); there is no ANL01FL",
        (false, false) => "the data has neither SAFFL nor ANL01FL",
    };
    (filters, note("filters", Vec::new(), chosen, why.to_owned()))
}
