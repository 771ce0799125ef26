//! The whole-store audit behind `adamviz ledger verify`, in two passes:
//! 1. the ledger: its chain ([`verify_ledger_with`]: canonical form, self-hash, link, no gap),
//!    which stops at the first broken record (everything after it has lost its anchor), and
//!    every intact record's JSON Schema and Rust type by its kind, collecting every failure;
//! 2. every artifact an accepted bundle names, re-read from the object store (re-hashed) and
//!    its size checked, and the bundle row compared with its `artifact_bundle` record,
//!    collecting every failure;
//! 3. every revision, attempt and bundle row against the records that explain it
//!    (`audit/rows.rs`), collecting every failure;
//! 4. every approval record against the accounts, role history, creation record and security
//!    log (`audit/approvals.rs`), collecting every failure.

pub mod approvals;
pub mod rows;

use std::path::PathBuf;

use super::{
    ledger::{verify_ledger_with, LedgerReport},
    objects::ObjectStore,
};
use adamviz_evidence::{artifact_bundle::ArtifactBundleRecord, kinds::check_schema_and_type_of};
use adamviz_model::digest::Sha256Digest;

/// A record that failed its typed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordProblem {
    /// Its position.
    pub seq: i64,
    /// Its kind column.
    pub kind: String,
    /// Why.
    pub detail: String,
}

/// An artifact of an accepted bundle that is missing, changed or disagrees with its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactProblem {
    /// The revision whose bundle names it.
    pub revision_id: String,
    /// Its file name in the bundle (`plot.png`, …).
    pub name: String,
    /// The digest the bundle names.
    pub digest: String,
    /// Where the store keeps it.
    pub path: PathBuf,
    /// What is wrong.
    pub detail: String,
}

/// What the audit found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditReport {
    /// The chain pass.
    pub ledger: LedgerReport,
    /// Records that passed their typed verification.
    pub records_verified: u64,
    /// Records that did not.
    pub record_problems: Vec<RecordProblem>,
    /// Accepted bundles checked.
    pub bundles: u64,
    /// Artifacts re-hashed intact.
    pub artifacts_verified: u64,
    /// Artifacts that were not.
    pub artifact_problems: Vec<ArtifactProblem>,
    /// Rows of revisions, attempts and bundles the records do not explain.
    pub row_problems: Vec<rows::RowProblem>,
    /// Approval records checked against the database.
    pub approvals: u64,
    /// Approvals the database does not back.
    pub approval_problems: Vec<approvals::ApprovalProblem>,
}

impl AuditReport {
    /// Nothing was found wrong.
    pub fn passed(&self) -> bool {
        self.ledger.first_break.is_none()
            && self.record_problems.is_empty()
            && self.artifact_problems.is_empty()
            && self.row_problems.is_empty()
            && self.approval_problems.is_empty()
    }
}

/// Audits the ledger and the artifacts of `connection`'s database in `objects`.
pub fn audit(
    connection: &impl crate::sql::Sql,
    objects: &ObjectStore,
) -> Result<AuditReport, crate::sql::SqlError> {
    let (mut records_verified, mut record_problems) = (0u64, Vec::new());
    let ledger = verify_ledger_with(
        connection,
        |seq, kind, record| match check_schema_and_type_of(kind, record) {
            Ok(()) => records_verified += 1,
            Err(error) => record_problems.push(RecordProblem {
                seq,
                kind: kind.to_owned(),
                detail: error.to_string(),
            }),
        },
    )?;
    let (bundles, artifacts_verified, mut artifact_problems) =
        verify_artifacts(connection, objects)?;
    artifact_problems.extend(verify_uploads(connection, objects)?);
    let row_problems = rows::audit_rows(connection)?;
    let approvals = connection
        .query_one(
            "SELECT count(*) FROM evidence_ledger WHERE kind = 'approval'",
            &[],
        )?
        .get::<i64>(0)? as u64;
    let approval_problems = approvals::audit_approvals(connection)?;
    Ok(AuditReport {
        approvals,
        approval_problems,
        ledger,
        records_verified,
        record_problems,
        bundles,
        artifacts_verified,
        artifact_problems,
        row_problems,
    })
}

/// Every `uploads` row names raw bytes that are in the store, at the recorded size (a dataset
/// is materialized only from stored bytes). Not re-hashed here: uploads may be large, and the
/// object store re-hashes on every read.
fn verify_uploads(
    connection: &impl crate::sql::Sql,
    objects: &ObjectStore,
) -> Result<Vec<ArtifactProblem>, crate::sql::SqlError> {
    let rows: Vec<(String, i64)> = connection
        .query(
            "SELECT content_hash, size FROM uploads ORDER BY content_hash",
            &[],
        )?
        .iter()
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .collect::<Result<_, crate::sql::SqlError>>()?;
    let mut problems = Vec::new();
    for (hash, size) in rows {
        let digest = Sha256Digest::try_from(hash.clone());
        let stored = match &digest {
            Ok(digest) => objects.size_of(digest).map_err(|e| e.to_string()),
            Err(_) => Err("not a SHA-256 digest".to_owned()),
        };
        let detail = match stored {
            Ok(Some(stored)) if stored == size as u64 => continue,
            Ok(Some(stored)) => format!("{stored} bytes stored, the uploads row says {size}"),
            Ok(None) => "the uploads row names raw bytes that are not in the store".to_owned(),
            Err(error) => error,
        };
        problems.push(ArtifactProblem {
            revision_id: "(upload)".to_owned(),
            name: "upload".to_owned(),
            path: digest.map(|d| objects.path_of(&d)).unwrap_or_default(),
            digest: hash,
            detail,
        });
    }
    Ok(problems)
}

/// The roles of an artifact_bundles row, with the column naming each.
const BUNDLE_COLUMNS: [(&str, &str); 5] = [
    ("script.R", "script_hash"),
    ("plot.png", "png_hash"),
    ("statistics.json", "statistics_hash"),
    ("environment.json", "environment_hash"),
    ("snapshot.csv", "snapshot_id"),
];

/// The `artifact_bundle` record named `hash`, if it is stored and reads as one.
fn bundle_record(
    connection: &impl crate::sql::Sql,
    hash: &str,
) -> Result<Option<ArtifactBundleRecord>, crate::sql::SqlError> {
    let bytes: Option<Vec<u8>> = connection
        .query_opt(
            "SELECT record FROM evidence_ledger WHERE record_hash = ?1 AND kind = 'artifact_bundle'",
            crate::sql_params![hash],
        )?
        .map(|row| row.get(0))
        .transpose()?;
    Ok(bytes.and_then(|bytes| serde_json::from_slice(&bytes).ok()))
}

/// Every bundle row's artifacts against its record and the object store: (rows, artifacts
/// verified, problems).
fn verify_artifacts(
    connection: &impl crate::sql::Sql,
    objects: &ObjectStore,
) -> Result<(u64, u64, Vec<ArtifactProblem>), crate::sql::SqlError> {
    let columns = BUNDLE_COLUMNS.map(|(_, column)| column).join(", ");
    let rows: Vec<(String, Option<String>, Vec<Option<String>>)> = connection
        .query(
            &format!(
                "SELECT revision_id, record_hash, {columns} FROM artifact_bundles ORDER BY revision_id"
            ),
            &[],
        )?
        .iter()
        .map(|row| {
            let hashes = (0..BUNDLE_COLUMNS.len())
                .map(|i| row.get(i + 2))
                .collect::<Result<_, _>>()?;
            Ok((row.get(0)?, row.get(1)?, hashes))
        })
        .collect::<Result<_, crate::sql::SqlError>>()?;
    let (mut verified, mut problems) = (0u64, Vec::new());
    for (revision_id, record_hash, row_hashes) in &rows {
        let record = match record_hash {
            Some(hash) => bundle_record(connection, hash)?,
            None => None,
        };
        let problem = |name: &str, digest: &str, detail: String| ArtifactProblem {
            revision_id: revision_id.clone(),
            name: name.to_owned(),
            digest: digest.to_owned(),
            path: Sha256Digest::try_from(digest.to_owned())
                .map(|d| objects.path_of(&d))
                .unwrap_or_default(),
            detail,
        };
        let Some(record) = record else {
            problems.push(problem(
                "(bundle)",
                record_hash.as_deref().unwrap_or_default(),
                "the bundle row names no readable artifact_bundle record".to_owned(),
            ));
            continue;
        };
        // The first five artifacts have a column of the row each; the report-ready ones
        // (artifact-bundle-v2) are named by the record alone, which the chain protects.
        for (index, artifact) in record.artifacts.all().into_iter().enumerate() {
            let digest = artifact.sha256.to_hex();
            let name = artifact.name.as_str();
            if let Some(((expected_name, column), row_hash)) =
                BUNDLE_COLUMNS.get(index).zip(row_hashes.get(index))
            {
                let as_the_row_says =
                    artifact.name == *expected_name && row_hash.as_deref() == Some(digest.as_str());
                if !as_the_row_says {
                    problems.push(problem(
                        expected_name,
                        &digest,
                        format!(
                            "the bundle row's {column} is {:?} but its record names {} as {digest}",
                            row_hash.as_deref().unwrap_or_default(),
                            artifact.name
                        ),
                    ));
                    continue;
                }
            }
            match objects.get(&artifact.sha256) {
                Ok(bytes) if bytes.len() as u64 == artifact.size => verified += 1,
                Ok(bytes) => problems.push(problem(
                    name,
                    &digest,
                    format!(
                        "{} bytes stored, the bundle says {}",
                        bytes.len(),
                        artifact.size
                    ),
                )),
                Err(error) => problems.push(problem(name, &digest, error.to_string())),
            }
        }
    }
    Ok((rows.len() as u64, verified, problems))
}
