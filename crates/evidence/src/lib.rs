//! Evidence records: typed, schema-checked, RFC 8785 canonical JSON with a SHA-256 self-hash
//! and the hash of their predecessor. `schemas` holds the JSON Schemas (compiled in, with their
//! identity constants); `record` the sealing and the two-step reading (parse → unverified,
//! verify → [`record::Verified`]); one module per kind defines its Rust type.
//! `execution_checks` runs the named checks on one run; `bundle_format` is the evidence bundle's
//! manifest; `validate` is the offline validator (`adamviz evidence validate`, and the standalone
//! `adamviz-verify` binary of this crate, `cli`).
//!
//! This crate is the part an auditor must trust, so it depends on the model and the engine
//! only: no database, web server or password hashing in its dependency tree
//! (`tests/evidence_crate_dependencies.rs` checks it).

pub mod actor;
pub mod approval;
pub mod artifact_bundle;
pub mod bundle_format;
pub mod canonical;
pub mod cli;
pub mod dsse;
pub mod execution_attempt;
pub mod execution_checks;
pub mod execution_request;
pub mod execution_verification;
pub mod kinds;
pub mod record;
pub mod reproduction;
pub mod revision_context;
pub mod revision_lifecycle;
pub mod schemas;
pub mod set_bundle;
pub mod summary;
pub mod validate;
