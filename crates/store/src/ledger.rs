//! The evidence ledger: an append-only table of canonical JSON records (RFC 8785), each
//! carrying `previous_hash` (its predecessor's `record_hash`, 64 zeros for the first) and
//! `record_hash` (SHA-256 of its canonical form without `record_hash`). Triggers refuse UPDATE
//! and DELETE; a change made behind SQLite's back (a raw edit of the file, triggers dropped) is
//! found by [`verify_ledger`], which re-checks every record in order and names the first that
//! is broken. Written once against [`Sql`]: the same functions run on SQLite and PostgreSQL.

use serde_json::{Map, Value};

use crate::sql::{Dialect, Sql, SqlError};
use crate::sql_params;
use adamviz_evidence::canonical::canonical_forms;

/// The `previous_hash` of the first record.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Canonical UTC RFC 3339 time with microseconds, e.g. `2026-12-03T07:55:01.123456Z`.
pub fn utc_now() -> String {
    chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// Why a record could not be appended.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// The body sets a field the ledger owns.
    #[error("the record body sets {field:?}, which the ledger sets itself")]
    ReservedField {
        /// The field.
        field: &'static str,
    },
    /// The body cannot be canonicalized.
    #[error("the record cannot be written as canonical JSON: {0}")]
    Canonical(#[from] serde_json::Error),
    /// The database refused the insert.
    #[error(transparent)]
    Database(#[from] SqlError),
}

/// A record as appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendedRecord {
    /// Its position (1 for the first).
    pub seq: i64,
    /// Its self-hash.
    pub record_hash: String,
    /// Its predecessor's.
    pub previous_hash: String,
    /// Its canonical bytes.
    pub canonical: Vec<u8>,
}

/// The last record's hash: the head of the chain (the genesis hash when the ledger is empty).
fn ledger_head(transaction: &impl Sql) -> Result<String, SqlError> {
    if transaction.dialect() == Dialect::Postgres {
        // Several nodes append: the head is read under the chain's lock (held to commit).
        transaction.execute(
            "SELECT pg_advisory_xact_lock(adamviz_chain_lock_key())",
            &[],
        )?;
    }
    Ok(last_record_hash(transaction)?.unwrap_or_else(|| GENESIS_HASH.to_owned()))
}

/// Inserts the row; its position.
fn insert_row(
    transaction: &impl Sql,
    kind: &str,
    record_hash: &str,
    previous_hash: &str,
    canonical: &[u8],
) -> Result<i64, SqlError> {
    transaction
        .query_one(
            "INSERT INTO evidence_ledger (kind, record_hash, previous_hash, record, appended_at)
             VALUES (?1, ?2, ?3, ?4, ?5) RETURNING seq",
            sql_params![kind, record_hash, previous_hash, canonical, utc_now()],
        )?
        .get(0)
}

/// Appends a record of `kind` with `body` (which must not set `kind`, `previous_hash` or
/// `record_hash`) inside `transaction`: the chain link and the self-hash are computed from the
/// ledger's current last record, so appends are serialized by SQLite's write lock.
pub fn append_record(
    transaction: &impl Sql,
    kind: &str,
    mut body: Map<String, Value>,
) -> Result<AppendedRecord, AppendError> {
    for field in ["kind", "previous_hash", "record_hash"] {
        if body.contains_key(field) {
            return Err(AppendError::ReservedField { field });
        }
    }
    let previous_hash = ledger_head(transaction)?;
    body.insert("kind".into(), Value::String(kind.to_owned()));
    body.insert("previous_hash".into(), Value::String(previous_hash.clone()));
    let mut record = Value::Object(body);
    let record_hash = canonical_forms(&record)?.self_hash().to_hex();
    record["record_hash"] = Value::String(record_hash.clone());
    let canonical = canonical_forms(&record)?.full;
    let seq = insert_row(transaction, kind, &record_hash, &previous_hash, &canonical)?;
    Ok(AppendedRecord {
        seq,
        record_hash,
        previous_hash,
        canonical,
    })
}

/// Why a typed evidence record could not be appended.
#[derive(Debug, thiserror::Error)]
pub enum AppendEvidenceError {
    /// The record failed sealing (its schema, most likely); nothing was written.
    #[error(transparent)]
    Evidence(#[from] adamviz_evidence::record::EvidenceError),
    /// The ledger's head is not a hash.
    #[error("the ledger's last record hash {0:?} is not a SHA-256")]
    BadHead(String),
    /// The database refused the insert.
    #[error(transparent)]
    Database(#[from] SqlError),
}

/// Seals `record` as the successor of the ledger's last record and appends it inside
/// `transaction`; returns the verified record as stored.
pub fn append_evidence<T: adamviz_evidence::record::EvidenceRecord>(
    transaction: &impl Sql,
    record: T,
) -> Result<adamviz_evidence::record::Verified<T>, AppendEvidenceError> {
    let head = ledger_head(transaction)?;
    let previous = adamviz_model::digest::Sha256Digest::try_from(head.clone())
        .map_err(|_| AppendEvidenceError::BadHead(head))?;
    let sealed = adamviz_evidence::record::seal(record, previous)?;
    insert_row(
        transaction,
        T::KIND,
        &sealed.record_hash().to_hex(),
        &previous.to_hex(),
        sealed.canonical(),
    )?;
    Ok(sealed)
}

/// One stored record, as read (not yet verified).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    /// Its position.
    pub seq: i64,
    /// Its kind.
    pub kind: String,
    /// Its self-hash.
    pub record_hash: String,
    /// Its predecessor's.
    pub previous_hash: String,
    /// Its canonical bytes.
    pub record: Vec<u8>,
}

/// The hash of the ledger's last record (its head), if the ledger holds any.
pub fn last_record_hash(connection: &impl Sql) -> Result<Option<String>, SqlError> {
    connection
        .query_opt(
            "SELECT record_hash FROM evidence_ledger ORDER BY seq DESC LIMIT 1",
            &[],
        )?
        .map(|row| row.get(0))
        .transpose()
}

/// The stored bytes and previous hash of the record of `kind` whose self-hash is `hash`.
pub fn record_by_hash(
    connection: &impl Sql,
    hash: &str,
    kind: &str,
) -> Result<(Vec<u8>, String), SqlError> {
    let row = connection.query_one(
        "SELECT record, previous_hash FROM evidence_ledger WHERE record_hash = ?1 AND kind = ?2",
        sql_params![hash, kind],
    )?;
    Ok((row.get(0)?, row.get(1)?))
}

/// Every record about revision `revision_id` (its `revision_id` field), in ledger order.
pub fn records_about(
    connection: &impl Sql,
    revision_id: &adamviz_model::ids::RevisionId,
) -> Result<Vec<StoredRecord>, SqlError> {
    // The expression of each database's index on the record's revision id.
    let sql = match connection.dialect() {
        Dialect::Sqlite => {
            "SELECT seq, kind, record_hash, previous_hash, record FROM evidence_ledger
             WHERE json_extract(record, '$.revision_id') = ?1 ORDER BY seq"
        }
        Dialect::Postgres => {
            "SELECT seq, kind, record_hash, previous_hash, record FROM evidence_ledger
             WHERE adamviz_json(record) ->> 'revision_id' = ?1 ORDER BY seq"
        }
    };
    connection
        .query(sql, sql_params![revision_id.as_str()])?
        .iter()
        .map(|row| {
            Ok(StoredRecord {
                seq: row.get(0)?,
                kind: row.get(1)?,
                record_hash: row.get(2)?,
                previous_hash: row.get(3)?,
                record: row.get(4)?,
            })
        })
        .collect()
}

/// What is wrong with the first broken record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerProblem {
    /// The stored bytes are not a JSON object.
    #[error("the record is not a JSON object")]
    NotAnObject,
    /// The stored bytes are not the record's canonical form.
    #[error("the stored bytes are not the record's canonical (RFC 8785) form")]
    NotCanonical,
    /// The record's self-hash does not match its content.
    #[error("its content hashes to {actual}, but it says {claimed}")]
    SelfHashMismatch {
        /// The hash the record carries.
        claimed: String,
        /// What its content hashes to.
        actual: String,
    },
    /// The record does not name its predecessor.
    #[error("it names {claimed} as its predecessor, but the record before it is {expected}")]
    BrokenLink {
        /// What it names.
        claimed: String,
        /// The actual predecessor's hash.
        expected: String,
    },
    /// A column disagrees with the record it indexes.
    #[error("the {column} column says {column_value:?} but the record says {record_value:?}")]
    ColumnMismatch {
        /// The column.
        column: &'static str,
        /// Its value.
        column_value: String,
        /// The record's.
        record_value: String,
    },
    /// Records are missing before this one.
    #[error("records {from}..={to} are missing")]
    Gap {
        /// First missing position.
        from: i64,
        /// Last missing position.
        to: i64,
    },
}

/// The first broken record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("evidence ledger record {seq} ({kind}) is broken: {problem}")]
pub struct LedgerBreak {
    /// Its position.
    pub seq: i64,
    /// Its kind column.
    pub kind: String,
    /// What is wrong.
    pub problem: LedgerProblem,
}

/// The outcome of [`verify_ledger`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerReport {
    /// Records checked.
    pub records: u64,
    /// The first broken record, if any.
    pub first_break: Option<LedgerBreak>,
    /// The last record's hash (the head of the chain).
    pub head: String,
}

/// A column as text whatever its stored type (a raw edit may change it); a mismatch with the
/// record then names the column.
fn text_column(value: &crate::sql::SqlValue) -> String {
    use crate::sql::SqlValue;
    match value {
        SqlValue::Text(text) => text.clone(),
        SqlValue::Blob(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        SqlValue::Integer(n) => n.to_string(),
        SqlValue::Null => String::new(),
    }
}

/// Re-checks every record in order: canonical form, self-hash, link to its predecessor, the
/// indexed columns, and that no position is missing (also after the last record, from SQLite's
/// own counter of issued positions).
pub fn verify_ledger(connection: &impl Sql) -> Result<LedgerReport, SqlError> {
    verify_ledger_with(connection, |_, _, _| {})
}

/// [`verify_ledger`], handing each record that passed (position, kind, parsed record) to
/// `each_intact` before going on: the audit checks schemas and types there without parsing or
/// hashing anything twice.
pub fn verify_ledger_with(
    connection: &impl Sql,
    mut each_intact: impl FnMut(i64, &str, &Value),
) -> Result<LedgerReport, SqlError> {
    use crate::sql::SqlValue;
    let mut expected_previous = GENESIS_HASH.to_owned();
    let mut expected_seq = 1i64;
    let mut records = 0u64;
    // Read in pages, so that a long ledger is never held whole.
    let mut after = 0i64;
    loop {
        let page = connection.query(
            "SELECT seq, kind, record_hash, previous_hash, record FROM evidence_ledger
         WHERE seq > ?1 ORDER BY seq LIMIT 2000",
            sql_params![after],
        )?;
        let Some(last) = page.last() else { break };
        after = last.get(0)?;
        for row in &page {
            let stored = StoredRow {
                seq: row.get(0)?,
                kind: text_column(&row.0[1]),
                record_hash: text_column(&row.0[2]),
                previous_hash: text_column(&row.0[3]),
                // Read whatever is stored: an edit behind the store's back may even change the type.
                bytes: match &row.0[4] {
                    SqlValue::Blob(bytes) => bytes.clone(),
                    SqlValue::Text(text) => text.clone().into_bytes(),
                    _ => Vec::new(),
                },
            };
            match check_row(&stored, expected_seq, &expected_previous) {
                Ok((value, record_hash)) => {
                    each_intact(stored.seq, &stored.kind, &value);
                    expected_previous = record_hash;
                    expected_seq += 1;
                    records += 1;
                }
                Err(problem) => {
                    return Ok(LedgerReport {
                        records,
                        first_break: Some(LedgerBreak {
                            seq: stored.seq,
                            kind: stored.kind,
                            problem,
                        }),
                        head: expected_previous,
                    })
                }
            }
        }
    }
    // Positions issued after the last record (the tail deleted): SQLite's own counter, or the
    // one PostgreSQL's insert trigger keeps.
    let issued_sql = match connection.dialect() {
        Dialect::Sqlite => "SELECT seq FROM sqlite_sequence WHERE name = 'evidence_ledger'",
        Dialect::Postgres => "SELECT last_seq FROM evidence_ledger_issued",
    };
    let issued: i64 = match connection.query_opt(issued_sql, &[])? {
        Some(row) => row.get(0)?,
        None => 0,
    };
    let first_break = (issued >= expected_seq).then(|| LedgerBreak {
        seq: expected_seq,
        kind: "(missing)".to_owned(),
        problem: LedgerProblem::Gap {
            from: expected_seq,
            to: issued,
        },
    });
    Ok(LedgerReport {
        records,
        first_break,
        head: expected_previous,
    })
}

/// One ledger row as stored: its columns and the record's bytes.
struct StoredRow {
    seq: i64,
    kind: String,
    record_hash: String,
    previous_hash: String,
    bytes: Vec<u8>,
}

/// Checks `row` as the chain's next record (at `expected_seq`, after `expected_previous`): its
/// position, canonical JSON, self-hash, link, and columns that agree with the record. The parsed
/// record and its hash when it holds; else the first problem.
fn check_row(
    row: &StoredRow,
    expected_seq: i64,
    expected_previous: &str,
) -> Result<(Value, String), LedgerProblem> {
    if row.seq != expected_seq {
        return Err(LedgerProblem::Gap {
            from: expected_seq,
            to: row.seq - 1,
        });
    }
    let value = match serde_json::from_slice::<Value>(&row.bytes) {
        Ok(value @ Value::Object(_)) => value,
        _ => return Err(LedgerProblem::NotAnObject),
    };
    let forms = canonical_forms(&value).map_err(|_| LedgerProblem::NotCanonical)?;
    if forms.full != row.bytes {
        return Err(LedgerProblem::NotCanonical);
    }
    let field = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let claimed = field("record_hash");
    let actual = forms.self_hash().to_hex();
    if claimed != actual {
        return Err(LedgerProblem::SelfHashMismatch { claimed, actual });
    }
    let named_previous = field("previous_hash");
    if named_previous != expected_previous {
        return Err(LedgerProblem::BrokenLink {
            claimed: named_previous,
            expected: expected_previous.to_owned(),
        });
    }
    for (column, column_value, record_value) in [
        ("record_hash", &row.record_hash, &claimed),
        ("previous_hash", &row.previous_hash, &named_previous),
        ("kind", &row.kind, &field("kind")),
    ] {
        if column_value != record_value {
            return Err(LedgerProblem::ColumnMismatch {
                column,
                column_value: column_value.clone(),
                record_value: record_value.clone(),
            });
        }
    }
    Ok((value, claimed))
}
