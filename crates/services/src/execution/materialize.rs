//! Materializing a confirmed spec as a revision: snapshot, compiled script and profile (CPU
//! work, off the executor), the objects stored, then the upload, spec and revision rows with
//! the execution request and the creation record in one transaction.

use super::{
    append_evidence, create_revision, insert_spec, insert_upload, new_revision_id,
    prepare_execution, profile_table, report_text, utc_now, write_csv, Actor, Arc, DatabaseError,
    ExecutionRequest, ExecutionService, ImageSize, Materialized, NewRevision, ObjectStore,
    ObjectStoreError, PlotSpec, PrepareError, PreparedExecution, ReportFacts, Revision, RevisionId,
    RevisionInputs, ServiceError, Sha256Digest, SourceMetadata, Table, UploadInfo, YScale,
    ARTIFACT_LIMIT,
};

impl ExecutionService {
    /// Compiles `spec` for `table`, stores the script and the snapshot CSV, and creates the
    /// revision with its execution request (fixed scales) in one transaction.
    ///
    /// The upload's bytes must be in the object store already (the upload path stores them
    /// before parsing): no revision is made from a dataset whose raw bytes were not kept.
    pub async fn materialize(
        &self,
        spec: &PlotSpec,
        table: Arc<Table>,
        upload: &UploadInfo,
        actor: &Actor,
    ) -> Result<Materialized, ServiceError> {
        self.materialize_revising(spec, table, upload, actor, None)
            .await
    }

    /// [`ExecutionService::materialize`] of a revision that revises `parent` (its creation
    /// record and row name it; a revision of nothing when `None`).
    pub async fn materialize_revising(
        &self,
        spec: &PlotSpec,
        table: Arc<Table>,
        upload: &UploadInfo,
        actor: &Actor,
        parent: Option<RevisionId>,
    ) -> Result<Materialized, ServiceError> {
        let actor = actor.clone();
        // Snapshot, compilation, profile and CSV are CPU work: kept off the async executor.
        let (prepared, inputs, csv) = {
            let (spec, upload, objects) = (spec.clone(), upload.clone(), self.objects.clone());
            tokio::task::spawn_blocking(move || prepare_revision(&objects, &spec, &table, &upload))
                .await
                .map_err(ServiceError::Task)??
        };
        let objects = self.objects.clone();
        let script = prepared.script.bytes.clone();
        let (snapshot_id, _) = tokio::task::spawn_blocking(move || {
            let snapshot = objects.put(&csv, ARTIFACT_LIMIT)?;
            let script = objects.put(&script, ARTIFACT_LIMIT)?;
            Ok::<_, ObjectStoreError>((snapshot.digest, script.digest))
        })
        .await
        .map_err(DatabaseError::Task)??;
        let rows = RevisionRows {
            canonical_spec: spec
                .canonical_json()
                .map_err(|e| PrepareError::Compile(e.into()))?,
            upload: upload.clone(),
            spec: spec.clone(),
            free_scale: spec.y_scale == YScale::Free,
            spec_hash: prepared.script.spec_hash,
            script_hash: prepared.script.script_hash,
            snapshot_id,
            snapshot_hash: prepared.snapshot_hash,
            image: prepared.image,
            inputs,
            actor,
            parent,
        };
        let revision = self
            .database
            .call(move |connection| {
                let transaction = connection.transaction()?;
                let revision = record_revision(&transaction, rows)?;
                transaction.commit()?;
                Ok::<_, ServiceError>(revision)
            })
            .await?;
        Ok(Materialized { revision, prepared })
    }
}

/// The CPU part of materializing (run on a blocking thread): the upload's bytes checked to be
/// in the store, the snapshot and script, the revision's inputs (source metadata and profile
/// warnings) and the snapshot CSV.
fn prepare_revision(
    objects: &ObjectStore,
    spec: &PlotSpec,
    table: &Table,
    upload: &UploadInfo,
) -> Result<(PreparedExecution, RevisionInputs, Vec<u8>), ServiceError> {
    if objects.size_of(&upload.content_hash)? != Some(upload.size) {
        return Err(ServiceError::UploadNotStored(upload.content_hash));
    }
    let prepared = prepare_execution(spec, table, &upload.content_hash, ImageSize::default())?;
    let inputs = RevisionInputs {
        source: SourceMetadata {
            content_hash: upload.content_hash,
            file_name: upload.file_name.clone(),
            classification: upload.classification.clone(),
            size: upload.size,
            format: table.source_format.as_str().to_owned(),
            dataset_name: table.dataset_name.clone(),
            dataset_label: table.dataset_label.clone(),
            row_count: table.row_count as u64,
            column_count: table.columns.len() as u64,
        },
        profile_warnings: profile_table(table, upload.content_hash, spec.low_n.threshold).warnings,
    };
    let mut csv = Vec::new();
    write_csv(&prepared.snapshot, &mut csv).map_err(|source| ObjectStoreError::Io {
        path: "snapshot.csv".into(),
        source,
    })?;
    Ok((prepared, inputs, csv))
}

/// What a new revision's rows and creation records hold.
struct RevisionRows {
    canonical_spec: Vec<u8>,
    upload: UploadInfo,
    spec: PlotSpec,
    free_scale: bool,
    spec_hash: Sha256Digest,
    script_hash: Sha256Digest,
    snapshot_id: Sha256Digest,
    snapshot_hash: Sha256Digest,
    image: ImageSize,
    inputs: RevisionInputs,
    actor: Actor,
    parent: Option<RevisionId>,
}

/// In `transaction`: the upload and spec rows (kept if already there), the execution request
/// (not for free y-scales, which never run), and the revision with its creation record.
fn record_revision(
    transaction: &adamviz_store::db::Transaction<'_>,
    rows: RevisionRows,
) -> Result<Revision, ServiceError> {
    let upload = &rows.upload;
    insert_upload(
        transaction,
        &upload.content_hash,
        &upload.classification,
        &upload.file_name,
        upload.size,
    )?;
    insert_spec(
        transaction,
        &rows.spec_hash,
        &upload.content_hash,
        &rows.canonical_spec,
    )?;
    let id = new_revision_id();
    let request_hash = if rows.free_scale {
        None
    } else {
        let report = report_text(
            &rows.spec,
            ReportFacts {
                dataset_name: &upload.file_name,
                dataset_hash: &upload.content_hash,
                script_hash: &rows.script_hash,
                revision_id: id.as_str(),
                parent: rows.parent.as_ref().map(|p| p.as_str()),
            },
        );
        let request = ExecutionRequest::new(
            id.clone(),
            rows.spec_hash,
            rows.script_hash,
            rows.snapshot_id,
            rows.snapshot_hash,
            rows.image,
            report,
            utc_now(),
            rows.actor.clone(),
            crate::provenance::this_build(),
        );
        Some(*append_evidence(transaction, request)?.record_hash())
    };
    Ok(create_revision(
        transaction,
        &NewRevision {
            id,
            spec_hash: rows.spec_hash,
            free_scale: rows.free_scale,
            script_hash: rows.script_hash,
            snapshot_id: rows.snapshot_id,
            snapshot_hash: rows.snapshot_hash,
            request_hash,
            inputs: rows.inputs,
            actor: rows.actor,
            parent: rows.parent,
        },
    )?)
}
