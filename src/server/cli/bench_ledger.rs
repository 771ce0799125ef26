//! `adamviz bench ledger`: one real governed run of the pilot's ALT spec (real R) gives the
//! eight records a Verified revision has; the ledger is then filled with copies of them for N
//! revisions (fresh revision and attempt ids, each copy re-sealed into the chain, so every
//! record is schema-valid and of real size), and `adamviz ledger verify`'s audit is timed over
//! all of them: the chain, every record's typed verification, and the accepted bundle's
//! artifacts. Target: under 1 second per 10,000 records on this machine. It prints figures; it
//! never fails because the target is missed.

use std::{path::PathBuf, time::Instant};

use anyhow::Context as _;
use clap::Args;
use serde_json::Value;

use super::bench_governed::GovernedFixture;
use crate::store::{
    audit::audit,
    ledger::{append_record, records_about, verify_ledger},
    objects::ObjectStore,
};

/// Options of `adamviz bench ledger`.
#[derive(Debug, Args)]
pub struct LedgerBenchArgs {
    /// Revisions whose records fill the ledger (eight records each).
    #[arg(long, default_value_t = 10_000)]
    pub revisions: usize,
    /// Timed verifications (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// The dataset of the real run the records are copied from.
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub data: PathBuf,
}

/// `value` with every `revision_id` and `attempt_id` field, at any depth, replaced.
fn with_ids(value: &mut Value, revision_id: &str, attempt_id: &str) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match key.as_str() {
                    "revision_id" => *field = Value::String(revision_id.to_owned()),
                    "attempt_id" if field.is_string() => {
                        *field = Value::String(attempt_id.to_owned())
                    }
                    _ => with_ids(field, revision_id, attempt_id),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| with_ids(item, revision_id, attempt_id)),
        _ => {}
    }
}

/// Runs `adamviz bench ledger`.
pub async fn run_ledger_bench(args: LedgerBenchArgs) -> anyhow::Result<()> {
    let fixture = GovernedFixture::new(&args.data, "ALT over time by arm")?;
    let (outcome, _) = fixture.governed_run("bench").await?;
    let database = fixture.service.database().clone();
    let data_dir = fixture.work.path().to_path_buf();
    let revision_id = outcome.revision.id.clone();
    let revisions = args.revisions;
    let figures = tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        let mut connection = database.connection()?;
        let templates: Vec<(String, serde_json::Map<String, Value>)> =
            records_about(&connection, &revision_id)?
                .into_iter()
                .map(|stored| {
                    let mut body: serde_json::Map<String, Value> =
                        serde_json::from_slice(&stored.record)?;
                    for field in ["kind", "previous_hash", "record_hash"] {
                        body.remove(field);
                    }
                    Ok((stored.kind, body))
                })
                .collect::<Result<_, serde_json::Error>>()?;
        let per_revision = templates.len();
        let started = Instant::now();
        let mut bytes = 0usize;
        for chunk in (1..revisions).collect::<Vec<_>>().chunks(500) {
            let transaction = connection.transaction()?;
            for &n in chunk {
                let (revision, attempt) = (format!("rev-{n:032x}"), format!("att-{n:032x}"));
                for (kind, body) in &templates {
                    let mut body = Value::Object(body.clone());
                    with_ids(&mut body, &revision, &attempt);
                    let Value::Object(body) = body else {
                        unreachable!("an object stays an object")
                    };
                    bytes += append_record(&transaction, kind, body)?.canonical.len();
                }
            }
            transaction.commit()?;
        }
        let records = verify_ledger(&connection)?.records;
        println!(
            "adamviz bench ledger: {revisions} revisions × {per_revision} records (one real governed run, copied), {records} records ({:.1} MB canonical), appended in {:.2} s",
            bytes as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
        let objects = ObjectStore::open(&data_dir)?;
        let (mut chain, mut full) = (Vec::new(), Vec::new());
        for _ in 0..args.repeats.max(1) {
            let started = Instant::now();
            let report = verify_ledger(&connection)?;
            chain.push(started.elapsed().as_secs_f64());
            anyhow::ensure!(report.first_break.is_none(), "the chain did not verify");
            let started = Instant::now();
            let report = audit(&connection, &objects)?;
            full.push(started.elapsed().as_secs_f64());
            anyhow::ensure!(
                report.passed() && report.records_verified == records,
                "the fresh ledger did not verify: {:?} {:?}",
                report.record_problems.first(),
                report.artifact_problems.first()
            );
        }
        let repeats = chain.len();
        let per_10k = |seconds: f64| seconds / records as f64 * 10_000.0;
        let (chain, full) = (super::bench::median(chain), super::bench::median(full));
        println!(
            "chain only (verify_ledger): {chain:.3} s, {:.3} s per 10,000 records (median of {repeats})",
            per_10k(chain)
        );
        println!(
            "adamviz ledger verify (chain + schema and type of every record + artifacts): {full:.3} s for {records} records, {:.3} s per 10,000 records (median of {repeats}; target < 1 s: {})",
            per_10k(full),
            if per_10k(full) < 1.0 { "met" } else { "MISSED" }
        );
        Ok(())
    })
    .await
    .context("the benchmark thread failed")?;
    figures
}
