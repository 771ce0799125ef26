//! Pure domain types shared by the server and the browser: no HTTP, SQL, files or processes.

pub mod account;
pub mod classification;
pub mod confirmation;
pub mod dataset;
pub mod digest;
pub mod draft;
pub mod ids;
pub mod matcher;
pub mod profile;
pub mod records;
pub mod revision;
pub mod spec;
pub mod statistics;
