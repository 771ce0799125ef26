//! `adamviz-bench queue`: governed runs per minute through the durable run queue on the
//! embedded default (SQLite, local objects, the server's own runners) or, with `--database`,
//! `--objects` and `--workers`, on PostgreSQL and an S3 bucket with `adamviz worker` processes
//! taking the runs (the press only records them, as a server started with `--runners 0` does),
//! against the machine's physical limit: the same compiled script run with bare `Rscript --vanilla`, as many at a
//! time as there are runners. N Draft revisions of the pilot's ALT spec are made first; then N
//! simulated users press Run at the same moment (each on its own revision, through
//! `adamviz_services::runs::start_run`, what the web's server function calls — not over HTTP), and the
//! clock stops when the last one is Verified. It prints figures; it never fails because a
//! target is missed.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::Context as _;
use clap::Args;

use crate::{bench_execute::bare_run, bench_governed::GovernedFixture};
use adamviz_engine::compiler::ImageSize;
use adamviz_engine::ingest::snapshot::write_csv;
use adamviz_evidence::actor::Actor;
use adamviz_model::{ids::RevisionId, revision::RunStatus};
use adamviz_services::{
    datasets::DatasetCache,
    prepare::prepare_execution,
    runs::{start_run, status_of_revision, QueueSettings, RunContext, RunQueue},
};

/// Options of `adamviz-bench queue`.
#[derive(Debug, Args)]
pub struct QueueBenchArgs {
    /// The dataset.
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub data: PathBuf,
    /// The question the spec is drafted from.
    #[arg(long, default_value = "ALT over time by arm")]
    pub question: String,
    /// Simultaneous users, each pressing Run on a revision of their own.
    #[arg(long, default_value_t = 20)]
    pub users: usize,
    /// Runners (default: one per core, as `adamviz serve` starts).
    #[arg(long)]
    pub runners: Option<usize>,
    /// The Rscript executable for the bare runs.
    #[arg(long, default_value = "Rscript")]
    pub rscript: PathBuf,
    /// The database (`postgres://…`; default: a fresh SQLite file).
    #[arg(long)]
    pub database: Option<String>,
    /// The objects (`s3://…`, credentials from the AWS variables; default: a local folder).
    #[arg(long)]
    pub objects: Option<String>,
    /// `adamviz worker` processes that take the runs, each with one runner (0: this process's
    /// own runners take them, as `adamviz serve`'s do).
    #[arg(long, default_value_t = 0)]
    pub workers: usize,
    /// The `adamviz` executable the workers run (default: the one beside this benchmark).
    #[arg(long)]
    pub adamviz: Option<PathBuf>,
}

/// Worker processes, killed when the benchmark ends.
struct Workers(Vec<std::process::Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_workers(args: &QueueBenchArgs, work: &Path) -> anyhow::Result<Workers> {
    let adamviz = match &args.adamviz {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("adamviz"),
    };
    let mut workers = Workers(Vec::new());
    for n in 0..args.workers {
        let dir = work.join(format!("worker-{n}"));
        std::fs::create_dir_all(&dir)?;
        let mut command = std::process::Command::new(&adamviz);
        command
            .args(["worker", "--runners", "1", "--data-dir"])
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Some(database) = &args.database {
            command.args(["--database", database]);
        }
        if let Some(objects) = &args.objects {
            command.args(["--objects", objects]);
        }
        workers.0.push(
            command
                .spawn()
                .with_context(|| format!("cannot start {}", adamviz.display()))?,
        );
    }
    Ok(workers)
}

/// Runs `adamviz-bench queue`.
pub async fn run_queue_bench(args: QueueBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.workers == 0 || args.database.is_some(),
        "--workers share the database with this process: give --database postgres://…"
    );
    let fixture = GovernedFixture::new_on(
        &args.data,
        &args.question,
        args.database.as_deref(),
        args.objects.as_deref(),
    )?;
    let runners = match args.workers {
        0 => args
            .runners
            .unwrap_or_else(|| QueueSettings::default().local_runners),
        workers => workers,
    };
    let queue = Arc::new(RunQueue::new(QueueSettings {
        local_runners: if args.workers > 0 { 0 } else { runners },
        ..QueueSettings::default()
    }));
    let _workers = start_workers(&args, fixture.work.path())?;
    let context = RunContext {
        execution: fixture.service.clone().observed_by(queue.observer()),
        queue,
        datasets: Arc::new(DatasetCache::new(2)),
    };
    let mut revisions = Vec::with_capacity(args.users);
    for _ in 0..args.users {
        let made = fixture
            .service
            .materialize(
                &fixture.spec,
                Arc::clone(&fixture.table),
                &fixture.upload,
                &Actor::command_line(),
            )
            .await?;
        revisions.push(made.revision.id);
    }
    let layout = match args.workers {
        0 => format!("{runners} runners in this process"),
        n => format!("{n} adamviz worker processes, one runner each"),
    };
    println!(
        "adamviz-bench queue: {} — {:?}: {} users press Run at once, {layout}; database {}, objects {}",
        args.data.display(),
        args.question,
        args.users,
        fixture.service.database().location().describe(),
        args.objects.as_deref().unwrap_or("a local folder")
    );
    let queued = governed_minutes(&context, &revisions).await?;
    let bare = bare_minutes(&args, &fixture, runners, fixture.work.path())?;
    let (queued_rate, bare_rate) = (args.users as f64 / queued, args.users as f64 / bare);
    println!();
    println!("| runs | wall time | runs per minute |");
    println!("|---|---|---|");
    println!(
        "| {} governed through the queue ({layout}; confirm → Verified, evidence, bundle) | {:.1} s | {queued_rate:.1} |",
        args.users,
        queued * 60.0
    );
    println!(
        "| {} bare `Rscript --vanilla` of the same script, {runners} at a time | {:.1} s | {bare_rate:.1} |",
        args.users,
        bare * 60.0
    );
    println!(
        "governed throughput {:.0} % of bare R's on this machine",
        100.0 * queued_rate / bare_rate
    );
    Ok(())
}

/// Presses Run on every revision at once and waits until all are Verified; minutes taken.
async fn governed_minutes(context: &RunContext, revisions: &[RevisionId]) -> anyhow::Result<f64> {
    let started = Instant::now();
    let presses: Vec<_> = revisions
        .iter()
        .enumerate()
        .map(|(n, id)| {
            let (context, id) = (context.clone(), id.clone());
            tokio::spawn(async move {
                start_run(
                    &context,
                    &id,
                    &format!("bench-user-{n:04}"),
                    Actor::command_line(),
                )
                .await
            })
        })
        .collect();
    for press in presses {
        press.await.context("a press")??;
    }
    let database = context.execution.database();
    let deadline = started + Duration::from_secs(60 * 60);
    for id in revisions {
        loop {
            match status_of_revision(database, id).await? {
                Some(RunStatus::Verified) => break,
                Some(status) if status.is_moving() && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                other => anyhow::bail!("revision {id} did not become Verified: {other:?}"),
            }
        }
    }
    Ok(started.elapsed().as_secs_f64() / 60.0)
}

/// Runs the compiled script `users` times with bare Rscript, `at_once` at a time; minutes taken.
fn bare_minutes(
    args: &QueueBenchArgs,
    fixture: &GovernedFixture,
    at_once: usize,
    work: &Path,
) -> anyhow::Result<f64> {
    let prepared = prepare_execution(
        &fixture.spec,
        &fixture.table,
        &fixture.upload.content_hash,
        ImageSize::default(),
    )?;
    let (script, csv) = (work.join("bare-script.R"), work.join("bare-snapshot.csv"));
    std::fs::write(&script, &prepared.script.bytes)?;
    let mut bytes = Vec::new();
    write_csv(&prepared.snapshot, &mut bytes)?;
    std::fs::write(&csv, &bytes)?;
    let started = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..at_once.max(1))
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    loop {
                        let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        if n >= args.users {
                            return Ok(());
                        }
                        let out = work.join(format!("bare-{n}"));
                        bare_run(&args.rscript, &script, &csv, &out, work)?;
                    }
                })
            })
            .collect();
        for worker in workers {
            worker
                .join()
                .map_err(|_| anyhow::anyhow!("a bare run panicked"))??;
        }
        Ok(())
    })?;
    Ok(started.elapsed().as_secs_f64() / 60.0)
}
