//! The JSON Schemas of the evidence records, compiled into the binary, and their public
//! identity constants: the SHA-256 of each file's raw bytes and of its canonical (RFC 8785)
//! JSON. [`check_schema_identities`] recomputes both at start; a schema file that differs from
//! the constants stops adamviz (schemas change by new versions, never in place).

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// One schema file and its identity.
#[derive(Debug)]
pub struct SchemaFile {
    /// File name under `schemas/`.
    pub file: &'static str,
    /// The file's text.
    pub raw: &'static str,
    /// SHA-256 of the raw bytes (lowercase hex).
    pub raw_sha256: &'static str,
    /// SHA-256 of the canonical JSON (lowercase hex).
    pub canonical_sha256: &'static str,
}

/// `schemas/execution-request-v1.schema.json`.
pub static EXECUTION_REQUEST_V1: SchemaFile = SchemaFile {
    file: "execution-request-v1.schema.json",
    raw: include_str!("../../schemas/execution-request-v1.schema.json"),
    raw_sha256: "a30172382f361571af170d78f5a44d327b557d3449eef8ea0b108058002b5d41",
    canonical_sha256: "709d2bfd9412bc672dcfc6aef3c62f295d54f190c5d62956a8bb481d8a9911a9",
};

/// `schemas/execution-result-v1.schema.json` (the runner's result; not a ledger record).
pub static EXECUTION_RESULT_V1: SchemaFile = SchemaFile {
    file: "execution-result-v1.schema.json",
    raw: include_str!("../../schemas/execution-result-v1.schema.json"),
    raw_sha256: "67567c97ab578bfbe4d0eb948432ee75a841a3ae7edcf38d299af84fdd49be29",
    canonical_sha256: "27f75655cc1aa6870b911695b123ddacc7f7dfe06ff090258065e430013a44fa",
};

/// `schemas/execution-verification-v1.schema.json`.
pub static EXECUTION_VERIFICATION_V1: SchemaFile = SchemaFile {
    file: "execution-verification-v1.schema.json",
    raw: include_str!("../../schemas/execution-verification-v1.schema.json"),
    raw_sha256: "950c00c636ad457acf971b6db25403619d835b85e17a09523ce1b915100c9f5a",
    canonical_sha256: "a82dac7b095301c11eb8d9cd23f70689b5d4ed8148c13e4d606990e221b6e929",
};

/// Every schema adamviz knows.
pub static ALL_SCHEMAS: [&SchemaFile; 3] = [
    &EXECUTION_REQUEST_V1,
    &EXECUTION_RESULT_V1,
    &EXECUTION_VERIFICATION_V1,
];

/// Every violation of `schema` by `value`, as `JSON path: message` (empty when valid).
pub fn violations(
    schema: &'static SchemaFile,
    value: &serde_json::Value,
) -> Result<Vec<String>, SchemaIdentityError> {
    Ok(compiled(schema)?
        .iter_errors(value)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect())
}

/// Why the schemas cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaIdentityError {
    /// A file's bytes differ from its constant.
    #[error("schema {file} hashes to {actual} (raw bytes), but this build was made for {expected}: schemas change by new versions, never in place")]
    RawChanged {
        /// The file.
        file: &'static str,
        /// The compiled-in constant.
        expected: &'static str,
        /// What the file hashes to.
        actual: String,
    },
    /// A file's canonical form differs from its constant.
    #[error("schema {file} canonicalizes to {actual}, but this build was made for {expected}")]
    CanonicalChanged {
        /// The file.
        file: &'static str,
        /// The compiled-in constant.
        expected: &'static str,
        /// What its canonical JSON hashes to.
        actual: String,
    },
    /// A file is not a valid JSON Schema.
    #[error("schema {file} is not a valid JSON Schema (Draft 2020-12): {detail}")]
    Invalid {
        /// The file.
        file: &'static str,
        /// Why.
        detail: String,
    },
}

impl SchemaFile {
    /// Recomputes both identities of this schema.
    pub fn check_identity(&self) -> Result<(), SchemaIdentityError> {
        let raw = hex::encode(Sha256::digest(self.raw.as_bytes()));
        if raw != self.raw_sha256 {
            return Err(SchemaIdentityError::RawChanged {
                file: self.file,
                expected: self.raw_sha256,
                actual: raw,
            });
        }
        let value: serde_json::Value =
            serde_json::from_str(self.raw).map_err(|e| SchemaIdentityError::Invalid {
                file: self.file,
                detail: e.to_string(),
            })?;
        let canonical = serde_jcs::to_vec(&value).map_err(|e| SchemaIdentityError::Invalid {
            file: self.file,
            detail: e.to_string(),
        })?;
        let canonical = hex::encode(Sha256::digest(canonical));
        if canonical != self.canonical_sha256 {
            return Err(SchemaIdentityError::CanonicalChanged {
                file: self.file,
                expected: self.canonical_sha256,
                actual: canonical,
            });
        }
        Ok(())
    }
}

/// Checks every schema's identity and that each compiles; run at start.
pub fn check_schema_identities() -> Result<(), SchemaIdentityError> {
    for schema in ALL_SCHEMAS {
        schema.check_identity()?;
        compiled(schema)?;
    }
    Ok(())
}

/// The compiled validator of `schema` (compiled once).
pub fn compiled(
    schema: &'static SchemaFile,
) -> Result<&'static jsonschema::Validator, SchemaIdentityError> {
    type Slot = OnceLock<Result<jsonschema::Validator, SchemaIdentityError>>;
    static EXECUTION_REQUEST: Slot = OnceLock::new();
    static EXECUTION_RESULT: Slot = OnceLock::new();
    static EXECUTION_VERIFICATION: Slot = OnceLock::new();
    let cell = match schema.file {
        "execution-request-v1.schema.json" => &EXECUTION_REQUEST,
        "execution-result-v1.schema.json" => &EXECUTION_RESULT,
        "execution-verification-v1.schema.json" => &EXECUTION_VERIFICATION,
        other => {
            return Err(SchemaIdentityError::Invalid {
                file: schema.file,
                detail: format!("no validator slot for {other}"),
            })
        }
    };
    cell.get_or_init(|| {
        let value: serde_json::Value =
            serde_json::from_str(schema.raw).map_err(|e| SchemaIdentityError::Invalid {
                file: schema.file,
                detail: e.to_string(),
            })?;
        jsonschema::draft202012::new(&value).map_err(|e| SchemaIdentityError::Invalid {
            file: schema.file,
            detail: e.to_string(),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}
