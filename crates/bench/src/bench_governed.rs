//! `adamviz-bench governed`: the whole governed path for the ALT spec of the pilot (materialize
//! → attempt → sandboxed R → verification → bundle and promotion), timed end to end, against the
//! R run alone inside it (the runner's measured wall time of the R process). What is left is
//! the overhead of evidence, verification and storage; target: under 10 % of the R run. It
//! prints figures; it never fails because the target is missed.

use std::{path::PathBuf, sync::Arc, time::Instant};

use anyhow::bail;
use clap::Args;

use crate::bench::median;

use adamviz_engine::ingest::profile::profile_table;
use adamviz_engine::runner::{Runner, RunnerConfig};
use adamviz_model::{digest::Sha256Digest, profile::DEFAULT_LOW_N_THRESHOLD};
use adamviz_services::{
    drafts::confirm_proposal,
    execution::{ExecutionService, UploadInfo},
};
use adamviz_store::{db::Database, objects::ObjectStore, repository::RevisionStatus};

/// Options of `adamviz-bench governed`.
#[derive(Debug, Args)]
pub struct GovernedBenchArgs {
    /// The dataset.
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub data: PathBuf,
    /// The question the spec is drafted from.
    #[arg(long, default_value = "ALT over time by arm")]
    pub question: String,
    /// Timed rounds (after one untimed).
    #[arg(long, default_value_t = 7)]
    pub repeats: usize,
}

/// The pilot's data, a confirmed spec for a question, and a service over a fresh temporary
/// data directory: what the governed and the ledger benchmarks start from.
pub(super) struct GovernedFixture {
    pub spec: adamviz_model::spec::PlotSpec,
    pub table: Arc<adamviz_engine::ingest::table::Table>,
    pub upload: UploadInfo,
    pub service: ExecutionService,
    /// The service's data directory (removed when the fixture is dropped).
    pub work: tempfile::TempDir,
}

impl GovernedFixture {
    /// Reads `data`, confirms the proposed spec for `question` and opens a fresh service.
    pub fn new(data: &std::path::Path, question: &str) -> anyhow::Result<Self> {
        Self::new_on(data, question, None, None)
    }

    /// [`GovernedFixture::new`] on the database and objects named (`postgres://…`,
    /// `s3://…`; the fresh data directory's own without them).
    pub fn new_on(
        data: &std::path::Path,
        question: &str,
        database: Option<&str>,
        objects: Option<&str>,
    ) -> anyhow::Result<Self> {
        // Mapped, as uploads are read: the file is never copied whole into memory.
        let bytes = adamviz_engine::ingest::MappedFile::open(data)?;
        let content_hash =
            Sha256Digest::from_bytes(<sha2::Sha256 as sha2::Digest>::digest(&*bytes).into());
        let table = adamviz_engine::ingest::read_dataset(&bytes)?;
        let profile = profile_table(&table, content_hash, DEFAULT_LOW_N_THRESHOLD);
        let spec = confirm_proposal(question, &profile, &table, content_hash)?;
        let upload = UploadInfo {
            content_hash,
            classification: "deidentified".into(),
            file_name: "bench.xpt".into(),
            size: bytes.len() as u64,
        };
        let work = tempfile::tempdir()?;
        let database = Database::open_at(work.path(), database)?;
        let mut config = RunnerConfig::new();
        config.work_root = work.path().join("runs");
        // The dataset's raw bytes are in the store, as an upload's are.
        let objects = ObjectStore::open_shared(work.path(), objects)?;
        objects.put(&bytes, adamviz_services::upload::DEFAULT_UPLOAD_LIMIT)?;
        let service = ExecutionService::new(database, objects, Arc::new(Runner::new(config)));
        Ok(Self {
            spec,
            table: Arc::new(table),
            upload,
            service,
            work,
        })
    }

    /// Materializes and executes the spec once; the outcome must be Verified.
    pub async fn governed_run(
        &self,
        key: &str,
    ) -> anyhow::Result<(adamviz_services::execution::ExecutionOutcome, Instant)> {
        let started = Instant::now();
        let made = self
            .service
            .materialize(
                &self.spec,
                Arc::clone(&self.table),
                &self.upload,
                &adamviz_evidence::actor::Actor::command_line(),
            )
            .await?;
        let outcome = self
            .service
            .execute(
                &made.revision.id,
                key,
                &self.spec,
                made.prepared.script.bytes.clone(),
                Arc::clone(&made.prepared.snapshot),
                &adamviz_evidence::actor::Actor::command_line(),
            )
            .await?;
        if outcome.revision.status != RevisionStatus::Verified {
            bail!(
                "the governed run did not end Verified: {:?}",
                outcome.verification
            );
        }
        Ok((outcome, started))
    }
}

/// Runs `adamviz-bench governed`.
pub async fn run_governed_bench(args: GovernedBenchArgs) -> anyhow::Result<()> {
    let fixture = GovernedFixture::new(&args.data, &args.question)?;
    println!(
        "adamviz-bench governed: {} — {:?}, {} rounds",
        args.data.display(),
        args.question,
        args.repeats
    );
    let (mut totals, mut r_runs, mut overheads) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..=args.repeats {
        let (outcome, started) = fixture.governed_run("bench").await?;
        let total = started.elapsed().as_secs_f64();
        let r_run = outcome
            .result
            .map_or(0.0, |r| r.duration_ms as f64 / 1000.0);
        if round > 0 {
            println!(
                "  round {round}: confirm→Verified {total:.3} s, R run {r_run:.3} s, overhead {:.3} s",
                total - r_run
            );
            totals.push(total);
            r_runs.push(r_run);
            overheads.push(total - r_run);
        }
    }
    let (total, r_run, overhead) = (median(totals), median(r_runs), median(overheads));
    let ratio = overhead / r_run;
    println!(
        "median: confirm→Verified {total:.3} s; R run {r_run:.3} s; evidence + verification + storage {overhead:.3} s = {:.1} % of the R run (target < 10 %: {})",
        ratio * 100.0,
        if ratio < 0.10 { "met" } else { "MISSED" }
    );
    Ok(())
}
