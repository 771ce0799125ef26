//! Copies of real revisions, for the benchmarks that need a store of many (`adamviz-bench
//! ledger`, `adamviz-bench web`'s history): one real revision's records re-sealed into the chain
//! with fresh ids and every reference remapped, and its rows inserted through the database's
//! rules, so every copy is a revision the rules and the audit accept. The history's fill: one
//! real Approved revision (run through R, signed with a password) and one real Draft are
//! copied into N revisions — a quarter each Draft and Approved, half Verified — by five authors,
//! created a minute apart.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};

use serde_json::Value;

use crate::db::Connection;
use crate::ledger::{append_record, records_about, AppendError};
use crate::sql::{Sql, SqlError};
use crate::sql_params;
use adamviz_model::ids::RevisionId;

/// Why a copy failed.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The database.
    #[error(transparent)]
    Sql(#[from] SqlError),
    /// A stored record is not JSON.
    #[error("a stored record is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Appending a copied record.
    #[error(transparent)]
    Append(#[from] AppendError),
}

/// The author name and creation time of revision `id`.
pub fn author_and_creation(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<(String, String), SqlError> {
    let row = connection.query_one(
        "SELECT author_name, created_at FROM revisions WHERE id = ?1",
        sql_params![id.as_str()],
    )?;
    Ok((row.get(0)?, row.get(1)?))
}

/// `value` with every `revision_id` and `attempt_id` field, at any depth, replaced, and every
/// string naming an earlier record of the original (`copies`: original hash → copy's hash)
/// replaced by its copy's hash.
pub fn with_ids(
    value: &mut Value,
    revision_id: &str,
    attempt_id: &str,
    copies: &HashMap<String, String>,
) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match key.as_str() {
                    "revision_id" => *field = Value::String(revision_id.to_owned()),
                    "attempt_id" if field.is_string() => {
                        *field = Value::String(attempt_id.to_owned())
                    }
                    _ => with_ids(field, revision_id, attempt_id, copies),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| with_ids(item, revision_id, attempt_id, copies)),
        Value::String(text) => {
            if let Some(copy) = copies.get(text.as_str()) {
                *text = copy.clone();
            }
        }
        _ => {}
    }
}

/// In `transaction`, after the copy's records: the rows of a Verified revision `revision`
/// copied from `original`, inserted as the repository does (draft, active attempt, bundle,
/// succeeded, verified), each change admitted by the database's rules only because its record
/// is there.
/// The revision, attempt and bundle rows of Verified revision `original` (revision, attempt)
/// copied for `copy`, with the copy's records' hashes (`copies`), its author and creation time
/// (`made`: the author its creation record names, and when).
pub fn copy_rows(
    transaction: &impl Sql,
    original: (&str, &str),
    copy: (&str, &str),
    copies: &HashMap<String, String>,
    made: (&str, &str),
) -> Result<(), CopyError> {
    let (original_revision, original_attempt) = original;
    let (revision, attempt) = copy;
    let mapped = |hash: String| copies.get(&hash).cloned().unwrap_or(hash);
    let request_hash: String = transaction
        .query_one(
            "SELECT request_hash FROM revisions WHERE id = ?1",
            sql_params![original_revision],
        )?
        .get(0)?;
    transaction.execute(
        "INSERT INTO revisions (id, spec_hash, status, version, script_hash, snapshot_id,
                                snapshot_hash, request_hash, created_at, inputs, author_name)
         SELECT ?2, spec_hash, 'draft', 1, script_hash, snapshot_id, snapshot_hash, ?3,
                ?5, inputs, ?4
         FROM revisions WHERE id = ?1",
        sql_params![
            original_revision,
            revision,
            mapped(request_hash),
            made.0,
            made.1
        ],
    )?;
    transaction.execute(
        "INSERT INTO attempts (id, revision_id, fingerprint, captured_version, state, started_at,
                               owner, lease_until)
         SELECT ?2, ?3, fingerprint, 1, 'active', started_at, owner, lease_until
         FROM attempts WHERE id = ?1",
        sql_params![original_attempt, attempt, revision],
    )?;
    let row = transaction.query_one(
        "SELECT verification_hash, record_hash FROM artifact_bundles WHERE revision_id = ?1",
        sql_params![original_revision],
    )?;
    let (verification_hash, record_hash): (String, String) = (row.get(0)?, row.get(1)?);
    transaction.execute(
        "INSERT INTO artifact_bundles (revision_id, attempt_id, script_hash, png_hash,
                statistics_hash, environment_hash, snapshot_id, verification_hash, record_hash,
                accepted_at)
         SELECT ?2, ?3, script_hash, png_hash, statistics_hash, environment_hash, snapshot_id,
                ?4, ?5, accepted_at
         FROM artifact_bundles WHERE revision_id = ?1",
        sql_params![
            original_revision,
            revision,
            attempt,
            mapped(verification_hash),
            mapped(record_hash)
        ],
    )?;
    transaction.execute(
        "UPDATE attempts SET state = 'succeeded', ended_at = (SELECT ended_at FROM attempts WHERE id = ?1)
         WHERE id = ?2",
        sql_params![original_attempt, attempt],
    )?;
    transaction.execute(
        "UPDATE revisions SET status = 'verified', version = 2,
                pending_image_hash = (SELECT pending_image_hash FROM revisions WHERE id = ?1),
                pending_analytical_hash = (SELECT pending_analytical_hash FROM revisions WHERE id = ?1)
         WHERE id = ?2",
        sql_params![original_revision, revision],
    )?;
    Ok(())
}

/// Authors of the copies.
pub const AUTHORS: usize = 5;

type Template = Vec<(String, String, serde_json::Map<String, Value>)>;

fn template(connection: &impl Sql, id: &RevisionId) -> Result<Template, CopyError> {
    records_about(connection, id)?
        .into_iter()
        .map(|stored| {
            let mut body: serde_json::Map<String, Value> = serde_json::from_slice(&stored.record)?;
            for field in ["kind", "previous_hash", "record_hash"] {
                body.remove(field);
            }
            Ok((stored.kind, stored.record_hash, body))
        })
        .collect()
}

/// Appends the records of `template` for `revision`/`attempt` (its creation record naming
/// `author`), keeping those `keep` accepts; the map of original to copied record hashes.
fn copy_records(
    transaction: &impl Sql,
    template: &Template,
    (revision, attempt): (&str, &str),
    author: (i64, &str),
    keep: impl Fn(&str, &serde_json::Map<String, Value>) -> bool,
) -> Result<HashMap<String, String>, CopyError> {
    let mut copies = HashMap::new();
    for (kind, original_hash, body) in template {
        if !keep(kind, body) {
            continue;
        }
        let mut body = Value::Object(body.clone());
        with_ids(&mut body, revision, attempt, &copies);
        if kind == "revision_lifecycle" && body["event"] == "created" {
            body["actor"]["account_id"] = author.0.into();
            body["actor"]["account_name"] = author.1.into();
        }
        let Value::Object(body) = body else {
            unreachable!("an object stays an object")
        };
        let appended = append_record(transaction, kind, body)?;
        copies.insert(original_hash.clone(), appended.record_hash);
    }
    Ok(copies)
}

/// Fills the store with `count` copies of `approved` (an Approved revision, with its attempt)
/// and `draft` (a Draft revision), created from `start` on, a minute apart.
pub fn fill_history(
    connection: &mut Connection,
    approved: (&RevisionId, &str),
    draft: &RevisionId,
    count: usize,
    start: DateTime<Utc>,
) -> Result<(), CopyError> {
    let approved_records = template(connection, approved.0)?;
    let draft_records = template(connection, draft)?;
    let numbers: Vec<usize> = (1..=count).collect();
    for chunk in numbers.chunks(500) {
        let transaction = connection.transaction()?;
        for &n in chunk {
            let (revision, attempt) = (format!("rev-{n:032x}"), format!("att-{n:032x}"));
            let author = format!("author-{}", n % AUTHORS);
            let author_id = 1000 + (n % AUTHORS) as i64;
            let created_at = (start + Duration::minutes(n as i64))
                .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                .to_string();
            let ids = (revision.as_str(), attempt.as_str());
            let author = (author_id, author.as_str());
            match n % 4 {
                0 => copy_draft(
                    &transaction,
                    &draft_records,
                    draft,
                    ids,
                    author,
                    &created_at,
                )?,
                kind => copy_verified(
                    &transaction,
                    &approved_records,
                    approved,
                    ids,
                    author,
                    &created_at,
                    kind == 3,
                )?,
            }
        }
        transaction.commit()?;
    }
    if connection.dialect() == crate::sql::Dialect::Postgres {
        // What autovacuum does within a minute of a bulk load: the visibility map and the
        // statistics the planner and index-only scans rely on.
        connection.execute("VACUUM ANALYZE", &[])?;
    }
    Ok(())
}

/// One copy of the Draft revision `draft`: its records, then its row naming the copied request.
fn copy_draft(
    transaction: &impl Sql,
    records: &Template,
    draft: &RevisionId,
    (revision, attempt): (&str, &str),
    (author_id, author): (i64, &str),
    created_at: &str,
) -> Result<(), CopyError> {
    let copies = copy_records(
        transaction,
        records,
        (revision, attempt),
        (author_id, author),
        |_, _| true,
    )?;
    let request: String = transaction
        .query_one(
            "SELECT request_hash FROM revisions WHERE id = ?1",
            sql_params![draft.as_str()],
        )?
        .get(0)?;
    transaction.execute(
        "INSERT INTO revisions (id, spec_hash, status, version, script_hash,
                snapshot_id, snapshot_hash, request_hash, created_at, inputs,
                author_name)
         SELECT ?2, spec_hash, 'draft', 1, script_hash, snapshot_id,
                snapshot_hash, ?3, ?4, inputs, ?5
         FROM revisions WHERE id = ?1",
        sql_params![
            draft.as_str(),
            revision,
            copies.get(&request).cloned().unwrap_or(request),
            created_at,
            author
        ],
    )?;
    Ok(())
}

/// One copy of the Approved revision `approved` (with its attempt): Verified, or with `approve`
/// Approved with its signature and the signing event the audit replays.
fn copy_verified(
    transaction: &impl Sql,
    records: &Template,
    approved: (&RevisionId, &str),
    (revision, attempt): (&str, &str),
    (author_id, author): (i64, &str),
    created_at: &str,
    approve: bool,
) -> Result<(), CopyError> {
    let is_approval = |kind: &str, body: &serde_json::Map<String, Value>| {
        kind == "approval" || body.get("event").and_then(Value::as_str) == Some("approved")
    };
    let copies = copy_records(
        transaction,
        records,
        (revision, attempt),
        (author_id, author),
        |kind, body| approve || !is_approval(kind, body),
    )?;
    copy_rows(
        transaction,
        (approved.0.as_str(), approved.1),
        (revision, attempt),
        &copies,
        (author, created_at),
    )?;
    if approve {
        transaction.execute(
            "UPDATE revisions SET status = 'approved', version = 3 WHERE id = ?1",
            sql_params![revision],
        )?;
        // The copied approval's signing event, as the signing path writes it (the audit
        // replays every approval against the security log).
        transaction.execute(
            "INSERT INTO security_events
                 (at, event, account_id, account_name, outcome, detail)
             SELECT at, event, account_id, account_name, outcome,
                    CAST(?2 AS TEXT) || substr(detail, length(CAST(?1 AS TEXT)) + 1)
             FROM security_events
             WHERE event = 'signing' AND outcome = 'success'
               AND detail LIKE CAST(?1 AS TEXT) || ': approved%'",
            sql_params![approved.0.as_str(), revision],
        )?;
    }
    Ok(())
}
