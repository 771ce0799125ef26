//! Evidence records: typed, schema-checked, RFC 8785 canonical JSON with a SHA-256 self-hash
//! and the hash of their predecessor. `schemas` holds the JSON Schemas (compiled in, with their
//! identity constants); `record` the sealing and the two-step reading (parse → unverified,
//! verify → [`record::Verified`]); one module per kind defines its Rust type.

pub mod actor;
pub mod approval;
pub mod artifact_bundle;
pub mod canonical;
pub mod dsse;
pub mod execution_attempt;
pub mod execution_request;
pub mod execution_verification;
pub mod kinds;
pub mod record;
pub mod reproduction;
pub mod revision_context;
pub mod revision_lifecycle;
pub mod schemas;
pub mod summary;
pub mod validate;
