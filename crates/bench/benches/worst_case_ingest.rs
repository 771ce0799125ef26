//! Worst-case ingest benchmark (`cargo bench --no-default-features --features ssr --bench
//! worst_case_ingest`): inputs shaped to hurt the CSV reader and the profile, each read and
//! profiled in this process (median of several runs) against an ordinary file of the same size
//! (the synthetic demo dataset's rows as CSV, repeated or cut at a line end to that size). Every
//! input is generated here; nothing is read from disk.
//!
//! 1. a header of a million distinct column names (refused: more columns than adamviz reads;
//!    the time is the time to refuse), and a header at the column limit, read;
//! 2. columns of many distinct numbers with text in the last row (each column changes form at
//!    the very end, so the file is read a second time, once);
//! 3. 70,000 distinct subject × visit × parameter × treatment combinations.
//!
//! The target is at most 5× the ordinary file's time. It prints figures and never fails because
//! a target is missed: speed is not asserted in tests (timings vary with the machine's load).
//! Beside each time it prints the size of what the read must produce — the table (eight bytes
//! per number, four per text code, each distinct text value once) and the profile (as JSON) —
//! for the worst case and the ordinary file, and the time per megabyte of that output: a worst
//! case whose output is more than 5× the ordinary file's cannot be read within 5× its time
//! unless each byte of output costs less than it does for ordinary data.
//! It lives here rather than in `adamviz-bench` so that no binary grows for it.

use std::time::Instant;

use adamviz_engine::ingest::{
    csv::{read_csv, write_table_csv, MAX_COLUMNS},
    demo::generate_demo_table,
    profile::profile_table,
};
use adamviz_model::{digest::Sha256Digest, profile::DEFAULT_LOW_N_THRESHOLD};

/// Runs per measurement (after one warm-up run); the median is reported.
const RUNS: usize = 7;

/// The target: a worst case takes at most this many times an ordinary file of its size.
const TARGET_RATIO: f64 = 5.0;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

/// One input's figures: medians of the whole read + profile and of the profile alone, and
/// what came of it (columns read, or the refusal).
struct Timing {
    total: f64,
    profile: f64,
    outcome: Result<usize, String>,
    /// Bytes of the table and the profile the read produced (0 when refused).
    output: usize,
}

/// What a read produced, in bytes: the table as it is held (eight bytes per number, a four-byte
/// code per text cell and each distinct text value once) and the profile as JSON.
fn output_bytes(
    table: &adamviz_engine::ingest::table::Table,
    profile: &impl serde::Serialize,
) -> usize {
    use adamviz_engine::ingest::table::ColumnData;
    let table_bytes: usize = table
        .columns
        .iter()
        .map(|column| match &column.data {
            ColumnData::Numeric(values) => 8 * values.len(),
            ColumnData::Character(values) => {
                4 * values.len() + values.levels().iter().map(|l| l.len()).sum::<usize>()
            }
        })
        .sum();
    table_bytes + serde_json::to_vec(profile).map_or(0, |json| json.len())
}

/// Reads `bytes` as CSV and profiles the table, once to warm up and then [`RUNS`] times (a
/// refusal counts as a read: its time is the time to refuse). The table and profile are
/// dropped after the clock stops, for the worst case and the ordinary file alike: freeing them
/// is the cost of discarding a dataset, not of reading it.
fn time_read(bytes: &[u8]) -> Timing {
    let (mut totals, mut profiles) = (Vec::new(), Vec::new());
    let mut outcome = Err(String::new());
    let mut output = 0;
    for run in 0..=RUNS {
        let started = Instant::now();
        let mut profile_time = 0.0;
        let read = read_csv(bytes).map(|table| {
            let profiling = Instant::now();
            let profile = profile_table(
                &table,
                Sha256Digest::from_bytes([1; 32]),
                DEFAULT_LOW_N_THRESHOLD,
            );
            profile_time = profiling.elapsed().as_secs_f64();
            (table, profile)
        });
        let total = started.elapsed().as_secs_f64();
        if let Ok((table, profile)) = &read {
            output = output_bytes(table, profile);
        }
        outcome = read
            .map(|(table, _)| table.columns.len())
            .map_err(|error| error.to_string());
        if run > 0 {
            totals.push(total);
            profiles.push(profile_time);
        }
    }
    Timing {
        total: median(totals),
        profile: median(profiles),
        outcome,
        output,
    }
}

/// The demo dataset's rows as CSV, repeated or cut at a line end to at least `size` bytes.
fn ordinary_csv(demo: &[u8], size: usize) -> Vec<u8> {
    let header_end = demo.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let (header, rows) = demo.split_at(header_end);
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

/// A header of `columns` distinct names and `rows` rows of one small number per cell.
fn distinct_names(columns: usize, rows: usize) -> Vec<u8> {
    let mut text: String = (0..columns)
        .map(|i| format!("V{i:07}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for row in 0..rows {
        text.push_str(&vec![row.to_string(); columns].join(","));
        text.push('\n');
    }
    text.into_bytes()
}

/// `columns` columns of distinct decimal numbers over `rows` rows, then a row of text.
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

/// `n` records, each its own subject, treatment, visit and parameter.
fn distinct_combinations(n: usize) -> Vec<u8> {
    let mut text = String::from("USUBJID,TRTA,AVISIT,AVISITN,PARAMCD,PARAM,AVAL\n");
    for i in 0..n {
        text.push_str(&format!("S{i},T{i},V{i},{i},P{i},Parameter {i},{i}\n"));
    }
    text.into_bytes()
}

fn main() {
    // `cargo bench --bench worst_case_ingest -- WORDS` runs the inputs whose name holds WORDS
    // (cargo passes `--bench` itself).
    let only = std::env::args().skip(1).find(|arg| !arg.starts_with("--"));
    let build = if cfg!(debug_assertions) {
        "DEBUG build: figures are not representative"
    } else {
        "release build"
    };
    let mut demo = Vec::new();
    write_table_csv(&generate_demo_table(200), &mut demo).expect("the demo table writes as CSV");
    println!(
        "adamviz worst-case ingest ({build}; CSV read + profile, median of {RUNS} runs after a warm-up; target ≤ {TARGET_RATIO}× an ordinary file of the same size)"
    );
    println!(
        "\n| input | size | worst | of which profile | ordinary | ratio | target ≤ {TARGET_RATIO}× | output: worst / ordinary | s per output MB: worst / ordinary | outcome |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let cases: [(String, Vec<u8>); 4] = [
        (
            "a million distinct header names".to_owned(),
            distinct_names(1_000_000, 1),
        ),
        (
            format!("{MAX_COLUMNS} distinct header names (the limit), 20 rows"),
            distinct_names(MAX_COLUMNS, 20),
        ),
        (
            "200 columns of distinct numbers, text in the last row".to_owned(),
            numbers_then_text(200, 20_000),
        ),
        (
            "70,000 distinct subject × visit × parameter × treatment".to_owned(),
            distinct_combinations(70_000),
        ),
    ];
    for (name, bytes) in cases {
        if only
            .as_ref()
            .is_some_and(|only| !name.contains(only.as_str()))
        {
            continue;
        }
        let worst = time_read(&bytes);
        let ordinary = time_read(&ordinary_csv(&demo, bytes.len()));
        assert!(ordinary.outcome.is_ok(), "the ordinary file reads");
        let ratio = worst.total / ordinary.total;
        let outcome = match &worst.outcome {
            Ok(columns) => format!("read, {columns} columns"),
            Err(error) => format!("refused: {error}"),
        };
        let megabytes = |bytes: usize| bytes as f64 / 1e6;
        let per_megabyte = |timing: &Timing| {
            if timing.output == 0 {
                "–".to_owned()
            } else {
                format!("{:.4}", timing.total / megabytes(timing.output))
            }
        };
        println!(
            "| {name} | {:.1} MB | {:.3} s | {:.3} s | {:.3} s | {ratio:.1}× | {} | {:.1} MB / {:.1} MB ({:.1}×) | {} / {} | {outcome} |",
            bytes.len() as f64 / 1e6,
            worst.total,
            worst.profile,
            ordinary.total,
            if ratio <= TARGET_RATIO {
                "met"
            } else {
                "missed"
            },
            megabytes(worst.output),
            megabytes(ordinary.output),
            worst.output as f64 / ordinary.output.max(1) as f64,
            per_megabyte(&worst),
            per_megabyte(&ordinary),
        );
    }
}
