//! The words shown to the user about a parameter choice: which words of the question named the
//! parameter and how, which of them set it apart from the next best, and which parameters a tie
//! left open.

use super::score::{Naming, ParameterMatch};

/// `"a", "b"`.
pub(super) fn quoted(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The named words whose naming passes `test`.
fn words_named(m: &ParameterMatch, test: impl Fn(&Naming) -> bool) -> Vec<String> {
    m.named
        .iter()
        .filter(|n| test(&n.naming))
        .map(|n| n.word.clone())
        .collect()
}

/// `the word "x" is` / `the words "x", "y" are`.
fn the_words_are(words: &[String]) -> String {
    match words {
        [one] => format!("the word {one:?} is"),
        several => format!("the words {} are", quoted(several)),
    }
}

/// How the question's words name `m`'s parameter: `the word "alt" is its code`, `the words
/// "systolic", "blood", "pressure" are in its label "Systolic Blood Pressure (mmHg)"`, `"qt"
/// begins the word "qtcf" in its label`, `"sbp" is another name of SYSBP (adamviz's synonym
/// table)`; several ways joined by "; ".
pub(super) fn how_named(m: &ParameterMatch) -> String {
    let label = m
        .parameter
        .labels
        .first()
        .map(String::as_str)
        .unwrap_or_default();
    let mut label_quoted = false;
    let mut its_label = || {
        if std::mem::replace(&mut label_quoted, true) {
            "its label".to_owned()
        } else {
            format!("its label {label:?}")
        }
    };
    let mut parts = Vec::new();
    let code = words_named(m, |n| *n == Naming::Code);
    if !code.is_empty() {
        parts.push(format!("{} its code", the_words_are(&code)));
    }
    let in_label = words_named(m, |n| *n == Naming::Label);
    if !in_label.is_empty() {
        parts.push(format!("{} in {}", the_words_are(&in_label), its_label()));
    }
    for named in &m.named {
        if let Naming::LabelPrefix { label_word } = &named.naming {
            parts.push(format!(
                "{:?} begins the word {label_word:?} in {}",
                named.word,
                its_label()
            ));
        }
    }
    let mut phrases: Vec<&str> = Vec::new();
    for named in &m.named {
        if let Naming::Synonym { phrase } = &named.naming {
            if !phrases.contains(&phrase.as_str()) {
                phrases.push(phrase);
            }
        }
    }
    for phrase in phrases {
        parts.push(format!(
            "{phrase:?} is another name of {} (adamviz's synonym table)",
            m.parameter.code
        ));
    }
    parts.join("; ")
}

/// How `others` name words less well than by their own code or label, whole: `"hr" only
/// through adamviz's synonym table`, `"qt" only as the beginning of "qtcb", "qtcf"`.
fn weaker_namings(others: &[&ParameterMatch]) -> String {
    let mut through_synonyms: Vec<String> = Vec::new();
    let mut beginnings: Vec<(String, Vec<String>)> = Vec::new();
    for named in others.iter().flat_map(|m| &m.named) {
        match &named.naming {
            Naming::Synonym { .. } => push_once(&mut through_synonyms, &named.word),
            Naming::LabelPrefix { label_word } => {
                match beginnings.iter_mut().find(|(w, _)| *w == named.word) {
                    Some((_, longer)) => push_once(longer, label_word),
                    None => beginnings.push((named.word.clone(), vec![label_word.clone()])),
                }
            }
            Naming::Code | Naming::Label => {}
        }
    }
    let mut parts: Vec<String> = beginnings
        .iter()
        .map(|(word, longer)| format!("{word:?} only as the beginning of {}", quoted(longer)))
        .collect();
    if !through_synonyms.is_empty() {
        parts.push(format!(
            "{} only through adamviz's synonym table",
            quoted(&through_synonyms)
        ));
    }
    parts.join(", ")
}

fn push_once(list: &mut Vec<String>, word: &str) {
    if !list.iter().any(|w| w == word) {
        list.push(word.to_owned());
    }
}

/// At most this many codes of the next best are listed; the rest are counted.
const LISTED: usize = 5;

/// `HBA1C matches` / `GLUCF, GLUCU match` (with "and N more" beyond [`LISTED`]).
fn codes_match(others: &[&ParameterMatch]) -> String {
    let codes: Vec<&str> = others
        .iter()
        .take(LISTED)
        .map(|m| m.parameter.code.as_str())
        .collect();
    let more = others.len().saturating_sub(LISTED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let verb = if others.len() == 1 {
        "matches"
    } else {
        "match"
    };
    format!("{}{more} {verb}", codes.join(", "))
}

/// Why `winner` ranks above `others`, the next best (all of one rank), naming the words that
/// decided, e.g. `"fridericia" decided: QTCB matches only "qtc"`. `others` rank equal to the
/// winner when they cannot be plotted from `value_column`.
pub(super) fn decided_against(
    winner: &ParameterMatch,
    others: &[&ParameterMatch],
    value_column: &str,
) -> String {
    let Some(first) = others.first() else {
        return String::new();
    };
    let (ours, theirs) = (winner.rank(), first.rank());
    let plural = others.len() > 1;
    if ours.words > theirs.words {
        return decided_by_words(winner, others);
    }
    // Their words, when they all match the same ones: `("hemoglobin")`.
    let their_words = if others.iter().all(|m| m.words() == first.words()) {
        format!(" ({})", quoted(&first.words()))
    } else {
        String::new()
    };
    if ours.direct > theirs.direct || ours.whole > theirs.whole {
        return format!(
            "{} as many words{their_words}, but {}",
            codes_match(others),
            weaker_namings(others)
        );
    }
    if ours.fewer_unsaid > theirs.fewer_unsaid {
        let mut unsaid = Vec::new();
        for word in others.iter().flat_map(|m| &m.unsaid) {
            push_once(&mut unsaid, word);
        }
        return format!(
            "{} as many words{their_words}, but {} also {} {}, which the question does not",
            codes_match(others),
            if plural { "their labels" } else { "its label" },
            if plural { "say" } else { "says" },
            quoted(&unsaid)
        );
    }
    if ours.measured != theirs.measured {
        return format!(
            "{} as well{their_words}, but {}",
            codes_match(others),
            if plural {
                "their codes look derived"
            } else {
                "its code looks derived"
            }
        );
    }
    format!(
        "{} as well{their_words}, but {} no numbers in {value_column}",
        codes_match(others),
        if plural { "have" } else { "has" }
    )
}

/// `"standing", "systolic" decided: DIABPST matches only "standing", "blood", "pressure";
/// SYSBPSI, SYSBPSU match only "systolic", "blood", "pressure"`: the winner's words some of the
/// next best lack, then what each of them matches, alike ones together.
fn decided_by_words(winner: &ParameterMatch, others: &[&ParameterMatch]) -> String {
    let deciding: Vec<String> = winner
        .words()
        .into_iter()
        .filter(|w| others.iter().any(|m| !m.words().contains(w)))
        .collect();
    let mut alike: Vec<(Vec<String>, Vec<&ParameterMatch>)> = Vec::new();
    for other in others {
        let words = other.words();
        match alike.iter_mut().find(|(w, _)| *w == words) {
            Some((_, members)) => members.push(other),
            None => alike.push((words, vec![other])),
        }
    }
    let what_they_match: Vec<String> = alike
        .iter()
        .map(|(words, members)| format!("{} only {}", codes_match(members), quoted(words)))
        .collect();
    format!(
        "{} decided: {}",
        quoted(&deciding),
        what_they_match.join("; ")
    )
}

/// Why nothing is proposed when `tied` are named equally well: `the question names DIABP,
/// SYSBP equally well (each by "blood", "pressure") and none of its words tells them apart;
/// choose one`.
pub(super) fn tie(tied: &[&ParameterMatch]) -> String {
    let codes: Vec<&str> = tied.iter().map(|m| m.parameter.code.as_str()).collect();
    let first_words = tied[0].words();
    let by = if tied.iter().all(|m| m.words() == first_words) {
        format!("each by {}", quoted(&first_words))
    } else {
        tied.iter()
            .map(|m| format!("{} by {}", m.parameter.code, quoted(&m.words())))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "the question names {} equally well ({by}) and none of its words tells them apart; choose one",
        codes.join(", ")
    )
}
