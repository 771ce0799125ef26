//! Storage (ssr only): the content-addressed object store under the data directory
//! (`objects`), the SQLite database with its migrations (`db`), and the append-only evidence
//! ledger in it (`ledger`), the revisions, attempts and bundles (`repository`), and the
//! whole-store audit (`audit`).

pub mod audit;
pub mod db;
pub mod ledger;
pub mod objects;
pub mod owner;
pub mod repository;
pub mod sessions;
