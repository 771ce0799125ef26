//! The queue's runners: each claims the oldest queued request (after giving the claims of lost
//! runners back to the queue), runs it through the execution service under that claim's
//! attempt, renews the claim while it runs, and records how it ended. A runner that finds its
//! claim taken away (found lost by another process) stops its run: one revision never runs
//! twice at once.

use super::{
    queue_run, read_revision, stored_spec, watch, Actor, Arc, AttemptId, Duration, ReadError,
    RevisionId, RevisionStatus, RunContext, RunPhase, RunRequest, StartRunError,
};
use crate::database::on_database;

use crate::{
    execution::{ExecutionOutcome, ServiceError},
    prepare::{prepare_execution, PrepareError},
};
use adamviz_engine::compiler::ImageSize;
use adamviz_engine::ingest::FileReadError;
use adamviz_store::{
    ledger::utc_now,
    repository::{AttemptLease, RepositoryError},
    run_queue::{
        attempt_key, claim_next, claim_request, end_attempt_if_active, finish_claim,
        recover_lost_claims, release_claims_of, renew_claim, Claimant,
    },
};

/// Starts `count` runners on the current tokio runtime; they run as long as it does.
pub fn spawn_runners(context: RunContext, count: usize) {
    for slot in 1..=count {
        let context = context.clone();
        tokio::spawn(async move { runner_loop(context, slot as u32).await });
    }
}

async fn runner_loop(context: RunContext, slot: u32) {
    let claimant = Claimant::of_this_process(slot);
    loop {
        // Registered before looking, so a request queued while this runner looks still wakes it.
        let woken = context.queue.wake.notified();
        match claim(&context, &claimant, None).await {
            Ok(Some(request)) => {
                // A task of its own: a panic in one run ends that run, not this runner. Its
                // claim, no longer renewed, is found lost when its lease expires.
                let (attempt, run) = (request.attempt_id.clone(), context.clone());
                let claimant = claimant.clone();
                let task = tokio::spawn(async move { run_claimed(&run, &claimant, request).await });
                if let Err(error) = task.await {
                    tracing::error!(attempt = %attempt, %error, slot, "a run's task ended abnormally; its claim goes back to the queue when its lease expires");
                }
            }
            Ok(None) => {
                let _ = tokio::time::timeout(context.queue.settings.idle_poll, woken).await;
            }
            Err(error) => {
                tracing::error!(%error, slot, "the run queue could not be read; trying again");
                tokio::time::sleep(context.queue.settings.idle_poll).await;
            }
        }
    }
}

/// Gives lost claims back to the queue, then claims request `seq` (or the oldest queued).
async fn claim(
    context: &RunContext,
    claimant: &Claimant,
    seq: Option<i64>,
) -> Result<Option<RunRequest>, ReadError> {
    let claimant = claimant.clone();
    let lease = lease_until(context.queue.settings.lease);
    let claimed = on_database(context.execution.database(), move |connection| {
        let transaction = connection.transaction()?;
        for lost in recover_lost_claims(&transaction, &utc_now())? {
            tracing::warn!(
                revision = %lost.revision_id,
                attempt = %lost.attempt_id,
                requeued = lost.requeued,
                "a run's runner was lost: its attempt ended failed"
            );
        }
        let claimed = match seq {
            Some(seq) => claim_request(&transaction, seq, &claimant, &lease)?,
            None => claim_next(&transaction, &claimant, &lease)?,
        };
        transaction.commit()?;
        Ok::<_, RepositoryError>(claimed)
    })
    .await;
    if matches!(claimed, Ok(Some(_))) {
        context.queue.status_changed();
    }
    claimed
}

fn lease_until(lease: Duration) -> String {
    AttemptLease::of_this_process(lease).until
}

/// Records a request and runs it in this process at once, as the command line does: the
/// request is claimed by this process's runner 0, so if the process dies the server's runners
/// take it up. Returns the execution's outcome.
pub async fn run_request_now(
    context: &RunContext,
    revision_id: &RevisionId,
    key: &str,
    actor: Actor,
) -> Result<ExecutionOutcome, RunRequestError> {
    let claimant = Claimant::of_this_process(0);
    let lease = lease_until(context.queue.settings.lease);
    // Recorded and claimed in one transaction: no runner elsewhere can take it in between.
    let (request, claimed) = queue_run(context, revision_id, key, actor, Some((&claimant, &lease)))
        .await
        .map_err(RunRequestError::Start)?;
    let claimed = claimed.ok_or(RunRequestError::ClaimedElsewhere(request.attempt_id))?;
    let seq = claimed.seq;
    let attempt_id = claimed.attempt_id.clone();
    let outcome = run_with_heartbeat(context, &claimant, &claimed).await;
    record_end(context, &claimant, seq, &attempt_id, &outcome).await;
    match outcome {
        ClaimEnd::Finished(result) => (*result).map_err(RunRequestError::Run),
        ClaimEnd::Lost => Err(RunRequestError::Lost(attempt_id)),
    }
}

/// Why [`run_request_now`] has no outcome.
#[derive(Debug, thiserror::Error)]
pub enum RunRequestError {
    /// The request could not be recorded.
    #[error(transparent)]
    Start(StartRunError),
    /// The queue could not be read.
    #[error("the run queue: {0}")]
    Queue(ReadError),
    /// Another runner holds the revision's request (a run was already queued or running).
    #[error("the revision's run is queued or running elsewhere (attempt {0}); its page shows how it ends")]
    ClaimedElsewhere(AttemptId),
    /// The claim was found lost while it ran.
    #[error("this process's claim of attempt {0} was given back to the queue; the run stopped")]
    Lost(AttemptId),
    /// The run itself.
    #[error(transparent)]
    Run(RunError),
}

/// How a claim ended.
enum ClaimEnd {
    /// The run ended (well or not).
    Finished(Box<Result<ExecutionOutcome, RunError>>),
    /// The claim was taken away while it ran.
    Lost,
}

async fn run_claimed(context: &RunContext, claimant: &Claimant, request: RunRequest) {
    let (seq, attempt_id) = (request.seq, request.attempt_id.clone());
    let end = run_with_heartbeat(context, claimant, &request).await;
    if let ClaimEnd::Finished(result) = &end {
        if let Err(error) = result.as_ref() {
            tracing::warn!(revision = %request.revision_id, attempt = %attempt_id, %error, "governed run ended in an error");
        }
    }
    record_end(context, claimant, seq, &attempt_id, &end).await;
}

/// Runs the claimed request while renewing its claim; stops the run when the claim is lost.
async fn run_with_heartbeat(
    context: &RunContext,
    claimant: &Claimant,
    request: &RunRequest,
) -> ClaimEnd {
    let (sender, phases) = watch::channel(None);
    context.queue.with_phases(|all| {
        all.insert(request.attempt_id.clone(), sender);
    });
    let end = tokio::select! {
        result = execute_request(context, request) => ClaimEnd::Finished(Box::new(result)),
        () = keep_claim(context, claimant, request, phases) => ClaimEnd::Lost,
    };
    context.queue.with_phases(|all| {
        all.remove(&request.attempt_id);
    });
    // The run's outcome (Verified, or its failed attempt) is stored by now.
    context.queue.status_changed();
    if matches!(end, ClaimEnd::Lost) {
        // The run stopped (its R killed with it); its attempt, if it got as far as starting
        // one, must not stay active and block the next claim's.
        let attempt = request.attempt_id.clone();
        let ended = on_database(context.execution.database(), move |connection| {
            let transaction = connection.transaction()?;
            let ended = end_attempt_if_active(
                &transaction,
                &attempt,
                "this runner's claim was found lost and given back to the queue; the run stopped",
            )?;
            transaction.commit()?;
            Ok::<_, RepositoryError>(ended)
        })
        .await;
        if let Err(error) = ended {
            tracing::error!(attempt = %request.attempt_id, %error, "could not end the attempt of a stopped run");
        }
    }
    end
}

/// Renews the claim every heartbeat and at every phase change; returns when the claim is no
/// longer this runner's.
async fn keep_claim(
    context: &RunContext,
    claimant: &Claimant,
    request: &RunRequest,
    mut phases: watch::Receiver<Option<RunPhase>>,
) {
    let settings = context.queue.settings;
    // Once the phases' sender is gone, only the heartbeat wakes this loop (a closed channel
    // would answer at once, every time).
    let mut phases_open = true;
    loop {
        let phase_changed = if phases_open {
            tokio::select! {
                changed = phases.changed() => {
                    phases_open = changed.is_ok();
                    phases_open
                }
                () = tokio::time::sleep(settings.heartbeat) => false,
            }
        } else {
            tokio::time::sleep(settings.heartbeat).await;
            false
        };
        let phase = if phase_changed {
            *phases.borrow_and_update()
        } else {
            None
        };
        let (seq, attempt_id, claimant) =
            (request.seq, request.attempt_id.clone(), claimant.clone());
        let lease = lease_until(settings.lease);
        let renewed = on_database(context.execution.database(), move |connection| {
            renew_claim(connection, seq, &attempt_id, &claimant, phase, &lease)
        })
        .await;
        match renewed {
            Ok(true) if phase.is_some() => context.queue.status_changed(),
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(attempt = %request.attempt_id, "this runner's claim was given back to the queue: stopping the run");
                return;
            }
            // A database that cannot be written now may be back at the next beat; the lease
            // is several beats long.
            Err(error) => {
                tracing::warn!(attempt = %request.attempt_id, %error, "could not renew a run's claim")
            }
        }
    }
}

async fn record_end(
    context: &RunContext,
    claimant: &Claimant,
    seq: i64,
    attempt_id: &AttemptId,
    end: &ClaimEnd,
) {
    let outcome = match end {
        ClaimEnd::Lost => return,
        ClaimEnd::Finished(result) => match result.as_ref() {
            Ok(outcome) => match outcome.revision.status {
                RevisionStatus::Verified | RevisionStatus::Approved => "verified".to_owned(),
                _ => "failed: the checks did not pass (see the attempt)".to_owned(),
            },
            Err(error) => format!("failed: {error}"),
        },
    };
    // A busy database is retried; a claim left unfinished would be found lost when its lease
    // expires and run again (its attempt ended, so as a new attempt).
    for try_number in 1..=5 {
        let (attempt, claimant, outcome) = (attempt_id.clone(), claimant.clone(), outcome.clone());
        let finished = on_database(context.execution.database(), move |connection| {
            finish_claim(connection, seq, &attempt, &claimant, &outcome)
        })
        .await;
        match finished {
            Ok(true) => {
                context.queue.status_changed();
                return;
            }
            Ok(false) => {
                tracing::warn!(attempt = %attempt_id, "a run ended after its claim was given back to the queue; its outcome stays with its attempt");
                return;
            }
            Err(error) if try_number < 5 => {
                tracing::warn!(attempt = %attempt_id, %error, "could not record how a run ended; trying again");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(error) => {
                tracing::error!(attempt = %attempt_id, %error, "could not record how a run ended; the claim goes back to the queue when its lease expires")
            }
        }
    }
}

/// Reads the confirmed spec, selects its records again from the stored upload and runs them
/// under the claim's attempt, on behalf of whoever pressed Run; the execution service checks
/// that script and snapshot are the ones the request names.
async fn execute_request(
    context: &RunContext,
    request: &RunRequest,
) -> Result<ExecutionOutcome, RunError> {
    let database = context.execution.database();
    let revision = read_revision(database, &request.revision_id)
        .await
        .map_err(RunError::Start)?;
    let spec = stored_spec(database, &revision.spec_hash).await?;
    let (datasets, objects, for_spec) = (
        Arc::clone(&context.datasets),
        context.execution.objects().clone(),
        spec.clone(),
    );
    let prepared = tokio::task::spawn_blocking(move || {
        let digest = for_spec.dataset_content_hash;
        let loaded = datasets.load(&objects, &digest)?;
        Ok::<_, RunError>(prepare_execution(
            &for_spec,
            &loaded.table,
            &digest,
            ImageSize::default(),
        )?)
    })
    .await
    .map_err(ReadError::from)??;
    let key = attempt_key(&request.idempotency_key, request.claims);
    Ok(context
        .execution
        .execute(
            &revision.id,
            &key,
            &spec,
            prepared.script.bytes.clone(),
            Arc::clone(&prepared.snapshot),
            &request.requested_by,
        )
        .await?)
}

/// Why a claimed run ended without an outcome of its own (the attempt's evidence says what it
/// can).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The revision could not be read.
    #[error(transparent)]
    Start(StartRunError),
    /// The spec or the revision could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The stored upload could not be read again.
    #[error("reading the stored upload: {0}")]
    Upload(#[from] FileReadError),
    /// Script and snapshot could not be prepared.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The governed execution failed.
    #[error(transparent)]
    Execute(#[from] ServiceError),
}

/// Gives this process's claims back to the queue as it stops on purpose (see
/// `store::run_queue::release_claims_of`); the runs in flight stop with the process.
pub async fn release_this_process_claims(context: &RunContext) {
    let process = Claimant::of_this_process(0).process;
    let released = on_database(context.execution.database(), move |connection| {
        let transaction = connection.transaction()?;
        let released = release_claims_of(
            &transaction,
            &process,
            "the process running it was stopped (SIGTERM or SIGINT); it runs again as a new attempt",
        )?;
        transaction.commit()?;
        Ok::<_, RepositoryError>(released)
    })
    .await;
    match released {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "runs in progress given back to the queue"),
        Err(error) => {
            tracing::error!(%error, "could not give this process's runs back to the queue; they go back when their leases expire")
        }
    }
}
