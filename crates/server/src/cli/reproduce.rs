//! `adamviz reproduce REVISION`: a Verified or Approved revision's retained result run again in
//! a fresh sandboxed R process; the outcome is printed and recorded as a `reproduction` record.
//! Exit 1 when it did not reproduce.

use std::{path::PathBuf, sync::Arc};

use clap::Args;

use adamviz_engine::runner::{sandbox::IsolationPolicy, Runner, RunnerConfig};
use adamviz_evidence::{actor::Actor, reproduction::ReproductionOutcome};
use adamviz_model::ids::RevisionId;
use adamviz_services::{execution::ExecutionService, reproduction::reproduce};

/// Options of `adamviz reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// The revision (`rev-` and 32 hex digits).
    pub revision: String,
    /// The data directory (database and objects).
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
    /// `require`: every layer of the sandbox or no run; `best-effort`: run with the layers this
    /// machine allows.
    #[arg(long, value_enum, env = "ADAMVIZ_ISOLATION", default_value = "require")]
    pub isolation: IsolationPolicy,
    /// Where the database is.
    #[command(flatten)]
    pub database: super::DatabaseArgs,
    /// Where the objects live.
    #[command(flatten)]
    pub objects: super::ObjectsArgs,
}

/// Runs `adamviz reproduce`.
pub async fn run(args: ReproduceArgs) -> anyhow::Result<()> {
    let id = RevisionId::parse(&args.revision).map_err(|_| {
        anyhow::anyhow!(
            "{:?} is not a revision id (rev- and 32 hex digits)",
            args.revision
        )
    })?;
    let mut config = RunnerConfig::new();
    config.isolation = args.isolation;
    super::run::warn_if_best_effort(args.isolation);
    let (data_dir, database_args, objects_args) = (
        args.data_dir.clone(),
        args.database.clone(),
        args.objects.clone(),
    );
    let (database, objects) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        Ok((
            database_args.open_existing(&data_dir)?,
            objects_args.open(&data_dir)?,
        ))
    })
    .await??;
    let service = ExecutionService::new(database, objects, Arc::new(Runner::new(config)));
    let outcome = reproduce(&service, &id, &Actor::command_line()).await?;
    match outcome.outcome {
        ReproductionOutcome::Reproduced => {
            println!("{id}: reproduced (record {})", outcome.record_hash);
            if outcome.same_environment {
                println!("same environment: analytical hash and image hash match");
            } else {
                println!(
                    "analytical hash matches; the environment differs in: {}",
                    outcome.environment_differences.join(", ")
                );
            }
            Ok(())
        }
        ReproductionOutcome::Failed => {
            println!("{id}: NOT reproduced (record {})", outcome.record_hash);
            for failure in &outcome.failures {
                println!("  {failure}");
            }
            std::process::exit(1)
        }
    }
}
