//! The SQL of electronic signatures (the web crate's `service::approvals` holds the rules): who
//! made a revision, its evidence head, failed reproductions, the signing lock's events, the
//! approval records, and the move Verified → Approved with its lifecycle record.

use rusqlite::{params, Connection, OptionalExtension, Transaction};

use crate::{
    domain::{digest::Sha256Digest, ids::RevisionId},
    evidence::{actor::Actor, revision_lifecycle::RevisionLifecycleRecord},
    ledger::{append_evidence, AppendEvidenceError},
    repository::Revision,
};

/// Who created revision `id`, as its creation record names them: the account id (none for
/// revisions made on the command line) and the account or operating-system user name.
pub fn author_of(
    connection: &Connection,
    id: &RevisionId,
) -> Result<Option<(Option<i64>, String)>, rusqlite::Error> {
    connection
        .query_row(
            "SELECT json_extract(record, '$.actor.account_id'),
                    json_extract(record, '$.actor.account_name')
             FROM evidence_ledger
             WHERE kind = 'revision_lifecycle' AND json_extract(record, '$.revision_id') = ?1
               AND json_extract(record, '$.event') = 'created'",
            [id.as_str()],
            |row| Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, String>(1)?)),
        )
        .optional()
}

/// Whether any `reproduction` record of revision `id` says it failed.
pub fn any_reproduction_failed(
    connection: &Connection,
    id: &RevisionId,
) -> Result<bool, rusqlite::Error> {
    connection.query_row(
        "SELECT EXISTS (SELECT 1 FROM evidence_ledger
                        WHERE json_extract(record, '$.revision_id') = ?1
                          AND kind = 'reproduction'
                          AND json_extract(record, '$.outcome') = 'failed')",
        [id.as_str()],
        |row| row.get(0),
    )
}

/// The hash of the latest record about revision `id` (its evidence head).
pub fn evidence_head(
    connection: &Connection,
    id: &RevisionId,
) -> Result<Option<String>, rusqlite::Error> {
    connection
        .query_row(
            "SELECT record_hash FROM evidence_ledger
             WHERE json_extract(record, '$.revision_id') = ?1 ORDER BY seq DESC LIMIT 1",
            [id.as_str()],
            |row| row.get(0),
        )
        .optional()
}

pub use crate::accounts::password_hash;

/// The time of account `id`'s last `signing_lockout` event after `since`, if any.
pub fn last_signing_lockout_after(
    connection: &Connection,
    id: i64,
    since: &str,
) -> Result<Option<String>, rusqlite::Error> {
    connection.query_row(
        "SELECT max(at) FROM security_events
         WHERE event = 'signing_lockout' AND account_id = ?1 AND at > ?2",
        params![id, since],
        |row| row.get(0),
    )
}

/// Wrong passwords at signing of account `id` after `since` and after its last good signature
/// or lock.
pub fn signing_failures_after(
    connection: &Connection,
    id: i64,
    since: &str,
) -> Result<usize, rusqlite::Error> {
    connection.query_row(
        "SELECT count(*) FROM security_events
         WHERE event = 'signing' AND outcome = 'failure' AND detail LIKE '%: wrong password'
           AND account_id = ?1 AND at > ?2
           AND at > coalesce((SELECT max(at) FROM security_events
                              WHERE account_id = ?1
                                AND (event = 'signing_lockout'
                                     OR (event = 'signing' AND outcome = 'success'))), '')",
        params![id, since],
        |row| row.get::<_, i64>(0).map(|n| n as usize),
    )
}

/// The `approval` records about revision `id` as stored (canonical JSON), oldest first.
pub fn approval_records(
    connection: &Connection,
    id: &RevisionId,
) -> Result<Vec<Vec<u8>>, rusqlite::Error> {
    let mut statement = connection.prepare(
        "SELECT record FROM evidence_ledger
         WHERE json_extract(record, '$.revision_id') = ?1 AND kind = 'approval' ORDER BY seq",
    )?;
    let rows = statement.query_map([id.as_str()], |row| row.get::<_, Vec<u8>>(0))?;
    rows.collect()
}

/// The id of the account named `name`, if any.
pub fn account_id_named(
    connection: &Connection,
    name: &str,
) -> Result<Option<i64>, rusqlite::Error> {
    connection
        .query_row("SELECT id FROM accounts WHERE name = ?1", [name], |row| {
            row.get(0)
        })
        .optional()
}

/// Why an approval could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    /// Appending the lifecycle record.
    #[error(transparent)]
    Append(#[from] AppendEvidenceError),
    /// The row update.
    #[error(transparent)]
    Database(#[from] rusqlite::Error),
}

/// Moves `current` (Verified) to Approved inside the caller's transaction: first the
/// `revision_lifecycle` record naming the approval, then the row (which the database's rules
/// accept only with that record).
pub fn approve(
    transaction: &Transaction<'_>,
    current: &Revision,
    spec_hash: Sha256Digest,
    approval_hash: Sha256Digest,
    at: String,
    actor: Actor,
) -> Result<(), ApproveError> {
    append_evidence(
        transaction,
        RevisionLifecycleRecord::approved(
            current.id.clone(),
            current.version + 1,
            spec_hash,
            approval_hash,
            at,
            actor,
        ),
    )?;
    transaction.execute(
        "UPDATE revisions SET status = 'approved', version = version + 1
         WHERE id = ?1 AND version = ?2 AND status = 'verified'",
        params![current.id.as_str(), current.version],
    )?;
    Ok(())
}
