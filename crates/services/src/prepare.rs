//! Preparing an execution: a confirmed spec and the dataset it was confirmed against become the
//! snapshot (the selected records), its hash, and the compiled script: everything the runner
//! needs, with the hashes it will check.

use std::sync::Arc;

use adamviz_engine::compiler::{compile_boxplot_script, CompileError, CompiledScript, ImageSize};
use adamviz_engine::ingest::{
    snapshot::{snapshot_hash, take_snapshot, Snapshot, SnapshotError},
    table::Table,
};
use adamviz_engine::runner::RunRequest;
use adamviz_model::{digest::Sha256Digest, spec::PlotSpec};

/// The inputs of one execution.
#[derive(Debug, Clone)]
pub struct PreparedExecution {
    /// The selected records.
    pub snapshot: Arc<Snapshot>,
    /// Their canonical hash.
    pub snapshot_hash: Sha256Digest,
    /// The script for them.
    pub script: CompiledScript,
    /// PNG size.
    pub image: ImageSize,
}

/// Why an execution cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The spec names another dataset.
    #[error("the spec is for dataset {expected}, but this dataset hashes to {actual}")]
    WrongDataset {
        /// The spec's dataset content hash.
        expected: Sha256Digest,
        /// This dataset's.
        actual: Sha256Digest,
    },
    /// The records could not be selected.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The script could not be compiled.
    #[error(transparent)]
    Compile(#[from] CompileError),
}

/// Selects the records of `spec` from `table` (whose upload hashes to `content_hash`) and
/// compiles the script for them.
pub fn prepare_execution(
    spec: &PlotSpec,
    table: &Table,
    content_hash: &Sha256Digest,
    image: ImageSize,
) -> Result<PreparedExecution, PrepareError> {
    if &spec.dataset_content_hash != content_hash {
        return Err(PrepareError::WrongDataset {
            expected: spec.dataset_content_hash,
            actual: *content_hash,
        });
    }
    let snapshot = take_snapshot(spec, table)?;
    let hash = snapshot_hash(&snapshot);
    let script = compile_boxplot_script(spec, &snapshot.columns, &hash, image)?;
    Ok(PreparedExecution {
        snapshot: Arc::new(snapshot),
        snapshot_hash: hash,
        script,
        image,
    })
}

impl PreparedExecution {
    /// The runner request, expecting exactly these hashes.
    pub fn run_request(&self) -> RunRequest {
        RunRequest {
            script: self.script.bytes.clone(),
            expected_script_hash: self.script.script_hash,
            snapshot: Arc::clone(&self.snapshot),
            expected_snapshot_hash: self.snapshot_hash,
            image: self.image,
            report: None,
        }
    }
}
