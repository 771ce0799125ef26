//! A person's work list (the signed-in home page): for each section a count and the newest
//! rows, each section one condition on the revisions, read through the indexes the history
//! already uses (author, status, the open runs, the ledger's revision index) so that the list
//! stays fast with tens of thousands of revisions.

use crate::data_cuts::newer_cut_exists;
use crate::history::rows_by_id;
use crate::sql::{Dialect, Sql, SqlError, SqlValue};
use adamviz_model::work_list::{WorkKind, WorkList, WorkSection, WORK_ROWS};

/// Who the list is for.
#[derive(Debug, Clone, Copy)]
pub struct Viewer<'a> {
    /// The account's name (revisions carry their author's name).
    pub name: &'a str,
    /// Whether the account may sign (a reviewer who is not an admin).
    pub may_sign: bool,
}

/// An approval record about `r.id` (with `decision`, if given) exists in the ledger. SQLite
/// reaches it through the expression index on the record's revision id (`+r.id` keeps SQLite
/// from comparing with the column's affinity, which would bypass that index); PostgreSQL
/// through its own expression index.
fn approval_exists(dialect: Dialect, decision: Option<&str>) -> String {
    let (revision, decided) = match dialect {
        Dialect::Sqlite => (
            "json_extract(a.record, '$.revision_id') = +r.id",
            "json_extract(a.record, '$.decision')",
        ),
        Dialect::Postgres => (
            "adamviz_json(a.record) ->> 'revision_id' = r.id",
            "adamviz_json(a.record) ->> 'decision'",
        ),
    };
    let decision = decision
        .map(|d| format!(" AND {decided} = '{d}'"))
        .unwrap_or_default();
    format!(
        "EXISTS (SELECT 1 FROM evidence_ledger a WHERE {revision} AND a.kind = 'approval'{decision})"
    )
}

/// A run is queued or under way for `r.id`: an open request in the run queue, or an active
/// attempt (a command-line run has no queue row). Both through partial indexes.
const RUNNING: &str = "r.id IN (SELECT q.revision_id FROM run_queue q WHERE q.state <> 'done'
                 UNION SELECT t.revision_id FROM attempts t WHERE t.state = 'active')";

/// Made by the viewer (`?1`).
const MINE: &str = "lower(r.author_name) = lower(CAST(?1 AS TEXT))";

/// The condition of `kind`'s section and whether it names the viewer (`?1`).
fn condition(kind: WorkKind, dialect: Dialect) -> (String, bool) {
    match kind {
        WorkKind::MyDrafts => (
            // Experimental drafts (free y-scales) never run: they wait for nobody.
            format!("{MINE} AND r.status = 'draft' AND NOT {RUNNING}"),
            true,
        ),
        WorkKind::RunsInProgress => (RUNNING.to_owned(), false),
        WorkKind::AwaitingMySignature => (
            format!(
                "r.status = 'verified' AND lower(coalesce(r.author_name, '')) <> lower(CAST(?1 AS TEXT))
                 AND NOT {}",
                approval_exists(dialect, None)
            ),
            true,
        ),
        WorkKind::SentBackToMe => (
            format!(
                "{MINE} AND r.status = 'verified' AND {}
                 AND NOT EXISTS (SELECT 1 FROM revisions c WHERE c.parent_id = r.id)",
                approval_exists(dialect, Some("changes_requested"))
            ),
            true,
        ),
        WorkKind::RecentlyApproved => ("r.status = 'approved'".to_owned(), false),
        WorkKind::NewerDataCut => (
            format!("{MINE} AND {}", newer_cut_exists("r.spec_hash")),
            true,
        ),
    }
}

/// The work list of `viewer`: every section that applies to them (signing only for those who
/// may sign), each with its count and its newest [`WORK_ROWS`] rows.
pub fn work_list(connection: &impl Sql, viewer: Viewer<'_>) -> Result<WorkList, SqlError> {
    let mut sections = Vec::new();
    for kind in WorkKind::ALL {
        if kind == WorkKind::AwaitingMySignature && !viewer.may_sign {
            continue;
        }
        let (condition, names_viewer) = condition(kind, connection.dialect());
        let name = SqlValue::from(viewer.name.to_owned());
        let params: &[SqlValue] = if names_viewer {
            std::slice::from_ref(&name)
        } else {
            &[]
        };
        let count = connection
            .query_one(
                &format!("SELECT count(*) FROM revisions r WHERE {condition}"),
                params,
            )?
            .get::<i64>(0)? as usize;
        let ids: Vec<String> = if count == 0 {
            Vec::new()
        } else {
            connection
                .query(
                    &format!(
                        "SELECT r.id FROM revisions r WHERE {condition}
                         ORDER BY r.created_at DESC, r.id LIMIT {WORK_ROWS}"
                    ),
                    params,
                )?
                .iter()
                .map(|row| row.get(0))
                .collect::<Result<_, _>>()?
        };
        sections.push(WorkSection {
            kind,
            count,
            rows: rows_by_id(connection, &ids)?,
        });
    }
    Ok(WorkList {
        viewer: viewer.name.to_owned(),
        sections,
    })
}
