//! Which parameter a question names: each parameter's code, the words of its labels and a small
//! synonym table read together against the question's words ([`score`]), the best proposed only
//! when no other is named as well, with the words that decided ([`explain`]).

use super::*;

mod explain;
mod score;

use score::{parameter_matches, ParameterMatch};

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

/// The parameters named best by `question`, and of those the ones with numbers in
/// `value_column`: what a proposal is chosen from.
struct BestNamed<'a> {
    matches: Vec<ParameterMatch<'a>>,
    /// How many of `matches` (the first ones) rank equal to the best.
    top: usize,
    /// Indexes into `matches` of the top ones with numbers in the value column.
    plottable: Vec<usize>,
}

fn best_named<'a>(
    question: &[String],
    parameters: &'a [ParameterProfile],
    value_column: &str,
) -> BestNamed<'a> {
    let matches = parameter_matches(question, parameters);
    let top = matches
        .iter()
        .take_while(|m| m.rank() == matches[0].rank())
        .count();
    let plottable = (0..top)
        .filter(|i| matches[*i].parameter.has_values_in(value_column))
        .collect();
    BestNamed {
        matches,
        top,
        plottable,
    }
}

/// The parameters the chosen one (`chosen`, an index into `best.matches`) was preferred to:
/// the best ones that cannot be plotted, else all of the rank below the best.
fn next_best<'b, 'a>(best: &'b BestNamed<'a>, chosen: usize) -> Vec<&'b ParameterMatch<'a>> {
    let not_plottable: Vec<&ParameterMatch> = (0..best.top)
        .filter(|i| *i != chosen && !best.plottable.contains(i))
        .map(|i| &best.matches[i])
        .collect();
    if !not_plottable.is_empty() {
        return not_plottable;
    }
    let below = &best.matches[best.top..];
    below
        .iter()
        .take_while(|m| m.rank() == below[0].rank())
        .collect()
}

/// The parameters `question` names equally well, when more than one of them could be plotted
/// from `value_column`: the tie that leaves the parameter question open. Empty otherwise.
pub fn parameters_named_equally<'a>(
    question: &str,
    profile: &'a DatasetProfile,
    value_column: &str,
) -> Vec<&'a ParameterProfile> {
    let best = best_named(&words(question), &profile.parameters, value_column);
    if best.plottable.len() < 2 {
        return Vec::new();
    }
    best.plottable
        .iter()
        .map(|i| best.matches[*i].parameter)
        .collect()
}

/// The parameter the question names, if exactly one plottable parameter is named best; the
/// note says which words matched what and which decided against the next best, or why nothing
/// is proposed.
pub(super) fn choose_parameter<'a>(
    question: &[String],
    parameters: &'a [ParameterProfile],
    column: &str,
    value_column: &str,
) -> (Option<&'a ParameterProfile>, MatchNote) {
    let best = best_named(question, parameters, value_column);
    let note = |words: Vec<String>, chosen: String, why: String| MatchNote {
        field: "parameter".to_owned(),
        words,
        chosen,
        why,
    };
    let no_proposal = "no proposal".to_owned();
    let Some(first) = best.matches.first() else {
        return (
            None,
            note(
                Vec::new(),
                no_proposal,
                "no word of the question matched a parameter code, a word of a parameter label or a synonym; choose the parameter".to_owned(),
            ),
        );
    };
    match best.plottable.as_slice() {
        [] => (
            None,
            note(
                first.words(),
                no_proposal,
                format!(
                    "{} matched ({}), but it has no numbers in {value_column} (a text result is not plotted as a boxplot); choose a parameter",
                    describe_parameter(column, first.parameter),
                    explain::how_named(first)
                ),
            ),
        ),
        [only] => {
            let chosen = &best.matches[*only];
            let mut why = explain::how_named(chosen);
            let next_best = next_best(&best, *only);
            if !next_best.is_empty() {
                why.push_str("; ");
                why.push_str(&explain::decided_against(chosen, &next_best, value_column));
            }
            (
                Some(chosen.parameter),
                note(
                    chosen.words(),
                    describe_parameter(column, chosen.parameter),
                    why,
                ),
            )
        }
        several => {
            let tied: Vec<&ParameterMatch> = several.iter().map(|i| &best.matches[*i]).collect();
            let mut tied_words: Vec<String> = Vec::new();
            for word in question {
                if tied.iter().any(|m| m.words().contains(word)) && !tied_words.contains(word) {
                    tied_words.push(word.clone());
                }
            }
            (None, note(tied_words, no_proposal, explain::tie(&tied)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parameter with `numbers` values in AVAL.
    fn parameter(code: &str, label: &str, numbers: usize) -> ParameterProfile {
        ParameterProfile {
            code: code.to_owned(),
            labels: vec![label.to_owned()],
            records: 1,
            units: Vec::new(),
            unit_source: None,
            derived_looking: code.starts_with('_'),
            values: [("AVAL".to_owned(), numbers)].into(),
        }
    }

    fn choose(question: &str, parameters: &[ParameterProfile]) -> (Option<String>, MatchNote) {
        let (chosen, note) = choose_parameter(&words(question), parameters, "PARAMCD", "AVAL");
        (chosen.map(|p| p.code.clone()), note)
    }

    #[test]
    fn a_tie_proposes_nothing_and_names_every_tied_parameter() {
        let vitals = [
            parameter("SYSBP", "Systolic Blood Pressure (mmHg)", 5),
            parameter("DIABP", "Diastolic Blood Pressure (mmHg)", 5),
        ];
        let (chosen, note) = choose("blood pressure by visit", &vitals);
        assert_eq!(chosen, None);
        assert_eq!(note.chosen, "no proposal");
        assert_eq!(note.words, ["blood", "pressure"]);
        assert_eq!(
            note.why,
            "the question names SYSBP, DIABP equally well (each by \"blood\", \"pressure\") and none of its words tells them apart; choose one"
        );
    }

    #[test]
    fn an_equal_parameter_without_numbers_is_named_as_the_reason_for_the_choice() {
        let ecg = [
            parameter("HRINTP", "Heart Rate Interpretation", 0),
            parameter("HRMEAN", "Heart Rate Mean (beats/min)", 5),
        ];
        let (chosen, note) = choose("heart rate", &ecg);
        assert_eq!(chosen.as_deref(), Some("HRMEAN"));
        assert!(
            note.why.ends_with(
                "HRINTP matches as well (\"heart\", \"rate\"), but has no numbers in AVAL"
            ),
            "{}",
            note.why
        );
    }

    #[test]
    fn a_measured_code_is_preferred_to_a_derived_looking_one_and_said_so() {
        let labs = [
            parameter("_ALB", "Albumin (g/L)", 5),
            parameter("ALB", "Albumin (g/L)", 5),
        ];
        let (chosen, note) = choose("albumin", &labs);
        assert_eq!(chosen.as_deref(), Some("ALB"));
        assert!(
            note.why
                .ends_with("_ALB matches as well (\"albumin\"), but its code looks derived"),
            "{}",
            note.why
        );
    }

    #[test]
    fn the_best_without_numbers_is_not_replaced_by_a_lesser_match() {
        let ecg = [
            parameter("EGINTP", "ECG Interpretation", 0),
            parameter("EGHR", "ECG Heart Rate (beats/min)", 5),
        ];
        let (chosen, note) = choose("ECG interpretation", &ecg);
        assert_eq!(chosen, None);
        assert!(note.why.contains("no numbers in AVAL"), "{}", note.why);
    }
}
