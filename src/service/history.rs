//! The revision history and the comparison of two revisions, as plain functions: the history
//! pages through every revision newest first, filtered by status, dataset and author (the
//! columns the creation record fixed, so a page never reads the ledger but for its own rows'
//! approvers); a comparison sets two revisions' answers, statistics and images side by side.

use std::collections::BTreeMap;

use rusqlite::{params, Connection};
use serde_json::Value;

use crate::domain::{
    draft::DraftAnswers,
    revision::{
        AnswerDifference, CellDifference, CompareSide, Comparison, HistoryPage, HistoryQuery,
        HistoryRow, RevisionDetail, RevisionStatus,
    },
};

/// Revisions per history page.
pub const PAGE_SIZE: usize = 25;

fn filter_value(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

const FILTERED: &str = "FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash
     WHERE (?1 IS NULL OR r.status = ?1)
       AND (?2 IS NULL OR s.content_hash = ?2)
       AND (?3 IS NULL OR r.author_name = ?3 COLLATE NOCASE)";

/// The history page `query` asks for (a page past the end is the last page).
pub fn history(connection: &Connection, query: &HistoryQuery) -> rusqlite::Result<HistoryPage> {
    let status = filter_value(&query.status).filter(|s| RevisionStatus::parse(s).is_some());
    let (dataset, author) = (filter_value(&query.dataset), filter_value(&query.author));
    let filters = params![status, dataset, author];
    let total: usize =
        connection.query_row(&format!("SELECT count(*) {FILTERED}"), filters, |row| {
            row.get::<_, i64>(0).map(|n| n as usize)
        })?;
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let page = query.page.unwrap_or(1).clamp(1, pages);
    // The page's ids first (index order, cheap columns), then what is shown of those rows.
    let ids: Vec<String> = {
        let mut statement = connection.prepare_cached(&format!(
            "SELECT r.id {FILTERED} ORDER BY r.created_at DESC, r.id LIMIT ?4 OFFSET ?5"
        ))?;
        let rows = statement.query_map(
            params![
                status,
                dataset,
                author,
                PAGE_SIZE as i64,
                ((page - 1) * PAGE_SIZE) as i64
            ],
            |row| row.get(0),
        )?;
        rows.collect::<Result<_, _>>()?
    };
    let mut rows = Vec::with_capacity(ids.len());
    // The approver through the ledger's index on the revision id: `+r.id` drops the column's
    // text affinity (with it SQLite cannot use the expression index and reads the whole
    // ledger for every row), and `max(seq)` rather than ORDER BY … LIMIT 1, for the same
    // reason.
    let mut statement = connection.prepare_cached(
        "SELECT r.id, r.status, r.version, r.created_at, coalesce(r.author_name, 'unknown'),
                r.parent_id, s.content_hash, s.spec,
                coalesce((SELECT d.file_name FROM datasets d WHERE d.content_hash = s.content_hash),
                         (SELECT u.file_name FROM uploads u WHERE u.content_hash = s.content_hash), ''),
                CASE WHEN r.status = 'approved' THEN (
                    SELECT json_extract(record, '$.signer.printed_name') FROM evidence_ledger
                    WHERE seq = (
                        SELECT max(a.seq) FROM evidence_ledger a
                        WHERE json_extract(a.record, '$.revision_id') = +r.id
                          AND a.kind = 'approval'
                          AND json_extract(a.record, '$.decision') = 'approved')) END
         FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash WHERE r.id = ?1",
    )?;
    for id in ids {
        rows.push(statement.query_row([id], |row| {
            let spec: Value =
                serde_json::from_slice(&row.get::<_, Vec<u8>>(7)?).unwrap_or_default();
            let status: String = row.get(1)?;
            Ok(HistoryRow {
                id: row.get(0)?,
                status: RevisionStatus::parse(&status).unwrap_or(RevisionStatus::Draft),
                version: row.get(2)?,
                created_at: row.get(3)?,
                author: row.get(4)?,
                parent: row.get(5)?,
                dataset_hash: row.get(6)?,
                parameter: spec["parameter"]["value"]
                    .as_str()
                    .unwrap_or("all")
                    .to_owned(),
                question: spec["question"].as_str().unwrap_or_default().to_owned(),
                title: spec["title"].as_str().unwrap_or_default().to_owned(),
                dataset_name: row.get(8)?,
                approver: row.get(9)?,
            })
        })?);
    }
    let authors = {
        let mut statement = connection.prepare_cached(
            "SELECT DISTINCT author_name FROM revisions WHERE author_name IS NOT NULL ORDER BY 1",
        )?;
        let rows = statement.query_map([], |row| row.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    let datasets = {
        let mut statement = connection.prepare_cached(
            "SELECT s.content_hash,
                    coalesce((SELECT d.file_name FROM datasets d WHERE d.content_hash = s.content_hash),
                             (SELECT u.file_name FROM uploads u WHERE u.content_hash = s.content_hash), '')
             FROM specs s WHERE EXISTS (SELECT 1 FROM revisions r WHERE r.spec_hash = s.spec_hash)
             GROUP BY s.content_hash ORDER BY 2, 1",
        )?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    Ok(HistoryPage {
        rows,
        total,
        page,
        pages,
        query: HistoryQuery {
            status,
            dataset,
            author,
            page: Some(page),
        },
        authors,
        datasets,
    })
}

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

/// Revisions `a` and `b` side by side: the answers that differ, every cell's n, mean and median
/// in both (in `b`'s order, then the cells only `a` has), and both images.
pub fn compare(a: &RevisionDetail, b: &RevisionDetail) -> Comparison {
    let key =
        |c: &crate::domain::statistics::CellStatistics| (c.treatment.clone(), c.visit.clone());
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
            CellDifference {
                n: (x.map(|c| c.n), y.map(|c| c.n)),
                mean: (x.and_then(|c| c.mean), y.and_then(|c| c.mean)),
                median: (x.and_then(|c| c.median), y.and_then(|c| c.median)),
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
