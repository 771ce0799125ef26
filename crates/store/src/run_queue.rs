//! The durable run queue (migration 10): a pressed Run is a row written in the transaction that
//! answers the person who pressed it; runners claim the oldest queued row with a lease they
//! renew while the run lasts; a claim whose runner is lost (its process gone, or its lease
//! expired) ends its attempt as failed and goes back to the queue, up to the request's claim
//! limit. Each claim is an attempt of its own (see [`attempt_key`]), so the evidence shows every
//! try, and the database's one-active-attempt rule keeps one revision from running twice at once.
//! Written against [`Sql`]: runners on several hosts share one PostgreSQL queue as the server's
//! runners share the SQLite one.

use crate::ledger::utc_now;
use crate::owner::ProcessIdentity;
use crate::repository::{
    attempt_id_for, fail_attempt, get_attempt, get_revision, id_at, RepositoryError, RevisionStatus,
};
use crate::sql::{Sql, SqlError, SqlRow};
use crate::sql_params;
use adamviz_evidence::actor::Actor;
use adamviz_model::ids::{AttemptId, RevisionId};

/// Where a run request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueState {
    /// Waiting for a runner.
    Queued,
    /// A runner holds it.
    Claimed,
    /// Finished (see its outcome).
    Done,
}

impl QueueState {
    fn from_column(text: &str) -> Result<Self, SqlError> {
        match text {
            "queued" => Ok(Self::Queued),
            "claimed" => Ok(Self::Claimed),
            "done" => Ok(Self::Done),
            other => Err(SqlError::Unreadable {
                column: 5,
                detail: format!("unknown run request state {other:?}"),
            }),
        }
    }
}

/// What a claimed run is doing, as its runner last reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPhase {
    /// Reading the spec and the stored upload, preparing script and snapshot.
    Preparing,
    /// R is running.
    Running,
    /// R has ended; the checks run.
    Verifying,
}

impl RunPhase {
    /// The column's text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Preparing => "preparing",
            Self::Running => "running",
            Self::Verifying => "verifying",
        }
    }

    fn from_column(text: &str) -> Option<Self> {
        match text {
            "preparing" => Some(Self::Preparing),
            "running" => Some(Self::Running),
            "verifying" => Some(Self::Verifying),
            _ => None,
        }
    }
}

/// One run request, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRequest {
    /// Its place in the queue (the oldest queued is claimed first).
    pub seq: i64,
    /// The Draft revision to run.
    pub revision_id: RevisionId,
    /// The key the person who pressed Run gave (a retried press with it joins this request).
    pub idempotency_key: String,
    /// Who pressed Run.
    pub requested_by: Actor,
    /// When.
    pub requested_at: String,
    /// Where it stands.
    pub state: QueueState,
    /// Claims so far (each an attempt).
    pub claims: u32,
    /// Claims allowed (1 + the retries after a lost runner).
    pub max_claims: u32,
    /// The attempt of the current (or last) claim.
    pub attempt_id: AttemptId,
    /// The process holding the claim (`host/pid/start-ticks`).
    pub runner: Option<String>,
    /// Which of that process's runners.
    pub runner_slot: Option<u32>,
    /// What the claimed run is doing.
    pub phase: Option<RunPhase>,
    /// When the current claim was made.
    pub claimed_at: Option<String>,
    /// Until when the claim holds without a renewal.
    pub lease_until: Option<String>,
    /// Why the request went back to the queue, after a lost runner.
    pub requeued_because: Option<String>,
    /// When it finished.
    pub ended_at: Option<String>,
    /// How it finished, in words.
    pub outcome: Option<String>,
}

const COLUMNS: &str = "seq, revision_id, idempotency_key, requested_by, requested_at, state, \
     claims, max_claims, attempt_id, runner, runner_slot, phase, claimed_at, lease_until, \
     requeued_because, ended_at, outcome";

fn request_at(row: &SqlRow) -> Result<RunRequest, SqlError> {
    let requested_by: String = row.get(3)?;
    let requested_by =
        serde_json::from_str(&requested_by).map_err(|error| SqlError::Unreadable {
            column: 3,
            detail: format!("requested_by is not an actor: {error}"),
        })?;
    Ok(RunRequest {
        seq: row.get(0)?,
        revision_id: id_at(row, 1)?,
        idempotency_key: row.get(2)?,
        requested_by,
        requested_at: row.get(4)?,
        state: QueueState::from_column(&row.get::<String>(5)?)?,
        claims: row.get(6)?,
        max_claims: row.get(7)?,
        attempt_id: id_at(row, 8)?,
        runner: row.get(9)?,
        runner_slot: row.get(10)?,
        phase: row
            .get::<Option<String>>(11)?
            .as_deref()
            .and_then(RunPhase::from_column),
        claimed_at: row.get(12)?,
        lease_until: row.get(13)?,
        requeued_because: row.get(14)?,
        ended_at: row.get(15)?,
        outcome: row.get(16)?,
    })
}

/// The idempotency key of a request's `claim`-th attempt: the request's own key for the first
/// (so a run pressed with a key names the attempt it always named), `key#claim<n>` after it
/// (a character a person's key cannot hold, so no pressed key names a retry's attempt).
pub fn attempt_key(key: &str, claim: u32) -> String {
    if claim <= 1 {
        key.to_owned()
    } else {
        format!("{key}#claim{claim}")
    }
}

/// The request with this sequence number.
pub fn request_by_seq(
    connection: &impl Sql,
    seq: i64,
) -> Result<Option<RunRequest>, RepositoryError> {
    Ok(connection
        .query_opt(
            &format!("SELECT {COLUMNS} FROM run_queue WHERE seq = ?1"),
            sql_params![seq],
        )?
        .map(|row| request_at(&row))
        .transpose()?)
}

/// The request of `revision_id` that is queued or claimed, with its position among the queued
/// ones (1 for the next to be claimed; 0 when claimed).
pub fn open_request(
    connection: &impl Sql,
    revision_id: &RevisionId,
) -> Result<Option<(RunRequest, usize)>, RepositoryError> {
    let Some(row) = connection.query_opt(
        &format!("SELECT {COLUMNS} FROM run_queue WHERE revision_id = ?1 AND state <> 'done'"),
        sql_params![revision_id.as_str()],
    )?
    else {
        return Ok(None);
    };
    let request = request_at(&row)?;
    let position = if request.state == QueueState::Queued {
        connection
            .query_one(
                "SELECT count(*) FROM run_queue WHERE state = 'queued' AND seq <= ?1",
                sql_params![request.seq],
            )?
            .get::<i64>(0)? as usize
    } else {
        0
    };
    Ok(Some((request, position)))
}

/// Records a pressed Run of `revision_id` under `key` by `actor`: a new queued request, or,
/// when the key was pressed before or the revision already has a request queued or running,
/// that one (`false`: nothing new was queued; a double click joins the run in progress).
pub fn enqueue_run(
    transaction: &impl Sql,
    revision_id: &RevisionId,
    key: &str,
    actor: &Actor,
    max_claims: u32,
) -> Result<(RunRequest, bool), RepositoryError> {
    let same_key = transaction
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM run_queue WHERE revision_id = ?1 AND idempotency_key = ?2"
            ),
            sql_params![revision_id.as_str(), key],
        )?
        .map(|row| request_at(&row))
        .transpose()?;
    if let Some(request) = same_key {
        return Ok((request, false));
    }
    if let Some((request, _)) = open_request(transaction, revision_id)? {
        return Ok((request, false));
    }
    let requested_by = serde_json::to_string(actor).map_err(RepositoryError::ActorJson)?;
    let seq: i64 = transaction.query_one(
        "INSERT INTO run_queue (revision_id, idempotency_key, requested_by, requested_at, state,
                                claims, max_claims, attempt_id)
         VALUES (?1, ?2, ?3, ?4, 'queued', 0, ?5, ?6) RETURNING seq",
        sql_params![
            revision_id.as_str(),
            key,
            requested_by,
            utc_now(),
            max_claims.max(1),
            attempt_id_for(revision_id, key).as_str()
        ],
    )?
    .get(0)?;
    let request = request_by_seq(transaction, seq)?.ok_or(RepositoryError::RequestVanished(seq))?;
    Ok((request, true))
}

/// Who claims: a process and one of its runners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    /// The process (`ProcessIdentity::to_column`).
    pub process: String,
    /// Which of its runners.
    pub slot: u32,
}

impl Claimant {
    /// Runner `slot` of this process.
    pub fn of_this_process(slot: u32) -> Self {
        Self {
            process: ProcessIdentity::current().to_column(),
            slot,
        }
    }
}

/// Claims the oldest queued request for `claimant` until `lease_until` (RFC 3339 UTC): its
/// claim count goes up by one and its attempt becomes that claim's.
pub fn claim_next(
    transaction: &impl Sql,
    claimant: &Claimant,
    lease_until: &str,
) -> Result<Option<RunRequest>, RepositoryError> {
    let oldest: Option<i64> = transaction
        .query_opt(
            "SELECT seq FROM run_queue WHERE state = 'queued' ORDER BY seq LIMIT 1",
            &[],
        )?
        .map(|row| row.get(0))
        .transpose()?;
    match oldest {
        Some(seq) => claim_request(transaction, seq, claimant, lease_until),
        None => Ok(None),
    }
}

/// Claims request `seq` if it is queued (the command line runs its own request at once).
pub fn claim_request(
    transaction: &impl Sql,
    seq: i64,
    claimant: &Claimant,
    lease_until: &str,
) -> Result<Option<RunRequest>, RepositoryError> {
    let Some(request) = request_by_seq(transaction, seq)? else {
        return Ok(None);
    };
    if request.state != QueueState::Queued {
        return Ok(None);
    }
    let claim = request.claims + 1;
    let attempt_id = attempt_id_for(
        &request.revision_id,
        &attempt_key(&request.idempotency_key, claim),
    );
    let changed = transaction.execute(
        "UPDATE run_queue SET state = 'claimed', claims = ?2, attempt_id = ?3, runner = ?4,
                runner_slot = ?5, phase = 'preparing', claimed_at = ?6, lease_until = ?7
         WHERE seq = ?1 AND state = 'queued'",
        sql_params![
            seq,
            claim,
            attempt_id.as_str(),
            &claimant.process,
            claimant.slot,
            utc_now(),
            lease_until
        ],
    )?;
    if changed == 0 {
        return Ok(None);
    }
    request_by_seq(transaction, seq)
}

/// Renews `claimant`'s claim of request `seq` (attempt `attempt_id`) until `lease_until`, with
/// the phase when one is given. `false` when the claim is no longer this claimant's (it was
/// found lost and given back to the queue): the run must stop.
pub fn renew_claim(
    connection: &impl Sql,
    seq: i64,
    attempt_id: &AttemptId,
    claimant: &Claimant,
    phase: Option<RunPhase>,
    lease_until: &str,
) -> Result<bool, RepositoryError> {
    let changed = connection.execute(
        "UPDATE run_queue SET lease_until = ?5, phase = coalesce(?6, phase)
         WHERE seq = ?1 AND state = 'claimed' AND attempt_id = ?2 AND runner = ?3
           AND runner_slot = ?4",
        sql_params![
            seq,
            attempt_id.as_str(),
            &claimant.process,
            claimant.slot,
            lease_until,
            phase.map(RunPhase::as_str)
        ],
    )?;
    Ok(changed == 1)
}

/// Ends `claimant`'s claim of request `seq` with `outcome` (in words). `false` when the claim
/// was no longer this claimant's.
pub fn finish_claim(
    connection: &impl Sql,
    seq: i64,
    attempt_id: &AttemptId,
    claimant: &Claimant,
    outcome: &str,
) -> Result<bool, RepositoryError> {
    let changed = connection.execute(
        "UPDATE run_queue SET state = 'done', ended_at = ?5, outcome = ?6
         WHERE seq = ?1 AND state = 'claimed' AND attempt_id = ?2 AND runner = ?3
           AND runner_slot = ?4",
        sql_params![
            seq,
            attempt_id.as_str(),
            &claimant.process,
            claimant.slot,
            utc_now(),
            outcome
        ],
    )?;
    Ok(changed == 1)
}

/// Ends attempt `attempt_id` as failed with `why` if it is active (a lost claim's attempt, or
/// the attempt of a run this process stopped because its claim was lost); `true` if it did.
pub fn end_attempt_if_active(
    transaction: &impl Sql,
    attempt_id: &AttemptId,
    why: &str,
) -> Result<bool, RepositoryError> {
    if get_attempt(transaction, attempt_id)?.is_some_and(|a| a.state == "active") {
        fail_attempt(transaction, attempt_id, why, None, &Actor::system())?;
        return Ok(true);
    }
    Ok(false)
}

/// The newest request of `revision_id`, whatever its state.
pub fn latest_request(
    connection: &impl Sql,
    revision_id: &RevisionId,
) -> Result<Option<RunRequest>, RepositoryError> {
    Ok(connection
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM run_queue WHERE revision_id = ?1 ORDER BY seq DESC LIMIT 1"
            ),
            sql_params![revision_id.as_str()],
        )?
        .map(|row| request_at(&row))
        .transpose()?)
}

/// Whether `request`'s claim is lost at `now`: its lease expired (a live runner renews it every
/// heartbeat, so one that stopped renewing — stuck, or its task gone — loses it wherever it
/// runs), or its process is known gone from this host (no need to wait for the lease).
fn claim_is_lost(request: &RunRequest, now: &str) -> bool {
    let expired = request
        .lease_until
        .as_deref()
        .is_none_or(|lease| lease < now);
    let gone = request
        .runner
        .as_deref()
        .and_then(ProcessIdentity::from_column)
        .is_none_or(|runner| runner.is_gone() == Some(true));
    expired || gone
}

/// A claim found lost by [`recover_lost_claims`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredClaim {
    /// The request.
    pub seq: i64,
    /// The revision.
    pub revision_id: RevisionId,
    /// The lost claim's attempt (ended failed if it was still active).
    pub attempt_id: AttemptId,
    /// Whether the request went back to the queue (`false`: its claims were used up).
    pub requeued: bool,
}

/// Finds the claims whose runner is lost at `now` (see [`claim_is_lost`]), ends each one's
/// attempt as failed (when still active) and gives the request back to the queue at its old
/// place, or ends it when its claims are used up.
pub fn recover_lost_claims(
    transaction: &impl Sql,
    now: &str,
) -> Result<Vec<RecoveredClaim>, RepositoryError> {
    let claimed: Vec<RunRequest> = transaction
        .query(
            &format!("SELECT {COLUMNS} FROM run_queue WHERE state = 'claimed' ORDER BY seq"),
            &[],
        )?
        .iter()
        .map(request_at)
        .collect::<Result<_, _>>()?;
    let mut recovered = Vec::new();
    for request in claimed {
        if !claim_is_lost(&request, now) {
            continue;
        }
        let why = format!(
            "its runner ({} runner {}) was lost during claim {} (process gone or lease expired at {})",
            request.runner.as_deref().unwrap_or("unknown"),
            request.runner_slot.unwrap_or(0),
            request.claims,
            request.lease_until.as_deref().unwrap_or("?"),
        );
        end_attempt_if_active(transaction, &request.attempt_id, &why)?;
        // A runner lost after its run was committed (the revision promoted) left nothing to do.
        let still_draft = get_revision(transaction, &request.revision_id)?
            .is_some_and(|revision| revision.status == RevisionStatus::Draft);
        let requeued = still_draft && request.claims < request.max_claims;
        if !still_draft {
            transaction.execute(
                "UPDATE run_queue SET state = 'done', ended_at = ?2, outcome = ?3
                 WHERE seq = ?1 AND state = 'claimed'",
                sql_params![
                    request.seq,
                    now,
                    "verified (its runner was lost after the revision was promoted)"
                ],
            )?;
        } else if requeued {
            transaction.execute(
                "UPDATE run_queue SET state = 'queued', runner = NULL, runner_slot = NULL,
                        phase = NULL, claimed_at = NULL, lease_until = NULL, requeued_because = ?2
                 WHERE seq = ?1 AND state = 'claimed'",
                sql_params![request.seq, why],
            )?;
        } else {
            transaction.execute(
                "UPDATE run_queue SET state = 'done', ended_at = ?2, outcome = ?3
                 WHERE seq = ?1 AND state = 'claimed'",
                sql_params![request.seq, now, format!("not run: {why}; no claim left")],
            )?;
        }
        recovered.push(RecoveredClaim {
            seq: request.seq,
            revision_id: request.revision_id,
            attempt_id: request.attempt_id,
            requeued,
        });
    }
    Ok(recovered)
}

/// Gives every claim of `process` back to the queue when that process stops on purpose (SIGTERM,
/// SIGINT): each claim's attempt ends failed with `why`, and the request is queued again at its
/// old place with one more claim allowed, so a restart or a deploy does not use up a run's tries
/// (a lost runner does). Returns how many claims were given back.
pub fn release_claims_of(
    transaction: &impl Sql,
    process: &str,
    why: &str,
) -> Result<usize, RepositoryError> {
    let claimed: Vec<RunRequest> = transaction
        .query(
            &format!(
                "SELECT {COLUMNS} FROM run_queue WHERE state = 'claimed' AND runner = ?1 ORDER BY seq"
            ),
            sql_params![process],
        )?
        .iter()
        .map(request_at)
        .collect::<Result<_, _>>()?;
    for request in &claimed {
        end_attempt_if_active(transaction, &request.attempt_id, why)?;
        transaction.execute(
            "UPDATE run_queue SET state = 'queued', runner = NULL, runner_slot = NULL,
                    phase = NULL, claimed_at = NULL, lease_until = NULL,
                    max_claims = max_claims + 1, requeued_because = ?2
             WHERE seq = ?1 AND state = 'claimed'",
            sql_params![request.seq, why],
        )?;
    }
    Ok(claimed.len())
}
