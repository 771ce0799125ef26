//! The revisions as the pages read them: the list's rows (question, title, author), a revision's
//! lineage, the signing attempts the security log holds about it, the dataset of its spec.

use crate::sql::{Sql, SqlError, SqlRow};
use crate::sql_params;

use adamviz_model::{
    ids::RevisionId,
    revision::{RevisionStatus, RevisionSummary, SigningAttempt},
};

const SUMMARY_QUERY: &str = "SELECT r.id, r.status, r.version, r.created_at, r.spec_hash, s.spec,
        r.author_name
     FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash";

fn summary_from(row: &SqlRow) -> Result<RevisionSummary, SqlError> {
    let spec: Vec<u8> = row.get(5)?;
    let spec: serde_json::Value = serde_json::from_slice(&spec).unwrap_or_default();
    let status: String = row.get(1)?;
    Ok(RevisionSummary {
        id: row.get(0)?,
        status: RevisionStatus::parse(&status).unwrap_or(RevisionStatus::Draft),
        version: row.get(2)?,
        created_at: row.get(3)?,
        spec_hash: row.get(4)?,
        question: spec["question"].as_str().unwrap_or_default().to_owned(),
        title: spec["title"].as_str().unwrap_or_default().to_owned(),
        author: row
            .get::<Option<String>>(6)?
            .unwrap_or_else(|| "unknown".to_owned()),
    })
}

/// Every revision, newest first.
pub fn list_revisions(connection: &impl Sql) -> Result<Vec<RevisionSummary>, SqlError> {
    connection
        .query(
            &format!("{SUMMARY_QUERY} ORDER BY r.created_at DESC, r.id"),
            &[],
        )?
        .iter()
        .map(summary_from)
        .collect()
}

/// The list's row of revision `id`, if it exists.
pub fn revision_summary(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<Option<RevisionSummary>, SqlError> {
    connection
        .query_opt(
            &format!("{SUMMARY_QUERY} WHERE r.id = ?1"),
            sql_params![id.as_str()],
        )?
        .map(|row| summary_from(&row))
        .transpose()
}

/// The security log's signing attempts on revision `id`, oldest first.
pub fn signing_attempts(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<Vec<SigningAttempt>, SqlError> {
    let prefix = format!("{id}: ");
    connection
        .query(
            "SELECT at, account_name, outcome, detail FROM security_events
             WHERE event IN ('signing', 'signing_lockout')
               AND substr(detail, 1, CAST(?2 AS INTEGER)) = CAST(?1 AS TEXT)
             ORDER BY seq",
            sql_params![prefix.as_str(), prefix.len() as i64],
        )?
        .iter()
        .map(|row| {
            let detail: String = row.get(3)?;
            Ok(SigningAttempt {
                at: row.get(0)?,
                account: row.get(1)?,
                outcome: row.get(2)?,
                detail: detail.get(prefix.len()..).unwrap_or_default().to_owned(),
            })
        })
        .collect()
}

/// The revision `id` revises, and the revisions that revise it (oldest first).
pub fn lineage(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<(Option<String>, Vec<String>), SqlError> {
    let parent = match connection.query_opt(
        "SELECT parent_id FROM revisions WHERE id = ?1",
        sql_params![id.as_str()],
    )? {
        Some(row) => row.get::<Option<String>>(0)?,
        None => None,
    };
    let children = connection
        .query(
            "SELECT id FROM revisions WHERE parent_id = ?1 ORDER BY created_at, id",
            sql_params![id.as_str()],
        )?
        .iter()
        .map(|row| row.get::<String>(0))
        .collect::<Result<_, _>>()?;
    Ok((parent, children))
}

/// The content hash of the dataset spec `spec_hash` was confirmed on.
pub fn dataset_of_spec(connection: &impl Sql, spec_hash: &str) -> Result<String, SqlError> {
    connection
        .query_one(
            "SELECT content_hash FROM specs WHERE spec_hash = ?1",
            sql_params![spec_hash],
        )?
        .get(0)
}
