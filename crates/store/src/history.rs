//! The revision history's query: every revision newest first, filtered by status, dataset and
//! author (the columns the creation record fixed, so a page never reads the ledger but for its
//! own rows' approvers), one page at a time.

use serde_json::Value;

use crate::data_cuts::{newer_cut_exists, REVISED_FOR_NEWER_CUT};
use crate::sql::{Dialect, Sql, SqlError};
use crate::sql_params;
use adamviz_model::revision::{HistoryPage, HistoryQuery, HistoryRow, RevisionStatus};

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
// SQLite reads the join through its covering indexes (migration 7); PostgreSQL's planner does
// better with the dataset filter as a subquery: without it, counting and paging read the
// revisions' own index alone.
const FILTERED_SQLITE: &str = "FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash
     WHERE (CAST(?1 AS TEXT) IS NULL OR r.status = CAST(?1 AS TEXT))
       AND (CAST(?2 AS TEXT) IS NULL OR s.content_hash = CAST(?2 AS TEXT))
       AND (CAST(?3 AS TEXT) IS NULL OR lower(r.author_name) = lower(CAST(?3 AS TEXT)))";
const FILTERED_POSTGRES: &str = "FROM revisions r
     WHERE (CAST(?1 AS TEXT) IS NULL OR r.status = CAST(?1 AS TEXT))
       AND (CAST(?2 AS TEXT) IS NULL OR r.spec_hash IN (
                SELECT sp.spec_hash FROM specs sp WHERE sp.content_hash = CAST(?2 AS TEXT)))
       AND (CAST(?3 AS TEXT) IS NULL OR lower(r.author_name) = lower(CAST(?3 AS TEXT)))";

/// The data-cut filters of the history: (value, condition on `r`).
fn cut_condition(cut: &str) -> Option<String> {
    match cut {
        "revised_for_newer_cut" => Some(REVISED_FOR_NEWER_CUT.to_owned()),
        "approved_on_older_cut" => Some(format!(
            "r.status = 'approved' AND {}",
            newer_cut_exists("r.spec_hash")
        )),
        _ => None,
    }
}

/// The history page `query` asks for (a page past the end is the last page).
pub fn history(connection: &impl Sql, query: &HistoryQuery) -> Result<HistoryPage, SqlError> {
    let status = filter_value(&query.status).filter(|s| RevisionStatus::parse(s).is_some());
    let (dataset, author) = (filter_value(&query.dataset), filter_value(&query.author));
    let cut = filter_value(&query.cut).filter(|c| cut_condition(c).is_some());
    let filters = sql_params![status.clone(), dataset.clone(), author.clone()];
    let base = match connection.dialect() {
        Dialect::Sqlite => FILTERED_SQLITE,
        Dialect::Postgres => FILTERED_POSTGRES,
    };
    let filtered = match cut.as_deref().and_then(cut_condition) {
        Some(condition) => format!("{base}\n       AND {condition}"),
        None => base.to_owned(),
    };
    let total = connection
        .query_one(&format!("SELECT count(*) {filtered}"), filters)?
        .get::<i64>(0)? as usize;
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let page = query.page.unwrap_or(1).clamp(1, pages);
    let page_params = sql_params![
        status.clone(),
        dataset.clone(),
        author.clone(),
        PAGE_SIZE as i64,
        ((page - 1) * PAGE_SIZE) as i64
    ];
    let rows = match connection.dialect() {
        // The page's ids first (index order, cheap columns), then what is shown of those rows,
        // each through the ledger's index (a statement per row costs nothing in process).
        Dialect::Sqlite => {
            let ids: Vec<String> = connection
                .query(
                    &format!(
                        "SELECT r.id {filtered} ORDER BY r.created_at DESC, r.id LIMIT ?4 OFFSET ?5"
                    ),
                    page_params,
                )?
                .iter()
                .map(|row| row.get(0))
                .collect::<Result<_, _>>()?;
            let mut rows = Vec::with_capacity(ids.len());
            for id in ids {
                rows.push(history_row(
                    &connection.query_one(HISTORY_ROW_SQLITE, sql_params![id])?,
                )?);
            }
            rows
        }
        // One statement: a round trip to the server per row would cost more than the rows.
        Dialect::Postgres => connection
            .query(
                &format!(
                    "{HISTORY_COLUMNS_POSTGRES}
                     FROM (SELECT r.id, r.created_at {filtered}
                           ORDER BY r.created_at DESC, r.id LIMIT ?4 OFFSET ?5) page
                     JOIN revisions r ON r.id = page.id
                     JOIN specs s ON s.spec_hash = r.spec_hash
                     ORDER BY page.created_at DESC, page.id"
                ),
                page_params,
            )?
            .iter()
            .map(history_row)
            .collect::<Result<_, _>>()?,
    };
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
            cut,
            page: Some(page),
        },
        authors,
        datasets,
    })
}

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
const HISTORY_COLUMNS_POSTGRES: &str = "SELECT r.id, r.status, r.version, r.created_at,
        coalesce(r.author_name, 'unknown'), r.parent_id, s.content_hash, s.spec,
        coalesce((SELECT d.file_name FROM datasets d WHERE d.content_hash = s.content_hash),
                 (SELECT u.file_name FROM uploads u WHERE u.content_hash = s.content_hash), ''),
        CASE WHEN r.status = 'approved' THEN (
            SELECT adamviz_json(record) #>> '{signer,printed_name}' FROM evidence_ledger
            WHERE seq = (
                SELECT max(a.seq) FROM evidence_ledger a
                WHERE adamviz_json(a.record) ->> 'revision_id' = r.id
                  AND a.kind = 'approval'
                  AND adamviz_json(a.record) ->> 'decision' = 'approved')) END";

/// The history rows of `ids`, in their order (an id that names no revision is left out).
pub fn rows_by_id(connection: &impl Sql, ids: &[String]) -> Result<Vec<HistoryRow>, SqlError> {
    let statement = match connection.dialect() {
        Dialect::Sqlite => HISTORY_ROW_SQLITE.to_owned(),
        Dialect::Postgres => format!(
            "{HISTORY_COLUMNS_POSTGRES}
             FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash WHERE r.id = ?1"
        ),
    };
    let mut rows = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(row) = connection.query_opt(&statement, sql_params![id.clone()])? {
            rows.push(history_row(&row)?);
        }
    }
    Ok(rows)
}

/// One row of the page, from the columns of either dialect's statement.
fn history_row(row: &crate::sql::SqlRow) -> Result<HistoryRow, SqlError> {
    let spec: Value = serde_json::from_slice(&row.get::<Vec<u8>>(7)?).unwrap_or_default();
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
}

/// A dataset the history can be filtered by: its content hash and file name.
type DatasetChoice = (String, String);

/// What the filters offer: every author, and every dataset a revision was made on (hash and
/// file name).
fn filter_choices(connection: &impl Sql) -> Result<(Vec<String>, Vec<DatasetChoice>), SqlError> {
    // Each next name through the index (a few lookups, whatever the number of revisions),
    // rather than reading every revision's author to keep the distinct ones.
    let authors = connection
        .query(
            "WITH RECURSIVE names(name) AS (
                 SELECT min(author_name) FROM revisions
                 UNION ALL
                 SELECT (SELECT min(author_name) FROM revisions WHERE author_name > names.name)
                 FROM names WHERE names.name IS NOT NULL)
             SELECT name FROM names WHERE name IS NOT NULL",
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
