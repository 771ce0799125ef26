//! How well a question's words name each parameter: its code, every word of its labels and the
//! synonym table are read together, and the parameter that names more of the question ranks
//! first; a bare code match is one named word like any other.

use super::{contains_phrase, words, ParameterProfile, NOT_PARAMETER_WORDS, SYNONYMS};

/// How one word of the question names a parameter, strongest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Naming {
    /// The word is the parameter's code.
    Code,
    /// The word is a word of its label.
    Label,
    /// The word is part of a phrase of adamviz's synonym table that names its code.
    Synonym { phrase: String },
    /// The word is a word of its label without its last letter or two, as an abbreviation
    /// without its qualifier ("qt" of "qtcf", "qtc" of "qtcb").
    LabelPrefix { label_word: String },
}

impl Naming {
    /// The parameter's own code or label says the word whole.
    fn is_direct(&self) -> bool {
        matches!(self, Naming::Code | Naming::Label)
    }

    /// The word is named whole, not as the beginning of a longer word.
    fn is_whole(&self) -> bool {
        !matches!(self, Naming::LabelPrefix { .. })
    }
}

/// One word of the question and how it names the parameter.
#[derive(Debug, Clone)]
pub(super) struct NamedWord {
    pub word: String,
    pub naming: Naming,
}

/// What ranks one match above another, compared field by field (higher is better): how many
/// of the question's words name the parameter; how many of those its own code or label says
/// whole (rather than the synonym table or the beginning of a word); how many are named whole;
/// fewer words of its label the question does not say (a label that says more than the
/// question names something narrower than was asked); a measured code before a derived-looking one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Rank {
    pub words: usize,
    pub direct: usize,
    pub whole: usize,
    pub fewer_unsaid: std::cmp::Reverse<usize>,
    pub measured: bool,
}

/// How the question names one parameter.
#[derive(Debug, Clone)]
pub(super) struct ParameterMatch<'a> {
    pub parameter: &'a ParameterProfile,
    /// The question's words that name it, in the question's order, each once.
    pub named: Vec<NamedWord>,
    /// Words of its labels the question does not say, in label order.
    pub unsaid: Vec<String>,
}

impl ParameterMatch<'_> {
    /// The words that name it, in the question's order.
    pub fn words(&self) -> Vec<String> {
        self.named.iter().map(|n| n.word.clone()).collect()
    }

    /// Its place among the matches: see [`Rank`].
    pub fn rank(&self) -> Rank {
        let count =
            |test: fn(&Naming) -> bool| self.named.iter().filter(|n| test(&n.naming)).count();
        Rank {
            words: self.named.len(),
            direct: count(Naming::is_direct),
            whole: count(Naming::is_whole),
            fewer_unsaid: std::cmp::Reverse(self.unsaid.len()),
            measured: !self.parameter.derived_looking,
        }
    }
}

/// A word that can say what is plotted: not one of [`NOT_PARAMETER_WORDS`].
fn may_name_a_parameter(word: &str) -> bool {
    !NOT_PARAMETER_WORDS.contains(&word)
}

/// A word long enough to match a label: one letter or a bare number ("12" of "week 12") names
/// nothing by itself, though a one-letter code ("K") may.
fn is_content(word: &str) -> bool {
    may_name_a_parameter(word) && word.len() > 1 && !word.chars().all(|c| c.is_ascii_digit())
}

/// The words of a parameter label without its units: the trailing "(unit)", and any other
/// parenthesis with a "/" in it ("Creatinine (umol/L) change from previous visit"). "QTcF -
/// Fridericia's Correction Formula Rederived (ms)" gives qtcf, fridericia, s, correction,
/// formula, rederived; a parenthesis that is not a unit ("(Urine)") keeps its words.
fn label_words(label: &str) -> Vec<String> {
    let trimmed = label.trim_end();
    let mut name = match trimmed.strip_suffix(')').and_then(|inner| inner.rfind('(')) {
        Some(open) => trimmed[..open].to_owned(),
        None => trimmed.to_owned(),
    };
    while let Some((open, close)) = unit_parenthesis(&name) {
        name.replace_range(open..=close, " ");
    }
    words(&name)
}

/// The byte range of the first "(…/…)" in `text`.
fn unit_parenthesis(text: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(open) = text[from..].find('(').map(|i| from + i) {
        let close = open + text[open..].find(')')?;
        if text[open..close].contains('/') {
            return Some((open, close));
        }
        from = open + 1;
    }
    None
}

/// The content words of every label of `parameter`, each once, in label order.
fn content_label_words(parameter: &ParameterProfile) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for word in parameter.labels.iter().flat_map(|l| label_words(l)) {
        if is_content(&word) && !all.contains(&word) {
            all.push(word);
        }
    }
    all
}

/// How `word` names `parameter`, if it does; the strongest way when several.
fn naming_of(
    word: &str,
    code: &str,
    label: &[String],
    synonym_phrases: &[&[&str]],
) -> Option<Naming> {
    if word == code {
        return Some(Naming::Code);
    }
    if !is_content(word) {
        return None;
    }
    if label.iter().any(|l| l == word) {
        return Some(Naming::Label);
    }
    if let Some(phrase) = synonym_phrases.iter().find(|p| p.contains(&word)) {
        return Some(Naming::Synonym {
            phrase: phrase.join(" "),
        });
    }
    // One or two letters short: "qt" names "qtcf" weakly, but "ph" does not name "phosphate".
    let letters = word.chars().count();
    label
        .iter()
        .find(|l| l.starts_with(word) && (letters + 1..=letters + 2).contains(&l.chars().count()))
        .map(|l| Naming::LabelPrefix {
            label_word: l.clone(),
        })
}

/// How `question` names `parameter`; `None` when no word does.
fn match_parameter<'a>(
    question: &[String],
    parameter: &'a ParameterProfile,
) -> Option<ParameterMatch<'a>> {
    let code = parameter.code.to_lowercase();
    let label = content_label_words(parameter);
    let synonym_phrases: Vec<&[&str]> = SYNONYMS
        .iter()
        .filter(|(phrase, codes)| {
            codes.contains(&parameter.code.as_str()) && contains_phrase(question, phrase)
        })
        .map(|(phrase, _)| *phrase)
        .collect();
    let mut named: Vec<NamedWord> = Vec::new();
    for word in question {
        if !may_name_a_parameter(word) || named.iter().any(|n| &n.word == word) {
            continue;
        }
        if let Some(naming) = naming_of(word, &code, &label, &synonym_phrases) {
            named.push(NamedWord {
                word: word.clone(),
                naming,
            });
        }
    }
    if named.is_empty() {
        return None;
    }
    let said = |label_word: &String| {
        named.iter().any(|n| {
            &n.word == label_word
                || matches!(&n.naming, Naming::LabelPrefix { label_word: l } if l == label_word)
        })
    };
    let unsaid = label.iter().filter(|l| !said(l)).cloned().collect();
    Some(ParameterMatch {
        parameter,
        named,
        unsaid,
    })
}

/// Every parameter the question names, best first; equals keep the profile's order.
pub(super) fn parameter_matches<'a>(
    question: &[String],
    parameters: &'a [ParameterProfile],
) -> Vec<ParameterMatch<'a>> {
    let mut found: Vec<ParameterMatch> = parameters
        .iter()
        .filter_map(|p| match_parameter(question, p))
        .collect();
    found.sort_by_key(|m| std::cmp::Reverse(m.rank()));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parameter(code: &str, label: &str) -> ParameterProfile {
        ParameterProfile {
            code: code.to_owned(),
            labels: vec![label.to_owned()],
            records: 1,
            units: Vec::new(),
            unit_source: None,
            derived_looking: code.starts_with('_'),
            values: [("AVAL".to_owned(), 1)].into(),
        }
    }

    fn ranked(question: &str, parameters: &[ParameterProfile]) -> Vec<(String, Vec<String>)> {
        parameter_matches(&words(question), parameters)
            .iter()
            .map(|m| (m.parameter.code.clone(), m.words()))
            .collect()
    }

    #[test]
    fn a_label_naming_more_words_beats_a_code() {
        let ecg = [
            parameter("QT", "QT Interval (msec)"),
            parameter("QTCF", "QTcF Interval, Fridericia (msec)"),
        ];
        let found = ranked("Fridericia-corrected QT interval", &ecg);
        assert_eq!(found[0].0, "QTCF");
        assert_eq!(found[0].1, ["fridericia", "qt", "interval"]);
        assert_eq!(found[1].1, ["qt", "interval"]);
        let labs = [
            parameter("HGB", "Hemoglobin (g/dL)"),
            parameter("HBA1C", "Hemoglobin A1C (%)"),
        ];
        assert_eq!(ranked("Hemoglobin A1C by visit", &labs)[0].0, "HBA1C");
    }

    #[test]
    fn a_word_short_of_a_label_word_names_it_less_than_the_word_itself() {
        let ecg = [
            parameter("QTCF", "QTcF Interval, Fridericia (msec)"),
            parameter("QT", "QT Interval (msec)"),
        ];
        let matches = parameter_matches(&words("QT"), &ecg);
        assert_eq!(matches[0].parameter.code, "QT");
        assert_eq!(
            matches[1].named[0].naming,
            Naming::LabelPrefix {
                label_word: "qtcf".to_owned()
            }
        );
        // Only a letter or two short: "ph" does not name phosphate.
        let labs = [parameter("PHOS", "Phosphate (mmol/L)")];
        assert!(parameter_matches(&words("pH by visit"), &labs).is_empty());
    }

    #[test]
    fn label_words_the_question_does_not_say_rank_a_parameter_lower() {
        let labs = [
            parameter("CRCL", "Creatinine Clearance (mL/min)"),
            parameter("_CREAT", "Creatinine (umol/L) change from previous visit"),
            parameter("CREAT", "Creatinine (mg/dL)"),
        ];
        let matches = parameter_matches(&words("creatinine by visit"), &labs);
        let order: Vec<&str> = matches.iter().map(|m| m.parameter.code.as_str()).collect();
        assert_eq!(order, ["CREAT", "CRCL", "_CREAT"]);
        assert_eq!(matches[1].unsaid, ["clearance"]);
        // "change" and "visit" say how to plot, not what, and "(umol/L)" is a unit: neither
        // is counted against _CREAT.
        assert_eq!(matches[2].unsaid, ["previous"]);
    }

    #[test]
    fn units_are_not_label_words_wherever_they_stand() {
        assert_eq!(
            label_words("Creatinine (umol/L) change from previous visit (x10^9/L)"),
            ["creatinine", "change", "from", "previous", "visit"]
        );
        assert_eq!(label_words("Glucose (Urine) (mg/dL)"), ["glucose", "urine"]);
        assert_eq!(label_words("Odd ((a/b"), ["odd", "a", "b"]);
    }

    #[test]
    fn the_parameters_own_code_beats_the_synonym_table() {
        let vitals = [
            parameter("PULSE", "Pulse Rate (beats/min)"),
            parameter("HR", "Heart Rate (beats/min)"),
        ];
        assert_eq!(ranked("HR by visit", &vitals)[0].0, "HR");
        assert_eq!(ranked("pulse by visit", &vitals)[0].0, "PULSE");
        assert_eq!(ranked("heart rate", &vitals)[0].0, "HR");
    }

    #[test]
    fn a_one_letter_code_is_named_but_one_letter_of_a_label_is_not() {
        let labs = [
            parameter("K", "Potassium (mmol/L)"),
            parameter("VITK", "Vitamin K (ug/L)"),
        ];
        assert_eq!(
            ranked("K over time", &labs),
            [("K".to_owned(), vec!["k".to_owned()])]
        );
    }
}
