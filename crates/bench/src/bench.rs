//! `adamviz-bench ingest`: the data-in benchmark. In one run it measures, on a SAS XPORT file,
//! a CSV of it and a generated copy ten times larger (as XPT and CSV): the upload path (the
//! bytes streamed into a fresh object store while hashed, then read from there) + profile, time
//! and peak memory, each in a fresh child process, against R's `haven::read_xpt` and
//! `data.table::fread` timed inside R — at the same core count: adamviz pinned to one core
//! against fread with one thread (both pinned), and adamviz on every core against fread with
//! every thread; and the throughput of the canonical snapshot hash against plain SHA-256 of the
//! same bytes; and the same upload + profile of the XPT's data written as CDISC Dataset-JSON
//! v1.1 (JSON, NDJSON and compressed NDJSON) against the XPT itself. It prints figures and the
//! targets they are held to; it never fails because a target is missed.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use clap::Args;
use sha2::{Digest, Sha256};

use adamviz_engine::ingest::dataset_json::{
    writer::{compress, write as write_dataset_json, Form},
    Framing,
};
use adamviz_engine::ingest::{
    csv::write_table_csv,
    profile::profile_table,
    read_dataset,
    snapshot::{snapshot_hash, take_snapshot, write_canonical},
    table::{Column, ColumnData, NumericValues, Table, TextBuilder},
    xpt_writer::write_xpt,
};
use adamviz_model::{digest::Sha256Digest, profile::DEFAULT_LOW_N_THRESHOLD};
use adamviz_services::drafts::confirm_proposal;
use adamviz_services::upload::{receive_upload, DEFAULT_UPLOAD_LIMIT};
use adamviz_store::objects::ObjectStore;

mod snapshot;

use snapshot::bench_snapshot;

/// Options of `adamviz-bench ingest`.
#[derive(Debug, Args)]
pub struct IngestBenchArgs {
    /// The SAS XPORT file to start from (the CSV and the larger copy are made from it).
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub xpt: PathBuf,
    /// How many times larger the generated copy is.
    #[arg(long, default_value_t = 10)]
    pub scale: usize,
    /// Runs per measurement; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Where the generated files go (default: a temporary directory, removed afterwards).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Which measurements to run.
    #[arg(long, value_enum, default_value_t = BenchPart::All)]
    pub part: BenchPart,
    /// The R front end.
    #[arg(long, default_value = "Rscript")]
    pub rscript: PathBuf,
}

/// The parts of `adamviz-bench ingest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchPart {
    /// Readers and snapshot hash.
    All,
    /// Read + profile against haven and fread.
    Readers,
    /// Snapshot hash throughput.
    Snapshot,
    /// Dataset-JSON read + profile against the XPT of the same data.
    DatasetJson,
}

/// The hidden child command: measured reads + profiles in a fresh process.
#[derive(Debug, Args)]
pub struct BenchChildArgs {
    /// The dataset.
    pub file: PathBuf,
    /// Timed reads after the first: 0 reports the first (cold) read alone; more report the
    /// median of that many reads after it, the way R's reader is timed (after a warm-up read,
    /// in one process).
    #[arg(long, default_value_t = 0)]
    pub warm_repeats: usize,
}

/// What one child measurement reports (one JSON line on stdout).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct ChildReport {
    /// The read (file bytes + parse) of the reported measurement.
    read_seconds: f64,
    /// The profile of the reported measurement.
    profile_seconds: f64,
    /// Peak RSS of the process.
    peak_rss_bytes: u64,
    /// Records read.
    rows: usize,
    /// The reader alone on the file as given (already on disk, no upload, no profile): the
    /// median of the warm reads; 0 for a cold measurement.
    #[serde(default)]
    parse_seconds: f64,
}

/// Peak resident set size of this process (`VmHWM`), in bytes.
fn peak_rss_bytes() -> anyhow::Result<u64> {
    let status =
        std::fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .context("no VmHWM in /proc/self/status")?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .context("VmHWM is not a number")?;
    Ok(kib * 1024)
}

/// One upload of `file` (streamed into a fresh object store while hashed, then read from the
/// stored object, as `adamviz_services::upload::receive_upload` does for every upload) and its profile,
/// each timed.
fn read_and_profile(file: &Path) -> anyhow::Result<(f64, f64, usize)> {
    let store_dir = tempfile::tempdir()?;
    let store = ObjectStore::open(store_dir.path())?;
    let start = Instant::now();
    let input =
        std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let upload = receive_upload(&store, input, "synthetic", DEFAULT_UPLOAD_LIMIT)?;
    let read_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let profile = profile_table(&upload.table, upload.object.digest, DEFAULT_LOW_N_THRESHOLD);
    let profile_seconds = start.elapsed().as_secs_f64();
    std::hint::black_box(&profile);
    Ok((read_seconds, profile_seconds, upload.table.row_count))
}

/// Runs `adamviz-bench bench-child FILE [--warm-repeats N]`: the first read and profile, or the
/// median of N after it.
pub fn run_child(args: BenchChildArgs) -> anyhow::Result<()> {
    let first = read_and_profile(&args.file)?;
    let (read_seconds, profile_seconds, rows) = if args.warm_repeats == 0 {
        first
    } else {
        let mut timed = (0..args.warm_repeats)
            .map(|_| read_and_profile(&args.file))
            .collect::<anyhow::Result<Vec<_>>>()?;
        // The median of the totals, split as that run split it.
        timed.sort_by(|a, b| (a.0 + a.1).total_cmp(&(b.0 + b.1)));
        timed[timed.len() / 2]
    };
    // The reader alone, as fread is timed: the file already on disk, read through a mapping.
    let parse_seconds = if args.warm_repeats == 0 {
        0.0
    } else {
        let mut times = Vec::new();
        for _ in 0..args.warm_repeats {
            let start = Instant::now();
            let table = adamviz_engine::ingest::read_dataset_file(&args.file)?;
            times.push(start.elapsed().as_secs_f64());
            drop(table);
        }
        median(times)
    };
    let report = ChildReport {
        read_seconds,
        profile_seconds,
        peak_rss_bytes: peak_rss_bytes()?,
        rows,
        parse_seconds,
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// The median (the mean of the middle two for an even count); shared by the benchmarks.
pub(super) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// adamviz's figures for one file.
struct AdamvizFigures {
    /// Median upload + profile in one process after a warm-up read (how R is timed), on every
    /// core.
    warm_seconds: f64,
    /// The same, pinned to one core.
    one_core_seconds: f64,
    /// Median of the first read + profile of fresh processes.
    cold_seconds: f64,
    /// Largest peak RSS of those processes.
    peak_rss_bytes: u64,
    /// The reader alone (no upload, no profile), every core and one core.
    parse_seconds: (f64, f64),
}

/// How many cores a measured process may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cores {
    /// Pinned to the first core of this process's set (and one fread thread).
    One,
    /// Every core (and every fread thread).
    All,
}

/// Pins `command`'s process to the first core this process may run on.
fn pin_to_one_core(command: &mut Command) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    // SAFETY: sched_getaffinity/sched_setaffinity on plain values.
    let first = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            bail!("cannot read this process's CPU set");
        }
        (0..libc::CPU_SETSIZE as usize)
            .find(|&cpu| libc::CPU_ISSET(cpu, &set))
            .context("this process may run on no CPU")?
    };
    // SAFETY: sched_setaffinity is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(first, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// One `adamviz-bench bench-child` process.
fn child(
    exe: &Path,
    file: &Path,
    warm_repeats: usize,
    cores: Cores,
) -> anyhow::Result<ChildReport> {
    let mut command = Command::new(exe);
    command
        .arg("bench-child")
        .arg(file)
        .arg("--warm-repeats")
        .arg(warm_repeats.to_string())
        .env("RUST_LOG", "warn");
    if cores == Cores::One {
        pin_to_one_core(&mut command)?;
    }
    let output = command
        .output()
        .context("starting adamviz-bench bench-child")?;
    if !output.status.success() {
        bail!(
            "adamviz-bench bench-child {} failed: {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("reading the bench-child report")
}

/// `repeats` fresh child processes reading and profiling `file` once each (cold), and one
/// process timing `repeats` reads after a warm-up read (warm).
fn measure_adamviz(file: &Path, repeats: usize) -> anyhow::Result<AdamvizFigures> {
    let exe = std::env::current_exe().context("locating the adamviz binary")?;
    let mut cold = Vec::new();
    let mut peak = 0;
    for _ in 0..repeats {
        let report = child(&exe, file, 0, Cores::All)?;
        cold.push(report.read_seconds + report.profile_seconds);
        peak = peak.max(report.peak_rss_bytes);
    }
    let warm = child(&exe, file, repeats.max(1), Cores::All)?;
    let one_core = child(&exe, file, repeats.max(1), Cores::One)?;
    Ok(AdamvizFigures {
        warm_seconds: warm.read_seconds + warm.profile_seconds,
        one_core_seconds: one_core.read_seconds + one_core.profile_seconds,
        cold_seconds: median(cold),
        peak_rss_bytes: peak,
        parse_seconds: (warm.parse_seconds, one_core.parse_seconds),
    })
}

/// R's side: times `reader` on `file` `repeats` times inside one R process (after one untimed
/// warm-up read), and reports the median, R's peak RSS and data.table's thread count.
const R_TIMER: &str = r#"
args <- commandArgs(trailingOnly = TRUE)
reader <- args[[1]]; file <- args[[2]]; repeats <- as.integer(args[[3]])
cores <- args[[4]]
suppressPackageStartupMessages({
  if (reader == "haven") library(haven) else library(data.table)
})
if (reader == "fread") data.table::setDTthreads(if (cores == "one") 1L else 0L)
read_once <- function() {
  if (reader == "haven") haven::read_xpt(file) else data.table::fread(file, showProgress = FALSE)
}
invisible(read_once())
times <- numeric(repeats)
for (i in seq_len(repeats)) {
  invisible(gc())
  started <- proc.time()[["elapsed"]]
  d <- read_once()
  times[i] <- proc.time()[["elapsed"]] - started
  rm(d)
}
hwm <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
peak_kb <- as.numeric(gsub("[^0-9]", "", hwm))
threads <- if (reader == "fread") data.table::getDTthreads() else 1L
cat(sprintf("%.6f %.0f %d\n", median(times), peak_kb * 1024, threads))
"#;

struct RFigures {
    median_seconds: f64,
    peak_rss_bytes: f64,
    threads: u32,
}

fn measure_r(
    rscript: &Path,
    reader: &str,
    file: &Path,
    repeats: usize,
    cores: Cores,
) -> anyhow::Result<RFigures> {
    let mut command = Command::new(rscript);
    command
        .args(["--vanilla", "-e", R_TIMER, reader])
        .arg(file)
        .arg(repeats.to_string())
        .arg(if cores == Cores::One { "one" } else { "all" });
    if cores == Cores::One {
        pin_to_one_core(&mut command)?;
    }
    let output = command
        .output()
        .with_context(|| format!("starting {}", rscript.display()))?;
    if !output.status.success() {
        bail!(
            "R ({reader}) failed on {}: {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [seconds, peak, threads] = fields[..] else {
        bail!("unexpected output from R: {text:?}");
    };
    Ok(RFigures {
        median_seconds: seconds.parse()?,
        peak_rss_bytes: peak.parse()?,
        threads: threads.parse()?,
    })
}

/// `table` repeated `scale` times; subject identifiers get a `-<copy>` suffix after the first
/// copy, so the larger dataset has `scale` times the subjects rather than duplicate records.
fn scaled_copy(table: &Table, scale: usize) -> Table {
    let rows = table.row_count;
    let subject_columns = ["USUBJID", "SUBJID"];
    let columns = table
        .columns
        .iter()
        .map(|column| {
            let data = match &column.data {
                ColumnData::Numeric(values) => {
                    let mut out = NumericValues::with_capacity(rows * scale);
                    for _ in 0..scale {
                        values.iter().for_each(|cell| out.push(cell));
                    }
                    ColumnData::Numeric(out)
                }
                ColumnData::Character(values) => {
                    let mut out = TextBuilder::with_capacity(rows * scale);
                    let rename = subject_columns.contains(&column.name.as_str());
                    for copy in 0..scale {
                        for value in values.iter() {
                            match value {
                                Some(v) if rename && copy > 0 => out.push(&format!("{v}-{copy}")),
                                other => out.push_option(other),
                            }
                        }
                    }
                    ColumnData::Character(out.finish())
                }
            };
            Column {
                declared: Default::default(),
                name: column.name.clone(),
                label: column.label.clone(),
                format: column.format.clone(),
                data,
            }
        })
        .collect();
    Table {
        columns,
        row_count: rows * scale,
        ..table.clone_metadata()
    }
}

fn write_csv_file(table: &Table, path: &Path) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    write_table_csv(table, std::io::BufWriter::new(file))?;
    Ok(())
}

fn megabytes(bytes: f64) -> String {
    format!("{:.1} MB", bytes / 1e6)
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

/// Runs `adamviz-bench ingest`, printing each figure as soon as it is measured.
pub fn run_ingest(args: IngestBenchArgs) -> anyhow::Result<()> {
    if args.repeats == 0 || args.scale == 0 {
        bail!("--repeats and --scale must be at least 1");
    }
    let mut out = std::io::stdout().lock();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let build = if cfg!(debug_assertions) {
        "DEBUG build: figures are not representative, use `cargo run --release`"
    } else {
        "release build"
    };
    writeln!(
        out,
        "adamviz data-in benchmark ({build}, {cores} cores; median of {} runs)",
        args.repeats
    )?;
    // Mapped, as uploads are read: the file is never copied whole into memory.
    let original = adamviz_engine::ingest::MappedFile::open(&args.xpt)?;
    let content_hash = Sha256Digest::from_bytes(Sha256::digest(&*original).into());
    let table =
        read_dataset(&original).with_context(|| format!("cannot read {}", args.xpt.display()))?;
    drop(original);
    let big = scaled_copy(&table, args.scale);
    let mut targets = Vec::new();
    if matches!(args.part, BenchPart::All | BenchPart::Readers) {
        bench_readers(&args, &table, &big, &mut out, &mut targets)?;
    }
    if matches!(args.part, BenchPart::All | BenchPart::DatasetJson) {
        bench_dataset_json(&args, &table, &mut out)?;
    }
    drop(table);
    if matches!(args.part, BenchPart::All | BenchPart::Snapshot) {
        bench_snapshot(&big, content_hash, &mut out, &mut targets)?;
    }
    writeln!(out, "\ntargets:")?;
    for target in targets {
        writeln!(out, "  {target}")?;
    }
    Ok(())
}

/// Read + profile of the XPT, a CSV of it and both formats of the larger copy, against R.
fn bench_readers(
    args: &IngestBenchArgs,
    table: &Table,
    big: &Table,
    out: &mut impl Write,
    targets: &mut Vec<String>,
) -> anyhow::Result<()> {
    let temp;
    let work_dir = match &args.work_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let stem = args
        .xpt
        .file_stem()
        .map_or("data".into(), |s| s.to_string_lossy().into_owned());
    let csv = work_dir.join(format!("{stem}.csv"));
    write_csv_file(table, &csv)?;
    let big_xpt = work_dir.join(format!("{stem}-x{}.xpt", args.scale));
    std::fs::write(&big_xpt, write_xpt(big))?;
    let big_csv = work_dir.join(format!("{stem}-x{}.csv", args.scale));
    write_csv_file(big, &big_csv)?;

    writeln!(
        out,
        "\n{:<22} {:>9} {:>9} | {:>12} {:>11} {:>16} {:>12} | {:<16} {:>9} {:>9} {:>12} | {:>8} {:>8}",
        "input",
        "size",
        "records",
        "adamviz all",
        "(cold)",
        "peak RSS",
        "adamviz 1",
        "R reader",
        "R all",
        "R 1",
        "R peak RSS",
        "all:all",
        "1:1"
    )?;
    let inputs = [
        (&args.xpt, "haven", table.row_count),
        (&csv, "fread", table.row_count),
        (&big_xpt, "haven", big.row_count),
        (&big_csv, "fread", big.row_count),
    ];
    let mut fread_threads = 0;
    for (path, reader, rows) in inputs {
        let threads = bench_reader_row(args, path, reader, rows, out, targets)?;
        if reader == "fread" {
            fread_threads = threads;
        }
    }
    writeln!(
        out,
        "(adamviz: the upload path — bytes streamed into a fresh object store while hashed, read back from it, parsed — and the profile; median of the runs after a warm-up in one process, as R is timed; \"all\" on every core, \"1\" pinned to one core; (cold): median of the first upload + profile of fresh processes; peak RSS of those, including the mapped file. R: the reader alone, timed inside R after a warm-up read; \"all\": fread with {fread_threads} threads (every core), \"1\": one thread, pinned to one core; haven has no threads)"
    )?;
    Ok(())
}

/// Upload + profile of the XPT's data as Dataset-JSON in each form, against the XPT itself
/// (the same measurement as the readers' table: warm on every core, pinned to one core, cold).
fn bench_dataset_json(
    args: &IngestBenchArgs,
    table: &Table,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let dir = args
        .work_dir
        .clone()
        .unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&dir)?;
    let ndjson = write_dataset_json(table, Form::Ndjson);
    let forms = [
        ("dataset-json.json", write_dataset_json(table, Form::Json)),
        ("dataset-json.dsjc", compress(&ndjson, Framing::Zlib)),
        ("dataset-json.ndjson", ndjson),
    ];
    writeln!(
        out,
        "\n{:<22} {:>9} | {:>12} {:>12} {:>11} {:>16} | {:>10}",
        "Dataset-JSON", "size", "adamviz all", "adamviz 1", "(cold)", "peak RSS", "vs XPT"
    )?;
    let xpt = measure_adamviz(&args.xpt, args.repeats)?;
    let row = |out: &mut dyn Write, name: &str, size: u64, figures: &AdamvizFigures| {
        writeln!(
            out,
            "{:<22} {:>9} | {:>10.3} s {:>10.3} s {:>9.3} s {:>16} | {:>9.2}×",
            name,
            megabytes(size as f64),
            figures.warm_seconds,
            figures.one_core_seconds,
            figures.cold_seconds,
            megabytes(figures.peak_rss_bytes as f64),
            figures.warm_seconds / xpt.warm_seconds
        )
    };
    row(
        out,
        "xpt (the same data)",
        std::fs::metadata(&args.xpt)?.len(),
        &xpt,
    )?;
    for (suffix, bytes) in forms {
        let path = dir.join(suffix);
        std::fs::write(&path, &bytes)?;
        let figures = measure_adamviz(&path, args.repeats)?;
        row(out, suffix, bytes.len() as u64, &figures)?;
    }
    writeln!(
        out,
        "(the XPT's table written by the engine's Dataset-JSON writer; \"vs XPT\": warm time over the XPT's warm time — JSON text is parsed where XPT is fixed-width binary)"
    )?;
    Ok(())
}

/// One row of the readers' table: adamviz and R's `reader` (haven or fread) on `path`, every
/// core and one; returns the thread count R's reader used on every core.
fn bench_reader_row(
    args: &IngestBenchArgs,
    path: &Path,
    reader: &str,
    rows: usize,
    out: &mut impl Write,
    targets: &mut Vec<String>,
) -> anyhow::Result<u32> {
    let (reader_name, speed_target) = if reader == "fread" {
        ("data.table::fread", 1.0)
    } else {
        ("haven::read_xpt", 10.0)
    };
    let size = std::fs::metadata(path)?.len() as f64;
    let figures = measure_adamviz(path, args.repeats)?;
    let (seconds, peak) = (figures.warm_seconds, figures.peak_rss_bytes);
    let r_all = measure_r(&args.rscript, reader, path, args.repeats, Cores::All)?;
    // haven has no threads: pinned, it runs as it always does.
    let r_one = measure_r(&args.rscript, reader, path, args.repeats, Cores::One)?;
    let speed_up = r_all.median_seconds / seconds;
    let one_to_one = r_one.median_seconds / figures.one_core_seconds;
    let memory_ratio = peak as f64 / size;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    writeln!(
        out,
        "{:<22} {:>9} {:>9} | {:>10.3} s {:>9.3} s {:>8} ({:.1}×) {:>10.3} s | {:<16} {:>7.3} s {:>7.3} s {:>12} | {:>7.1}× {:>7.1}×",
        name,
        megabytes(size),
        rows,
        seconds,
        figures.cold_seconds,
        megabytes(peak as f64),
        memory_ratio,
        figures.one_core_seconds,
        reader_name,
        r_all.median_seconds,
        r_one.median_seconds,
        megabytes(r_all.peak_rss_bytes),
        speed_up,
        one_to_one
    )?;
    targets.push(format!(
        "{name}: upload + profile {speed_up:.1}× as fast as {reader_name} on every core, {one_to_one:.1}× on one core (target ≥ {speed_target}× each: {}); peak memory {memory_ratio:.1}× the file (target ≤ 3×: {})",
        verdict(speed_up >= speed_target && one_to_one >= speed_target),
        verdict(memory_ratio <= 3.0)
    ));
    // Like for like: the reader alone on the file already on disk, as R's reader is timed.
    let (parse_all, parse_one) = figures.parse_seconds;
    targets.push(format!(
        "{name}: the reader alone (file on disk, no upload or profile) {parse_all:.3} s every core, {parse_one:.3} s one core: {:.1}× and {:.1}× {reader_name}",
        r_all.median_seconds / parse_all,
        r_one.median_seconds / parse_one,
    ));
    Ok(r_all.threads)
}
