//! The evidence bundle: one zip archive an auditor takes away — `manifest.json` (the revision,
//! its records in ledger order by kind and hash, every artifact by path, SHA-256 and size, the
//! schemas with their identity constants, the ledger head at export, the exporting build's
//! source), `manifest.dsse.json` (the manifest signed as a DSSE envelope with the installation's
//! key), the records as their stored canonical JSON, the artifacts read back re-hashed, the JSON
//! Schemas, and a README.txt saying how to check it. The same revision and ledger state give a
//! byte-identical archive: entries in a fixed order, fixed timestamps and permissions.

use adamviz_store::sql::Sql;
use std::io::{Cursor, Write};

use super::installation_key::InstallationKey;
use adamviz_evidence::{
    artifact_bundle::{ARTIFACT_ROLES, REPORT_ROLES},
    dsse::MANIFEST_PAYLOAD_TYPE,
    schemas::ALL_SCHEMAS,
};
use adamviz_model::{digest::Sha256Digest, ids::RevisionId};
use adamviz_store::{
    db::DbError,
    ledger::{last_record_hash, records_about},
    objects::ObjectStore,
    repository::revision_exists,
};

pub use adamviz_evidence::bundle_format::{
    Manifest, ManifestFile, ManifestKey, ManifestRecord, ManifestSchema, BUNDLE_FORMAT,
};

/// Why a bundle cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// No such revision.
    #[error("there is no revision {0}")]
    NoRevision(RevisionId),
    /// Not Verified yet.
    #[error("revision {0} has no accepted artifact bundle yet (it is not Verified): there is no evidence bundle to export")]
    NotVerified(RevisionId),
    /// The database.
    #[error("the database: {0}")]
    Database(#[from] DbError),
    /// An artifact could not be read back intact.
    #[error("artifact {name}: {detail}")]
    Artifact {
        /// Its name.
        name: String,
        /// What went wrong.
        detail: String,
    },
    /// A stored record is not JSON.
    #[error("record {0} is not JSON")]
    Record(String),
    /// Writing the archive.
    #[error("writing the archive: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// Writing an entry's bytes into the archive.
    #[error("writing the archive: {0}")]
    Write(#[from] std::io::Error),
    /// Writing the manifest or its envelope as canonical JSON.
    #[error("writing the manifest: {0}")]
    Encode(#[from] serde_json::Error),
    /// The repository refused or failed.
    #[error(transparent)]
    Repository(#[from] adamviz_store::repository::RepositoryError),
    /// Writing a figure set's bundle.
    #[error(transparent)]
    SetBundle(#[from] adamviz_evidence::set_bundle::BuildError),
    /// No connection, or the database work stopped.
    #[error(transparent)]
    Pool(#[from] adamviz_store::db::DatabaseError),
    /// This server has no signing key.
    #[error("this server has no signing key: evidence bundles cannot be signed")]
    NoKey,
    /// The hashing and zipping stopped before it answered.
    #[error("the export stopped before it finished: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
}

const README: &str = "adamviz evidence bundle
=======================

This archive holds everything needed to check one plot revision without trusting the server
that made it:

  manifest.json        the revision, its records (ledger order, kind, record hash), every
                       artifact and schema (path, SHA-256, size), the ledger head at export and
                       the adamviz source that exported it
  manifest.dsse.json   manifest.json signed as a DSSE envelope (Ed25519) with the key of the
                       adamviz installation; its fingerprint is in the manifest and in the
                       footer of that installation's pages (`adamviz key show` prints it)
  records/             the evidence records as stored: RFC 8785 canonical JSON, each carrying
                       its SHA-256 self-hash and its predecessor's hash
  artifacts/           script.R, snapshot.csv, statistics.json, plot.png, environment.json,
                       and the report-ready plot.pdf, plot.svg and statistics.csv
  schemas/             the JSON Schemas (Draft 2020-12) the records follow

Check it (offline), with the installation's public key obtained out of band (not from this
bundle, not from the server alone):

  adamviz evidence validate BUNDLE.zip --trusted-key FILE [--json] [--replay] [--repository PATH]

Exit 0 PASS: every check holds and the manifest is signed by the key in FILE. Exit 3
CONSISTENT, ORIGIN NOT PROVEN: every check holds but no --trusted-key was given (anyone can make
a bundle that agrees with itself). Exit 5 FAIL. Exit 2: a bad invocation, or an archive refused
before any check (unreadable, unsafe entry names, more than 10,000 entries or 2 GiB inflated).

Redraw the plot yourself (R with ggplot2, patchwork, jsonlite):

  cd artifacts && Rscript script.R snapshot.csv out/
";

/// The README with the revision's signatures and reproductions in words (the `approval` and
/// `reproduction` records under records/ are what a check relies on; these lines repeat them).
fn readme(records: &[adamviz_store::ledger::StoredRecord]) -> String {
    let lines: Vec<String> = records
        .iter()
        .filter(|r| r.kind == "approval" || r.kind == "reproduction")
        .filter_map(|r| serde_json::from_slice::<serde_json::Value>(&r.record).ok())
        .map(|record| {
            let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
            if record["kind"] == "approval" {
                let signer = &record["signer"];
                // An administrator's reset of the signer's password before signing, said
                // beside the signature (approval-v3).
                let reset = match (
                    signer["password_reset_at"].as_str(),
                    signer["password_reset_by"].as_str(),
                ) {
                    (Some(at), Some(by)) => format!(
                        "\n    (the signer's password was last set by someone else: by {by} on {} UTC)",
                        at.replace('T', " ").trim_end_matches('Z')
                    ),
                    _ => String::new(),
                };
                let line = match record["meaning"].as_str() {
                    Some(meaning) => format!(
                        "  Signed by {} ({}) on {} UTC, meaning: {meaning}; version {}",
                        text(&signer["printed_name"]),
                        text(&signer["account_name"]),
                        text(&record["signed_at"])
                            .replace('T', " ")
                            .trim_end_matches('Z'),
                        record["revision_version"]
                    ),
                    None => format!(
                        "  Changes requested by {} ({}) on {} UTC: {}",
                        text(&signer["printed_name"]),
                        text(&signer["account_name"]),
                        text(&record["signed_at"])
                            .replace('T', " ")
                            .trim_end_matches('Z'),
                        text(&record["comment"])
                    ),
                };
                format!("{line}{reset}")
            } else {
                format!(
                    "  Reproduction on {} UTC by {}: {}",
                    text(&record["reproduced_at"])
                        .replace('T', " ")
                        .trim_end_matches('Z'),
                    text(&record["actor"]["account_name"]),
                    text(&record["outcome"])
                )
            }
        })
        .collect();
    if lines.is_empty() {
        return README.to_owned();
    }
    format!(
        "{README}\nSignatures and reproductions (from the approval and reproduction records):\n\n{}\n",
        lines.join("\n")
    )
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

/// What a revision's bundle is made of that the database holds: its records in ledger order
/// and the ledger head. Read in one short step ([`read_bundle_inputs`]), so that reading the
/// artifacts back, hashing them and writing the archive ([`build_bundle`]) hold no database
/// connection: downloads never starve the pool the rest of the server needs.
#[derive(Debug, Clone)]
pub struct BundleInputs {
    /// The revision.
    pub id: RevisionId,
    /// Its records, in ledger order (the last `artifact_bundle` among them names the artifacts).
    pub records: Vec<adamviz_store::ledger::StoredRecord>,
    /// The ledger's last record hash when they were read.
    pub ledger_head: String,
}

/// Reads what the bundle of revision `id` needs from the database (no artifact, no hashing).
pub fn read_bundle_inputs(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<BundleInputs, ExportError> {
    if !revision_exists(connection, id)? {
        return Err(ExportError::NoRevision(id.clone()));
    }
    let records = records_about(connection, id)?;
    if !records.iter().any(|r| r.kind == "artifact_bundle") {
        return Err(ExportError::NotVerified(id.clone()));
    }
    let ledger_head = last_record_hash(connection)?.ok_or(DbError::NoRows)?;
    Ok(BundleInputs {
        id: id.clone(),
        records,
        ledger_head,
    })
}

/// The bundle of revision `id` as zip bytes ([`read_bundle_inputs`], then [`build_bundle`]).
pub fn export_bundle(
    connection: &impl Sql,
    objects: &ObjectStore,
    key: &InstallationKey,
    id: &RevisionId,
) -> Result<Vec<u8>, ExportError> {
    build_bundle(&read_bundle_inputs(connection, id)?, objects, key)
}

/// Exports revision `id`'s evidence bundle, signed with `key`: the records read under a pooled
/// connection that is released at once, then the artifacts read back, re-hashed and zipped on a
/// blocking thread without one, so that downloads never hold the database.
pub async fn export_for_download(
    database: &adamviz_store::db::Database,
    objects: &ObjectStore,
    key: Option<&InstallationKey>,
    id: &RevisionId,
) -> Result<Vec<u8>, ExportError> {
    let revision = id.clone();
    let inputs = database
        .call(move |connection| read_bundle_inputs(connection, &revision))
        .await?;
    let key = key.cloned().ok_or(ExportError::NoKey)?;
    let objects = objects.clone();
    tokio::task::spawn_blocking(move || build_bundle(&inputs, &objects, &key)).await?
}

/// The bundle as zip bytes from `inputs`: the artifacts read back from `objects` re-hashed, the
/// manifest signed with `key`. Touches no database.
pub fn build_bundle(
    inputs: &BundleInputs,
    objects: &ObjectStore,
    key: &InstallationKey,
) -> Result<Vec<u8>, ExportError> {
    let BundleInputs {
        id,
        records,
        ledger_head,
    } = inputs;
    let bundle_record = records
        .iter()
        .rev()
        .find(|r| r.kind == "artifact_bundle")
        .ok_or_else(|| ExportError::NotVerified(id.clone()))?;
    let bundle: serde_json::Value = serde_json::from_slice(&bundle_record.record)
        .map_err(|_| ExportError::Record(bundle_record.record_hash.clone()))?;

    // Entries in their fixed order: records, artifacts, schemas.
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    let mut manifest_records = Vec::new();
    for (index, record) in records.iter().enumerate() {
        let path = format!("records/{:02}-{}.json", index + 1, record.kind);
        manifest_records.push(ManifestRecord {
            path: path.clone(),
            kind: record.kind.clone(),
            record_hash: record.record_hash.clone(),
            ledger_seq: record.seq,
        });
        entries.push((path, record.record.clone()));
    }
    let artifacts = artifact_entries(&bundle, objects, &mut entries)?;
    let mut schemas = Vec::new();
    for schema in ALL_SCHEMAS.iter() {
        let path = format!("schemas/{}", schema.file);
        schemas.push(ManifestSchema {
            path: path.clone(),
            raw_sha256: schema.raw_sha256.to_owned(),
            canonical_sha256: schema.canonical_sha256.to_owned(),
        });
        entries.push((path, schema.raw.as_bytes().to_vec()));
    }
    let manifest = Manifest {
        format: BUNDLE_FORMAT.to_owned(),
        revision_id: id.to_string(),
        records: manifest_records,
        artifacts,
        schemas,
        ledger_head: ledger_head.clone(),
        exported_by: crate::provenance::this_build(),
        adamviz_version: env!("CARGO_PKG_VERSION").to_owned(),
        signing_key: ManifestKey {
            public_key: key.public_hex(),
            fingerprint: key.fingerprint(),
        },
    };
    let manifest_bytes = serde_jcs::to_vec(&manifest)?;
    let envelope = key.sign(MANIFEST_PAYLOAD_TYPE, &manifest_bytes);
    let envelope_bytes = serde_jcs::to_vec(&envelope)?;
    let mut ordered = vec![
        ("README.txt".to_owned(), readme(records).into_bytes()),
        ("manifest.json".to_owned(), manifest_bytes),
        ("manifest.dsse.json".to_owned(), envelope_bytes),
    ];
    ordered.extend(entries);
    write_zip(&ordered)
}

/// The bundle's artifacts, read back from `objects` re-hashed, appended to `entries`; their
/// manifest lines.
fn artifact_entries(
    bundle: &serde_json::Value,
    objects: &ObjectStore,
    entries: &mut Vec<(String, Vec<u8>)>,
) -> Result<Vec<ManifestFile>, ExportError> {
    let mut artifacts = Vec::new();
    for role in ARTIFACT_ROLES {
        let reference = &bundle["artifacts"][role];
        // The report-ready outputs are absent from bundles accepted before artifact-bundle-v2.
        if reference.is_null() && REPORT_ROLES.contains(&role) {
            continue;
        }
        let name = reference["name"].as_str().unwrap_or(role).to_owned();
        let artifact_error = |detail: String| ExportError::Artifact {
            name: name.clone(),
            detail,
        };
        let digest = reference["sha256"]
            .as_str()
            .and_then(|h| Sha256Digest::try_from(h.to_owned()).ok())
            .ok_or_else(|| artifact_error("the bundle record names no hash".to_owned()))?;
        let bytes = objects
            .get(&digest)
            .map_err(|e| artifact_error(e.to_string()))?;
        let path = format!("artifacts/{name}");
        artifacts.push(ManifestFile {
            path: path.clone(),
            sha256: digest.to_hex(),
            size: bytes.len() as u64,
        });
        entries.push((path, bytes));
    }
    Ok(artifacts)
}

/// The archive of `entries`, in order, with fixed timestamps and permissions.
fn write_zip(entries: &[(String, Vec<u8>)]) -> Result<Vec<u8>, ExportError> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    // The top-level files are stored uncompressed: readable with the simplest tools.
    let stored = options
        .compression_method(zip::CompressionMethod::Stored)
        .compression_level(None);
    for (path, bytes) in entries {
        // Artifacts too: a PNG is compressed already, and a byte of one can be found in place.
        let options = if path.contains('/') && !path.starts_with("artifacts/") {
            options
        } else {
            stored
        };
        writer.start_file(path.as_str(), options)?;
        writer.write_all(bytes)?;
    }
    Ok(writer.finish()?.into_inner())
}

/// The manifest's hash of `bytes`, as the manifest writes it (lowercase hex SHA-256).
pub fn file_hash(bytes: &[u8]) -> String {
    sha256_hex(bytes)
}
