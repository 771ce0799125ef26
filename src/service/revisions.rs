//! Revisions as the pages show them: the list (question, title, author from the revision's
//! first lifecycle record), and one revision with its run status, checks, statistics, script,
//! artifacts, environment and evidence records in ledger order. Every artifact is read back
//! from the object store re-hashed.

use std::sync::Arc;

use super::{
    datasets::DatasetCache,
    drafts,
    runs::{on_database, run_status, stored_spec, RunBoard},
};
use crate::{
    domain::{
        account::{Account, Role},
        digest::Sha256Digest,
        ids::RevisionId,
        revision::{
            ArtifactView, CheckView, EvidenceView, ReviewState, RevisionDetail, RevisionStatus,
        },
        statistics::CellStatistics,
    },
    evidence::summary::record_summary,
    service::{
        approvals::{is_author, signature_view, signing_locked_until},
        reproduction::reproduction_view,
    },
    store::{
        db::{Connection, Database, DbError},
        ledger::records_about,
        objects::ObjectStore,
        repository::{get_revision, RevisionStatus as StoredStatus},
        revision_views::{dataset_of_spec, lineage, revision_summary, signing_attempts},
    },
};

/// Revision `id` as stored, if it exists (the run-status stream, the Revise form's parent).
pub fn find_revision(
    connection: &Connection,
    id: &RevisionId,
) -> Result<Option<crate::store::repository::Revision>, crate::store::repository::RepositoryError> {
    crate::store::repository::get_revision(connection, id)
}

pub use crate::store::revision_views::list_revisions;

/// What the revision page reads from.
#[derive(Clone)]
pub struct RevisionSources {
    /// The database.
    pub database: Database,
    /// The object store.
    pub objects: ObjectStore,
    /// The runs in progress.
    pub board: Arc<RunBoard>,
    /// The datasets read (for the preview of a revision not yet Verified).
    pub datasets: Arc<DatasetCache>,
}

/// Revision `id` as `viewer` sees its page; `None` when there is none.
pub async fn revision_detail(
    sources: &RevisionSources,
    id: &RevisionId,
    viewer: &Account,
) -> Result<Option<RevisionDetail>, String> {
    let may_run = viewer.has(Role::Author);
    let key = id.clone();
    let viewer_id = viewer.id;
    let found = on_database(&sources.database, move |connection| {
        let error = |e: DbError| e.to_string();
        let revision = get_revision(connection, &key).map_err(|e| e.to_string())?;
        let summary = revision_summary(connection, &key).map_err(error)?;
        let records = records_about(connection, &key).map_err(error)?;
        let lineage = lineage(connection, &key).map_err(error)?;
        let locked = signing_locked_until(connection, viewer_id, crate::service::accounts::now())
            .map_err(error)?;
        let attempts = signing_attempts(connection, &key).map_err(error)?;
        Ok(revision
            .zip(summary)
            .map(|(r, s)| (r, s, records, lineage, locked, attempts)))
    })
    .await?;
    let Some((revision, summary, records, (parent, children), locked, signing_attempts)) = found
    else {
        return Ok(None);
    };
    let evidence_head = records
        .last()
        .map(|r| r.record_hash.clone())
        .unwrap_or_default();
    let run = run_status(&sources.database, &sources.board, &revision).await?;
    let spec = stored_spec(&sources.database, &revision.spec_hash).await?;
    let evidence: Vec<(EvidenceView, serde_json::Value)> = records
        .into_iter()
        .map(|stored| {
            let value: serde_json::Value =
                serde_json::from_slice(&stored.record).unwrap_or_default();
            let view = EvidenceView {
                seq: stored.seq,
                kind: stored.kind,
                summary: record_summary(&value),
                record_hash: stored.record_hash,
                canonical_json: String::from_utf8_lossy(&stored.record).into_owned(),
            };
            (view, value)
        })
        .collect();
    let signatures = evidence
        .iter()
        .filter(|(view, _)| view.kind == "approval")
        .filter_map(|(_, value)| signature_view(value))
        .collect();
    let reproductions = evidence
        .iter()
        .filter(|(view, _)| view.kind == "reproduction")
        .filter_map(|(_, value)| reproduction_view(value))
        .collect();
    let author = evidence
        .iter()
        .find(|(view, value)| view.kind == "revision_lifecycle" && value["event"] == "created")
        .map(|(_, value)| {
            (
                value["actor"]["account_id"].as_i64(),
                value["actor"]["account_name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        });
    let own = author.is_some_and(|author| is_author(viewer, &author));
    let review = review_state(viewer, summary.status, own, locked, evidence_head);
    let answers = drafts::answers_of(&spec);
    let checks = evidence
        .iter()
        .rev()
        .find(|(view, _)| view.kind == "execution_verification")
        .map(|(_, value)| checks_of(value))
        .unwrap_or_default();
    let bundle = evidence
        .iter()
        .rev()
        .find(|(view, _)| view.kind == "artifact_bundle")
        .map(|(_, value)| value["artifacts"].clone());
    let verified = matches!(
        revision.status,
        StoredStatus::Verified | StoredStatus::Approved
    );
    let objects = sources.objects.clone();
    let datasets = Arc::clone(&sources.datasets);
    let (script_hash, snapshot_id) = (revision.script_hash.clone(), revision.snapshot_id.clone());
    let status = summary.status;
    let (artifacts, script, statistics, environment, preview) =
        tokio::task::spawn_blocking(move || {
            let read = |hash: &str| -> Result<Vec<u8>, String> {
                let digest = Sha256Digest::try_from(hash.to_owned()).map_err(|e| e.to_string())?;
                objects.get(&digest).map_err(|e| e.to_string())
            };
            let artifacts = match &bundle {
                Some(bundle) => ["script", "snapshot", "statistics", "plot", "environment"]
                    .iter()
                    .filter_map(|role| artifact_of(&bundle[*role]))
                    .collect(),
                None => vec![
                    stored_artifact(&objects, "script.R", &script_hash),
                    stored_artifact(&objects, "snapshot.csv", &snapshot_id),
                ],
            };
            let script = String::from_utf8_lossy(&read(&script_hash)?).into_owned();
            let by_name = |name: &str| artifacts.iter().find(|a: &&ArtifactView| a.name == name);
            let statistics = match by_name("statistics.json") {
                Some(artifact) => cells_of(
                    &serde_json::from_slice(&read(&artifact.sha256)?).map_err(|e| e.to_string())?,
                ),
                None => Vec::new(),
            };
            let environment = match by_name("environment.json") {
                Some(artifact) => {
                    let value: serde_json::Value = serde_json::from_slice(&read(&artifact.sha256)?)
                        .map_err(|e| e.to_string())?;
                    Some(serde_json::to_string_pretty(&value).unwrap_or_default())
                }
                None => None,
            };
            // Until Verified the page shows the preview beside where the plot will be.
            let preview = if verified {
                None
            } else {
                let digest = spec.dataset_content_hash;
                datasets
                    .load(&objects, &digest)
                    .ok()
                    .and_then(|loaded| drafts::preview(&spec, &loaded.table).ok())
            };
            Ok::<_, String>((artifacts, script, statistics, environment, preview))
        })
        .await
        .map_err(|e| e.to_string())??;
    Ok(Some(RevisionDetail {
        dataset_hash: {
            let spec_hash = summary.spec_hash.clone();
            on_database(&sources.database, move |connection| {
                dataset_of_spec(connection, &spec_hash).map_err(|e| e.to_string())
            })
            .await?
        },
        can_run: may_run && status == RevisionStatus::Draft && !run.is_moving(),
        summary,
        run,
        preview,
        statistics,
        checks,
        script,
        artifacts,
        environment,
        evidence: evidence.into_iter().map(|(view, _)| view).collect(),
        run_key: format!("{:032x}", rand::random::<u128>()),
        signatures,
        reproductions,
        review,
        parent,
        children,
        revise_href: None,
        answers,
        signing_attempts,
    }))
}

/// What `viewer` may do about the review of a revision in `status` (`own`: they made it).
fn review_state(
    viewer: &Account,
    status: RevisionStatus,
    own: bool,
    locked_until: Option<String>,
    evidence_head: String,
) -> ReviewState {
    let reviewer = viewer.has(Role::Reviewer);
    let retained = matches!(status, RevisionStatus::Verified | RevisionStatus::Approved);
    let admin = viewer.has(Role::Admin);
    let sign_note = match (reviewer, status) {
        (true, RevisionStatus::Verified) if admin => Some(
            "Your account also holds the admin role: an account that manages accounts cannot \
             sign (separation of duties). Ask an admin to split the roles."
                .to_owned(),
        ),
        (true, RevisionStatus::Verified) if own => {
            Some("You made this revision: a second person must sign it.".to_owned())
        }
        (true, RevisionStatus::Verified) => locked_until.as_ref().map(|until| {
            format!("Signing is locked for your account until {until} after three wrong passwords.")
        }),
        (true, RevisionStatus::Draft | RevisionStatus::ExperimentalDraft) => {
            Some("Only a Verified revision can be signed.".to_owned())
        }
        _ => None,
    };
    ReviewState {
        can_sign: reviewer
            && !admin
            && status == RevisionStatus::Verified
            && !own
            && locked_until.is_none(),
        sign_note,
        can_reproduce: retained && viewer.has_any(&[Role::Author, Role::Reviewer]),
        evidence_head,
    }
}

fn checks_of(verification: &serde_json::Value) -> Vec<CheckView> {
    verification["checks"]
        .as_array()
        .map(|checks| {
            checks
                .iter()
                .map(|check| CheckView {
                    name: check["name"].as_str().unwrap_or_default().to_owned(),
                    passed: check["outcome"] == "pass",
                    reason: check["reason"].as_str().map(str::to_owned),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn artifact_of(reference: &serde_json::Value) -> Option<ArtifactView> {
    Some(ArtifactView {
        name: reference["name"].as_str()?.to_owned(),
        sha256: reference["sha256"].as_str()?.to_owned(),
        size: reference["size"].as_u64()?,
    })
}

fn stored_artifact(objects: &ObjectStore, name: &str, hash: &str) -> ArtifactView {
    let size = Sha256Digest::try_from(hash.to_owned())
        .ok()
        .and_then(|digest| objects.size_of(&digest).ok().flatten())
        .unwrap_or_default();
    ArtifactView {
        name: name.to_owned(),
        sha256: hash.to_owned(),
        size,
    }
}

/// The cells of R's statistics JSON (numbers R could not give, e.g. the SD of one value, are
/// absent).
fn cells_of(statistics: &serde_json::Value) -> Vec<CellStatistics> {
    let number = |cell: &serde_json::Value, field: &str| cell[field].as_f64();
    let count = |cell: &serde_json::Value, field: &str| cell[field].as_u64().unwrap_or(0) as usize;
    statistics["cells"]
        .as_array()
        .map(|cells| {
            cells
                .iter()
                .map(|cell| CellStatistics {
                    treatment: cell["treatment"].as_str().unwrap_or_default().to_owned(),
                    visit: cell["visit"].as_str().unwrap_or_default().to_owned(),
                    n: count(cell, "n"),
                    n_subjects: count(cell, "n_subjects"),
                    n_missing: count(cell, "n_missing"),
                    mean: number(cell, "mean"),
                    sd: number(cell, "sd"),
                    median: number(cell, "median"),
                    q1: number(cell, "q1"),
                    q3: number(cell, "q3"),
                    min: number(cell, "min"),
                    max: number(cell, "max"),
                    low_n: cell["low_n"].as_bool().unwrap_or(false),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The artifact `name` of revision `id` (script and snapshot always; the outputs once its
/// bundle is accepted), read back re-hashed. `None`: no such revision or artifact.
pub async fn artifact_bytes(
    database: &Database,
    objects: &ObjectStore,
    id: &RevisionId,
    name: &str,
) -> Result<Option<(ArtifactView, Vec<u8>)>, String> {
    let key = id.clone();
    let found = on_database(database, move |connection| {
        let revision = get_revision(connection, &key).map_err(|e| e.to_string())?;
        let records = records_about(connection, &key).map_err(|e| e.to_string())?;
        Ok(revision.map(|r| (r, records)))
    })
    .await?;
    let Some((revision, records)) = found else {
        return Ok(None);
    };
    let bundle = records
        .iter()
        .rev()
        .find(|r| r.kind == "artifact_bundle")
        .and_then(|r| serde_json::from_slice::<serde_json::Value>(&r.record).ok());
    let mut artifacts: Vec<ArtifactView> = match &bundle {
        Some(bundle) => ["script", "snapshot", "statistics", "plot", "environment"]
            .iter()
            .filter_map(|role| artifact_of(&bundle["artifacts"][*role]))
            .collect(),
        None => Vec::new(),
    };
    artifacts.push(stored_artifact(objects, "script.R", &revision.script_hash));
    artifacts.push(stored_artifact(
        objects,
        "snapshot.csv",
        &revision.snapshot_id,
    ));
    let Some(artifact) = artifacts.into_iter().find(|a| a.name == name) else {
        return Ok(None);
    };
    let objects = objects.clone();
    let hash = artifact.sha256.clone();
    let bytes = tokio::task::spawn_blocking(move || {
        let digest = Sha256Digest::try_from(hash).map_err(|e| e.to_string())?;
        objects.get(&digest).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())??;
    Ok(Some((artifact, bytes)))
}
