//! Sealing and reading evidence records. A record is written only through [`seal`], which sets
//! its predecessor's hash and its self-hash (SHA-256 of its canonical JSON without
//! `record_hash`) and then reads the record back from its own canonical bytes through the same
//! verification as any stored record. Reading is two steps: [`Unverified::parse`] (JSON only),
//! then [`Unverified::verify`], the only way to obtain a [`Verified`] record, which the rest of
//! the code takes.

use serde::{de::DeserializeOwned, Serialize};

use super::{
    canonical::canonical_forms,
    schemas::{compiled, SchemaFile, SchemaIdentityError},
};
use adamviz_model::digest::Sha256Digest;

/// A kind of evidence record.
pub trait EvidenceRecord: Serialize + DeserializeOwned {
    /// The `kind` field's value.
    const KIND: &'static str;
    /// Its JSON Schemas: the version new records are written in first, then the older
    /// versions that stored records may still carry (read, never written).
    fn schemas() -> &'static [&'static SchemaFile];
    /// The schema new records are written in.
    fn schema() -> &'static SchemaFile {
        Self::schemas()[0]
    }
    /// The schema of a stored document: the one its `schema_version` names, or (for a version
    /// this build does not know) the current one, whose validation then names the field.
    fn schema_of(value: &serde_json::Value) -> &'static SchemaFile {
        let version = value
            .get("schema_version")
            .and_then(serde_json::Value::as_str);
        Self::schemas()
            .iter()
            .copied()
            .find(|schema| Some(schema.version()) == version)
            .unwrap_or_else(Self::schema)
    }
    /// The predecessor's hash it carries.
    fn previous_hash(&self) -> &Sha256Digest;
    /// The self-hash it carries.
    fn record_hash(&self) -> &Sha256Digest;
    /// Sets both hashes (sealing only).
    fn set_hashes(&mut self, previous: Sha256Digest, record: Sha256Digest);
}

/// Implements [`EvidenceRecord`] for a record type with `previous_hash` and `record_hash`
/// fields: `impl_evidence_record!(Type, "kind", CURRENT_SCHEMA, OLDER_SCHEMA…)`.
macro_rules! impl_evidence_record {
    ($type:ty, $kind:literal, $($schema:path),+) => {
        impl $crate::record::EvidenceRecord for $type {
            const KIND: &'static str = $kind;

            fn schemas() -> &'static [&'static $crate::schemas::SchemaFile] {
                static SCHEMAS: &[&$crate::schemas::SchemaFile] = &[$(&$schema),+];
                SCHEMAS
            }

            fn previous_hash(&self) -> &::adamviz_model::digest::Sha256Digest {
                &self.previous_hash
            }

            fn record_hash(&self) -> &::adamviz_model::digest::Sha256Digest {
                &self.record_hash
            }

            fn set_hashes(
                &mut self,
                previous: ::adamviz_model::digest::Sha256Digest,
                record: ::adamviz_model::digest::Sha256Digest,
            ) {
                self.previous_hash = previous;
                self.record_hash = record;
            }
        }
    };
}
pub(crate) use impl_evidence_record;

/// Why a record was refused.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// Not JSON.
    #[error("the record is not JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The record breaks its schema; every violation, as `JSON path: message`.
    #[error("the {kind} record breaks its schema {schema}: {}", violations.join("; "))]
    Schema {
        /// The kind.
        kind: &'static str,
        /// The schema file.
        schema: &'static str,
        /// The violations.
        violations: Vec<String>,
    },
    /// Valid against the schema but not the Rust type (should not happen: a schema bug).
    #[error("the {kind} record does not fit its type: {source}")]
    Type {
        /// The kind.
        kind: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The bytes are not the record's canonical form.
    #[error("the {kind} record is not in canonical (RFC 8785) form")]
    NotCanonical {
        /// The kind.
        kind: &'static str,
    },
    /// The self-hash does not match.
    #[error("the {kind} record's content hashes to {actual}, but it says {claimed}")]
    SelfHash {
        /// The kind.
        kind: &'static str,
        /// What it says.
        claimed: Sha256Digest,
        /// What it hashes to.
        actual: Sha256Digest,
    },
    /// The record does not follow the expected predecessor.
    #[error("the {kind} record names {claimed} as its predecessor, expected {expected}")]
    Chain {
        /// The kind.
        kind: &'static str,
        /// What it names.
        claimed: Sha256Digest,
        /// The expected predecessor.
        expected: Sha256Digest,
    },
    /// The schema itself is unusable.
    #[error(transparent)]
    SchemaIdentity(#[from] SchemaIdentityError),
}

/// A record that has passed verification. Only [`Unverified::verify`] makes one (and
/// [`seal`], through it); it has no `Deserialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified<T> {
    record: T,
    canonical: Vec<u8>,
}

impl<T: EvidenceRecord> Verified<T> {
    /// The record.
    pub fn record(&self) -> &T {
        &self.record
    }

    /// Its canonical bytes (what is stored and hashed).
    pub fn canonical(&self) -> &[u8] {
        &self.canonical
    }

    /// Its self-hash.
    pub fn record_hash(&self) -> &Sha256Digest {
        self.record.record_hash()
    }
}

/// A record read from bytes, not yet checked.
#[derive(Debug, Clone)]
pub struct Unverified<T> {
    value: serde_json::Value,
    bytes: Vec<u8>,
    kind: std::marker::PhantomData<T>,
}

impl<T: EvidenceRecord> Unverified<T> {
    /// Parses `bytes` as JSON; nothing else is checked yet.
    pub fn parse(bytes: &[u8]) -> Result<Self, EvidenceError> {
        let value = serde_json::from_slice(bytes).map_err(EvidenceError::Json)?;
        Ok(Self {
            value,
            bytes: bytes.to_vec(),
            kind: std::marker::PhantomData,
        })
    }

    /// Verifies the record as the successor of `expected_previous`, in order:
    /// 1. the JSON Schema of its kind (every violation reported);
    /// 2. its Rust type (unknown fields refused);
    /// 3. the bytes are its canonical form;
    /// 4. its self-hash matches its content;
    /// 5. it names `expected_previous` as its predecessor.
    pub fn verify(self, expected_previous: &Sha256Digest) -> Result<Verified<T>, EvidenceError> {
        // 1. and 2.
        let record = check_schema_and_type::<T>(&self.value)?;
        // 3. Canonical form.
        let forms = canonical_forms(&self.value).map_err(EvidenceError::Json)?;
        if forms.full != self.bytes {
            return Err(EvidenceError::NotCanonical { kind: T::KIND });
        }
        let canonical = forms.full.clone();
        // 4. Self-hash.
        let actual = forms.self_hash();
        if &actual != record.record_hash() {
            return Err(EvidenceError::SelfHash {
                kind: T::KIND,
                claimed: *record.record_hash(),
                actual,
            });
        }
        // 5. Chain.
        if record.previous_hash() != expected_previous {
            return Err(EvidenceError::Chain {
                kind: T::KIND,
                claimed: *record.previous_hash(),
                expected: *expected_previous,
            });
        }
        Ok(Verified { record, canonical })
    }
}

/// Steps 1 and 2 of [`Unverified::verify`] on a parsed record: its kind's JSON Schema (every
/// violation reported) and its Rust type (unknown fields refused). The ledger audit uses it
/// for records whose canonical form, self-hash and link it has already checked.
pub fn check_schema_and_type<T: EvidenceRecord>(
    value: &serde_json::Value,
) -> Result<T, EvidenceError> {
    let schema = T::schema_of(value);
    let validator = compiled(schema)?;
    let violations: Vec<String> = validator
        .iter_errors(value)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    if !violations.is_empty() {
        return Err(EvidenceError::Schema {
            kind: T::KIND,
            schema: schema.file,
            violations,
        });
    }
    T::deserialize(value).map_err(|source| EvidenceError::Type {
        kind: T::KIND,
        source,
    })
}

/// Seals `record` as the successor of `previous`: sets the hashes, writes the canonical bytes,
/// and reads the record back from them through [`Unverified::verify`] (so a record that breaks
/// its schema is never written).
pub fn seal<T: EvidenceRecord>(
    mut record: T,
    previous: Sha256Digest,
) -> Result<Verified<T>, EvidenceError> {
    record.set_hashes(previous, Sha256Digest::from_bytes([0; 32]));
    let value = serde_json::to_value(&record).map_err(EvidenceError::Json)?;
    // Older versions are read, never written.
    let current = T::schema();
    if !std::ptr::eq(T::schema_of(&value), current) {
        return Err(EvidenceError::Schema {
            kind: T::KIND,
            schema: current.file,
            violations: vec![format!(
                "/schema_version: new records are written as {}",
                current.version()
            )],
        });
    }
    let hash = canonical_forms(&value)
        .map_err(EvidenceError::Json)?
        .self_hash();
    record.set_hashes(previous, hash);
    let canonical = serde_jcs::to_vec(&record).map_err(EvidenceError::Json)?;
    Unverified::<T>::parse(&canonical)?.verify(&previous)
}
