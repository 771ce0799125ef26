//! The revision history's query: every revision newest first, filtered by status, dataset and
//! author (the columns the creation record fixed, so a page never reads the ledger but for its
//! own rows' approvers), one page at a time.

use serde_json::Value;

use crate::{
    domain::revision::{HistoryPage, HistoryQuery, HistoryRow, RevisionStatus},
    sql::{Dialect, Sql, SqlError},
    sql_params,
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

// (Each parameter typed: PostgreSQL cannot tell the type of one that is only tested for NULL.)
const FILTERED: &str = "FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash
     WHERE (CAST(?1 AS TEXT) IS NULL OR r.status = CAST(?1 AS TEXT))
       AND (CAST(?2 AS TEXT) IS NULL OR s.content_hash = CAST(?2 AS TEXT))
       AND (CAST(?3 AS TEXT) IS NULL OR lower(r.author_name) = lower(CAST(?3 AS TEXT)))";

/// The history page `query` asks for (a page past the end is the last page).
pub fn history(connection: &impl Sql, query: &HistoryQuery) -> Result<HistoryPage, SqlError> {
    let status = filter_value(&query.status).filter(|s| RevisionStatus::parse(s).is_some());
    let (dataset, author) = (filter_value(&query.dataset), filter_value(&query.author));
    let filters = sql_params![status.clone(), dataset.clone(), author.clone()];
    let total = connection
        .query_one(&format!("SELECT count(*) {FILTERED}"), filters)?
        .get::<i64>(0)? as usize;
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let page = query.page.unwrap_or(1).clamp(1, pages);
    // The page's ids first (index order, cheap columns), then what is shown of those rows.
    let ids: Vec<String> = connection
        .query(
            &format!("SELECT r.id {FILTERED} ORDER BY r.created_at DESC, r.id LIMIT ?4 OFFSET ?5"),
            sql_params![
                status.clone(),
                dataset.clone(),
                author.clone(),
                PAGE_SIZE as i64,
                ((page - 1) * PAGE_SIZE) as i64
            ],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect::<Result<_, _>>()?;
    let rows = history_rows(connection, ids)?;
    let (authors, datasets) = filter_choices(connection)?;
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

/// The rows shown of revisions `ids`, in that order.
/// A page's rows. SQLite: the approver through the ledger's index on the revision id: `+r.id`
/// drops the column's text affinity (with it SQLite cannot use the expression index and reads
/// the whole ledger for every row), and `max(seq)` rather than ORDER BY … LIMIT 1, for the same
/// reason. PostgreSQL: the same through its expression index.
const HISTORY_ROW_SQLITE: &str = "SELECT r.id, r.status, r.version, r.created_at,
        coalesce(r.author_name, 'unknown'), r.parent_id, s.content_hash, s.spec,
        coalesce((SELECT d.file_name FROM datasets d WHERE d.content_hash = s.content_hash),
                 (SELECT u.file_name FROM uploads u WHERE u.content_hash = s.content_hash), ''),
        CASE WHEN r.status = 'approved' THEN (
            SELECT json_extract(record, '$.signer.printed_name') FROM evidence_ledger
            WHERE seq = (
                SELECT max(a.seq) FROM evidence_ledger a
                WHERE json_extract(a.record, '$.revision_id') = +r.id
                  AND a.kind = 'approval'
                  AND json_extract(a.record, '$.decision') = 'approved')) END
     FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash WHERE r.id = ?1";
const HISTORY_ROW_POSTGRES: &str = "SELECT r.id, r.status, r.version, r.created_at,
        coalesce(r.author_name, 'unknown'), r.parent_id, s.content_hash, s.spec,
        coalesce((SELECT d.file_name FROM datasets d WHERE d.content_hash = s.content_hash),
                 (SELECT u.file_name FROM uploads u WHERE u.content_hash = s.content_hash), ''),
        CASE WHEN r.status = 'approved' THEN (
            SELECT adamviz_json(record) #>> '{signer,printed_name}' FROM evidence_ledger
            WHERE seq = (
                SELECT max(a.seq) FROM evidence_ledger a
                WHERE adamviz_json(a.record) ->> 'revision_id' = r.id
                  AND a.kind = 'approval'
                  AND adamviz_json(a.record) ->> 'decision' = 'approved')) END
     FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash WHERE r.id = ?1";

fn history_rows(connection: &impl Sql, ids: Vec<String>) -> Result<Vec<HistoryRow>, SqlError> {
    let mut rows = Vec::with_capacity(ids.len());
    let sql = match connection.dialect() {
        Dialect::Sqlite => HISTORY_ROW_SQLITE,
        Dialect::Postgres => HISTORY_ROW_POSTGRES,
    };
    for id in ids {
        let row = connection.query_one(sql, sql_params![id])?;
        rows.push({
            let spec: Value = serde_json::from_slice(&row.get::<Vec<u8>>(7)?).unwrap_or_default();
            let status: String = row.get(1)?;
            HistoryRow {
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
            }
        });
    }
    Ok(rows)
}

/// A dataset the history can be filtered by: its content hash and file name.
type DatasetChoice = (String, String);

/// What the filters offer: every author, and every dataset a revision was made on (hash and
/// file name).
fn filter_choices(connection: &impl Sql) -> Result<(Vec<String>, Vec<DatasetChoice>), SqlError> {
    let authors = connection
        .query(
            "SELECT DISTINCT author_name FROM revisions WHERE author_name IS NOT NULL ORDER BY 1",
            &[],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect::<Result<_, _>>()?;
    let datasets = connection
        .query(
            "SELECT s.content_hash,
                    coalesce((SELECT d.file_name FROM datasets d WHERE d.content_hash = s.content_hash),
                             (SELECT u.file_name FROM uploads u WHERE u.content_hash = s.content_hash), '')
             FROM specs s WHERE EXISTS (SELECT 1 FROM revisions r WHERE r.spec_hash = s.spec_hash)
             GROUP BY s.content_hash ORDER BY 2, 1",
            &[],
        )?
        .iter()
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .collect::<Result<_, SqlError>>()?;
    Ok((authors, datasets))
}
