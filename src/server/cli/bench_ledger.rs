//! `adamviz bench ledger`: fills a fresh evidence ledger with the records of N revisions (six
//! per revision, about the size real ones have) and times `verify_ledger` over all of them.
//! Target: under 1 second per 10,000 records on this machine. It prints figures; it never
//! fails because the target is missed.

use std::time::Instant;

use clap::Args;
use serde_json::{json, Value};

use crate::store::{
    db::Database,
    ledger::{append_record, verify_ledger},
};

/// Options of `adamviz bench ledger`.
#[derive(Debug, Args)]
pub struct LedgerBenchArgs {
    /// Revisions whose records fill the ledger (six records each).
    #[arg(long, default_value_t = 10_000)]
    pub revisions: usize,
    /// Timed verifications (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
}

const KINDS: [&str; 6] = [
    "execution_request",
    "execution_attempt",
    "execution_verification",
    "artifact_bundle",
    "revision_lifecycle",
    "revision_context",
];

fn record_body(revision: usize, kind: &str) -> serde_json::Map<String, Value> {
    let hash = |salt: &str| {
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(format!(
            "{revision}{kind}{salt}"
        )))
    };
    let mut body = json!({
        "revision_id": format!("rev-{revision:08}"),
        "spec_hash": hash("spec"),
        "script_hash": hash("script"),
        "snapshot_hash": hash("snapshot"),
        "created_at": "2026-12-03T08:00:00.000000Z",
    });
    if kind == "execution_verification" {
        body["checks"] = json!(crate::verify::execution::CHECK_NAMES
            .iter()
            .map(|name| json!({"name": name, "outcome": "pass"}))
            .collect::<Vec<_>>());
    }
    if kind == "revision_context" {
        body["question"] = json!("ALT over time by arm");
        body["visits"] = json!([
            "Baseline", "Week 2", "Week 4", "Week 6", "Week 8", "Week 12", "Week 16", "Week 20",
            "Week 24", "Week 26"
        ]);
        body["outputs"] =
            json!({"statistics": hash("s"), "png": hash("p"), "environment": hash("e")});
    }
    match body {
        Value::Object(map) => map,
        _ => unreachable!("a JSON object literal"),
    }
}

/// Runs `adamviz bench ledger`.
pub fn run_ledger_bench(args: LedgerBenchArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let database = Database::open_in(dir.path())?;
    let mut connection = database.connection()?;
    let started = Instant::now();
    let mut bytes = 0usize;
    for chunk in (0..args.revisions).collect::<Vec<_>>().chunks(500) {
        let transaction = connection.transaction()?;
        for &revision in chunk {
            for kind in KINDS {
                bytes += append_record(&transaction, kind, record_body(revision, kind))?
                    .canonical
                    .len();
            }
        }
        transaction.commit()?;
    }
    let records = args.revisions * KINDS.len();
    println!(
        "adamviz bench ledger: {} revisions, {records} records ({:.1} MB canonical), appended in {:.2} s",
        args.revisions,
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let mut times = Vec::new();
    for _ in 0..args.repeats.max(1) {
        let started = Instant::now();
        let report = verify_ledger(&connection)?;
        times.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(
            report.first_break.is_none() && report.records as usize == records,
            "the fresh ledger did not verify: {:?}",
            report.first_break
        );
    }
    let repeats = times.len();
    let median = super::bench::median(times);
    let per_10k = median / records as f64 * 10_000.0;
    println!(
        "verify_ledger: {median:.3} s for {records} records (median of {repeats}), {per_10k:.3} s per 10,000 records (target < 1 s: {})",
        if per_10k < 1.0 { "met" } else { "MISSED" }
    );
    Ok(())
}
