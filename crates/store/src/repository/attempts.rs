//! Attempts of governed execution: started (idempotent per key), failed, or completed with
//! their bundle accepted and the revision promoted, each with its records; and the attempts
//! of gone processes reconciled at start.

use super::*;

/// Whether [`start_attempt`] began an attempt or found the one this key already named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartOutcome {
    /// A new active attempt.
    Started(Attempt),
    /// The same key and inputs: the existing attempt.
    Existing(Attempt),
}

/// The facts every evidence record of `attempt` repeats.
fn attempt_facts(
    connection: &impl Sql,
    attempt: &Attempt,
    actor: &Actor,
) -> Result<AttemptFacts, RepositoryError> {
    let revision = get_revision(connection, &attempt.revision_id)?
        .ok_or_else(|| RepositoryError::NoRevision(attempt.revision_id.clone()))?;
    let request_hash = revision
        .request_hash
        .and_then(|hash| Sha256Digest::try_from(hash).ok())
        .ok_or_else(|| RepositoryError::DraftWithoutRequest(revision.id.clone()))?;
    let fingerprint = Sha256Digest::try_from(attempt.fingerprint.clone())
        .map_err(|_| RepositoryError::NoAttempt(attempt.id.clone()))?;
    Ok(AttemptFacts {
        revision_id: attempt.revision_id.clone(),
        attempt_id: attempt.id.clone(),
        request_hash,
        fingerprint,
        captured_version: attempt.captured_version,
        actor: actor.clone(),
    })
}

/// Starts attempt `attempt_id` (see [`attempt_id_for`]) of a Draft revision, capturing its
/// version, and appends its `execution_attempt` start record. The same key with the same
/// fingerprint returns the existing attempt; with another fingerprint it is refused; so is a
/// second active attempt.
pub fn start_attempt(
    transaction: &impl Sql,
    revision_id: &RevisionId,
    attempt_id: &AttemptId,
    fingerprint: &Sha256Digest,
    lease: &AttemptLease,
    actor: &Actor,
) -> Result<StartOutcome, RepositoryError> {
    if let Some(existing) = get_attempt(transaction, attempt_id)? {
        if existing.fingerprint == fingerprint.to_hex() && existing.revision_id == *revision_id {
            return Ok(StartOutcome::Existing(existing));
        }
        return Err(RepositoryError::KeyReusedWithOtherInputs {
            attempt: attempt_id.to_owned(),
            existing: existing.fingerprint,
            offered: fingerprint.to_hex(),
        });
    }
    let revision = get_revision(transaction, revision_id)?
        .ok_or_else(|| RepositoryError::NoRevision(revision_id.to_owned()))?;
    if revision.status != RevisionStatus::Draft {
        return Err(RepositoryError::NotDraft {
            revision: revision_id.to_owned(),
            status: revision.status,
        });
    }
    let active: Option<AttemptId> = transaction
        .query_opt(
            "SELECT id FROM attempts WHERE revision_id = ?1 AND state = 'active'",
            sql_params![revision_id.as_str()],
        )?
        .map(|row| id_at(&row, 0))
        .transpose()?;
    if let Some(attempt) = active {
        return Err(RepositoryError::AnotherActiveAttempt {
            revision: revision_id.to_owned(),
            attempt,
        });
    }
    let now = utc_now();
    let request_hash = revision
        .request_hash
        .as_ref()
        .and_then(|hash| Sha256Digest::try_from(hash.clone()).ok())
        .ok_or_else(|| RepositoryError::DraftWithoutRequest(revision.id.clone()))?;
    let facts = AttemptFacts {
        revision_id: revision_id.to_owned(),
        attempt_id: attempt_id.to_owned(),
        request_hash,
        fingerprint: *fingerprint,
        captured_version: revision.version,
        actor: actor.clone(),
    };
    // The record first: the database admits the row only when its record is there.
    append_evidence(
        transaction,
        ExecutionAttemptRecord::new(facts, AttemptEvent::Started, None, None, now.clone()),
    )?;
    transaction.execute(
        "INSERT INTO attempts (id, revision_id, fingerprint, captured_version, state, started_at,
                               owner, lease_until)
         VALUES (?1, ?2, ?3, ?4, 'active', ?5, ?6, ?7)",
        sql_params![
            attempt_id.as_str(),
            revision_id.as_str(),
            fingerprint.to_hex(),
            revision.version,
            now,
            &lease.owner,
            &lease.until
        ],
    )?;
    let attempt = get_attempt(transaction, attempt_id)?
        .ok_or_else(|| RepositoryError::NoAttempt(attempt_id.to_owned()))?;
    Ok(StartOutcome::Started(attempt))
}

/// Ends an active attempt as failed, with `reason` (and the verification, when one was made),
/// and appends its `execution_attempt` failure record; the revision stays as it is
/// (retryable).
pub fn fail_attempt(
    transaction: &impl Sql,
    attempt_id: &AttemptId,
    reason: &str,
    verification_hash: Option<Sha256Digest>,
    actor: &Actor,
) -> Result<(), RepositoryError> {
    let now = utc_now();
    let attempt = get_attempt(transaction, attempt_id)?
        .ok_or_else(|| RepositoryError::NoAttempt(attempt_id.to_owned()))?;
    if attempt.state != "active" {
        return Err(RepositoryError::AttemptNotActive(attempt_id.to_owned()));
    }
    let facts = attempt_facts(transaction, &attempt, actor)?;
    // The record first: the database admits the change only when its record is there.
    append_evidence(
        transaction,
        ExecutionAttemptRecord::new(
            facts,
            AttemptEvent::Failed,
            verification_hash,
            Some(reason.to_owned()),
            now.clone(),
        ),
    )?;
    let changed = transaction.execute(
        "UPDATE attempts SET state = 'failed', reason = ?2, ended_at = ?3
         WHERE id = ?1 AND state = 'active'",
        sql_params![attempt_id.as_str(), reason, now],
    )?;
    if changed == 0 {
        return Err(RepositoryError::AttemptNotActive(attempt_id.to_owned()));
    }
    Ok(())
}

/// What a completion recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completed {
    /// The revision, now Verified.
    pub revision: Revision,
    /// The `artifact_bundle` record.
    pub bundle_hash: Sha256Digest,
    /// The `revision_lifecycle` promotion record.
    pub lifecycle_hash: Sha256Digest,
}

/// Re-reads every artifact of `bundle` from the store (re-hashing it) and checks its size.
fn check_artifacts(objects: &ObjectStore, bundle: &BundleToAccept) -> Result<(), RepositoryError> {
    for artifact in bundle.artifacts.all() {
        let bytes = objects
            .get(&artifact.sha256)
            .map_err(|source| RepositoryError::Artifact {
                name: artifact.name.clone(),
                source,
            })?;
        if bytes.len() as u64 != artifact.size {
            return Err(RepositoryError::ArtifactSize {
                name: artifact.name.clone(),
                offered: artifact.size,
                actual: bytes.len() as u64,
            });
        }
    }
    Ok(())
}

/// In the caller's transaction: re-checks the bundle's bytes in the store, accepts the bundle
/// (its `artifact_bundle` record and row), ends the attempt as succeeded (row and record) and
/// promotes the revision to Verified at the captured version (lifecycle record, then the row;
/// refused if the revision moved on). The triggers refuse each row change whose record is
/// missing.
pub fn complete_verified(
    transaction: &impl Sql,
    objects: &ObjectStore,
    attempt_id: &AttemptId,
    bundle: &BundleToAccept,
    actor: &Actor,
) -> Result<Completed, RepositoryError> {
    let (attempt, revision) = active_attempt(transaction, attempt_id)?;
    check_artifacts(objects, bundle)?;
    let now = utc_now();
    let bundle_hash = accept_bundle(transaction, &revision.id, attempt_id, bundle, &now)?;
    let facts = attempt_facts(transaction, &attempt, actor)?;
    append_evidence(
        transaction,
        ExecutionAttemptRecord::new(
            facts,
            AttemptEvent::Succeeded,
            Some(bundle.verification_hash),
            None,
            now.clone(),
        ),
    )?;
    transaction.execute(
        "UPDATE attempts SET state = 'succeeded', ended_at = ?2 WHERE id = ?1 AND state = 'active'",
        sql_params![attempt_id.as_str(), &now],
    )?;
    let basis = PromotionBasis {
        attempt_id: attempt_id.to_owned(),
        bundle_hash,
        verification_hash: bundle.verification_hash,
    };
    let lifecycle_hash = promote(transaction, &revision, &attempt, bundle, basis, now, actor)?;
    let revision = get_revision(transaction, &revision.id)?
        .ok_or_else(|| RepositoryError::NoRevision(revision.id))?;
    Ok(Completed {
        revision,
        bundle_hash,
        lifecycle_hash,
    })
}

/// Attempt `attempt_id`, still active, and its revision, still at the version it captured.
fn active_attempt(
    transaction: &impl Sql,
    attempt_id: &AttemptId,
) -> Result<(Attempt, Revision), RepositoryError> {
    let attempt = get_attempt(transaction, attempt_id)?
        .ok_or_else(|| RepositoryError::NoAttempt(attempt_id.to_owned()))?;
    if attempt.state != "active" {
        return Err(RepositoryError::AttemptNotActive(attempt_id.to_owned()));
    }
    let revision = get_revision(transaction, &attempt.revision_id)?
        .ok_or_else(|| RepositoryError::NoRevision(attempt.revision_id.clone()))?;
    if revision.version != attempt.captured_version {
        return Err(RepositoryError::StaleVersion {
            revision: revision.id,
            captured: attempt.captured_version,
            actual: revision.version,
        });
    }
    Ok((attempt, revision))
}

/// Accepts `bundle` for revision `revision_id`: its `artifact_bundle` record, then its row.
/// The record's hash.
fn accept_bundle(
    transaction: &impl Sql,
    revision_id: &RevisionId,
    attempt_id: &AttemptId,
    bundle: &BundleToAccept,
    now: &str,
) -> Result<Sha256Digest, RepositoryError> {
    let record = append_evidence(
        transaction,
        ArtifactBundleRecord::new(
            revision_id.clone(),
            attempt_id.to_owned(),
            bundle,
            now.to_owned(),
        ),
    )?;
    let bundle_hash = *record.record_hash();
    let artifacts = &bundle.artifacts;
    transaction.execute(
        "INSERT INTO artifact_bundles (revision_id, attempt_id, script_hash, png_hash,
                                       statistics_hash, environment_hash, snapshot_id,
                                       verification_hash, record_hash, accepted_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        sql_params![
            revision_id.as_str(),
            attempt_id.as_str(),
            artifacts.script.sha256.to_hex(),
            artifacts.plot.sha256.to_hex(),
            artifacts.statistics.sha256.to_hex(),
            artifacts.environment.sha256.to_hex(),
            artifacts.snapshot.sha256.to_hex(),
            bundle.verification_hash.to_hex(),
            bundle_hash.to_hex(),
            now
        ],
    )?;
    Ok(bundle_hash)
}

/// Promotes `revision` to Verified at the version `attempt` captured, on `basis`: the lifecycle
/// record, then the row (refused if the revision moved on). The record's hash.
fn promote(
    transaction: &impl Sql,
    revision: &Revision,
    attempt: &Attempt,
    bundle: &BundleToAccept,
    basis: PromotionBasis,
    now: String,
    actor: &Actor,
) -> Result<Sha256Digest, RepositoryError> {
    let spec_hash = Sha256Digest::try_from(revision.spec_hash.clone())
        .map_err(|_| RepositoryError::NoRevision(revision.id.clone()))?;
    let lifecycle = append_evidence(
        transaction,
        RevisionLifecycleRecord::verified(
            revision.id.clone(),
            attempt.captured_version + 1,
            spec_hash,
            basis,
            now,
            actor.clone(),
        ),
    )?;
    let promoted = transaction.execute(
        "UPDATE revisions SET status = 'verified', version = version + 1,
                pending_image_hash = ?3, pending_analytical_hash = ?4
         WHERE id = ?1 AND version = ?2 AND status = 'draft'",
        sql_params![
            revision.id.as_str(),
            attempt.captured_version,
            bundle.artifacts.plot.sha256.to_hex(),
            bundle.analytical_hash.to_hex()
        ],
    )?;
    if promoted == 0 {
        let now = get_revision(transaction, &revision.id)?
            .ok_or_else(|| RepositoryError::NoRevision(revision.id.clone()))?;
        return Err(RepositoryError::StaleVersion {
            revision: revision.id.clone(),
            captured: attempt.captured_version,
            actual: now.version,
        });
    }
    Ok(*lifecycle.record_hash())
}

/// The reason recorded for attempts reconciled at start.
pub const RECONCILED_AT_START: &str =
    "the process running this attempt is gone (or its lease expired) before it ended; reconciled at start";

/// Who holds a new attempt, and until when (see `store::owner`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptLease {
    /// The owning process (`ProcessIdentity::to_column`).
    pub owner: String,
    /// RFC 3339 UTC end of the lease.
    pub until: String,
}

impl AttemptLease {
    /// This process, for `duration` from now.
    pub fn of_this_process(duration: std::time::Duration) -> Self {
        // The same format as `utc_now`, so that the two compare as text.
        let until = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now() + duration);
        Self {
            owner: crate::owner::ProcessIdentity::current().to_column(),
            until: until.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
        }
    }
}

/// Marks every active attempt whose owner is gone (or, for an owner that cannot be checked,
/// whose lease has expired) as failed with `reason`, each with its failure record; returns
/// their ids. Their revisions stay as they were, so they can be retried. Attempts of a live
/// process sharing the data directory are left alone.
pub fn reconcile_active_attempts(
    transaction: &impl Sql,
    reason: &str,
) -> Result<Vec<AttemptId>, RepositoryError> {
    let now = utc_now();
    let mut ids: Vec<AttemptId> = Vec::new();
    for row in transaction.query(
        "SELECT id, owner, lease_until FROM attempts WHERE state = 'active'
         ORDER BY started_at, id",
        &[],
    )? {
        let (owner, lease): (Option<String>, Option<String>) = (row.get(1)?, row.get(2)?);
        if crate::owner::is_abandoned(owner.as_deref(), lease.as_deref(), &now) {
            ids.push(id_at(&row, 0)?);
        }
    }
    for id in &ids {
        fail_attempt(transaction, id, reason, None, &Actor::system())?;
    }
    Ok(ids)
}
