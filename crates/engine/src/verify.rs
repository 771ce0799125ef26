//! Verification that needs nothing but the data: `independent_statistics` recomputes the boxplot
//! statistics from the snapshot without R and compares them with what R reported. The named
//! checks on a whole run, which read evidence records, are the web crate's `verify::execution`.

pub mod independent_statistics;
