//! Pure domain types shared by the server and the browser: no HTTP, SQL, files or processes.

pub mod classification;
pub mod digest;
pub mod profile;
