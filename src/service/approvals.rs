//! Electronic signatures on Verified revisions (21 CFR Part 11 style), as plain functions over a
//! SQLite connection: a reviewer other than the author re-enters the password (Argon2id, even
//! inside a live session), states the meaning and signs; the `approval` record binds the
//! revision's version and evidence head, and an approval moves Verified → Approved with its
//! lifecycle record in the same transaction. Every signing attempt, good or bad, is a security
//! event; three wrong passwords lock signing for the account for fifteen minutes. Time is a
//! parameter, as for logins.

use chrono::{DateTime, Duration, Utc};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::accounts::{password_matches, record_event, timestamp, SecurityEvent};
use crate::{
    domain::{
        account::{Account, Role},
        digest::Sha256Digest,
        ids::RevisionId,
        revision::{RevisionStatus, SignatureView},
    },
    evidence::{
        approval::{ApprovalRecord, Decision, Signature, SignatureMeaning, Signer},
        revision_lifecycle::RevisionLifecycleRecord,
    },
    store::{
        ledger::append_evidence,
        repository::{get_revision, Revision},
    },
};

/// Wrong passwords at signing, within [`SIGNING_LOCK_MINUTES`], that lock signing.
pub const MAX_FAILED_SIGNINGS: usize = 3;
/// How long signing stays locked (and the window in which failures count).
pub const SIGNING_LOCK_MINUTES: i64 = 15;

/// What the signer asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignRequest {
    /// The revision.
    pub revision_id: RevisionId,
    /// Approve, or request changes.
    pub decision: Decision,
    /// The meaning (required to approve).
    pub meaning: Option<SignatureMeaning>,
    /// The comment (required to request changes).
    pub comment: Option<String>,
    /// The password, re-entered.
    pub password: String,
    /// The evidence head the signer's page showed, if it sent one: signing is refused when
    /// the revision's evidence moved on since (the signer would sign something unseen).
    pub evidence_head_seen: Option<String>,
}

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignError {
    /// Only reviewers sign.
    #[error("only an account with the reviewer role signs revisions")]
    NotReviewer,
    /// Four eyes: the author does not sign their own revision.
    #[error("you made this revision: a second person must sign it")]
    OwnRevision,
    /// No such revision.
    #[error("there is no revision {0}")]
    NoRevision(RevisionId),
    /// Only a Verified revision is signed.
    #[error("this revision is {0}: only a Verified revision can be signed")]
    NotVerified(&'static str),
    /// Approving needs a meaning.
    #[error("choose what your signature means: reviewed, approved or responsible")]
    MeaningMissing,
    /// Requesting changes needs a comment.
    #[error("say which changes you request (a comment is required)")]
    CommentMissing,
    /// The comment is too long.
    #[error("the comment is longer than 4000 characters")]
    CommentTooLong,
    /// The password did not match.
    #[error("the password is not right: nothing was signed ({remaining} tries left before signing is locked for {SIGNING_LOCK_MINUTES} minutes)")]
    WrongPassword {
        /// Tries left before the lock.
        remaining: usize,
    },
    /// Signing is locked.
    #[error("signing is locked for your account until {until} after {MAX_FAILED_SIGNINGS} wrong passwords")]
    Locked {
        /// Until when.
        until: String,
    },
    /// The latest reproduction of the retained result failed.
    #[error("the latest reproduction of this revision failed: it cannot be approved (changes can be requested)")]
    ReproductionFailed,
    /// The evidence moved on since the page was read.
    #[error("the revision's evidence changed since you opened the page: read it again, then sign")]
    HeadMoved,
    /// Storage failed.
    #[error("{0}")]
    Database(String),
}

impl From<rusqlite::Error> for SignError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Database(error.to_string())
    }
}

/// A signature made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The `approval` record's hash.
    pub approval_hash: Sha256Digest,
    /// The revision after signing (Approved, or still Verified after changes were requested).
    pub revision: Revision,
}

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

/// Four eyes: whether `signer` is the one who created a revision made by `author` (the same
/// account, or, for a revision made on the command line, an account of the same name as the
/// operating-system user).
pub fn is_author(signer: &Account, author: &(Option<i64>, String)) -> bool {
    author.0 == Some(signer.id) || author.1.eq_ignore_ascii_case(&signer.name)
}

/// The outcome of the latest reproduction of revision `id`, if any.
fn latest_reproduction(
    connection: &Connection,
    id: &RevisionId,
) -> Result<Option<String>, rusqlite::Error> {
    connection
        .query_row(
            "SELECT json_extract(record, '$.outcome') FROM evidence_ledger
             WHERE seq = (SELECT max(seq) FROM evidence_ledger
                          WHERE json_extract(record, '$.revision_id') = ?1
                            AND kind = 'reproduction')",
            [id.as_str()],
            |row| row.get(0),
        )
        .optional()
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

/// Signs `request` as `signer` at `now`. Refusals of the form (meaning, comment) write
/// nothing; every other outcome is a `signing` security event, and the third wrong password
/// within the window adds a `signing_lockout` event.
pub fn sign(
    connection: &mut Connection,
    signer: &Account,
    request: &SignRequest,
    remote_addr: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Signed, SignError> {
    let comment = request
        .comment
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    if comment.as_ref().is_some_and(|c| c.chars().count() > 4000) {
        return Err(SignError::CommentTooLong);
    }
    let meaning = match request.decision {
        Decision::Approved => Some(request.meaning.ok_or(SignError::MeaningMissing)?),
        Decision::ChangesRequested if comment.is_none() => return Err(SignError::CommentMissing),
        Decision::ChangesRequested => None,
    };
    let revision = request.revision_id.as_str();
    let event = |connection: &Connection, event: &str, success: bool, detail: &str| {
        record_event(
            connection,
            &SecurityEvent {
                event,
                account_id: Some(signer.id),
                account_name: &signer.name,
                actor_id: None,
                remote_addr,
                success,
                detail: Some(&format!("{revision}: {detail}")),
            },
            now,
        )
    };
    // One signing check at a time in this process: the lock, the hash and the failure record
    // are one step, so parallel guesses cannot pass the check before a failure is counted.
    static GATE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _gate = GATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !signer.has(Role::Reviewer) {
        event(connection, "signing", false, "not a reviewer")?;
        return Err(SignError::NotReviewer);
    }
    if let Some(until) = signing_locked_until(connection, signer.id, now)? {
        event(connection, "signing", false, "locked")?;
        return Err(SignError::Locked { until });
    }
    let hash: String = connection.query_row(
        "SELECT password_hash FROM accounts WHERE id = ?1",
        [signer.id],
        |row| row.get(0),
    )?;
    if !password_matches(&request.password, &hash) {
        event(connection, "signing", false, "wrong password")?;
        let failures = counted_signing_failures(connection, signer.id, now)?;
        if failures >= MAX_FAILED_SIGNINGS {
            event(
                connection,
                "signing_lockout",
                false,
                &format!("{MAX_FAILED_SIGNINGS} wrong passwords at signing"),
            )?;
            return Err(SignError::Locked {
                until: timestamp(now + Duration::minutes(SIGNING_LOCK_MINUTES)),
            });
        }
        return Err(SignError::WrongPassword {
            remaining: MAX_FAILED_SIGNINGS - failures,
        });
    }
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let signed = (|| {
        let found = get_revision(&transaction, &request.revision_id)
            .map_err(|e| SignError::Database(e.to_string()))?;
        let current = found.ok_or_else(|| SignError::NoRevision(request.revision_id.clone()))?;
        if current.status != RevisionStatus::Verified {
            return Err(SignError::NotVerified(current.status.label()));
        }
        if author_of(&transaction, &current.id)?.is_some_and(|author| is_author(signer, &author)) {
            return Err(SignError::OwnRevision);
        }
        if request.decision == Decision::Approved
            && latest_reproduction(&transaction, &current.id)?.as_deref() == Some("failed")
        {
            return Err(SignError::ReproductionFailed);
        }
        let head = evidence_head(&transaction, &current.id)?
            .and_then(|h| Sha256Digest::try_from(h).ok())
            .ok_or_else(|| SignError::Database("the revision has no evidence".to_owned()))?;
        if request
            .evidence_head_seen
            .as_deref()
            .is_some_and(|seen| seen != head.to_hex())
        {
            return Err(SignError::HeadMoved);
        }
        let at = timestamp(now);
        let approval = append_evidence(
            &transaction,
            ApprovalRecord::new(
                Signature {
                    revision_id: current.id.clone(),
                    revision_version: current.version,
                    decision: request.decision,
                    meaning,
                    comment: comment.clone(),
                    signer: Signer {
                        account_id: signer.id,
                        account_name: signer.name.clone(),
                        printed_name: signer.name.clone(),
                        roles: signer.roles.iter().map(|r| r.as_str().to_owned()).collect(),
                    },
                    evidence_head: head,
                },
                at.clone(),
            ),
        )
        .map_err(|e| SignError::Database(e.to_string()))?;
        let approval_hash = *approval.record_hash();
        if request.decision == Decision::Approved {
            let spec_hash = Sha256Digest::try_from(current.spec_hash.clone())
                .map_err(|e| SignError::Database(e.to_string()))?;
            append_evidence(
                &transaction,
                RevisionLifecycleRecord::approved(
                    current.id.clone(),
                    current.version + 1,
                    spec_hash,
                    approval_hash,
                    at,
                    crate::evidence::actor::Actor::web(signer),
                ),
            )
            .map_err(|e| SignError::Database(e.to_string()))?;
            transaction.execute(
                "UPDATE revisions SET status = 'approved', version = version + 1
                 WHERE id = ?1 AND version = ?2 AND status = 'verified'",
                params![current.id, current.version],
            )?;
        }
        let revision = get_revision(&transaction, &current.id)
            .map_err(|e| SignError::Database(e.to_string()))?
            .ok_or_else(|| SignError::NoRevision(current.id.clone()))?;
        Ok(Signed {
            approval_hash,
            revision,
        })
    })();
    match signed {
        Ok(signed) => {
            let detail = match (request.decision, meaning) {
                (Decision::Approved, Some(meaning)) => format!("approved ({})", meaning.as_str()),
                _ => "changes requested".to_owned(),
            };
            event(&transaction, "signing", true, &detail)?;
            transaction.commit()?;
            Ok(signed)
        }
        Err(error) => {
            drop(transaction);
            event(connection, "signing", false, &error.to_string())?;
            Err(error)
        }
    }
}

/// The end of the signing lock of account `id` in force at `now`, if any.
pub fn signing_locked_until(
    connection: &Connection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<Option<String>, rusqlite::Error> {
    let since = timestamp(now - Duration::minutes(SIGNING_LOCK_MINUTES));
    let last: Option<String> = connection.query_row(
        "SELECT max(at) FROM security_events
         WHERE event = 'signing_lockout' AND account_id = ?1 AND at > ?2",
        params![id, since],
        |row| row.get(0),
    )?;
    Ok(last.and_then(|at| {
        let at = DateTime::parse_from_rfc3339(&at).ok()?.with_timezone(&Utc);
        Some(timestamp(at + Duration::minutes(SIGNING_LOCK_MINUTES)))
    }))
}

/// Wrong passwords at signing of account `id` counted towards a lock: within the window,
/// after its last good signature or lock.
fn counted_signing_failures(
    connection: &Connection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<usize, rusqlite::Error> {
    let since = timestamp(now - Duration::minutes(SIGNING_LOCK_MINUTES));
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

/// An `approval` record as pages show it.
pub fn signature_view(record: &serde_json::Value) -> Option<SignatureView> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
    Some(SignatureView {
        printed_name: text(&record["signer"]["printed_name"])?,
        account_name: text(&record["signer"]["account_name"])?,
        signed_at: text(&record["signed_at"])?,
        decision: text(&record["decision"])?,
        meaning: text(&record["meaning"]),
        comment: text(&record["comment"]),
        revision_version: record["revision_version"].as_i64()?,
        record_hash: text(&record["record_hash"])?,
    })
}

/// The signatures on revision `id`, oldest first.
pub fn signatures_of(
    connection: &Connection,
    id: &RevisionId,
) -> Result<Vec<SignatureView>, rusqlite::Error> {
    let mut statement = connection.prepare(
        "SELECT record FROM evidence_ledger
         WHERE json_extract(record, '$.revision_id') = ?1 AND kind = 'approval' ORDER BY seq",
    )?;
    let rows = statement.query_map([id.as_str()], |row| row.get::<_, Vec<u8>>(0))?;
    let mut views = Vec::new();
    for bytes in rows {
        if let Some(view) = serde_json::from_slice(&bytes?)
            .ok()
            .as_ref()
            .and_then(signature_view)
        {
            views.push(view);
        }
    }
    Ok(views)
}
