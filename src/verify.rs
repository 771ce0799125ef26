//! Verification of execution results. `independent_statistics` recomputes the boxplot
//! statistics from the snapshot without R and compares them with what R reported.

pub mod independent_statistics;
