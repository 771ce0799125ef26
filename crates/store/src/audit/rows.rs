//! The audit's row pass: every revision's status and version, every attempt's state and every
//! bundle row must be explained by the evidence records, replayed in ledger order. An attacker
//! who drops the triggers of migration 4 and edits, inserts or deletes rows is found here and
//! named, table and id.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::sql::{Sql, SqlError};

/// A row the records do not explain (or a record whose row is gone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowProblem {
    /// `revisions`, `attempts` or `artifact_bundles`.
    pub table: &'static str,
    /// The row's id (a revision's for bundle rows).
    pub id: String,
    /// What disagrees.
    pub detail: String,
}

/// What the records say a revision is.
#[derive(Debug, Default)]
struct RevisionFromRecords {
    created: bool,
    status: String,
    version: i64,
    spec_hash: String,
    bundle_hash: Option<String>,
}

/// What the records say an attempt is.
#[derive(Debug, Default)]
struct AttemptFromRecords {
    revision_id: String,
    fingerprint: String,
    captured_version: i64,
    state: String,
    reason: Option<String>,
}

fn text(record: &Value, field: &str) -> String {
    record[field]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_default()
}

/// Replays the lifecycle and attempt records and compares every row with them.
pub fn audit_rows(connection: &impl Sql) -> Result<Vec<RowProblem>, SqlError> {
    let mut revisions: BTreeMap<String, RevisionFromRecords> = BTreeMap::new();
    let mut attempts: BTreeMap<String, AttemptFromRecords> = BTreeMap::new();
    let mut problems = Vec::new();
    let records = connection.query(
        "SELECT seq, kind, record FROM evidence_ledger
         WHERE kind IN ('revision_lifecycle', 'execution_attempt') ORDER BY seq",
        &[],
    )?;
    for row in &records {
        let (seq, kind, bytes) = (
            row.get::<i64>(0)?,
            row.get::<String>(1)?,
            row.get::<Vec<u8>>(2)?,
        );
        // A record that is not JSON is the chain pass's finding; it explains nothing here.
        let Ok(record) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let event = text(&record, "event");
        if kind == "revision_lifecycle" {
            let revision = revisions.entry(text(&record, "revision_id")).or_default();
            match event.as_str() {
                "created" => {
                    revision.created = true;
                    revision.status = text(&record, "to_status");
                    revision.version = record["version"].as_i64().unwrap_or(-1);
                    revision.spec_hash = text(&record, "spec_hash");
                }
                "verified" if revision.status == "draft" => {
                    revision.status = "verified".to_owned();
                    revision.version = record["version"].as_i64().unwrap_or(-1);
                    revision.bundle_hash = record["bundle_hash"].as_str().map(str::to_owned);
                }
                "approved" if revision.status == "verified" => {
                    revision.status = "approved".to_owned();
                    revision.version = record["version"].as_i64().unwrap_or(-1);
                }
                _ => problems.push(RowProblem {
                    table: "revisions",
                    id: text(&record, "revision_id"),
                    detail: format!(
                        "record {seq}: lifecycle event {event:?} from status {:?} is not an edge",
                        revision.status
                    ),
                }),
            }
        } else {
            let attempt = attempts.entry(text(&record, "attempt_id")).or_default();
            match (event.as_str(), attempt.state.as_str()) {
                ("started", "") => {
                    attempt.revision_id = text(&record, "revision_id");
                    attempt.fingerprint = text(&record, "fingerprint");
                    attempt.captured_version = record["captured_version"].as_i64().unwrap_or(-1);
                    attempt.state = "active".to_owned();
                }
                ("succeeded" | "failed", "active") => {
                    attempt.state = event.clone();
                    attempt.reason = record["reason"].as_str().map(str::to_owned);
                }
                (_, state) => problems.push(RowProblem {
                    table: "attempts",
                    id: text(&record, "attempt_id"),
                    detail: format!("record {seq}: attempt event {event:?} after state {state:?}"),
                }),
            }
        }
    }
    audit_revision_rows(connection, &mut revisions, &mut problems)?;
    audit_attempt_rows(connection, &mut attempts, &mut problems)?;
    audit_bundle_rows(connection, &mut problems)?;
    Ok(problems)
}

fn audit_revision_rows(
    connection: &impl Sql,
    expected: &mut BTreeMap<String, RevisionFromRecords>,
    problems: &mut Vec<RowProblem>,
) -> Result<(), SqlError> {
    let rows = connection.query(
        "SELECT id, status, version, spec_hash FROM revisions ORDER BY id",
        &[],
    )?;
    for row in &rows {
        let (id, status, version, spec_hash) = (
            row.get::<String>(0)?,
            row.get::<String>(1)?,
            row.get::<i64>(2)?,
            row.get::<String>(3)?,
        );
        let problem = |detail: String| RowProblem {
            table: "revisions",
            id: id.clone(),
            detail,
        };
        match expected.remove(&id) {
            Some(records) if records.created => {
                if (status.as_str(), version) != (records.status.as_str(), records.version) {
                    problems.push(problem(format!(
                        "the row says {status} at version {version}, its records say {} at version {}",
                        records.status, records.version
                    )));
                }
                if spec_hash != records.spec_hash {
                    problems.push(problem(format!(
                        "the row's spec hash {spec_hash} is not the {} its creation record names",
                        records.spec_hash
                    )));
                }
            }
            _ => problems.push(problem(
                "no revision_lifecycle record created this revision".to_owned(),
            )),
        }
    }
    for (id, records) in expected.iter().filter(|(_, r)| r.created) {
        problems.push(RowProblem {
            table: "revisions",
            id: id.clone(),
            detail: format!(
                "its records say {} at version {}, but there is no row",
                records.status, records.version
            ),
        });
    }
    Ok(())
}

fn audit_attempt_rows(
    connection: &impl Sql,
    expected: &mut BTreeMap<String, AttemptFromRecords>,
    problems: &mut Vec<RowProblem>,
) -> Result<(), SqlError> {
    let rows = connection.query(
        "SELECT id, revision_id, fingerprint, captured_version, state, reason
         FROM attempts ORDER BY id",
        &[],
    )?;
    for row in &rows {
        let (id, row) = (
            row.get::<String>(0)?,
            AttemptFromRecords {
                revision_id: row.get(1)?,
                fingerprint: row.get(2)?,
                captured_version: row.get(3)?,
                state: row.get(4)?,
                reason: row.get(5)?,
            },
        );
        let Some(records) = expected.remove(&id) else {
            problems.push(RowProblem {
                table: "attempts",
                id,
                detail: "no execution_attempt record started this attempt".to_owned(),
            });
            continue;
        };
        let row_facts = (
            &row.revision_id,
            &row.fingerprint,
            row.captured_version,
            &row.state,
            &row.reason,
        );
        let record_facts = (
            &records.revision_id,
            &records.fingerprint,
            records.captured_version,
            &records.state,
            &records.reason,
        );
        if row_facts != record_facts {
            problems.push(RowProblem {
                table: "attempts",
                id,
                detail: format!(
                    "the row says (revision, fingerprint, captured version, state, reason) = {row_facts:?}, its records say {record_facts:?}"
                ),
            });
        }
    }
    for (id, records) in expected.iter() {
        problems.push(RowProblem {
            table: "attempts",
            id: id.clone(),
            detail: format!("its records say {}, but there is no row", records.state),
        });
    }
    Ok(())
}

/// Every bundle row belongs to a succeeded attempt of its revision, and every verified
/// revision has the bundle its promotion record names (the artifact pass compares each bundle
/// row with its own record).
fn audit_bundle_rows(
    connection: &impl Sql,
    problems: &mut Vec<RowProblem>,
) -> Result<(), SqlError> {
    let rows = connection.query(
        "SELECT b.revision_id, a.state, r.status
         FROM artifact_bundles b
         LEFT JOIN attempts a ON a.id = b.attempt_id AND a.revision_id = b.revision_id
         LEFT JOIN revisions r ON r.id = b.revision_id
         ORDER BY b.revision_id",
        &[],
    )?;
    for row in &rows {
        let (revision, attempt_state, revision_status) = (
            row.get::<String>(0)?,
            row.get::<Option<String>>(1)?,
            row.get::<Option<String>>(2)?,
        );
        if attempt_state.as_deref() != Some("succeeded")
            || !matches!(revision_status.as_deref(), Some("verified" | "approved"))
        {
            problems.push(RowProblem {
                table: "artifact_bundles",
                id: revision,
                detail: format!(
                    "a bundle row needs a succeeded attempt of a verified (or since approved) revision; attempt {attempt_state:?}, revision {revision_status:?}"
                ),
            });
        }
    }
    let unbundled = connection.query(
        "SELECT r.id FROM revisions r
         WHERE r.status = 'verified'
           AND NOT EXISTS (SELECT 1 FROM artifact_bundles b WHERE b.revision_id = r.id)
         ORDER BY r.id",
        &[],
    )?;
    for row in &unbundled {
        problems.push(RowProblem {
            table: "revisions",
            id: row.get(0)?,
            detail: "verified without an accepted bundle".to_owned(),
        });
    }
    Ok(())
}
