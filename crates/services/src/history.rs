//! The revision history and the comparison of two revisions, as plain functions: the history
//! pages through every revision newest first, filtered by status, dataset and author (the
//! columns the creation record fixed, so a page never reads the ledger but for its own rows'
//! approvers); a comparison sets two revisions' answers, statistics and images side by side.

use std::collections::BTreeMap;

use serde_json::Value;

use adamviz_model::{
    draft::DraftAnswers,
    revision::{
        AnswerDifference, CellChange, CellDifference, CompareSide, Comparison, RevisionDetail,
    },
};

pub use adamviz_store::history::{history, PAGE_SIZE};

/// The questions of the confirmation form, in words, in form order.
const ANSWER_LABELS: [(&str, &str); 13] = [
    ("parameter", "Parameter"),
    ("filters", "Filters"),
    ("treatment_variable", "Treatment variable"),
    ("treatment_levels", "Treatment levels (panel order)"),
    ("value_variable", "Value variable"),
    ("visit_variable", "Visit variable"),
    ("visits", "Visits (axis order)"),
    ("records_per_subject_visit", "Record per subject and visit"),
    ("y_scale", "Y-scale"),
    ("unit", "Unit"),
    ("low_n_threshold", "Low-N threshold"),
    ("low_n_action", "Low-N policy"),
    ("title", "Title"),
];

fn answer_text(value: &Value) -> String {
    match value {
        Value::Null => "—".to_owned(),
        Value::String(text) => text.clone(),
        Value::Array(items) if items.is_empty() => "none".to_owned(),
        Value::Array(items) => items.iter().map(answer_text).collect::<Vec<_>>().join(", "),
        Value::Object(map) if map.is_empty() => "none".to_owned(),
        Value::Object(map) => map
            .iter()
            .map(|(key, inner)| format!("{key}: {}", answer_text(inner)))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// The answers that differ between `a` and `b`, in form order.
pub fn answer_differences(a: &DraftAnswers, b: &DraftAnswers) -> Vec<AnswerDifference> {
    let (a, b) = (
        serde_json::to_value(a).unwrap_or_default(),
        serde_json::to_value(b).unwrap_or_default(),
    );
    ANSWER_LABELS
        .iter()
        .filter(|(key, _)| a[*key] != b[*key])
        .map(|(key, label)| AnswerDifference {
            question: (*label).to_owned(),
            a: answer_text(&a[*key]),
            b: answer_text(&b[*key]),
        })
        .collect()
}

fn side(detail: &RevisionDetail) -> CompareSide {
    CompareSide {
        id: detail.summary.id.clone(),
        title: detail.summary.title.clone(),
        status: detail.summary.status,
        version: detail.summary.version,
        plot_sha256: detail
            .artifacts
            .iter()
            .find(|a| a.name == "plot.png")
            .map(|a| a.sha256.clone()),
    }
}

/// Revisions `a` and `b` side by side: the answers that differ, every cell's n, mean, median and
/// quartiles in both, whether it changed, (in `b`'s order, then the cells only `a` has), and both images.
pub fn compare(a: &RevisionDetail, b: &RevisionDetail) -> Comparison {
    let key =
        |c: &adamviz_model::statistics::CellStatistics| (c.treatment.clone(), c.visit.clone());
    let old: BTreeMap<_, _> = a.statistics.iter().map(|c| (key(c), c)).collect();
    let new: BTreeMap<_, _> = b.statistics.iter().map(|c| (key(c), c)).collect();
    let mut order: Vec<(String, String)> = b.statistics.iter().map(key).collect();
    order.extend(
        a.statistics
            .iter()
            .map(key)
            .filter(|k| !new.contains_key(k)),
    );
    let cells = order
        .into_iter()
        .map(|(treatment, visit)| {
            let (x, y) = (
                old.get(&(treatment.clone(), visit.clone())),
                new.get(&(treatment.clone(), visit.clone())),
            );
            let change = match (x, y) {
                (Some(_), None) => CellChange::Dropped,
                (None, Some(_)) => CellChange::New,
                (Some(x), Some(y))
                    if (x.n, x.mean, x.median, x.q1, x.q3)
                        != (y.n, y.mean, y.median, y.q1, y.q3) =>
                {
                    CellChange::Changed
                }
                _ => CellChange::Same,
            };
            CellDifference {
                n: (x.map(|c| c.n), y.map(|c| c.n)),
                mean: (x.and_then(|c| c.mean), y.and_then(|c| c.mean)),
                median: (x.and_then(|c| c.median), y.and_then(|c| c.median)),
                q1: (x.and_then(|c| c.q1), y.and_then(|c| c.q1)),
                q3: (x.and_then(|c| c.q3), y.and_then(|c| c.q3)),
                change,
                treatment,
                visit,
            }
        })
        .collect();
    Comparison {
        a: side(a),
        b: side(b),
        answers: answer_differences(&a.answers, &b.answers),
        cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_answers_that_differ_are_listed_in_form_order() {
        let a = DraftAnswers {
            parameter: Some("ALT".to_owned()),
            visits: vec!["Baseline".to_owned(), "Week 2".to_owned()],
            title: Some("ALT".to_owned()),
            ..DraftAnswers::default()
        };
        let mut b = a.clone();
        b.visits.pop();
        b.title = None;
        let differences = answer_differences(&a, &b);
        assert_eq!(
            differences,
            [
                AnswerDifference {
                    question: "Visits (axis order)".to_owned(),
                    a: "Baseline, Week 2".to_owned(),
                    b: "Baseline".to_owned(),
                },
                AnswerDifference {
                    question: "Title".to_owned(),
                    a: "ALT".to_owned(),
                    b: "—".to_owned(),
                },
            ]
        );
        assert!(answer_differences(&a, &a).is_empty());
    }
}
