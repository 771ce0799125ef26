//! `adamviz run` (the whole governed path, headless) and `adamviz revisions list|show`.

use std::{path::PathBuf, sync::Arc};

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};

use super::spec::read_spec;
use adamviz_engine::ingest::table::Table;
use adamviz_engine::runner::{sandbox::IsolationPolicy, Runner, RunnerConfig};
use adamviz_model::classification::DataClassification;
use adamviz_services::{
    datasets::DatasetCache,
    execution::{ExecutionOutcome, ExecutionService, UploadInfo},
    runs::{run_request_now, QueueSettings, RunContext, RunQueue},
    upload::{receive_upload, DEFAULT_UPLOAD_LIMIT},
};
use adamviz_store::{
    db::Database,
    ledger::records_about,
    objects::ObjectStore,
    repository::{get_revision, list_revisions, Revision, RevisionStatus},
};

/// Options of `adamviz run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The dataset.
    pub file: PathBuf,
    /// The confirmed spec.
    #[arg(long)]
    pub spec: PathBuf,
    /// The data's classification: synthetic or deidentified.
    #[arg(long)]
    pub classification: String,
    /// The question as asked; it must be the one the spec was confirmed for (the spec, and so
    /// its hash and the revision's context, carries it verbatim).
    #[arg(long)]
    pub question: Option<String>,
    /// Names the attempt: the same key with the same inputs returns the same attempt.
    #[arg(long, default_value = "cli")]
    pub idempotency_key: String,
    /// The data directory (database and objects).
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
    /// `require`: every layer of the sandbox or no run; `best-effort`: run with the layers this
    /// machine allows (recorded in the evidence, warned about).
    #[arg(long, value_enum, env = "ADAMVIZ_ISOLATION", default_value = "require")]
    pub isolation: IsolationPolicy,
    /// Where the database is.
    #[command(flatten)]
    pub database: super::DatabaseArgs,
    /// Where the objects live.
    #[command(flatten)]
    pub objects: super::ObjectsArgs,
}

/// `adamviz revisions …`.
#[derive(Debug, Subcommand)]
pub enum RevisionsCommand {
    /// Every revision, newest first.
    List(DataDirArg),
    /// One revision.
    Show {
        /// The revision id (`rev-` and 32 hex digits).
        id: adamviz_model::ids::RevisionId,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The data directory.
        #[command(flatten)]
        data: DataDirArg,
    },
}

/// The data directory option.
#[derive(Debug, Args)]
pub struct DataDirArg {
    /// The data directory (database and objects).
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
    /// Where the database is.
    #[command(flatten)]
    pub database: super::DatabaseArgs,
}

impl DataDirArg {
    /// Opens (creating if needed) the database these options name.
    pub fn open(&self) -> anyhow::Result<Database> {
        let location = self.database.location(&self.data_dir)?;
        if matches!(location, adamviz_store::db::DatabaseLocation::File(_)) {
            adamviz_store::private_files::create_private_dir_all(&self.data_dir).with_context(
                || {
                    format!(
                        "cannot create the data directory {}",
                        self.data_dir.display()
                    )
                },
            )?;
        }
        Database::open_location(location.clone())
            .with_context(|| format!("cannot open the database {}", location.describe()))
    }
}

/// Says on stderr what `best-effort` isolation means, once, before anything runs.
pub fn warn_if_best_effort(policy: IsolationPolicy) {
    let missing = adamviz_engine::runner::sandbox::support().missing_layers();
    if policy == IsolationPolicy::BestEffort {
        eprintln!(
            "warning: isolation best-effort: R runs with the layers this machine allows{}; each result records them",
            if missing.is_empty() {
                " (all of them here)".to_owned()
            } else {
                format!(", without {}", missing.join(" and "))
            }
        );
    }
}

/// Runs `adamviz run`: exit 1 if the revision did not end Verified.
pub async fn run_governed(args: RunArgs) -> anyhow::Result<()> {
    let classification: DataClassification = args
        .classification
        .parse()
        .map_err(|e| anyhow::anyhow!("--classification: {e}"))?;
    let spec = read_spec(&args.spec)?;
    if let Some(question) = &args.question {
        if *question != spec.question {
            bail!(
                "--question {question:?} is not the question {:?} the spec {} was confirmed for; draft and confirm a spec for it (adamviz spec draft/confirm)",
                spec.question,
                args.spec.display()
            );
        }
    }
    let service = open_service(&args).await?;
    let (table, upload) = store_upload(service.objects(), &args.file, classification).await?;
    // The command line acts as the operating-system user running it.
    let actor = adamviz_evidence::actor::Actor::command_line();
    let made = service
        .materialize(&spec, Arc::new(table), &upload, &actor)
        .await?;
    println!(
        "revision: {} ({:?})",
        made.revision.id, made.revision.status
    );
    println!("spec hash: {}", made.prepared.script.spec_hash);
    println!("script hash: {}", made.prepared.script.script_hash);
    println!("snapshot hash: {}", made.prepared.snapshot_hash);
    if made.revision.status == RevisionStatus::ExperimentalDraft {
        println!("free y-scales: Experimental/Draft, no governed execution");
        return Ok(());
    }
    // Through the run queue like a Run pressed on the web: the request is recorded first and
    // claimed by this process at once, so if it dies a server's runners take the run up.
    let queue = Arc::new(RunQueue::new(QueueSettings {
        local_runners: 0,
        ..QueueSettings::default()
    }));
    let context = RunContext {
        execution: service.observed_by(queue.observer()),
        queue,
        datasets: Arc::new(DatasetCache::new(1)),
    };
    let outcome =
        run_request_now(&context, &made.revision.id, &args.idempotency_key, actor).await?;
    print_outcome(&outcome);
    if outcome.revision.status != RevisionStatus::Verified {
        bail!("revision {} did not become Verified", outcome.revision.id);
    }
    Ok(())
}

/// Opens the installation in `--data-dir` (migrations, start-up clean-up: blocking work) and the
/// execution service over it, with the interrupted attempts of an earlier process reconciled.
async fn open_service(args: &RunArgs) -> anyhow::Result<ExecutionService> {
    let mut runner_config = RunnerConfig::new();
    runner_config.isolation = args.isolation;
    let (database, objects) = {
        let (data_dir, work_root) = (args.data_dir.clone(), runner_config.work_root.clone());
        let (database_args, objects_args) = (args.database.clone(), args.objects.clone());
        tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            adamviz_store::private_files::create_private_dir_all(&data_dir)
                .with_context(|| format!("cannot create {}", data_dir.display()))?;
            let database = database_args.open(&data_dir)?;
            let objects = objects_args.open(&data_dir)?;
            adamviz_services::startup::remove_leftovers(&objects, &work_root)?;
            Ok((database, objects))
        })
        .await??
    };
    warn_if_best_effort(args.isolation);
    let service = ExecutionService::new(database, objects, Arc::new(Runner::new(runner_config)));
    service.reconcile().await?;
    Ok(service)
}

/// Takes `file` in as any upload is taken: its raw bytes streamed into the store (hashed on the
/// way), then read from there.
async fn store_upload(
    objects: &ObjectStore,
    file: &std::path::Path,
    classification: DataClassification,
) -> anyhow::Result<(Table, UploadInfo)> {
    let opened =
        std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let objects = objects.clone();
    let received = tokio::task::spawn_blocking(move || {
        receive_upload(
            &objects,
            opened,
            classification.as_str(),
            DEFAULT_UPLOAD_LIMIT,
        )
    })
    .await?
    .with_context(|| format!("cannot take {} as an upload", file.display()))?;
    let upload = UploadInfo {
        content_hash: received.object.digest,
        classification: received.classification.as_str().to_owned(),
        file_name: file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        size: received.object.size,
    };
    Ok((received.table, upload))
}

/// Prints what the governed execution ended with: the attempt, each check, the status and the
/// hashes a reviewer compares.
fn print_outcome(outcome: &ExecutionOutcome) {
    println!("attempt: {}", outcome.attempt_id);
    if let Some(verification) = &outcome.verification {
        for check in &verification.checks {
            println!(
                "  {:<24} {:?}{}",
                check.name,
                check.outcome,
                check
                    .reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
        }
    }
    println!(
        "status: {:?} (version {})",
        outcome.revision.status, outcome.revision.version
    );
    if let Some(hash) = &outcome.revision.image_hash {
        println!("image hash: {hash}");
    }
    if let Some(hash) = &outcome.revision.analytical_hash {
        println!("analytical hash: {hash}");
    }
    if let Some(hash) = &outcome.context_hash {
        println!("context record: {hash}");
    }
}

/// Runs `adamviz revisions …`.
pub fn run_revisions(command: RevisionsCommand) -> anyhow::Result<()> {
    match command {
        RevisionsCommand::List(data) => {
            let database = data.open()?;
            let connection = database.connection()?;
            for revision in list_revisions(&connection)? {
                println!(
                    "{}  {:<18}  v{}  spec {}  {}",
                    revision.id,
                    revision.status.as_str(),
                    revision.version,
                    &revision.spec_hash[..12],
                    revision.created_at
                );
            }
            Ok(())
        }
        RevisionsCommand::Show { id, json, data } => {
            let database = data.open()?;
            let connection = database.connection()?;
            let Some(revision) = get_revision(&connection, &id)? else {
                bail!(
                    "there is no revision {id} in {}",
                    database.location().describe()
                );
            };
            let evidence: Vec<serde_json::Value> = records_about(&connection, &revision.id)?
                .into_iter()
                .map(|stored| {
                    let record: serde_json::Value =
                        serde_json::from_slice(&stored.record).unwrap_or_default();
                    serde_json::json!({
                        "seq": stored.seq,
                        "kind": stored.kind,
                        "record_hash": stored.record_hash,
                        "summary": adamviz_evidence::summary::record_summary(&record),
                    })
                })
                .collect();
            if json {
                let mut shown = serde_json::to_value(&revision)?;
                shown["evidence"] = serde_json::Value::Array(evidence);
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                print_revision(&revision, &evidence);
            }
            Ok(())
        }
    }
}

/// `adamviz revisions show`: the revision's hashes and its evidence records, one per line.
fn print_revision(revision: &Revision, evidence: &[serde_json::Value]) {
    println!(
        "revision {} — {} (version {})",
        revision.id,
        revision.status.as_str(),
        revision.version
    );
    println!("spec hash:       {}", revision.spec_hash);
    println!("script hash:     {}", revision.script_hash);
    println!(
        "snapshot:        {} (hash {})",
        revision.snapshot_id, revision.snapshot_hash
    );
    println!(
        "request record:  {}",
        revision.request_hash.as_deref().unwrap_or("-")
    );
    println!(
        "image hash:      {}",
        revision.image_hash.as_deref().unwrap_or("pending")
    );
    println!(
        "analytical hash: {}",
        revision.analytical_hash.as_deref().unwrap_or("pending")
    );
    println!("created:         {}", revision.created_at);
    println!("evidence ({} records, in ledger order):", evidence.len());
    for record in evidence {
        println!(
            "  #{:<5} {:<24} {}  {}",
            record["seq"].as_i64().unwrap_or_default(),
            record["kind"].as_str().unwrap_or_default(),
            &record["record_hash"].as_str().unwrap_or_default()[..16],
            record["summary"].as_str().unwrap_or_default()
        );
    }
}
