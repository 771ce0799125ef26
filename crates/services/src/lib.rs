//! adamviz's use cases, end to end: the steps of the flow that combine storage and domain logic
//! (upload with its cleanup, confirm, run, sign, reproduce, figure sets, data cuts, accounts,
//! the work list). A server function or a command calls one of these; they know nothing of HTTP.

pub mod accounts;
pub mod approvals;
pub mod bundle;
pub mod clock;
pub mod confirm;
pub mod data_cuts;
pub mod database;
pub mod datasets;
pub mod drafts;
pub mod error;
pub mod execution;
pub mod figure_sets;
pub mod history;
pub mod installation_key;
pub mod prepare;
pub mod provenance;
pub mod reproduction;
pub mod revisions;
pub mod runs;
pub mod services;
pub mod set_bundle;
pub mod startup;
pub mod upload;
pub mod work_list;

pub use services::Services;
