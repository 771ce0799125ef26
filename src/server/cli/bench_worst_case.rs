//! `adamviz-bench worst-case`: inputs shaped to hurt the readers and the profile, each read
//! (CSV read + profile, in this process, median of `--repeats`) against an ordinary file of the
//! same size (the pilot's ADLBC as CSV, its rows repeated or cut at a line end to that size):
//!
//! 1. a header of a million distinct column names (refused: more columns than adamviz reads;
//!    the time is the time to refuse), and a header at the column limit, read;
//! 2. columns of many distinct numbers with text in the last row (each column changes form at
//!    the very end; the file is read a second time, once);
//! 3. 70,000 distinct subject × visit × parameter × treatment combinations.
//!
//! Target: each at most 5× the ordinary file's time. It prints figures; it never fails because
//! the target is missed.

use std::{path::PathBuf, time::Instant};

use anyhow::Context as _;
use clap::Args;

use super::bench::median;
use crate::{
    domain::{digest::Sha256Digest, profile::DEFAULT_LOW_N_THRESHOLD},
    ingest::{
        csv::{read_csv, write_table_csv, MAX_COLUMNS},
        profile::profile_table,
        read_dataset,
    },
};

/// Options of `adamviz-bench worst-case`.
#[derive(Debug, Args)]
pub struct WorstCaseBenchArgs {
    /// Runs per measurement; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// The dataset the ordinary files are made of.
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub data: PathBuf,
}

/// Median seconds of reading `bytes` as CSV and profiling the table, and the median of the
/// profile alone (a refusal counts as a read: its time is the time to refuse).
fn time_read(bytes: &[u8], repeats: usize) -> (f64, f64, Result<usize, String>) {
    let (mut times, mut profile_times) = (Vec::new(), Vec::new());
    let mut outcome = Err(String::new());
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        outcome = read_csv(bytes)
            .map(|table| {
                let profiling = Instant::now();
                let profile = profile_table(
                    &table,
                    Sha256Digest::from_bytes([1; 32]),
                    DEFAULT_LOW_N_THRESHOLD,
                );
                profile_times.push(profiling.elapsed().as_secs_f64());
                std::hint::black_box(&profile);
                table.columns.len()
            })
            .map_err(|error| error.to_string());
        times.push(started.elapsed().as_secs_f64());
    }
    let profile = if profile_times.is_empty() {
        0.0
    } else {
        median(profile_times)
    };
    (median(times), profile, outcome)
}

/// The pilot's rows as CSV, repeated or cut at a line end to at least `size` bytes.
fn ordinary_csv(pilot: &[u8], size: usize) -> Vec<u8> {
    let header_end = pilot.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let (header, rows) = pilot.split_at(header_end);
    let mut out = header.to_vec();
    while out.len() < size {
        let want = size - out.len();
        if want >= rows.len() {
            out.extend_from_slice(rows);
        } else {
            let cut = rows[want..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rows.len(), |i| want + i + 1);
            out.extend_from_slice(&rows[..cut]);
        }
    }
    out
}

fn million_names() -> Vec<u8> {
    let mut text: String = (0..1_000_000)
        .map(|i| format!("V{i:07}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    text.push_str(&"1,".repeat(999_999));
    text.push_str("1\n");
    text.into_bytes()
}

fn names_at_the_limit() -> Vec<u8> {
    let mut text: String = (0..MAX_COLUMNS)
        .map(|i| format!("V{i:05}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for row in 0..20 {
        text.push_str(&vec![row.to_string(); MAX_COLUMNS].join(","));
        text.push('\n');
    }
    text.into_bytes()
}

fn numbers_then_text(columns: usize, rows: usize) -> Vec<u8> {
    let mut text = (0..columns)
        .map(|c| format!("N{c}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for row in 0..rows {
        let cells: Vec<String> = (0..columns)
            .map(|c| format!("{}.{}", row * 7 + c, row % 100))
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text.push_str(&vec!["not a number"; columns].join(","));
    text.push('\n');
    text.into_bytes()
}

fn distinct_combinations(n: usize) -> Vec<u8> {
    let mut text = String::from("USUBJID,TRTA,AVISIT,AVISITN,PARAMCD,PARAM,AVAL\n");
    for i in 0..n {
        text.push_str(&format!("S{i},T{i},V{i},{i},P{i},Parameter {i},{i}\n"));
    }
    text.into_bytes()
}

/// Runs `adamviz-bench worst-case`.
pub fn run_worst_case(args: WorstCaseBenchArgs) -> anyhow::Result<()> {
    let build = if cfg!(debug_assertions) {
        "DEBUG build: figures are not representative"
    } else {
        "release build"
    };
    let xpt = std::fs::read(&args.data)
        .with_context(|| format!("cannot read {}", args.data.display()))?;
    let mut pilot = Vec::new();
    write_table_csv(&read_dataset(&xpt)?, &mut pilot)?;
    println!(
        "adamviz worst-case inputs ({build}; read + profile, median of {} runs; target ≤ 5× an ordinary file of the same size)",
        args.repeats
    );
    println!(
        "\n{:<44} {:>9} {:>10} {:>10} {:>10} {:>7}  outcome",
        "input", "size", "worst", "(profile)", "ordinary", "ratio"
    );
    let cases: [(&str, Vec<u8>); 4] = [
        ("a million distinct header names", million_names()),
        (
            "32,767 header names (the limit), 20 rows",
            names_at_the_limit(),
        ),
        (
            "200 number columns, text in the last row",
            numbers_then_text(200, 20_000),
        ),
        (
            "70,000 distinct subject×visit×param×treatment",
            distinct_combinations(70_000),
        ),
    ];
    let mut targets = Vec::new();
    for (name, bytes) in cases {
        let (worst, worst_profile, outcome) = time_read(&bytes, args.repeats);
        let ordinary = ordinary_csv(&pilot, bytes.len());
        let (usual, _, usual_outcome) = time_read(&ordinary, args.repeats);
        anyhow::ensure!(usual_outcome.is_ok(), "the ordinary file did not read");
        let ratio = worst / usual;
        let outcome = match outcome {
            Ok(columns) => format!("read, {columns} columns"),
            Err(error) => format!("refused: {error}"),
        };
        println!(
            "{:<44} {:>6.1} MB {:>8.3} s {:>8.3} s {:>8.3} s {:>6.1}×  {}",
            name,
            bytes.len() as f64 / 1e6,
            worst,
            worst_profile,
            usual,
            ratio,
            outcome
        );
        targets.push(format!(
            "{name}: {ratio:.1}× the ordinary file (target ≤ 5×: {})",
            if ratio <= 5.0 { "met" } else { "MISSED" }
        ));
    }
    println!("\ntargets:");
    for target in targets {
        println!("  {target}");
    }
    Ok(())
}
