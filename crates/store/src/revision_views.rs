//! The revisions as the pages read them: the list's rows (question, title, author), a revision's
//! lineage, the signing attempts the security log holds about it, the dataset of its spec.

use rusqlite::{Connection, OptionalExtension};

use crate::domain::{
    ids::RevisionId,
    revision::{RevisionStatus, RevisionSummary, SigningAttempt},
};

const SUMMARY_QUERY: &str = "SELECT r.id, r.status, r.version, r.created_at, r.spec_hash, s.spec,
        r.author_name
     FROM revisions r JOIN specs s ON s.spec_hash = r.spec_hash";

fn summary_from(row: &rusqlite::Row<'_>) -> rusqlite::Result<RevisionSummary> {
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
            .get::<_, Option<String>>(6)?
            .unwrap_or_else(|| "unknown".to_owned()),
    })
}

/// Every revision, newest first.
pub fn list_revisions(connection: &Connection) -> rusqlite::Result<Vec<RevisionSummary>> {
    let mut statement =
        connection.prepare(&format!("{SUMMARY_QUERY} ORDER BY r.created_at DESC, r.id"))?;
    let rows = statement.query_map([], summary_from)?;
    rows.collect()
}

/// The list's row of revision `id`, if it exists.
pub fn revision_summary(
    connection: &Connection,
    id: &RevisionId,
) -> rusqlite::Result<Option<RevisionSummary>> {
    connection
        .query_row(
            &format!("{SUMMARY_QUERY} WHERE r.id = ?1"),
            [id.as_str()],
            summary_from,
        )
        .optional()
}

/// The security log's signing attempts on revision `id`, oldest first.
pub fn signing_attempts(
    connection: &Connection,
    id: &RevisionId,
) -> rusqlite::Result<Vec<SigningAttempt>> {
    let prefix = format!("{id}: ");
    let mut statement = connection.prepare(
        "SELECT at, account_name, outcome, detail FROM security_events
         WHERE event IN ('signing', 'signing_lockout') AND substr(detail, 1, ?2) = ?1
         ORDER BY seq",
    )?;
    let rows = statement.query_map(rusqlite::params![prefix, prefix.len() as i64], |row| {
        let detail: String = row.get(3)?;
        Ok(SigningAttempt {
            at: row.get(0)?,
            account: row.get(1)?,
            outcome: row.get(2)?,
            detail: detail[prefix.len()..].to_owned(),
        })
    })?;
    rows.collect()
}

/// The revision `id` revises, and the revisions that revise it (oldest first).
pub fn lineage(
    connection: &Connection,
    id: &RevisionId,
) -> rusqlite::Result<(Option<String>, Vec<String>)> {
    let parent = connection
        .query_row(
            "SELECT parent_id FROM revisions WHERE id = ?1",
            [id.as_str()],
            |row| row.get::<_, Option<String>>(0),
        )
        .optional()?
        .flatten();
    let mut statement = connection
        .prepare("SELECT id FROM revisions WHERE parent_id = ?1 ORDER BY created_at, id")?;
    let children = statement
        .query_map([id.as_str()], |row| row.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    Ok((parent, children))
}

/// The content hash of the dataset spec `spec_hash` was confirmed on.
pub fn dataset_of_spec(
    connection: &Connection,
    spec_hash: &str,
) -> Result<String, rusqlite::Error> {
    connection.query_row(
        "SELECT content_hash FROM specs WHERE spec_hash = ?1",
        [spec_hash],
        |row| row.get::<_, String>(0),
    )
}
