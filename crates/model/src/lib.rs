//! adamviz's model: the pure domain types shared by the server and the browser (ids, digests,
//! the plot spec, profiles, statistics, drafts, revisions, accounts), and the deterministic
//! question matcher and confirmation questions over them. Serde only: no HTTP, SQL, files or
//! processes, so the browser build (wasm) depends on this crate and nothing else of adamviz.

pub mod account;
pub mod classification;
pub mod confirmation;
pub mod data_cut;
pub mod dataset;
pub mod digest;
pub mod draft;
pub mod figure_set;
pub mod ids;
pub mod matcher;
pub mod profile;
pub mod provenance;
pub mod records;
pub mod revision;
pub mod spec;
pub mod statistics;
pub mod work_list;
