//! Verification of execution results, under the paths the web crate has always used: the named
//! checks on a run (`execution`, crate `adamviz-evidence`) and the independent recomputation of
//! the statistics (`independent_statistics`, crate `adamviz-engine`).

pub use adamviz_engine::verify::independent_statistics;
pub use adamviz_evidence::execution_checks as execution;
