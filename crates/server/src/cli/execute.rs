//! `adamviz compile` and `adamviz execute`: the R side without the store. `compile` prints or
//! writes the script for a confirmed spec; `execute` compiles, snapshots and runs it through the
//! sandboxed runner and writes every input and output with a result JSON naming their hashes.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::Args;
use serde::Serialize;

use super::spec::{load, read_spec};
use adamviz_engine::compiler::ImageSize;
use adamviz_engine::ingest::snapshot::write_csv;
use adamviz_engine::runner::{RunResult, RunStatus, Runner, RunnerConfig};
use adamviz_model::digest::Sha256Digest;
use adamviz_services::prepare::prepare_execution;

/// Options of `adamviz compile`.
#[derive(Debug, Args)]
pub struct CompileArgs {
    /// The confirmed spec (output of `spec confirm`).
    pub spec: PathBuf,
    /// The dataset the spec was confirmed against: the script's header and column classes
    /// come from its snapshot.
    #[arg(long)]
    pub data: PathBuf,
    /// Write the script here instead of standard output.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
}

/// Options of `adamviz execute`.
#[derive(Debug, Args)]
pub struct ExecuteArgs {
    /// The dataset.
    pub file: PathBuf,
    /// The confirmed spec.
    #[arg(long)]
    pub spec: PathBuf,
    /// Directory for script.R, snapshot.csv, the outputs and result.json (created if needed).
    #[arg(long)]
    pub out: PathBuf,
    /// The Rscript executable.
    #[arg(long, default_value = "Rscript")]
    pub rscript: PathBuf,
    /// Wall-clock limit in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    pub timeout_ms: u64,
    /// `require`: every layer of the sandbox or no run; `best-effort`: run with the layers this
    /// machine allows (recorded in result.json, warned about).
    #[arg(long, value_enum, env = "ADAMVIZ_ISOLATION", default_value = "require")]
    pub isolation: adamviz_engine::runner::sandbox::IsolationPolicy,
}

/// Reads the dataset and the confirmed spec and prepares the execution (snapshot + script).
fn load_prepared(
    data: &std::path::Path,
    spec: &std::path::Path,
) -> anyhow::Result<adamviz_services::prepare::PreparedExecution> {
    let dataset = load(data)?;
    let spec = read_spec(spec)?;
    Ok(prepare_execution(
        &spec,
        &dataset.table,
        &dataset.content_hash,
        ImageSize::default(),
    )?)
}

/// Runs `adamviz compile`.
pub fn run_compile(args: CompileArgs) -> anyhow::Result<()> {
    let prepared = load_prepared(&args.data, &args.spec)?;
    match args.output {
        Some(path) => {
            std::fs::write(&path, &prepared.script.bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!(
                "wrote {} (script hash {})",
                path.display(),
                prepared.script.script_hash
            );
        }
        None => {
            use std::io::Write as _;
            std::io::stdout().write_all(&prepared.script.bytes)?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct ExecuteReport<'a> {
    spec_hash: Sha256Digest,
    script_hash: Sha256Digest,
    snapshot_hash: Sha256Digest,
    snapshot_csv_sha256: Sha256Digest,
    result: &'a RunResult,
}

/// Runs `adamviz execute`; exits non-zero (after writing result.json) when the run failed.
pub async fn run_execute(args: ExecuteArgs) -> anyhow::Result<()> {
    // Reading, snapshot and compilation are CPU work: off the async executor.
    let (file, spec) = (args.file.clone(), args.spec.clone());
    let prepared = tokio::task::spawn_blocking(move || load_prepared(&file, &spec)).await??;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let write = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let path = args.out.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    };
    let mut csv = Vec::new();
    write_csv(&prepared.snapshot, &mut csv)?;
    write("script.R", &prepared.script.bytes)?;
    write("snapshot.csv", &csv)?;
    let mut config = RunnerConfig::new();
    config.rscript = args.rscript;
    config.limits.wall_clock_ms = args.timeout_ms;
    config.isolation = args.isolation;
    let runner = Runner::new(config);
    let result = runner.run(prepared.run_request()).await;
    for output in &result.outputs {
        write(&output.name, &output.bytes)?;
    }
    let report = ExecuteReport {
        spec_hash: prepared.script.spec_hash,
        script_hash: prepared.script.script_hash,
        snapshot_hash: prepared.snapshot_hash,
        snapshot_csv_sha256: Sha256Digest::from_bytes(
            <sha2::Sha256 as sha2::Digest>::digest(&csv).into(),
        ),
        result: &result,
    };
    write("result.json", &serde_json::to_vec_pretty(&report)?)?;
    println!("status: {:?}", result.status);
    println!("spec hash: {}", report.spec_hash);
    println!("script hash: {}", report.script_hash);
    println!("snapshot hash: {}", report.snapshot_hash);
    for output in &result.outputs {
        println!("{}: {}", output.name, output.sha256);
    }
    println!("R run: {} ms", result.duration_ms);
    if result.status != RunStatus::Succeeded {
        let reason = result
            .failure
            .as_ref()
            .map_or_else(|| "unknown".to_owned(), ToString::to_string);
        bail!(
            "the run failed: {reason}\n{}",
            result.stderr.text.trim_end()
        );
    }
    Ok(())
}
