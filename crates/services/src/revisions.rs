//! Revisions as the pages show them: the list (question, title, author from the revision's
//! first lifecycle record), and one revision with its run status, checks, statistics, script,
//! artifacts, environment and evidence records in ledger order. Every artifact is read back
//! from the object store re-hashed.

use crate::database::on_database;
use std::sync::Arc;

use super::{
    datasets::DatasetCache,
    drafts,
    error::ReadError,
    runs::{run_status, stored_spec},
};
use crate::{
    approvals::{is_author, signature_view, signing_locked_until},
    reproduction::reproduction_view,
};
use adamviz_evidence::{artifact_bundle::ARTIFACT_ROLES, summary::record_summary};
use adamviz_model::{
    account::{Account, Role},
    digest::Sha256Digest,
    draft::Preview,
    ids::RevisionId,
    revision::{
        ArtifactView, CheckView, EvidenceView, ReproductionView, ReviewState, RevisionDetail,
        RevisionStatus, RevisionSummary, SignatureView, SigningAttempt,
    },
    spec::PlotSpec,
    statistics::CellStatistics,
};
use adamviz_store::{
    db::Database,
    ledger::{records_about, StoredRecord},
    objects::ObjectStore,
    repository::{get_revision, Revision, RevisionStatus as StoredStatus},
    revision_views::{dataset_of_spec, lineage, revision_summary, signing_attempts},
};

pub use adamviz_store::revision_views::list_revisions;

/// What the revision page reads from.
#[derive(Clone)]
pub struct RevisionSources {
    /// The database.
    pub database: Database,
    /// The object store.
    pub objects: ObjectStore,
    /// The datasets read (for the preview of a revision not yet Verified).
    pub datasets: Arc<DatasetCache>,
}

/// Revision `id` as `viewer` sees its page; `None` when there is none.
pub async fn revision_detail(
    sources: &RevisionSources,
    id: &RevisionId,
    viewer: &Account,
) -> Result<Option<RevisionDetail>, ReadError> {
    let Some(stored) = read_stored(&sources.database, id, viewer.id).await? else {
        return Ok(None);
    };
    let evidence_head = stored
        .records
        .last()
        .map(|r| r.record_hash.clone())
        .unwrap_or_default();
    let run = run_status(&sources.database, &stored.revision).await?;
    let spec = stored_spec(&sources.database, &stored.revision.spec_hash).await?;
    let evidence = EvidenceFacts::read(stored.records);
    let own = evidence
        .author
        .as_ref()
        .is_some_and(|author| is_author(viewer, author));
    let status = stored.summary.status;
    let review = review_state(viewer, status, own, stored.locked, evidence_head);
    let answers = drafts::answers_of(&spec);
    let verified = matches!(
        stored.revision.status,
        StoredStatus::Verified | StoredStatus::Approved
    );
    let files = {
        let (objects, datasets) = (sources.objects.clone(), Arc::clone(&sources.datasets));
        let (revision, bundle) = (stored.revision.clone(), evidence.bundle.clone());
        tokio::task::spawn_blocking(move || {
            read_files(
                &objects,
                &datasets,
                &revision,
                bundle.as_ref(),
                &spec,
                verified,
            )
        })
        .await??
    };
    let dataset_hash = {
        let spec_hash = stored.summary.spec_hash.clone();
        on_database(&sources.database, move |connection| {
            dataset_of_spec(connection, &spec_hash)
        })
        .await?
    };
    let newer_cut = super::data_cuts::newer_cut_of(&sources.database, &dataset_hash).await?;
    Ok(Some(RevisionDetail {
        newer_cut,
        dataset_hash,
        can_run: viewer.has(Role::Author) && status == RevisionStatus::Draft && !run.is_moving(),
        summary: stored.summary,
        run,
        preview: files.preview,
        statistics: files.statistics,
        checks: evidence.checks,
        script: files.script,
        artifacts: files.artifacts,
        environment: files.environment,
        evidence: evidence.views,
        run_key: format!("{:032x}", rand::random::<u128>()),
        signatures: evidence.signatures,
        reproductions: evidence.reproductions,
        review,
        parent: stored.parent,
        children: stored.children,
        revise_href: None,
        answers,
        signing_attempts: stored.signing_attempts,
    }))
}

/// What the database holds about one revision, for its page.
struct StoredRevision {
    revision: Revision,
    summary: RevisionSummary,
    records: Vec<StoredRecord>,
    parent: Option<String>,
    children: Vec<String>,
    /// Until when the viewer's signing is locked, if it is.
    locked: Option<String>,
    signing_attempts: Vec<SigningAttempt>,
}

/// Reads revision `id` and what its page needs from the database, in one connection.
async fn read_stored(
    database: &Database,
    id: &RevisionId,
    viewer_id: i64,
) -> Result<Option<StoredRevision>, ReadError> {
    let key = id.clone();
    on_database(database, move |connection| {
        let (Some(revision), Some(summary)) = (
            get_revision(connection, &key)?,
            revision_summary(connection, &key)?,
        ) else {
            return Ok::<_, ReadError>(None);
        };
        let (parent, children) = lineage(connection, &key)?;
        Ok(Some(StoredRevision {
            revision,
            summary,
            records: records_about(connection, &key)?,
            parent,
            children,
            locked: signing_locked_until(connection, viewer_id, crate::accounts::now())?,
            signing_attempts: signing_attempts(connection, &key)?,
        }))
    })
    .await
}

/// The revision's evidence records as its page shows them, and what they say.
struct EvidenceFacts {
    /// Every record, in ledger order.
    views: Vec<EvidenceView>,
    signatures: Vec<SignatureView>,
    reproductions: Vec<ReproductionView>,
    /// The creator, from the first lifecycle record: account id and name.
    author: Option<(Option<i64>, String)>,
    /// The checks of the latest verification.
    checks: Vec<CheckView>,
    /// The artifacts of the accepted bundle, once there is one.
    bundle: Option<serde_json::Value>,
}

impl EvidenceFacts {
    fn read(records: Vec<StoredRecord>) -> Self {
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
        let of_kind = |kind: &'static str| {
            evidence
                .iter()
                .filter(move |(view, _)| view.kind == kind)
                .map(|(_, value)| value)
        };
        let author = evidence
            .iter()
            .find(|(view, value)| view.kind == "revision_lifecycle" && value["event"] == "created")
            .map(|(_, value)| {
                let name = value["actor"]["account_name"].as_str().unwrap_or_default();
                (value["actor"]["account_id"].as_i64(), name.to_owned())
            });
        EvidenceFacts {
            signatures: of_kind("approval").filter_map(signature_view).collect(),
            reproductions: of_kind("reproduction")
                .filter_map(reproduction_view)
                .collect(),
            author,
            checks: of_kind("execution_verification")
                .next_back()
                .map(checks_of)
                .unwrap_or_default(),
            bundle: of_kind("artifact_bundle")
                .next_back()
                .map(|value| value["artifacts"].clone()),
            views: evidence.into_iter().map(|(view, _)| view).collect(),
        }
    }
}

/// The revision's files as its page shows them, read back re-hashed.
struct RevisionFiles {
    artifacts: Vec<ArtifactView>,
    script: String,
    statistics: Vec<CellStatistics>,
    environment: Option<String>,
    preview: Option<Preview>,
}

/// Reads the files of `revision` (blocking): the accepted bundle's artifacts, else its script
/// and snapshot; until it is Verified, the preview beside where the plot will be.
fn read_files(
    objects: &ObjectStore,
    datasets: &DatasetCache,
    revision: &Revision,
    bundle: Option<&serde_json::Value>,
    spec: &PlotSpec,
    verified: bool,
) -> Result<RevisionFiles, ReadError> {
    let artifacts: Vec<ArtifactView> = match bundle {
        Some(bundle) => ARTIFACT_ROLES
            .iter()
            .filter_map(|role| artifact_of(&bundle[*role]))
            .collect(),
        None => vec![
            stored_artifact(objects, "script.R", &revision.script_hash),
            stored_artifact(objects, "snapshot.csv", &revision.snapshot_id),
        ],
    };
    let by_name = |name: &str| artifacts.iter().find(|a| a.name == name);
    let json = |artifact: &ArtifactView| -> Result<serde_json::Value, ReadError> {
        serde_json::from_slice(&read_object(objects, &artifact.sha256)?)
            .map_err(|e| ReadError::corrupt(&artifact.name, e))
    };
    let script =
        String::from_utf8_lossy(&read_object(objects, &revision.script_hash)?).into_owned();
    let statistics = match by_name("statistics.json") {
        Some(artifact) => cells_of(&json(artifact)?),
        None => Vec::new(),
    };
    let environment = match by_name("environment.json") {
        Some(artifact) => Some(serde_json::to_string_pretty(&json(artifact)?).unwrap_or_default()),
        None => None,
    };
    let preview = if verified {
        None
    } else {
        let digest = spec.dataset_content_hash;
        datasets
            .load(objects, &digest)
            .ok()
            .and_then(|loaded| drafts::preview(spec, &loaded.table).ok())
    };
    Ok(RevisionFiles {
        artifacts,
        script,
        statistics,
        environment,
        preview,
    })
}

/// The object named by `hash`, re-hashed as it is read.
fn read_object(objects: &ObjectStore, hash: &str) -> Result<Vec<u8>, ReadError> {
    let digest = Sha256Digest::try_from(hash.to_owned())
        .map_err(|e| ReadError::corrupt(format!("the object name {hash:?}"), e))?;
    Ok(objects.get(&digest)?)
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
        // The web layer knows the session and says (`api::boundary::signing_session_open`).
        first_signature_of_session: true,
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
) -> Result<Option<(ArtifactView, Vec<u8>)>, ReadError> {
    let key = id.clone();
    let found = on_database(database, move |connection| {
        let revision = get_revision(connection, &key)?;
        let records = records_about(connection, &key)?;
        Ok::<_, ReadError>(revision.map(|r| (r, records)))
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
        Some(bundle) => ARTIFACT_ROLES
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
    let bytes = tokio::task::spawn_blocking(move || read_object(&objects, &hash)).await??;
    Ok(Some((artifact, bytes)))
}
