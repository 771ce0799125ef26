//! The evidence bundle's `manifest.json`: the revision, its records in ledger order by kind and
//! hash, every artifact and schema by path, SHA-256 and size, the ledger head at export and the
//! exporting build. The web crate's `service::bundle` writes it; [`crate::validate`] reads it.

use adamviz_model::provenance::SourceProvenance;
use serde::{Deserialize, Serialize};

/// The bundle format this build writes.
pub const BUNDLE_FORMAT: &str = "adamviz-evidence-bundle-v1";

/// One record in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestRecord {
    /// Its path in the archive.
    pub path: String,
    /// Its kind.
    pub kind: String,
    /// Its self-hash.
    pub record_hash: String,
    /// Its position in the ledger.
    pub ledger_seq: i64,
}

/// One file in the manifest (artifact or schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestFile {
    /// Its path in the archive.
    pub path: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// Bytes.
    pub size: u64,
}

/// One schema in the manifest, with its identity constants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestSchema {
    /// Its path in the archive.
    pub path: String,
    /// SHA-256 of the raw file.
    pub raw_sha256: String,
    /// SHA-256 of its canonical JSON.
    pub canonical_sha256: String,
}

/// The signing key, as the manifest names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestKey {
    /// Ed25519 public key, hex.
    pub public_key: String,
    /// `sha256:` and the SHA-256 of the public key.
    pub fingerprint: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`BUNDLE_FORMAT`].
    pub format: String,
    /// The revision.
    pub revision_id: String,
    /// Its records in ledger order.
    pub records: Vec<ManifestRecord>,
    /// Its artifacts.
    pub artifacts: Vec<ManifestFile>,
    /// The JSON Schemas.
    pub schemas: Vec<ManifestSchema>,
    /// The ledger's last record hash at export.
    pub ledger_head: String,
    /// The source of the exporting build.
    pub exported_by: SourceProvenance,
    /// The exporting build's version.
    pub adamviz_version: String,
    /// The key that signs `manifest.dsse.json`.
    pub signing_key: ManifestKey,
}
