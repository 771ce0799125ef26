//! The JSON Schemas of the evidence records, compiled into the binary, and their public
//! identity constants: the SHA-256 of each file's raw bytes and of its canonical (RFC 8785)
//! JSON. [`check_schema_identities`] recomputes both at start; a schema file that differs from
//! the constants stops adamviz (schemas change by new versions, never in place).

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// One schema file, its identity and (compiled on first use) its validator.
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
    validator: OnceLock<Result<jsonschema::Validator, SchemaIdentityError>>,
}

/// A [`SchemaFile`] for `schemas/<file>` with its two identity constants.
macro_rules! schema_file {
    ($file:literal, $raw_sha256:literal, $canonical_sha256:literal) => {
        SchemaFile::new(
            $file,
            include_str!(concat!("../../../schemas/", $file)),
            $raw_sha256,
            $canonical_sha256,
        )
    };
}

/// `schemas/execution-request-v1.schema.json`.
pub static EXECUTION_REQUEST_V1: SchemaFile = schema_file!(
    "execution-request-v1.schema.json",
    "a30172382f361571af170d78f5a44d327b557d3449eef8ea0b108058002b5d41",
    "709d2bfd9412bc672dcfc6aef3c62f295d54f190c5d62956a8bb481d8a9911a9"
);

/// `schemas/execution-request-v2.schema.json` (harness `execution-harness-v2`).
pub static EXECUTION_REQUEST_V2: SchemaFile = schema_file!(
    "execution-request-v2.schema.json",
    "52a32e11cf68f2a1559928e93e6f6c6cccc64158db8c9f952856f608dedde904",
    "1aafda4bf3da7bb68e2920d31102ede5488f2d2b41b44681b5376892f534b96d"
);

/// `schemas/execution-result-v2.schema.json` (the runner's result; not a ledger record): the
/// isolation policy and every layer applied.
pub static EXECUTION_RESULT_V2: SchemaFile = schema_file!(
    "execution-result-v2.schema.json",
    "f936800d031dbc56053383209c5fa0b0f50d86b3df1951b2b9f222df85149809",
    "36cc63a71327db39789156e934cb769d922c468d435bf18061f7f7a381bfcf4d"
);

/// `schemas/execution-result-v1.schema.json` (the runner's result; not a ledger record).
pub static EXECUTION_RESULT_V1: SchemaFile = schema_file!(
    "execution-result-v1.schema.json",
    "67567c97ab578bfbe4d0eb948432ee75a841a3ae7edcf38d299af84fdd49be29",
    "27f75655cc1aa6870b911695b123ddacc7f7dfe06ff090258065e430013a44fa"
);

/// `schemas/execution-attempt-v1.schema.json`.
pub static EXECUTION_ATTEMPT_V1: SchemaFile = schema_file!(
    "execution-attempt-v1.schema.json",
    "757e92ae6a639ce1fa3a71fdc24f5935f52bf5a5a72ce1f1ddba37310822125f",
    "381c723329a9068ecca2614e80f8a775eafa74e39dbf77ec6198f07a1c2916f0"
);

/// `schemas/execution-verification-v1.schema.json`.
pub static EXECUTION_VERIFICATION_V1: SchemaFile = schema_file!(
    "execution-verification-v1.schema.json",
    "950c00c636ad457acf971b6db25403619d835b85e17a09523ce1b915100c9f5a",
    "a82dac7b095301c11eb8d9cd23f70689b5d4ed8148c13e4d606990e221b6e929"
);

/// `schemas/artifact-bundle-v1.schema.json`.
pub static ARTIFACT_BUNDLE_V1: SchemaFile = schema_file!(
    "artifact-bundle-v1.schema.json",
    "164f908969c964de595187640dae75e5f0aa05b569942e1632a50aa2a8b2b047",
    "dd3c3f5379cbfd09543747e57a1ed17680d72f3f37263bd4bda1ec8b5b5153fe"
);

/// `schemas/revision-lifecycle-v1.schema.json`.
pub static REVISION_LIFECYCLE_V1: SchemaFile = schema_file!(
    "revision-lifecycle-v1.schema.json",
    "08f39f049708aa231bc36618e1252914286bdbea50949d299b1a2a1944a18ff7",
    "f162cd5b64154e6cadca2c875bb68f993ed11d0807c5b2d984e33ae0ef183e5f"
);

/// `schemas/revision-context-v1.schema.json`.
pub static REVISION_CONTEXT_V1: SchemaFile = schema_file!(
    "revision-context-v1.schema.json",
    "327d85ee5f271e9eac31fafc3b7c868e50022f77d59b426c4724109fee9c760a",
    "d32d195372d3f46d0be165c66e286ffffec541ab889aad8353aa33ea94306d53"
);

/// `schemas/revision-context-v2.schema.json` (the result of schema `execution-result-v2`).
pub static REVISION_CONTEXT_V2: SchemaFile = schema_file!(
    "revision-context-v2.schema.json",
    "e650d13eea37361352ab23e7de204896f490ab9ad3934695a614516a4e8f6ca9",
    "e92f7547114e134a69b4e494a5271d0c643ecff341fce8de0324a7c3ea5b8856"
);

/// `schemas/execution-request-v3.schema.json`: names who acted.
pub static EXECUTION_REQUEST_V3: SchemaFile = schema_file!(
    "execution-request-v3.schema.json",
    "11448b8a054a429e0e77f7ca66a0d43b74422c57e287ad4404607a1521d03657",
    "ef5788f314003809167d0214cbed2b34b05d834d07e4595f3fdeeac5daa7a964"
);

/// `schemas/execution-attempt-v2.schema.json`: names who acted.
pub static EXECUTION_ATTEMPT_V2: SchemaFile = schema_file!(
    "execution-attempt-v2.schema.json",
    "9eab23a817f1b1acbda03f7e12f1e1e8cb34b5c75f039241de00031f7e7b3069",
    "1055727e37dd1ce1121bb07b3c0925d2b02525083beede5215fa7eff90695265"
);

/// `schemas/revision-lifecycle-v2.schema.json`: names who acted.
pub static REVISION_LIFECYCLE_V2: SchemaFile = schema_file!(
    "revision-lifecycle-v2.schema.json",
    "bca51c69e880eb7f8968510cfc1b5a0f07412b28021e41ba98d41b266febe27d",
    "e56040e69122725ce06a06c0d5916009902c58ced43fdf484e4a2d486fe2fb1b"
);

/// `schemas/revision-context-v3.schema.json`: names who acted.
pub static REVISION_CONTEXT_V3: SchemaFile = schema_file!(
    "revision-context-v3.schema.json",
    "5ecad930dde9edca043962bd60aaa5f3b411bd55b0599c8797f5f0f67f9b10c2",
    "32f04aac1080118b2343db84d14288d8b8d55c41d6ac3f88fa127cce2aa5c990"
);

/// `schemas/execution-request-v4.schema.json`: names the adamviz source it was written by.
pub static EXECUTION_REQUEST_V4: SchemaFile = schema_file!(
    "execution-request-v4.schema.json",
    "827ae2216b068ab7d5b59f3be6f8f5967c71511165c748c324a0b5e43236c54d",
    "80aeb4d480bf5657498c89b9b473f86b22d9c1130d77e68ee4a58aab4d921721"
);

/// `schemas/revision-context-v4.schema.json`: names the harness and the adamviz source.
pub static REVISION_CONTEXT_V4: SchemaFile = schema_file!(
    "revision-context-v4.schema.json",
    "1fee3a25d7554fff97556c391c0ced5b8d044f1283d13f2ee4fc71231e15fb66",
    "504cea32d36324acdf8d367ed14f96e6974e64407e578c39953fe5e575890bc8"
);

/// `schemas/revision-context-v5.schema.json`: the source format may be `dataset_json`.
pub static REVISION_CONTEXT_V5: SchemaFile = schema_file!(
    "revision-context-v5.schema.json",
    "63b5f799661e205557c49153b24f569fa7abcd42c39d32f05814215e36d659de",
    "3925e02b94b29e52c60c28056b6c94c04de17b82b6f4b07959907dca906f4508"
);

/// `schemas/revision-lifecycle-v3.schema.json`: adds `approved` and the parent revision.
pub static REVISION_LIFECYCLE_V3: SchemaFile = schema_file!(
    "revision-lifecycle-v3.schema.json",
    "8356cea5ca3fcf4cb5a1f3b4982ac5963803ac82eec8207e1ec507eca855425d",
    "b15faf2d641d9a72e5a10a9d76f46123d370e23552d97db04695bc8ecc9086d8"
);

/// `schemas/approval-v3.schema.json`: adds when and by whom the signer's password was last set
/// by someone else (an administrator's reset, the command line), if ever.
pub static APPROVAL_V3: SchemaFile = schema_file!(
    "approval-v3.schema.json",
    "f12c14c1c476cbbe79510e419c3d464af3f34fe062b581f4073e332b1d0bc776",
    "41b51af75d1f7335b020a88a280ba88f52b5ef21dc5fb96a98f569ec56487b49"
);

/// `schemas/approval-v2.schema.json`: adds when the signer last chose their own password and
/// when and by whom their reviewer role was granted.
pub static APPROVAL_V2: SchemaFile = schema_file!(
    "approval-v2.schema.json",
    "9b10f1276c6765ce159debe0c6f3ebd757de497eb5a3fbd33669ca381f4ed0a6",
    "4632b5a8129a7657031d70d1fda44855385e2afc0f64cb1d40c41b5406a25339"
);

/// `schemas/approval-v1.schema.json`: an electronic signature on a Verified revision.
pub static APPROVAL_V1: SchemaFile = schema_file!(
    "approval-v1.schema.json",
    "dc0f40617bc008ad8955524772a9816862f0a4de578367e58f1a81c96cb18bce",
    "4bed3dd63e33532ff88893a818d98ea65e20484df27dc6d30385828d327419a2"
);

/// `schemas/reproduction-v1.schema.json`: a retained result run again.
pub static REPRODUCTION_V1: SchemaFile = schema_file!(
    "reproduction-v1.schema.json",
    "37698e1baf435c1451ac203415228e236b24638dedcf3bd4a0ae1ea02940cbce",
    "3b1d02c1ce62d17d18a3094b6dec0c191ececfa5410f1a6a67dbb6b064c12921"
);

/// `schemas/execution-request-v5.schema.json`: harness `execution-harness-v3`, with the title
/// and footnotes of the report-ready figure (`report`).
pub static EXECUTION_REQUEST_V5: SchemaFile = schema_file!(
    "execution-request-v5.schema.json",
    "a4f7708e333d9115f57667f300a55abded93f66cb4ff58b2210875a533dfefc8",
    "2476ae93a5a11306c6e269ac539d99aee6e8dff9438dd2009f51ace1836097af"
);

/// `schemas/execution-result-v3.schema.json` (the runner's result; not a ledger record): harness
/// `execution-harness-v3`, whose outputs add plot.pdf, plot.svg and statistics.csv.
pub static EXECUTION_RESULT_V3: SchemaFile = schema_file!(
    "execution-result-v3.schema.json",
    "23c3d0e5682f3d4b686b9478b2ca2cb430d088ff1aafbd284093c47ee6b217c2",
    "d5e63c96415111b3622830b9080fa75656f9777575f234917c165f9dd1b2a410"
);

/// `schemas/revision-context-v6.schema.json`: the result of schema `execution-result-v3`.
pub static REVISION_CONTEXT_V6: SchemaFile = schema_file!(
    "revision-context-v6.schema.json",
    "62e11af4ddbbac2e303635663897614dceb46983ea7fd674e23cc94e4666a8b5",
    "be2d4d4ad511e820347e8ec9201c27b6e35e8868e0a011bd7188e6fef237f39b"
);

/// `schemas/artifact-bundle-v2.schema.json`: adds the report-ready PDF, SVG and statistics CSV.
pub static ARTIFACT_BUNDLE_V2: SchemaFile = schema_file!(
    "artifact-bundle-v2.schema.json",
    "153702f638bb311b8192c00f3c7e8c949c9b6574a0447e40e19bb078fbf29d6e",
    "574b45ed5b60a9b5c8d0b05f8796c95391314a59ede3d0f4e0298ed1651db62f"
);

/// `schemas/execution-verification-v2.schema.json`: eleven checks, adding `report_outputs`.
pub static EXECUTION_VERIFICATION_V2: SchemaFile = schema_file!(
    "execution-verification-v2.schema.json",
    "6011fcd0686c756d22d084a88f42f88a728a8e1c7eb25879b095feb46a564d28",
    "791592bd4d5e5f8c46e033369b16770810d5a605a93fbeb5b88509dbff0bc9a2"
);

/// Every schema adamviz knows: the versions it writes and the older ones it still reads.
pub static ALL_SCHEMAS: [&SchemaFile; 27] = [
    &EXECUTION_REQUEST_V5,
    &EXECUTION_REQUEST_V4,
    &EXECUTION_REQUEST_V3,
    &EXECUTION_REQUEST_V2,
    &EXECUTION_REQUEST_V1,
    &EXECUTION_RESULT_V3,
    &EXECUTION_RESULT_V2,
    &EXECUTION_RESULT_V1,
    &EXECUTION_ATTEMPT_V2,
    &EXECUTION_ATTEMPT_V1,
    &EXECUTION_VERIFICATION_V2,
    &EXECUTION_VERIFICATION_V1,
    &ARTIFACT_BUNDLE_V2,
    &ARTIFACT_BUNDLE_V1,
    &REVISION_LIFECYCLE_V3,
    &REVISION_LIFECYCLE_V2,
    &APPROVAL_V3,
    &APPROVAL_V2,
    &APPROVAL_V1,
    &REPRODUCTION_V1,
    &REVISION_LIFECYCLE_V1,
    &REVISION_CONTEXT_V6,
    &REVISION_CONTEXT_V5,
    &REVISION_CONTEXT_V4,
    &REVISION_CONTEXT_V3,
    &REVISION_CONTEXT_V2,
    &REVISION_CONTEXT_V1,
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
    /// A schema file `file` with text `raw` and the identity it must have.
    pub const fn new(
        file: &'static str,
        raw: &'static str,
        raw_sha256: &'static str,
        canonical_sha256: &'static str,
    ) -> Self {
        Self {
            file,
            raw,
            raw_sha256,
            canonical_sha256,
            validator: OnceLock::new(),
        }
    }

    /// The `schema_version` a document of this schema carries: the file name without
    /// `.schema.json` (`execution-request-v2`).
    pub fn version(&self) -> &'static str {
        self.file.trim_end_matches(".schema.json")
    }

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

/// The compiled validator of `schema` (compiled once, on first use).
pub fn compiled(
    schema: &'static SchemaFile,
) -> Result<&'static jsonschema::Validator, SchemaIdentityError> {
    schema
        .validator
        .get_or_init(|| {
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
