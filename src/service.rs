//! Application services (ssr only): the steps of the flow that combine storage and domain
//! logic. A server function or CLI command calls one of these; they know nothing of HTTP.

pub mod accounts;
pub mod approvals;
pub mod bundle;
pub mod confirm;
pub mod data_cuts;
pub mod datasets;
pub mod drafts;
pub mod error;
pub mod execution;
pub mod figure_sets;
pub mod history;
pub mod installation_key;
pub mod prepare;
pub mod reproduction;
pub mod revisions;
pub mod runs;
pub mod set_bundle;
pub mod startup;
pub mod upload;
pub mod work_list;
