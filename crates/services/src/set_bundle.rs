//! A figure set's evidence bundle: each Verified or Approved figure's own evidence bundle
//! (exactly as its revision page downloads it), and the set manifest naming them, signed with
//! the installation's key (`evidence::set_bundle`). Figures not yet Verified are named in the
//! manifest as without evidence.

use super::{
    bundle::{build_bundle, read_bundle_inputs, ExportError},
    installation_key::InstallationKey,
};
use adamviz_evidence::{
    bundle_format::ManifestKey,
    set_bundle::{build, FigureBundle, SetManifest, SET_BUNDLE_FORMAT},
};
use adamviz_store::{
    db::Database, figure_sets::StoredSet, objects::ObjectStore, repository::get_revision,
};

/// The set bundle of `set` as zip bytes, signed with `key`. Each figure's records are read
/// under a pooled connection released at once; the artifacts and archives are made without one.
pub async fn export_set_for_download(
    database: &Database,
    objects: &ObjectStore,
    key: Option<&InstallationKey>,
    set: &StoredSet,
) -> Result<Vec<u8>, ExportError> {
    let key = key.cloned().ok_or(ExportError::NoKey)?;
    let mut inputs = Vec::new();
    let mut without_evidence = Vec::new();
    for (parameter, id) in &set.members {
        let revision = id.clone();
        let read = database
            .call(move |connection| {
                let status = get_revision(connection, &revision)?
                    .map(|r| r.status.as_str().to_owned())
                    .ok_or_else(|| ExportError::NoRevision(revision.clone()))?;
                match read_bundle_inputs(connection, &revision) {
                    Ok(inputs) => Ok(Some((status, inputs))),
                    Err(ExportError::NotVerified(_)) => Ok(None),
                    Err(error) => Err(error),
                }
            })
            .await?;
        match read {
            Some((status, read)) => inputs.push((parameter.clone(), status, read)),
            None => without_evidence.push((parameter.clone(), id.to_string())),
        }
    }
    let manifest = SetManifest {
        format: SET_BUNDLE_FORMAT.to_owned(),
        set_id: set.id.to_string(),
        dataset_sha256: set.dataset_hash.clone(),
        question: set.question.clone(),
        created_by: set.created_by_name.clone(),
        created_at: set.created_at.clone(),
        figures: Vec::new(),
        without_evidence,
        adamviz_version: env!("CARGO_PKG_VERSION").to_owned(),
        signing_key: ManifestKey {
            public_key: key.public_hex(),
            fingerprint: key.fingerprint(),
        },
    };
    let objects = objects.clone();
    tokio::task::spawn_blocking(move || {
        let mut figures = Vec::with_capacity(inputs.len());
        for (parameter, status, read) in inputs {
            let evidence_head = read
                .records
                .last()
                .map(|r| r.record_hash.clone())
                .unwrap_or_default();
            figures.push(FigureBundle {
                parameter,
                revision_id: read.id.to_string(),
                status,
                evidence_head,
                bytes: build_bundle(&read, &objects, &key)?,
            });
        }
        Ok(build(manifest, figures, |kind, payload| {
            key.sign(kind, payload)
        })?)
    })
    .await?
}
