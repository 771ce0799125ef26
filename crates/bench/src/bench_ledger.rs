//! `adamviz-bench ledger`: one real governed run of the pilot's ALT spec (real R) gives the
//! eight records and the rows a Verified revision has; the store is then filled with copies
//! for N revisions: fresh revision and attempt ids, each record re-sealed into the chain with
//! every reference to an earlier record (request, verification, bundle) remapped to its copy,
//! and the revision, attempt and bundle rows inserted through the database's rules, so that
//! every copy is a Verified revision the rules accept, with its own accepted bundle. Then
//! `adamviz ledger verify`'s audit is timed over all of it: the chain, every record's typed
//! verification, every bundle's artifacts re-read and re-hashed, and every row against its
//! records. Target: under 1 second per 10,000 records on this machine. It prints figures; it
//! never fails because the target is missed.

use std::{collections::HashMap, path::PathBuf, time::Instant};

use anyhow::Context as _;
use clap::Args;
use serde_json::Value;

use crate::bench_governed::GovernedFixture;
use adamviz_model::ids::{AttemptId, RevisionId};
use adamviz_store::{
    audit::audit,
    copies::{self, copy_rows, with_ids},
    db::Connection,
    ledger::{append_record, records_about, verify_ledger},
    objects::ObjectStore,
};

/// Options of `adamviz-bench ledger`.
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

/// Runs `adamviz-bench ledger`.
pub async fn run_ledger_bench(args: LedgerBenchArgs) -> anyhow::Result<()> {
    let fixture = GovernedFixture::new(&args.data, "ALT over time by arm")?;
    let (outcome, _) = fixture.governed_run("bench").await?;
    let database = fixture.service.database().clone();
    let data_dir = fixture.work.path().to_path_buf();
    let run = (outcome.revision.id.clone(), outcome.attempt_id.clone());
    let (revisions, repeats) = (args.revisions, args.repeats);
    tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        let mut connection = database.connection()?;
        let records = copy_revisions(&mut connection, &run, revisions)?;
        let objects = ObjectStore::open(&data_dir)?;
        time_verification(&connection, &objects, revisions, records, repeats)
    })
    .await
    .context("the benchmark thread failed")?
}

/// Fills the store with copies of the real run's records and rows up to `revisions` Verified
/// revisions, 500 per transaction; prints what it appended and returns the ledger's record
/// count.
fn copy_revisions(
    connection: &mut Connection,
    (revision_id, attempt_id): &(RevisionId, AttemptId),
    revisions: usize,
) -> anyhow::Result<u64> {
    let templates: Vec<(String, String, serde_json::Map<String, Value>)> =
        records_about(connection, revision_id)?
            .into_iter()
            .map(|stored| {
                let mut body: serde_json::Map<String, Value> =
                    serde_json::from_slice(&stored.record)?;
                for field in ["kind", "previous_hash", "record_hash"] {
                    body.remove(field);
                }
                Ok((stored.kind, stored.record_hash, body))
            })
            .collect::<Result<_, serde_json::Error>>()?;
    let per_revision = templates.len();
    let (author, created_at) = copies::author_and_creation(connection, revision_id)?;
    let started = Instant::now();
    let mut bytes = 0usize;
    for chunk in (1..revisions).collect::<Vec<_>>().chunks(500) {
        let transaction = connection.transaction()?;
        for &n in chunk {
            let (revision, attempt) = (format!("rev-{n:032x}"), format!("att-{n:032x}"));
            let mut copies = HashMap::new();
            for (kind, original_hash, body) in &templates {
                let mut body = Value::Object(body.clone());
                with_ids(&mut body, &revision, &attempt, &copies);
                let Value::Object(body) = body else {
                    unreachable!("an object stays an object")
                };
                let appended = append_record(&transaction, kind, body)?;
                bytes += appended.canonical.len();
                copies.insert(original_hash.clone(), appended.record_hash);
            }
            copy_rows(
                &transaction,
                (revision_id.as_str(), attempt_id.as_str()),
                (&revision, &attempt),
                &copies,
                (&author, &created_at),
            )?;
        }
        transaction.commit()?;
    }
    let records = verify_ledger(connection)?.records;
    println!(
        "adamviz-bench ledger: {revisions} Verified revisions × {per_revision} records and their rows (one real governed run, copied), {records} records ({:.1} MB canonical), appended in {:.2} s",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(records)
}

/// Times the chain alone and the whole audit, `repeats` times each, and prints the medians
/// against the target.
fn time_verification(
    connection: &Connection,
    objects: &ObjectStore,
    revisions: usize,
    records: u64,
    repeats: usize,
) -> anyhow::Result<()> {
    let (mut chain, mut full) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        let report = verify_ledger(connection)?;
        chain.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(report.first_break.is_none(), "the chain did not verify");
        let started = Instant::now();
        let report = audit(connection, objects)?;
        full.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(
            report.passed()
                && report.records_verified == records
                && report.bundles == revisions as u64
                && report.artifacts_verified == 5 * revisions as u64,
            "the fresh store did not verify: {} bundles, {} artifacts; {:?} {:?} {:?}",
            report.bundles,
            report.artifacts_verified,
            report.record_problems.first(),
            report.artifact_problems.first(),
            report.row_problems.first()
        );
    }
    let repeats = chain.len();
    let per_10k = |seconds: f64| seconds / records as f64 * 10_000.0;
    let (chain, full) = (crate::bench::median(chain), crate::bench::median(full));
    println!(
        "chain only (verify_ledger): {chain:.3} s, {:.3} s per 10,000 records (median of {repeats})",
        per_10k(chain)
    );
    println!(
        "adamviz ledger verify (chain + schema and type of every record + {revisions} bundles' artifacts re-hashed + every row): {full:.3} s for {records} records, {:.3} s per 10,000 records (median of {repeats}; target < 1 s: {})",
        per_10k(full),
        if per_10k(full) < 1.0 { "met" } else { "MISSED" }
    );
    Ok(())
}
