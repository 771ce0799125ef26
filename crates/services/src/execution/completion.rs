//! What a passing run's completion records say: the bundle's artifacts stored, the
//! completion's facts (hashes, environment, statistics), and the revision context appended
//! with them.

use super::{
    append_evidence, canonical_hash, complete_verified, crash_point, fail_attempt, get_revision,
    get_revision_inputs, utc_now, Actor, ArtifactRef, AttemptId, BundleArtifacts, BundleToAccept,
    ContextColumn, ContextParts, ContextSnapshot, ExecutionRequest, ExecutionService,
    ExecutionVerificationRecord, ObjectStore, PlotSpec, PrepareError, RepositoryError, Revision,
    RevisionContextRecord, RevisionId, RunResult, ServiceError, Sha256Digest, Snapshot,
    ARTIFACT_LIMIT,
};

/// What a passing attempt's completion needs, gathered before its transaction.
pub(super) struct Completion {
    pub(super) artifacts: BundleArtifacts,
    pub(super) analytical_hash: Sha256Digest,
    pub(super) environment_fingerprint: Sha256Digest,
    pub(super) result_json: serde_json::Value,
    pub(super) spec_json: serde_json::Value,
    pub(super) snapshot: ContextSnapshot,
    pub(super) request: ExecutionRequest,
}

impl Completion {
    /// Gathers what the completion transaction needs from a passing run.
    pub(super) fn of(
        result: &RunResult,
        spec: &PlotSpec,
        snapshot: &Snapshot,
        request: &ExecutionRequest,
        artifacts: BundleArtifacts,
    ) -> Result<Self, ServiceError> {
        Ok(Self {
            analytical_hash: result
                .analytical_hash
                .ok_or(ServiceError::MissingOutput("analytical hash"))?,
            environment_fingerprint: result
                .environment_fingerprint
                .ok_or(ServiceError::MissingOutput("environment fingerprint"))?,
            result_json: serde_json::to_value(result)?,
            spec_json: serde_json::from_slice(
                &spec
                    .canonical_json()
                    .map_err(|e| PrepareError::Compile(e.into()))?,
            )?,
            snapshot: context_snapshot(snapshot, request),
            request: request.clone(),
            artifacts,
        })
    }
}

/// In `transaction`: accepts the bundle, ends the attempt as succeeded, promotes the revision
/// and appends its `revision_context`; returns the context's hash.
pub(super) fn complete_with_context(
    transaction: &adamviz_store::db::Transaction<'_>,
    objects: &ObjectStore,
    revision_id: &RevisionId,
    attempt_id: &AttemptId,
    completion: Completion,
    verification_hash: Sha256Digest,
    actor: &Actor,
) -> Result<Sha256Digest, ServiceError> {
    let inputs = get_revision_inputs(transaction, revision_id)?
        .ok_or_else(|| ServiceError::NoInputs(revision_id.clone()))?;
    let bundle = BundleToAccept {
        artifacts: completion.artifacts.clone(),
        analytical_hash: completion.analytical_hash,
        snapshot_hash: completion.request.snapshot_hash,
        verification_hash,
    };
    let completed = complete_verified(transaction, objects, attempt_id, &bundle, actor)?;
    let result_hash = canonical_hash(&completion.result_json)?;
    let context = RevisionContextRecord::new(
        ContextParts {
            revision_id,
            attempt_id,
            spec: (&completion.spec_json, completion.request.spec_hash),
            inputs: &inputs,
            snapshot: completion.snapshot,
            request: &completion.request,
            result: (completion.result_json, result_hash),
            artifacts: &completion.artifacts,
            analytical_hash: completion.analytical_hash,
            environment_fingerprint: completion.environment_fingerprint,
            verification_hash,
            bundle_hash: completed.bundle_hash,
            actor: actor.clone(),
            adamviz_source: crate::provenance::this_build(),
        },
        utc_now(),
    )?;
    Ok(*append_evidence(transaction, context)?.record_hash())
}

/// Stores the run's outputs and re-reads (re-hashing) the stored snapshot object; returns
/// the bundle's artifacts.
pub(super) fn store_outputs(
    objects: &ObjectStore,
    result: &RunResult,
    script: ArtifactRef,
    snapshot_id: &Sha256Digest,
) -> Result<BundleArtifacts, ServiceError> {
    let stored = |name: &'static str| -> Result<ArtifactRef, ServiceError> {
        let output = result
            .output(name)
            .ok_or(ServiceError::MissingOutput(name))?;
        let object = objects.put(&output.bytes, ARTIFACT_LIMIT)?;
        Ok(ArtifactRef {
            name: name.to_owned(),
            sha256: object.digest,
            size: object.size,
        })
    };
    let plot = stored("plot.png")?;
    let statistics = stored("statistics.json")?;
    let environment = stored("environment.json")?;
    let pdf = stored("plot.pdf")?;
    let svg = stored("plot.svg")?;
    let statistics_csv = stored("statistics.csv")?;
    let snapshot_size = objects.get(snapshot_id)?.len() as u64;
    Ok(BundleArtifacts {
        script,
        plot,
        statistics,
        environment,
        snapshot: ArtifactRef {
            name: "snapshot.csv".to_owned(),
            sha256: *snapshot_id,
            size: snapshot_size,
        },
        pdf: Some(pdf),
        svg: Some(svg),
        statistics_csv: Some(statistics_csv),
    })
}

/// The context's description of the selected records.
pub(super) fn context_snapshot(snapshot: &Snapshot, request: &ExecutionRequest) -> ContextSnapshot {
    ContextSnapshot {
        snapshot_id: request.snapshot_id,
        snapshot_hash: request.snapshot_hash,
        row_count: snapshot.rows.len() as u64,
        columns: snapshot
            .columns
            .iter()
            .map(|column| ContextColumn {
                name: column.name.clone(),
                class: column.class.as_str().to_owned(),
                role: column.role.to_owned(),
            })
            .collect(),
    }
}

impl ExecutionService {
    /// Appends the verdict and ends the attempt: with `completion`, accepts the bundle,
    /// promotes the revision and appends its context; without, fails the attempt with
    /// `failure_reason`. If the repository refuses the completion, the verdict is appended
    /// again on its own and the attempt fails naming it.
    pub(super) async fn record_outcome(
        &self,
        revision_id: &RevisionId,
        attempt_id: &AttemptId,
        verification_record: ExecutionVerificationRecord,
        completion: Option<Completion>,
        failure_reason: String,
        actor: &Actor,
    ) -> Result<(Revision, Option<Sha256Digest>), ServiceError> {
        let actor = actor.clone();
        let objects = self.objects.clone();
        let (rev, att) = (revision_id.clone(), attempt_id.clone());
        self.database
            .call(move |connection| {
                let transaction = connection.transaction()?;
                let kept_verification = verification_record.clone();
                let ended = (|| -> Result<Option<Sha256Digest>, ServiceError> {
                    let sealed = append_evidence(&transaction, verification_record)?;
                    let verification_hash = *sealed.record_hash();
                    match completion {
                        None => {
                            fail_attempt(
                                &transaction,
                                &att,
                                &failure_reason,
                                Some(verification_hash),
                                &actor,
                            )?;
                            Ok(None)
                        }
                        Some(completion) => complete_with_context(
                            &transaction,
                            &objects,
                            &rev,
                            &att,
                            completion,
                            verification_hash,
                            &actor,
                        )
                        .map(Some),
                    }
                })();
                let context_hash = match ended {
                    Ok(hash) => hash,
                    Err(error) => {
                        // Nothing of the completion is kept, but the verdict is: the
                        // verification record is appended again on its own, and the attempt
                        // ends, failed, naming it, so the revision stays retryable.
                        drop(transaction);
                        let transaction = connection.transaction()?;
                        let verification = append_evidence(&transaction, kept_verification)?;
                        fail_attempt(
                            &transaction,
                            &att,
                            &format!("completion refused: {error}"),
                            Some(*verification.record_hash()),
                            &actor,
                        )?;
                        transaction.commit()?;
                        return Err(error);
                    }
                };
                crash_point("before_completion_commit");
                transaction.commit()?;
                crash_point("after_completion_commit");
                let revision = get_revision(connection, &rev)?
                    .ok_or_else(|| RepositoryError::NoRevision(rev.clone()))?;
                Ok::<_, ServiceError>((revision, context_hash))
            })
            .await
    }
}
