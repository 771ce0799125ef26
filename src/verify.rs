//! Verification of execution results. `execution` runs the named checks
//! (`verify_execution_result`); `independent_statistics` recomputes the boxplot statistics from
//! the snapshot without R and compares them with what R reported.

pub mod execution;
pub mod independent_statistics;
