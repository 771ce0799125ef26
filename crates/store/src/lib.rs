//! adamviz's store: the content-addressed object store under the data directory
//! (`objects`), the SQLite database with its migrations (`db`), and the append-only evidence
//! ledger in it (`ledger`), the revisions, attempts and bundles (`repository`), and the
//! whole-store audit (`audit`), the accounts' sessions (`sessions`).
//!
//! The seam a second database plugs into: the web crate's use cases call functions here and
//! hold no SQL of their own.

pub mod accounts;
pub mod audit;
pub mod copies;
pub mod data_cuts;
pub mod datasets;
pub mod db;
pub mod figure_sets;
pub mod health;
pub mod history;
pub mod ledger;
pub mod login_failures;
pub mod objects;
pub mod owner;
pub mod private_files;
pub mod repository;
pub mod revision_views;
pub mod run_queue;
pub mod sessions;
pub mod signatures;
pub mod sql;
pub mod transfer;
pub mod work_list;
