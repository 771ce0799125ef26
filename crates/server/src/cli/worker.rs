//! `adamviz worker`: a process that takes runs from an installation's queue and runs them in the
//! sandboxed R, exactly as a server's runners do (claim, heartbeat, verify, store, complete),
//! sharing nothing with the servers but the database and the object store. A worker stopped or
//! killed mid-run leaves its claim to be found lost: the run goes back to the queue.

use std::{path::PathBuf, sync::Arc};

use anyhow::Context as _;
use clap::Args;

use super::{run::warn_if_best_effort, QueueArgs};
use adamviz_engine::runner::{sandbox::IsolationPolicy, Runner, RunnerConfig};
use adamviz_services::{
    datasets::DatasetCache,
    execution::ExecutionService,
    runs::{RunContext, RunQueue},
};

/// Options of `adamviz worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The installation's data directory (database and objects), as the server has it.
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
    /// `require`: every layer of the sandbox or no run; `best-effort`: run with the layers this
    /// machine allows (recorded in the evidence, warned about).
    #[arg(long, value_enum, env = "ADAMVIZ_ISOLATION", default_value = "require")]
    pub isolation: IsolationPolicy,
    /// The runners, leases and retries.
    #[command(flatten)]
    pub queue: QueueArgs,
    /// Where the database is.
    #[command(flatten)]
    pub database: super::DatabaseArgs,
    /// Where the objects live.
    #[command(flatten)]
    pub objects: super::ObjectsArgs,
}

/// Runs `adamviz worker` until SIGINT or SIGTERM.
pub async fn run(args: WorkerArgs) -> anyhow::Result<()> {
    let shutdown =
        crate::shutdown::shutdown_signal().context("cannot install the SIGINT/SIGTERM handlers")?;
    let settings = args.queue.settings();
    anyhow::ensure!(
        settings.local_runners > 0,
        "--runners 0: a worker without runners would take no run"
    );
    let mut runner_config = RunnerConfig::new();
    runner_config.isolation = args.isolation;
    let data_dir = args.data_dir.clone();
    let work_root = runner_config.work_root.clone();
    let (database_args, objects_args) = (args.database.clone(), args.objects.clone());
    let (database, objects) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        // A worker joins an installation; it never creates one (a typo would otherwise start
        // an empty queue nobody fills).
        let database = database_args.open_existing(&data_dir)?;
        tracing::info!(database = %database.location().describe(), "database");
        let objects = objects_args.open(&data_dir)?;
        tracing::info!(objects = %objects.describe(), "object store");
        adamviz_services::startup::remove_leftovers(&objects, &work_root)?;
        Ok((database, objects))
    })
    .await??;
    warn_if_best_effort(args.isolation);
    let queue = Arc::new(RunQueue::new(settings));
    let context = RunContext {
        execution: ExecutionService::new(database, objects, Arc::new(Runner::new(runner_config)))
            .observed_by(queue.observer()),
        queue,
        datasets: Arc::new(DatasetCache::new(2)),
    };
    context.ensure_local_runners();
    tracing::info!(
        runners = settings.local_runners,
        data_dir = %args.data_dir.display(),
        "adamviz worker: taking runs from the queue"
    );
    shutdown.await;
    // Runs in flight go back to the queue and stop with the process (their R is killed with it).
    adamviz_services::runs::release_this_process_claims(&context).await;
    tracing::info!("adamviz worker stopped");
    Ok(())
}
