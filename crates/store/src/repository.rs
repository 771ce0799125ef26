//! The repository of uploads, specs, revisions, attempts and accepted artifact bundles. Every
//! function works inside the caller's transaction, so the service composes them into the steps
//! of the flow (one transaction each). The database refuses what must never happen (see the
//! triggers of `migrations/0002_revisions.sql`, and `postgres/0001_schema.sql`); these functions
//! also say why in typed errors. Written against [`Sql`]: they run on SQLite and PostgreSQL.

use std::io::Read as _;

use sha2::{Digest, Sha256};

use crate::ledger::{append_evidence, utc_now, AppendEvidenceError};
use crate::objects::{ObjectStore, ObjectStoreError};
use crate::sql::{Dialect, Sql, SqlError, SqlRow};
use crate::sql_params;
use adamviz_evidence::actor::Actor;
use adamviz_evidence::{
    artifact_bundle::ArtifactBundleRecord,
    execution_attempt::{AttemptEvent, AttemptFacts, ExecutionAttemptRecord},
    revision_context::RevisionInputs,
    revision_lifecycle::{PromotionBasis, RevisionLifecycleRecord},
};
use adamviz_model::{
    digest::Sha256Digest,
    ids::{AttemptId, RevisionId},
};

pub use adamviz_evidence::artifact_bundle::{ArtifactRef, BundleArtifacts, BundleToAccept};
pub use adamviz_model::revision::RevisionStatus;

mod attempts;

pub use attempts::*;

/// A stored revision.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Revision {
    /// `rev-` and 32 hex digits.
    pub id: RevisionId,
    /// The confirmed spec.
    pub spec_hash: String,
    /// Its status.
    pub status: RevisionStatus,
    /// Moves on by one with every change.
    pub version: i64,
    /// The compiled script.
    pub script_hash: String,
    /// The stored snapshot CSV.
    pub snapshot_id: String,
    /// The canonical snapshot hash.
    pub snapshot_hash: String,
    /// The execution request's record hash.
    pub request_hash: Option<String>,
    /// The image hash, bound when the bundle is accepted.
    pub image_hash: Option<String>,
    /// The analytical hash, bound when the bundle is accepted.
    pub analytical_hash: Option<String>,
    /// When it was materialized.
    pub created_at: String,
}

/// A stored attempt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Attempt {
    /// `att-` and 32 hex digits, derived from the revision and the idempotency key.
    pub id: AttemptId,
    /// Its revision.
    pub revision_id: RevisionId,
    /// The fingerprint of the request and supplied inputs.
    pub fingerprint: String,
    /// The revision version captured at start.
    pub captured_version: i64,
    /// `active`, `succeeded` or `failed`.
    pub state: String,
    /// Why it failed.
    pub reason: Option<String>,
}

/// Reads an id column through the id's parser: ids are stored as their text, and a malformed id
/// in the database is a read error, never a value.
pub(crate) fn id_at<T>(row: &SqlRow, index: usize) -> Result<T, SqlError>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    row.parsed(index)
}

/// Why the repository refused.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// No such revision.
    #[error("there is no revision {0}")]
    NoRevision(RevisionId),
    /// No such attempt.
    #[error("there is no attempt {0}")]
    NoAttempt(AttemptId),
    /// Attempts start only for Draft revisions.
    #[error("revision {revision} is {status:?}; governed execution starts only for a draft")]
    NotDraft {
        /// The revision.
        revision: RevisionId,
        /// Its status.
        status: RevisionStatus,
    },
    /// Another attempt is active.
    #[error("revision {revision} already has an active attempt {attempt}")]
    AnotherActiveAttempt {
        /// The revision.
        revision: RevisionId,
        /// The active attempt.
        attempt: AttemptId,
    },
    /// The idempotency key was used with other inputs.
    #[error("idempotency key already used for attempt {attempt} with other inputs (fingerprint {existing}, now {offered})")]
    KeyReusedWithOtherInputs {
        /// The attempt.
        attempt: AttemptId,
        /// Its fingerprint.
        existing: String,
        /// The one offered now.
        offered: String,
    },
    /// The attempt is not active (already terminal).
    #[error("attempt {0} is not active")]
    AttemptNotActive(AttemptId),
    /// The revision changed since the attempt started.
    #[error(
        "revision {revision} is at version {actual}, the attempt captured {captured}; not promoted"
    )]
    StaleVersion {
        /// The revision.
        revision: RevisionId,
        /// Version captured at start.
        captured: i64,
        /// Version now.
        actual: i64,
    },
    /// A Draft revision needs its execution request.
    #[error("revision {0} has fixed scales (Draft) but no execution request")]
    DraftWithoutRequest(RevisionId),
    /// An artifact of the bundle is missing or corrupt in the object store.
    #[error("artifact {name} of the bundle cannot be accepted: {source}")]
    Artifact {
        /// Its file name.
        name: String,
        /// What the store said.
        #[source]
        source: ObjectStoreError,
    },
    /// An artifact's stored size differs from the one offered.
    #[error("artifact {name} is {actual} bytes in the store but the bundle says {offered}")]
    ArtifactSize {
        /// Its file name.
        name: String,
        /// The size offered.
        offered: u64,
        /// The stored size.
        actual: u64,
    },
    /// A stored revision's inputs are not the JSON they must be.
    #[error("revision {revision} has unreadable inputs: {detail}")]
    Inputs {
        /// The revision.
        revision: RevisionId,
        /// Why.
        detail: String,
    },
    /// Who requested a run could not be written as JSON.
    #[error("stored state is unreadable: the actor as JSON: {0}")]
    ActorJson(#[source] serde_json::Error),
    /// A run request vanished under the transaction that had just inserted it.
    #[error("stored state is unreadable: run request {0} vanished")]
    RequestVanished(i64),
    /// The evidence record of a change could not be appended.
    #[error(transparent)]
    Evidence(#[from] AppendEvidenceError),
    /// SQLite refused (a trigger names the rule).
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// The database refused (a trigger names the rule), through the SQL seam.
    #[error(transparent)]
    Sql(#[from] SqlError),
}

/// A fresh revision id from the system's random source.
pub fn new_revision_id() -> RevisionId {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // Unique enough without a random source: time and process.
        let seed = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
        bytes.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    RevisionId::from_random_bytes(bytes)
}

/// The attempt id of `idempotency_key` for `revision_id`: the same key always names the same
/// attempt of a revision.
pub fn attempt_id_for(revision_id: &RevisionId, idempotency_key: &str) -> AttemptId {
    AttemptId::for_key(revision_id, idempotency_key)
}

/// Records an upload (once per content hash).
pub fn insert_upload(
    transaction: &impl Sql,
    content_hash: &Sha256Digest,
    classification: &str,
    file_name: &str,
    size: u64,
) -> Result<(), RepositoryError> {
    transaction.execute(
        "INSERT INTO uploads (content_hash, classification, file_name, size, stored_at)
         VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
        sql_params![
            content_hash.to_hex(),
            classification,
            file_name,
            size as i64,
            utc_now()
        ],
    )?;
    Ok(())
}

/// Records a confirmed spec (once per spec hash).
pub fn insert_spec(
    transaction: &impl Sql,
    spec_hash: &Sha256Digest,
    content_hash: &Sha256Digest,
    canonical: &[u8],
) -> Result<(), RepositoryError> {
    transaction.execute(
        "INSERT INTO specs (spec_hash, content_hash, spec, confirmed_at)
         VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
        sql_params![
            spec_hash.to_hex(),
            content_hash.to_hex(),
            canonical,
            utc_now()
        ],
    )?;
    Ok(())
}

/// What a new revision binds.
#[derive(Debug, Clone)]
pub struct NewRevision {
    /// Its id (see [`new_revision_id`]).
    pub id: RevisionId,
    /// The confirmed spec.
    pub spec_hash: Sha256Digest,
    /// Free y-scales: Experimental/Draft.
    pub free_scale: bool,
    /// The compiled script.
    pub script_hash: Sha256Digest,
    /// The stored snapshot CSV.
    pub snapshot_id: Sha256Digest,
    /// The canonical snapshot hash.
    pub snapshot_hash: Sha256Digest,
    /// The execution request's record hash (none for free scales).
    pub request_hash: Option<Sha256Digest>,
    /// Source metadata and profile warnings, kept for the revision's context.
    pub inputs: RevisionInputs,
    /// Who created it.
    pub actor: Actor,
    /// The revision it revises, if any.
    pub parent: Option<RevisionId>,
}

/// Creates a revision at version 1, Draft or Experimental/Draft, and appends its
/// `revision_lifecycle` creation record. A Draft must name its execution request.
pub fn create_revision(
    transaction: &impl Sql,
    new: &NewRevision,
) -> Result<Revision, RepositoryError> {
    let status = if new.free_scale {
        RevisionStatus::ExperimentalDraft
    } else {
        RevisionStatus::Draft
    };
    if status == RevisionStatus::Draft && new.request_hash.is_none() {
        return Err(RepositoryError::DraftWithoutRequest(new.id.clone()));
    }
    let inputs = serde_json::to_vec(&new.inputs).map_err(|e| RepositoryError::Inputs {
        revision: new.id.clone(),
        detail: e.to_string(),
    })?;
    let now = utc_now();
    // The record first: the database admits the row only when its record is there.
    append_evidence(
        transaction,
        RevisionLifecycleRecord::created(
            new.id.clone(),
            status,
            new.spec_hash,
            new.parent.clone(),
            now.clone(),
            new.actor.clone(),
        ),
    )?;
    transaction.execute(
        "INSERT INTO revisions (id, spec_hash, status, version, script_hash, snapshot_id,
                                snapshot_hash, request_hash, created_at, inputs, author_name,
                                parent_id)
         VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        sql_params![
            new.id.as_str(),
            new.spec_hash.to_hex(),
            status.as_str(),
            new.script_hash.to_hex(),
            new.snapshot_id.to_hex(),
            new.snapshot_hash.to_hex(),
            new.request_hash.map(|h| h.to_hex()),
            now,
            inputs,
            &new.actor.account_name,
            new.parent.as_ref().map(RevisionId::as_str)
        ],
    )?;
    get_revision(transaction, &new.id)?.ok_or_else(|| RepositoryError::NoRevision(new.id.clone()))
}

/// The source metadata and profile warnings kept with revision `id`.
pub fn get_revision_inputs(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<Option<RevisionInputs>, RepositoryError> {
    let bytes: Option<Option<Vec<u8>>> = connection
        .query_opt(
            "SELECT inputs FROM revisions WHERE id = ?1",
            sql_params![id.as_str()],
        )?
        .map(|row| row.get(0))
        .transpose()?;
    let Some(bytes) = bytes.flatten() else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| RepositoryError::Inputs {
            revision: id.to_owned(),
            detail: e.to_string(),
        })
}

const REVISION_COLUMNS: &str = "id, spec_hash, status, version, script_hash, snapshot_id,
    snapshot_hash, request_hash, pending_image_hash, pending_analytical_hash, created_at";

/// A status column; a value the schema's CHECK should have refused is a read error, never a
/// guess.
fn status_column(row: &SqlRow, index: usize) -> Result<RevisionStatus, SqlError> {
    let text: String = row.get(index)?;
    RevisionStatus::parse(&text).ok_or_else(|| SqlError::Unreadable {
        column: index,
        detail: format!("unknown revision status {text:?}"),
    })
}

fn revision_from(row: &SqlRow) -> Result<Revision, SqlError> {
    Ok(Revision {
        id: id_at(row, 0)?,
        spec_hash: row.get(1)?,
        status: status_column(row, 2)?,
        version: row.get(3)?,
        script_hash: row.get(4)?,
        snapshot_id: row.get(5)?,
        snapshot_hash: row.get(6)?,
        request_hash: row.get(7)?,
        image_hash: row.get(8)?,
        analytical_hash: row.get(9)?,
        created_at: row.get(10)?,
    })
}

/// Whether revision `id` exists.
pub fn revision_exists(connection: &impl Sql, id: &RevisionId) -> Result<bool, SqlError> {
    connection
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM revisions WHERE id = ?1)",
            sql_params![id.as_str()],
        )?
        .get(0)
}

/// The revision `id`.
pub fn get_revision(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<Option<Revision>, RepositoryError> {
    Ok(connection
        .query_opt(
            &format!("SELECT {REVISION_COLUMNS} FROM revisions WHERE id = ?1"),
            sql_params![id.as_str()],
        )?
        .map(|row| revision_from(&row))
        .transpose()?)
}

/// Every revision, newest first.
pub fn list_revisions(connection: &impl Sql) -> Result<Vec<Revision>, RepositoryError> {
    Ok(connection
        .query(
            &format!("SELECT {REVISION_COLUMNS} FROM revisions ORDER BY created_at DESC, id"),
            &[],
        )?
        .iter()
        .map(revision_from)
        .collect::<Result<_, _>>()?)
}

fn attempt_from(row: &SqlRow) -> Result<Attempt, SqlError> {
    Ok(Attempt {
        id: id_at(row, 0)?,
        revision_id: id_at(row, 1)?,
        fingerprint: row.get(2)?,
        captured_version: row.get(3)?,
        state: row.get(4)?,
        reason: row.get(5)?,
    })
}

/// The attempt `id`.
pub fn get_attempt(
    connection: &impl Sql,
    id: &AttemptId,
) -> Result<Option<Attempt>, RepositoryError> {
    Ok(connection
        .query_opt(
            "SELECT id, revision_id, fingerprint, captured_version, state, reason
             FROM attempts WHERE id = ?1",
            sql_params![id.as_str()],
        )?
        .map(|row| attempt_from(&row))
        .transpose()?)
}

/// The latest attempt of revision `revision_id`, if any.
pub fn latest_attempt(
    connection: &impl Sql,
    revision_id: &RevisionId,
) -> Result<Option<Attempt>, RepositoryError> {
    // Two attempts started in one microsecond: the one inserted last (SQLite's rowid, the
    // PostgreSQL table's own sequence).
    let sql = match connection.dialect() {
        Dialect::Sqlite => {
            "SELECT id, revision_id, fingerprint, captured_version, state, reason
             FROM attempts WHERE revision_id = ?1 ORDER BY started_at DESC, rowid DESC LIMIT 1"
        }
        Dialect::Postgres => {
            "SELECT id, revision_id, fingerprint, captured_version, state, reason
             FROM attempts WHERE revision_id = ?1 ORDER BY started_at DESC, seq DESC LIMIT 1"
        }
    };
    Ok(connection
        .query_opt(sql, sql_params![revision_id.as_str()])?
        .map(|row| attempt_from(&row))
        .transpose()?)
}

/// The canonical JSON of the confirmed spec `spec_hash`, if stored.
pub fn get_spec(
    connection: &impl Sql,
    spec_hash: &str,
) -> Result<Option<Vec<u8>>, RepositoryError> {
    Ok(connection
        .query_opt(
            "SELECT spec FROM specs WHERE spec_hash = ?1",
            sql_params![spec_hash],
        )?
        .map(|row| row.get(0))
        .transpose()?)
}
