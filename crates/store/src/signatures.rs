//! The SQL of electronic signatures (`adamviz_services::approvals` holds the rules): who
//! made a revision, its evidence head, failed reproductions, the signing lock's events, the
//! approval records, and the move Verified → Approved with its lifecycle record.

use crate::ledger::{append_evidence, AppendEvidenceError};
use crate::repository::Revision;
use crate::sql::{Sql, SqlError};
use crate::sql_params;
use adamviz_evidence::{actor::Actor, revision_lifecycle::RevisionLifecycleRecord};
use adamviz_model::{digest::Sha256Digest, ids::RevisionId};

/// Who made revision `id`, as its creation record names them: (account id, when the revision
/// was made in the web; the account or command-line name).
pub fn author_of(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<Option<(Option<i64>, String)>, SqlError> {
    creation_actor(connection, id.as_str())?
        .map(|(account, name)| {
            name.map(|name| (account, name))
                .ok_or(SqlError::Unreadable {
                    column: 1,
                    detail: format!("the creation record of {id} names no author"),
                })
        })
        .transpose()
}

/// A creation record's actor as stored: account id and name, either possibly missing.
pub(crate) type StoredActor = (Option<i64>, Option<String>);

/// The actor the creation record of revision `revision_id` names, as stored (the audit reads
/// records that may have been tampered with: a missing name is its finding, not an error).
pub(crate) fn creation_actor(
    connection: &impl Sql,
    revision_id: &str,
) -> Result<Option<StoredActor>, SqlError> {
    let d = connection.dialect();
    connection
        .query_opt(
            &format!(
                "SELECT {}, {} FROM evidence_ledger
                 WHERE kind = 'revision_lifecycle' AND {} = ?1 AND {} = 'created'",
                d.json_integer("record", "actor.account_id"),
                d.json_text("record", "actor.account_name"),
                d.json_text("record", "revision_id"),
                d.json_text("record", "event"),
            ),
            sql_params![revision_id],
        )?
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .transpose()
}

/// Whether any `reproduction` record of revision `id` says it failed.
pub fn any_reproduction_failed(connection: &impl Sql, id: &RevisionId) -> Result<bool, SqlError> {
    let d = connection.dialect();
    connection
        .query_one(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM evidence_ledger
                                WHERE {} = ?1 AND kind = 'reproduction' AND {} = 'failed')",
                d.json_text("record", "revision_id"),
                d.json_text("record", "outcome"),
            ),
            sql_params![id.as_str()],
        )?
        .get(0)
}

/// The hash of the latest record about revision `id` (its evidence head).
pub fn evidence_head(connection: &impl Sql, id: &RevisionId) -> Result<Option<String>, SqlError> {
    connection
        .query_opt(
            &format!(
                "SELECT record_hash FROM evidence_ledger WHERE {} = ?1 ORDER BY seq DESC LIMIT 1",
                connection.dialect().json_text("record", "revision_id"),
            ),
            sql_params![id.as_str()],
        )?
        .map(|row| row.get(0))
        .transpose()
}

pub use crate::accounts::password_hash;

/// The time of account `id`'s last `signing_lockout` event after `since`, if any.
pub fn last_signing_lockout_after(
    connection: &impl Sql,
    id: i64,
    since: &str,
) -> Result<Option<String>, SqlError> {
    connection
        .query_one(
            "SELECT max(at) FROM security_events
             WHERE event = 'signing_lockout' AND account_id = ?1 AND at > ?2",
            sql_params![id, since],
        )?
        .get(0)
}

/// Wrong passwords at signing of account `id` after `since` and after its last good signature
/// or lock.
pub fn signing_failures_after(
    connection: &impl Sql,
    id: i64,
    since: &str,
) -> Result<usize, SqlError> {
    Ok(connection
        .query_one(
            "SELECT count(*) FROM security_events
             WHERE event = 'signing' AND outcome = 'failure' AND detail LIKE '%: wrong password'
               AND account_id = ?1 AND at > ?2
               AND at > coalesce((SELECT max(at) FROM security_events
                                  WHERE account_id = ?1
                                    AND (event = 'signing_lockout'
                                         OR (event = 'signing' AND outcome = 'success'))), '')",
            sql_params![id, since],
        )?
        .get::<i64>(0)? as usize)
}

/// The `approval` records about revision `id` as stored (canonical JSON), oldest first.
pub fn approval_records(connection: &impl Sql, id: &RevisionId) -> Result<Vec<Vec<u8>>, SqlError> {
    connection
        .query(
            &format!(
                "SELECT record FROM evidence_ledger WHERE {} = ?1 AND kind = 'approval' ORDER BY seq",
                connection.dialect().json_text("record", "revision_id"),
            ),
            sql_params![id.as_str()],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// The id of the account named `name`, if any.
pub fn account_id_named(connection: &impl Sql, name: &str) -> Result<Option<i64>, SqlError> {
    connection
        .query_opt("SELECT id FROM accounts WHERE name = ?1", sql_params![name])?
        .map(|row| row.get(0))
        .transpose()
}

/// Why an approval could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    /// Appending the lifecycle record.
    #[error(transparent)]
    Append(#[from] AppendEvidenceError),
    /// The row update.
    #[error(transparent)]
    Database(#[from] SqlError),
}

/// Moves `current` (Verified) to Approved inside the caller's transaction: first the
/// `revision_lifecycle` record naming the approval, then the row (which the database's rules
/// accept only with that record).
pub fn approve(
    transaction: &impl Sql,
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
        sql_params![current.id.as_str(), current.version],
    )?;
    Ok(())
}
