//! adamviz's engine: the work on data that needs no database and no web. `ingest` reads uploads
//! (CSV, SAS XPORT) into a table, profiles it and builds the snapshot; `question` turns a
//! question in words into a confirmed spec (matcher, confirmation questions, records);
//! `compiler` turns a confirmed spec into a deterministic R script; `runner` runs it in a sandboxed R subprocess; `verify` runs the named checks on the result,
//! including an independent recomputation of the statistics.

// The model's types under the name the modules have always used (`adamviz_model::…`).

pub mod compiler;
pub mod ingest;
pub mod question;
pub mod runner;
pub mod verify;
