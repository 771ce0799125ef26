//! `adamviz-bench execute`: the R-side benchmark. In one run, on the ALT spec of a SAS XPORT
//! file (default: the CDISC pilot's ADLBC), it times, interleaved round by round: a bare
//! `Rscript --vanilla script.R snapshot.csv outdir` of the compiled script; the governed
//! execution through the runner (hash checks, working directory, sandbox, R with the harness,
//! outputs read and hashed, clean-up); and the same with a warm pool of R processes started
//! ahead of time. It prints the figures and the targets; it never fails because one is missed.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};

use anyhow::{bail, Context as _};
use clap::Args;

use crate::bench::median;

use adamviz_engine::compiler::ImageSize;
use adamviz_engine::ingest::{profile::profile_table, snapshot::write_csv};
use adamviz_engine::runner::{RunStatus, Runner, RunnerConfig};
use adamviz_model::profile::DEFAULT_LOW_N_THRESHOLD;
use adamviz_services::{
    drafts::confirm_proposal,
    prepare::{prepare_execution, PreparedExecution},
};

/// Options of `adamviz-bench execute`.
#[derive(Debug, Args)]
pub struct ExecuteBenchArgs {
    /// The SAS XPORT (or CSV) file whose ALT spec is run.
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub data: PathBuf,
    /// The question the spec is drafted from.
    #[arg(long, default_value = "ALT over time by arm")]
    pub question: String,
    /// Rounds; each round runs every mode once.
    #[arg(long, default_value_t = 7)]
    pub repeats: usize,
    /// The Rscript executable.
    #[arg(long, default_value = "Rscript")]
    pub rscript: PathBuf,
}

/// Runs `adamviz-bench execute`.
pub async fn run_execute_bench(args: ExecuteBenchArgs) -> anyhow::Result<()> {
    // Mapped, as uploads are read: the file is never copied whole into memory.
    let bytes = adamviz_engine::ingest::MappedFile::open(&args.data)?;
    let content_hash = adamviz_model::digest::Sha256Digest::from_bytes(
        <sha2::Sha256 as sha2::Digest>::digest(&*bytes).into(),
    );
    let table = adamviz_engine::ingest::read_dataset(&bytes)?;
    let profile = profile_table(&table, content_hash, DEFAULT_LOW_N_THRESHOLD);
    let spec = confirm_proposal(&args.question, &profile, &table, content_hash)?;
    let prepared = prepare_execution(&spec, &table, &content_hash, ImageSize::default())?;
    let work = tempfile::tempdir()?;
    let script_path = work.path().join("script.R");
    let csv_path = work.path().join("snapshot.csv");
    std::fs::write(&script_path, &prepared.script.bytes)?;
    let mut csv = Vec::new();
    write_csv(&prepared.snapshot, &mut csv)?;
    std::fs::write(&csv_path, &csv)?;

    let mut config = RunnerConfig::new();
    config.rscript = args.rscript.clone();
    config.work_root = work.path().join("runs");
    let cold = Runner::new(config.clone());
    let mut pooled_config = config;
    pooled_config.pool_size = 1;
    let pooled = Runner::new(pooled_config);

    println!(
        "adamviz-bench execute: {} — {:?}: {} records, script {} bytes, {} rounds",
        args.data.display(),
        args.question,
        prepared.snapshot.rows.len(),
        prepared.script.bytes.len(),
        args.repeats
    );
    let (mut bare, mut governed, mut warm) = (Vec::new(), Vec::new(), Vec::new());
    // One untimed round first: page cache, font cache.
    for round in 0..=args.repeats {
        // The pool refills in the background after each take: wait (untimed) until its new
        // process is up, so that its start-up does not compete with the timed runs.
        pooled.wait_for_pool(1).await;
        let out = work.path().join(format!("bare-{round}"));
        let bare_s = bare_run(&args.rscript, &script_path, &csv_path, &out, work.path())?;
        let governed_s = governed_run(&cold, &prepared, "governed").await?;
        let warm_s = governed_run(&pooled, &prepared, "pooled").await?;
        if round > 0 {
            println!(
                "  round {round}: bare {bare_s:.3} s  governed {governed_s:.3} s  pooled {warm_s:.3} s"
            );
            bare.push(bare_s);
            governed.push(governed_s);
            warm.push(warm_s);
        }
    }
    print_summary(&bare, &governed, &warm);
    Ok(())
}

/// One run of the script with plain `Rscript --vanilla`, no runner; its seconds.
pub(crate) fn bare_run(
    rscript: &Path,
    script_path: &Path,
    csv_path: &Path,
    out: &Path,
    dir: &Path,
) -> anyhow::Result<f64> {
    let started = Instant::now();
    let status = Command::new(rscript)
        .arg("--vanilla")
        .arg(script_path)
        .arg(csv_path)
        .arg(out)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .with_context(|| format!("cannot start {}", rscript.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!("the bare run failed: {status}");
    }
    Ok(seconds)
}

/// One run through `runner` (a `pooled` one must have used its warm process); its seconds.
async fn governed_run(
    runner: &Runner,
    prepared: &PreparedExecution,
    what: &str,
) -> anyhow::Result<f64> {
    let started = Instant::now();
    let result = runner.run(prepared.run_request()).await;
    let seconds = started.elapsed().as_secs_f64();
    let pool_kept = what != "pooled" || result.pooled;
    if result.status != RunStatus::Succeeded || !pool_kept {
        bail!(
            "the {what} run failed: {:?}\n{}",
            result.failure,
            result.stderr.text
        );
    }
    Ok(seconds)
}

/// The medians, best times and ratios against the bare run, with their targets.
fn print_summary(bare: &[f64], governed: &[f64], warm: &[f64]) {
    let bare_median = median(bare.to_vec());
    let governed_median = median(governed.to_vec());
    let warm_median = median(warm.to_vec());
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    println!();
    println!("| run | median | best | × bare (median) | target |");
    println!("|---|---|---|---|---|");
    println!(
        "| bare `Rscript --vanilla script.R snapshot.csv` | {bare_median:.3} s | {:.3} s | 1.00 | |",
        min(bare)
    );
    let verdict = |ratio: f64, target: f64| if ratio <= target { "met" } else { "MISSED" };
    let governed_ratio = governed_median / bare_median;
    println!(
        "| governed (runner, no pool) | {governed_median:.3} s | {:.3} s | {governed_ratio:.2} | ≤ 1.15 — {} |",
        min(governed),
        verdict(governed_ratio, 1.15)
    );
    let warm_ratio = warm_median / bare_median;
    println!(
        "| governed, warm pool | {warm_median:.3} s | {:.3} s | {warm_ratio:.2} | ≤ 0.70 — {} |",
        min(warm),
        verdict(warm_ratio, 0.70)
    );
}
