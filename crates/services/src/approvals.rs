//! Electronic signatures on Verified revisions (21 CFR Part 11 style), as plain functions over a
//! SQLite connection: a reviewer other than the author re-enters the password (Argon2id, even
//! inside a live session), states the meaning and signs; the `approval` record binds the
//! revision's version and evidence head, and an approval moves Verified → Approved with its
//! lifecycle record in the same transaction. Every signing attempt, good or bad, is a security
//! event; three wrong passwords lock signing for the account for fifteen minutes. Time is a
//! parameter, as for logins.

use adamviz_store::sql::Sql;
use chrono::{DateTime, Duration, Utc};

use super::accounts::{
    account_by_id, password_matches, record_event, role_grant_at, timestamp, SecurityEvent,
};
use adamviz_evidence::approval::{ApprovalRecord, Decision, Signature, SignatureMeaning, Signer};
use adamviz_model::{
    account::{Account, Role},
    digest::Sha256Digest,
    ids::RevisionId,
    revision::{RevisionStatus, SignatureView},
};
use adamviz_store::{
    db::{Connection, DbError, Transaction},
    ledger::append_evidence,
    repository::{get_revision, Revision},
    signatures,
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
    /// The user name, given with the first signature of a signing session: 21 CFR 11.200(a)(1)
    /// asks for every component (user name and password) at the first signing of a continuous
    /// session, and at least the password at each one after. The caller knows its session and
    /// asks for it ([`require_user_name`]); when given, it must be the signer's.
    pub user_name: Option<String>,
}

/// The first signature of a signing session needs the user name as well as the password.
pub fn require_user_name(first_of_session: bool, user_name: Option<&str>) -> Result<(), SignError> {
    if first_of_session && user_name.is_none_or(|name| name.trim().is_empty()) {
        return Err(SignError::UserNameMissing);
    }
    Ok(())
}

/// Why a signature was refused.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// Only reviewers sign.
    #[error("only an account with the reviewer role signs revisions")]
    NotReviewer,
    /// Separation of duties: an account that manages accounts does not sign.
    #[error("separation of duties: an account with the admin role cannot sign (it manages accounts); sign with a reviewer account that is not an admin")]
    AdminCannotSign,
    /// The password in force was set by an administrator.
    #[error("your password was set by an administrator: choose your own on the Change password page before you sign")]
    PasswordNotOwn,
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
    /// The first signature of a session needs the user name.
    #[error("the first signature of a session needs your user name as well as your password (21 CFR 11.200(a)(1)); the ones after it need the password only")]
    UserNameMissing,
    /// The user name given is not the signer's.
    #[error("the user name is not the one you are signed in with: nothing was signed")]
    WrongUserName,
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
    /// A reproduction of the retained result failed (the rule the bundle validator applies).
    #[error("a reproduction of this revision failed: it cannot be approved, since its evidence bundle could not pass (changes can be requested)")]
    ReproductionFailed,
    /// The evidence moved on since the page was read.
    #[error("the revision's evidence changed since you opened the page: read it again, then sign")]
    HeadMoved,
    /// A statement failed.
    #[error(transparent)]
    Database(#[from] DbError),
    /// The repository refused or failed.
    #[error(transparent)]
    Repository(#[from] adamviz_store::repository::RepositoryError),
    /// The approval record could not be appended to the ledger.
    #[error(transparent)]
    Ledger(#[from] adamviz_store::ledger::AppendEvidenceError),
    /// The approval could not be recorded on the revision.
    #[error(transparent)]
    Approve(#[from] adamviz_store::signatures::ApproveError),
    /// The revision has no evidence to sign (a Verified revision always has).
    #[error("revision {0} has no evidence")]
    NoEvidence(adamviz_model::ids::RevisionId),
    /// The revision's stored spec hash is not a SHA-256.
    #[error("revision {revision}: its stored spec hash is not a SHA-256: {source}")]
    SpecHash {
        /// The revision.
        revision: adamviz_model::ids::RevisionId,
        /// Why.
        #[source]
        source: adamviz_model::digest::DigestParseError,
    },
}

/// A signature made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The `approval` record's hash.
    pub approval_hash: Sha256Digest,
    /// The revision after signing (Approved, or still Verified after changes were requested).
    pub revision: Revision,
}

pub use adamviz_store::signatures::author_of;

/// Four eyes: whether `signer` is the one who created a revision made by `author` (the same
/// account, or, for a revision made on the command line, an account of the same name as the
/// operating-system user).
pub fn is_author(signer: &Account, author: &(Option<i64>, String)) -> bool {
    author.0 == Some(signer.id) || author.1.eq_ignore_ascii_case(&signer.name)
}

/// Whether any reproduction of revision `id` failed. One rule with the bundle validator, which
/// fails a bundle holding any failed reproduction: a revision is approved only if its bundle can
/// pass. (A reproduction that could not run for reasons of the host records nothing, so a
/// failed record always means the result did not come out the same.)
pub fn any_reproduction_failed(connection: &impl Sql, id: &RevisionId) -> Result<bool, DbError> {
    signatures::any_reproduction_failed(connection, id)
}

pub use adamviz_store::signatures::evidence_head;

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
    let (meaning, comment) = read_form(request)?;
    let log = SigningLog {
        signer,
        remote_addr,
        revision: request.revision_id.as_str(),
        now,
    };
    // One signing check at a time in this process: the lock, the hash and the failure record
    // are one step, so parallel guesses cannot pass the check before a failure is counted.
    static GATE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _gate = GATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(name) = request.user_name.as_deref().map(str::trim) {
        if !name.eq_ignore_ascii_case(&signer.name) {
            log.record(connection, "signing", false, "wrong user name")?;
            return Err(SignError::WrongUserName);
        }
    }
    let signer = &check_signer(connection, &log, &request.password)?;
    let transaction = connection.transaction()?;
    match record_signature(&transaction, signer, request, meaning, comment, now) {
        Ok(signed) => {
            let decided = match (request.decision, meaning) {
                (Decision::Approved, Some(meaning)) => format!("approved ({})", meaning.as_str()),
                _ => "changes requested".to_owned(),
            };
            let components = match request.user_name {
                Some(_) => "user name and password",
                None => "password (continuing a signing session)",
            };
            let detail = format!("{decided}; signed with {components}");
            log.record(&transaction, "signing", true, &detail)?;
            transaction.commit()?;
            Ok(signed)
        }
        Err(error) => {
            drop(transaction);
            log.record(connection, "signing", false, &error.to_string())?;
            Err(error)
        }
    }
}

/// The form's meaning (required to approve) and comment (trimmed; required to request changes,
/// at most 4,000 characters).
fn read_form(
    request: &SignRequest,
) -> Result<(Option<SignatureMeaning>, Option<String>), SignError> {
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
    Ok((meaning, comment))
}

/// The `signing` security events of one signing try.
struct SigningLog<'a> {
    signer: &'a Account,
    remote_addr: Option<&'a str>,
    revision: &'a str,
    now: DateTime<Utc>,
}

impl SigningLog<'_> {
    fn record(
        &self,
        connection: &impl Sql,
        event: &str,
        success: bool,
        detail: &str,
    ) -> Result<(), SignError> {
        record_event(
            connection,
            &SecurityEvent {
                event,
                account_id: Some(self.signer.id),
                account_name: &self.signer.name,
                actor_id: None,
                actor_name: None,
                remote_addr: self.remote_addr,
                success,
                detail: Some(&format!("{}: {detail}", self.revision)),
            },
            self.now,
        )?;
        Ok(())
    }
}

/// The signer's account as stored now (roles and password origin, not as the session saw it),
/// if it may sign with `password`: a reviewer, not an admin, with a password of its own, not
/// locked. A wrong password is counted; the third within the window locks signing.
fn check_signer(
    connection: &impl Sql,
    log: &SigningLog<'_>,
    password: &str,
) -> Result<Account, SignError> {
    let now = log.now;
    let signer = account_by_id(connection, log.signer.id)?
        .filter(|account| !account.disabled)
        .ok_or(SignError::NotReviewer)?;
    let refuse = |detail: &str, error: SignError| -> Result<Account, SignError> {
        log.record(connection, "signing", false, detail)?;
        Err(error)
    };
    if !signer.has(Role::Reviewer) {
        return refuse("not a reviewer", SignError::NotReviewer);
    }
    if signer.has(Role::Admin) {
        return refuse("an admin account", SignError::AdminCannotSign);
    }
    if signer.password_change_required || signer.password_set_by_owner_at.is_none() {
        return refuse(
            "password not chosen by its owner",
            SignError::PasswordNotOwn,
        );
    }
    if let Some(until) = signing_locked_until(connection, signer.id, now)? {
        return refuse("locked", SignError::Locked { until });
    }
    let hash = signatures::password_hash(connection, signer.id)?;
    if !password_matches(password, &hash) {
        log.record(connection, "signing", false, "wrong password")?;
        let failures = counted_signing_failures(connection, signer.id, now)?;
        if failures >= MAX_FAILED_SIGNINGS {
            let detail = format!("{MAX_FAILED_SIGNINGS} wrong passwords at signing");
            log.record(connection, "signing_lockout", false, &detail)?;
            return Err(SignError::Locked {
                until: timestamp(now + Duration::minutes(SIGNING_LOCK_MINUTES)),
            });
        }
        return Err(SignError::WrongPassword {
            remaining: MAX_FAILED_SIGNINGS - failures,
        });
    }
    Ok(signer)
}

/// In `transaction`: checks the revision may be signed by `signer` (Verified, not their own, no
/// failed reproduction to approve, the evidence head the reviewer saw), appends the approval
/// record and, for an approval, promotes the revision.
fn record_signature(
    transaction: &Transaction<'_>,
    signer: &Account,
    request: &SignRequest,
    meaning: Option<SignatureMeaning>,
    comment: Option<String>,
    now: DateTime<Utc>,
) -> Result<Signed, SignError> {
    let current = get_revision(transaction, &request.revision_id)?
        .ok_or_else(|| SignError::NoRevision(request.revision_id.clone()))?;
    if current.status != RevisionStatus::Verified {
        return Err(SignError::NotVerified(current.status.label()));
    }
    if author_of(transaction, &current.id)?.is_some_and(|author| is_author(signer, &author)) {
        return Err(SignError::OwnRevision);
    }
    if request.decision == Decision::Approved && any_reproduction_failed(transaction, &current.id)?
    {
        return Err(SignError::ReproductionFailed);
    }
    let head = evidence_head(transaction, &current.id)?
        .and_then(|h| Sha256Digest::try_from(h).ok())
        .ok_or_else(|| SignError::NoEvidence(current.id.clone()))?;
    if request
        .evidence_head_seen
        .as_deref()
        .is_some_and(|seen| seen != head.to_hex())
    {
        return Err(SignError::HeadMoved);
    }
    let at = timestamp(now);
    let grant = role_grant_at(transaction, signer.id, Role::Reviewer, &at)?
        .ok_or(SignError::NotReviewer)?;
    let reset = adamviz_store::accounts::last_password_reset(transaction, signer.id)?;
    let signature = Signature {
        revision_id: current.id.clone(),
        revision_version: current.version,
        decision: request.decision,
        meaning,
        comment,
        signer: Signer {
            account_id: signer.id,
            account_name: signer.name.clone(),
            printed_name: signer.name.clone(),
            roles: signer.roles.iter().map(|r| r.as_str().to_owned()).collect(),
            password_chosen_at: signer.password_set_by_owner_at.clone(),
            password_reset_at: reset.as_ref().map(|(at, _)| at.clone()),
            password_reset_by: reset.map(|(_, by)| by),
            reviewer_granted_at: Some(grant.at),
            reviewer_granted_by: Some(grant.by),
        },
        evidence_head: head,
    };
    let approval = append_evidence(transaction, ApprovalRecord::new(signature, at.clone()))?;
    let approval_hash = *approval.record_hash();
    if request.decision == Decision::Approved {
        let spec_hash = Sha256Digest::try_from(current.spec_hash.clone()).map_err(|source| {
            SignError::SpecHash {
                revision: current.id.clone(),
                source,
            }
        })?;
        let actor = adamviz_evidence::actor::Actor::web(signer);
        signatures::approve(transaction, &current, spec_hash, approval_hash, at, actor)?;
    }
    let revision = get_revision(transaction, &current.id)?
        .ok_or_else(|| SignError::NoRevision(current.id.clone()))?;
    Ok(Signed {
        approval_hash,
        revision,
    })
}

/// The end of the signing lock of account `id` in force at `now`, if any.
pub fn signing_locked_until(
    connection: &impl Sql,
    id: i64,
    now: DateTime<Utc>,
) -> Result<Option<String>, DbError> {
    let since = timestamp(now - Duration::minutes(SIGNING_LOCK_MINUTES));
    let last = signatures::last_signing_lockout_after(connection, id, &since)?;
    Ok(last.and_then(|at| {
        let at = DateTime::parse_from_rfc3339(&at).ok()?.with_timezone(&Utc);
        Some(timestamp(at + Duration::minutes(SIGNING_LOCK_MINUTES)))
    }))
}

/// Wrong passwords at signing of account `id` counted towards a lock: within the window,
/// after its last good signature or lock.
fn counted_signing_failures(
    connection: &impl Sql,
    id: i64,
    now: DateTime<Utc>,
) -> Result<usize, DbError> {
    let since = timestamp(now - Duration::minutes(SIGNING_LOCK_MINUTES));
    signatures::signing_failures_after(connection, id, &since)
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
        password_chosen_at: text(&record["signer"]["password_chosen_at"]),
        password_reset_at: text(&record["signer"]["password_reset_at"]),
        password_reset_by: text(&record["signer"]["password_reset_by"]),
        reviewer_granted_at: text(&record["signer"]["reviewer_granted_at"]),
        reviewer_granted_by: text(&record["signer"]["reviewer_granted_by"]),
    })
}

/// The signatures on revision `id`, oldest first.
pub fn signatures_of(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<Vec<SignatureView>, DbError> {
    let mut views = Vec::new();
    for bytes in signatures::approval_records(connection, id)? {
        if let Some(mut view) = serde_json::from_slice(&bytes)
            .ok()
            .as_ref()
            .and_then(signature_view)
        {
            // Records older than approval-v2 do not carry the grant: the role history does.
            if view.reviewer_granted_at.is_none() {
                let signer = signatures::account_id_named(connection, &view.account_name)?;
                if let Some(grant) = signer
                    .map(|id| role_grant_at(connection, id, Role::Reviewer, &view.signed_at))
                    .transpose()?
                    .flatten()
                {
                    view.reviewer_granted_at = Some(grant.at);
                    view.reviewer_granted_by = Some(grant.by);
                }
            }
            views.push(view);
        }
    }
    Ok(views)
}
