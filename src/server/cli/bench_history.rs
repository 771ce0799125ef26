//! The history benchmark's store: one real Approved revision (run through R, signed with a
//! password) and one real Draft are copied into N revisions — a quarter each Draft and
//! Approved, half Verified — by five authors, created a minute apart. Every copy's records are
//! re-sealed into the chain with their references remapped (as `adamviz-bench ledger` does),
//! and every row goes in through the database's rules: so the history pages over a store the
//! rules accept, not over rows written around them.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use super::bench_ledger::{copy_rows, with_ids};
use crate::{
    domain::ids::RevisionId,
    store::ledger::{append_record, records_about},
};

/// Authors of the copies.
pub const AUTHORS: usize = 5;

type Template = Vec<(String, String, serde_json::Map<String, Value>)>;

fn template(connection: &rusqlite::Connection, id: &RevisionId) -> anyhow::Result<Template> {
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
    transaction: &rusqlite::Transaction<'_>,
    template: &Template,
    (revision, attempt): (&str, &str),
    author: (i64, &str),
    keep: impl Fn(&str, &serde_json::Map<String, Value>) -> bool,
) -> anyhow::Result<HashMap<String, String>> {
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
    connection: &mut rusqlite::Connection,
    approved: (&RevisionId, &str),
    draft: &RevisionId,
    count: usize,
    start: DateTime<Utc>,
) -> anyhow::Result<()> {
    let approved_records = template(connection, approved.0)?;
    let draft_records = template(connection, draft)?;
    let is_approval = |kind: &str, body: &serde_json::Map<String, Value>| {
        kind == "approval" || body.get("event").and_then(Value::as_str) == Some("approved")
    };
    let numbers: Vec<usize> = (1..=count).collect();
    for chunk in numbers.chunks(500) {
        let transaction = connection.transaction()?;
        for &n in chunk {
            let (revision, attempt) = (format!("rev-{n:032x}"), format!("att-{n:032x}"));
            let author = format!("author-{}", n % AUTHORS);
            let author_id = 1000 + (n % AUTHORS) as i64;
            let created_at =
                crate::service::accounts::timestamp(start + Duration::minutes(n as i64));
            let ids = (revision.as_str(), attempt.as_str());
            match n % 4 {
                0 => {
                    let copies = copy_records(
                        &transaction,
                        &draft_records,
                        ids,
                        (author_id, &author),
                        |_, _| true,
                    )?;
                    let request: String = transaction.query_row(
                        "SELECT request_hash FROM revisions WHERE id = ?1",
                        [draft.as_str()],
                        |row| row.get(0),
                    )?;
                    transaction.execute(
                        "INSERT INTO revisions (id, spec_hash, status, version, script_hash,
                                snapshot_id, snapshot_hash, request_hash, created_at, inputs,
                                author_name)
                         SELECT ?2, spec_hash, 'draft', 1, script_hash, snapshot_id,
                                snapshot_hash, ?3, ?4, inputs, ?5
                         FROM revisions WHERE id = ?1",
                        rusqlite::params![
                            draft.as_str(),
                            revision,
                            copies.get(&request).cloned().unwrap_or(request),
                            created_at,
                            author
                        ],
                    )?;
                }
                kind => {
                    let approve = kind == 3;
                    let copies = copy_records(
                        &transaction,
                        &approved_records,
                        ids,
                        (author_id, &author),
                        |kind, body| approve || !is_approval(kind, body),
                    )?;
                    copy_rows(
                        &transaction,
                        (approved.0.as_str(), approved.1),
                        ids,
                        &copies,
                        (&author, &created_at),
                    )?;
                    if approve {
                        transaction.execute(
                            "UPDATE revisions SET status = 'approved', version = 3 WHERE id = ?1",
                            [&revision],
                        )?;
                    }
                }
            }
        }
        transaction.commit()?;
    }
    Ok(())
}
