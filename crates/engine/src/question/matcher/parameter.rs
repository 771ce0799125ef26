//! Which parameter a question names: each parameter's code, the words of its labels and a small
//! synonym table scored against the question's words, best first, with the words that decided.

use super::*;

/// Other names of frequent lab and vital-sign parameters: a phrase of the question (lowercase
/// words) and the CDISC codes it names. Applied only to codes present in the data.
pub const SYNONYMS: [(&[&str], &[&str]); 22] = [
    (&["sbp"], &["SYSBP"]),
    (&["systolic"], &["SYSBP"]),
    (&["dbp"], &["DIABP"]),
    (&["diastolic"], &["DIABP"]),
    (&["pulse"], &["PULSE", "HR"]),
    (&["heart", "rate"], &["HR", "PULSE"]),
    (&["hr"], &["HR", "PULSE"]),
    (&["sgpt"], &["ALT"]),
    (&["sgot"], &["AST"]),
    (&["haemoglobin"], &["HGB"]),
    (&["hemoglobin"], &["HGB"]),
    (&["creatinine"], &["CREAT"]),
    (&["weight"], &["WEIGHT", "WT"]),
    (&["bmi"], &["BMI"]),
    (&["body", "mass", "index"], &["BMI"]),
    (&["temperature"], &["TEMP"]),
    (&["temp"], &["TEMP"]),
    (&["bilirubin"], &["BILI"]),
    (&["urea"], &["BUN", "UREAN"]),
    (&["potassium"], &["K"]),
    (&["sodium"], &["SODIUM", "NA"]),
    (&["respiratory", "rate"], &["RESP"]),
];

/// Words that say how to plot, not what: never matched against parameter labels.
const NOT_PARAMETER_WORDS: [&str; 40] = [
    "a",
    "an",
    "and",
    "the",
    "of",
    "in",
    "on",
    "at",
    "to",
    "for",
    "per",
    "by",
    "from",
    "over",
    "vs",
    "versus",
    "with",
    "time",
    "visit",
    "visits",
    "arm",
    "arms",
    "treatment",
    "treatments",
    "actual",
    "planned",
    "change",
    "percent",
    "baseline",
    "week",
    "weeks",
    "day",
    "days",
    "plot",
    "boxplot",
    "show",
    "value",
    "values",
    "free",
    "scale",
];

/// The words of a parameter label without its trailing "(unit)": "QTcF - Fridericia's
/// Correction Formula Rederived (ms)" gives qtcf, fridericia, s, correction, formula, rederived.
fn label_words(label: &str) -> Vec<String> {
    let trimmed = label.trim_end();
    let name = match trimmed.strip_suffix(')').and_then(|inner| inner.rfind('(')) {
        Some(open) => &trimmed[..open],
        None => trimmed,
    };
    words(name)
}

/// How strongly the question names one parameter, and by which words.
struct ParameterMatch<'a> {
    parameter: &'a ParameterProfile,
    /// Code 1000; words of its label 100 + the sum of 1 / (parameters whose label has the
    /// word), so a rarer word weighs more; a synonym 50.
    score: f64,
    words: Vec<String>,
    how: String,
}

/// Every parameter the question names, best first.
fn parameter_matches<'a>(
    question: &[String],
    parameters: &'a [ParameterProfile],
) -> Vec<ParameterMatch<'a>> {
    let label_words_of: Vec<Vec<String>> = parameters
        .iter()
        .map(|p| {
            let mut all: Vec<String> = p.labels.iter().flat_map(|l| label_words(l)).collect();
            all.sort();
            all.dedup();
            all
        })
        .collect();
    let document_frequency = |word: &str| {
        label_words_of
            .iter()
            .filter(|ws| ws.iter().any(|w| w == word))
            .count()
            .max(1)
    };
    let content_words: Vec<&String> = question
        .iter()
        .filter(|w| !NOT_PARAMETER_WORDS.contains(&w.as_str()))
        .filter(|w| w.len() > 1 && !w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    let mut found: Vec<ParameterMatch> = parameters
        .iter()
        .zip(&label_words_of)
        .filter_map(|(parameter, label_words)| {
            let code = parameter.code.to_lowercase();
            if question.contains(&code) {
                return Some(ParameterMatch {
                    parameter,
                    score: 1000.0,
                    words: vec![code.clone()],
                    how: format!("the word {code:?} is its code"),
                });
            }
            label_match(parameter, label_words, &content_words, &document_frequency)
                .or_else(|| synonym_match(question, parameter))
        })
        .collect();
    // Best first; among equals a measured code before a derived-looking one.
    found.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then(
            a.parameter
                .derived_looking
                .cmp(&b.parameter.derived_looking),
        )
    });
    found
}

/// The question's content words found in the parameter's label words, scored 100 plus the
/// rarity of each word (see [`ParameterMatch::score`]).
fn label_match<'a>(
    parameter: &'a ParameterProfile,
    label_words: &[String],
    content_words: &[&String],
    document_frequency: &dyn Fn(&str) -> usize,
) -> Option<ParameterMatch<'a>> {
    let mut matched: Vec<String> = content_words
        .iter()
        .filter(|w| label_words.contains(w))
        .map(|w| (*w).clone())
        .collect();
    matched.dedup();
    if matched.is_empty() {
        return None;
    }
    let score = 100.0
        + matched
            .iter()
            .map(|w| 1.0 / document_frequency(w) as f64)
            .sum::<f64>();
    let how = format!(
        "the word{} {} {} in its label {:?}",
        if matched.len() > 1 { "s" } else { "" },
        matched
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(", "),
        if matched.len() > 1 { "are" } else { "is" },
        parameter
            .labels
            .first()
            .map(String::as_str)
            .unwrap_or_default()
    );
    Some(ParameterMatch {
        parameter,
        score,
        words: matched,
        how,
    })
}

/// A phrase of the synonym table in the question that names the parameter's code.
fn synonym_match<'a>(
    question: &[String],
    parameter: &'a ParameterProfile,
) -> Option<ParameterMatch<'a>> {
    let (phrase, _) = SYNONYMS.iter().find(|(phrase, codes)| {
        codes.contains(&parameter.code.as_str()) && contains_phrase(question, phrase)
    })?;
    let phrase = phrase.join(" ");
    Some(ParameterMatch {
        parameter,
        score: 50.0,
        words: vec![phrase.clone()],
        how: format!(
            "{phrase:?} is another name of {} (adamviz's synonym table)",
            parameter.code
        ),
    })
}

/// `PARAMCD = ALT (Alanine Aminotransferase (U/L))`.
fn describe_parameter(column: &str, parameter: &ParameterProfile) -> String {
    format!(
        "{column} = {}{}",
        parameter.code,
        parameter
            .labels
            .first()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default()
    )
}

/// The parameter the question names, if exactly one plottable parameter is named best; the
/// note says which words matched what, or why nothing is proposed.
pub(super) fn choose_parameter<'a>(
    question: &[String],
    profile: &'a DatasetProfile,
    column: &str,
    value_column: &str,
) -> (Option<&'a ParameterProfile>, MatchNote) {
    let matches = parameter_matches(question, &profile.parameters);
    let note = |words: Vec<String>, chosen: String, why: String| MatchNote {
        field: "parameter".to_owned(),
        words,
        chosen,
        why,
    };
    let no_proposal = "no proposal".to_owned();
    let Some(best) = matches.first() else {
        return (
            None,
            note(
                Vec::new(),
                no_proposal,
                "no word of the question matched a parameter code, a word of a parameter label or a synonym; choose the parameter".to_owned(),
            ),
        );
    };
    // The parameters named best; of those, the ones with numbers in the value column.
    let top: Vec<&ParameterMatch> = matches
        .iter()
        .take_while(|m| {
            m.score == best.score && m.parameter.derived_looking == best.parameter.derived_looking
        })
        .collect();
    let plottable: Vec<&&ParameterMatch> = top
        .iter()
        .filter(|m| m.parameter.has_values_in(value_column))
        .collect();
    match plottable.as_slice() {
        [] => (
            None,
            note(
                best.words.clone(),
                no_proposal,
                format!(
                    "{} matched ({}), but it has no numbers in {value_column} (a text result is not plotted as a boxplot); choose a parameter",
                    describe_parameter(column, best.parameter),
                    best.how
                ),
            ),
        ),
        [only] => (
            Some(only.parameter),
            note(
                only.words.clone(),
                describe_parameter(column, only.parameter),
                only.how.clone(),
            ),
        ),
        several => (
            None,
            note(
                best.words.clone(),
                no_proposal,
                format!(
                    "the question names {} equally well; choose one",
                    several
                        .iter()
                        .map(|m| m.parameter.code.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
        ),
    }
}
