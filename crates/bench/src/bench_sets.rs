//! `adamviz-bench sets`: a figure set of 20 parameters of the pilot (its 18 chemistry
//! parameters and two of their derived twins) taken through the same use cases the web's set
//! pages call: draft every figure with the shared answers (each with its preview), confirm the
//! set (20 revisions: snapshot, script, creation records), and Run all through the durable run
//! queue until every figure is Verified. It prints the time of each step; it never fails
//! because a figure is slow.

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::Context as _;
use clap::Args;

use crate::bench_governed::GovernedFixture;
use adamviz_engine::ingest::profile::profile_table;
use adamviz_evidence::actor::Actor;
use adamviz_model::{
    dataset::DatasetSummary,
    figure_set::{MemberAnswerMap, MemberAnswers},
    profile::DEFAULT_LOW_N_THRESHOLD,
    revision::RunStatus,
};
use adamviz_services::{
    accounts::{now, timestamp},
    datasets::{DatasetCache, LoadedDataset},
    drafts::answers_of,
    figure_sets::{confirm_set, draft_set, run_all, SetConfirmed, SetRequest},
    runs::{status_of_revision, QueueSettings, RunContext, RunQueue},
};

/// Options of `adamviz-bench sets`.
#[derive(Debug, Args)]
pub struct SetsBenchArgs {
    /// The dataset.
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub data: PathBuf,
    /// The question whose answers the figures share.
    #[arg(long, default_value = "ALT over time by arm")]
    pub question: String,
    /// Figures in the set (the dataset's parameters, measured ones first).
    #[arg(long, default_value_t = 20)]
    pub figures: usize,
    /// Runners in this process (default: the server's).
    #[arg(long)]
    pub runners: Option<usize>,
}

/// Runs `adamviz-bench sets`.
pub async fn run_sets_bench(args: SetsBenchArgs) -> anyhow::Result<()> {
    let fixture = GovernedFixture::new(&args.data, &args.question)?;
    let profile = profile_table(
        &fixture.table,
        fixture.upload.content_hash,
        DEFAULT_LOW_N_THRESHOLD,
    );
    let mut codes: Vec<(bool, String)> = profile
        .parameters
        .iter()
        .filter(|p| p.has_values_in(&fixture.spec.value_column))
        .map(|p| (p.derived_looking, p.code.clone()))
        .collect();
    codes.sort();
    anyhow::ensure!(
        codes.len() >= args.figures,
        "the dataset has {} parameters with values, fewer than {}",
        codes.len(),
        args.figures
    );
    let chosen: Vec<String> = codes
        .into_iter()
        .take(args.figures)
        .map(|(_, c)| c)
        .collect();
    let members: MemberAnswerMap = profile
        .parameters
        .iter()
        .map(|p| {
            let answers = MemberAnswers {
                listed: Some("1".to_owned()),
                include: chosen.contains(&p.code).then(|| "1".to_owned()),
                ..MemberAnswers::default()
            };
            (p.code.clone(), answers)
        })
        .collect();
    let shared = answers_of(&fixture.spec);
    let runners = args
        .runners
        .unwrap_or_else(|| QueueSettings::default().local_runners);
    println!(
        "adamviz-bench sets: {} — {:?} as a set of {} figures, {runners} runners",
        args.data.display(),
        args.question,
        args.figures
    );

    let started = Instant::now();
    let drafted = draft_set(
        &args.question,
        &profile,
        &fixture.table,
        fixture.upload.content_hash,
        Some(&shared),
        &members,
    )?;
    let draft_time = started.elapsed();
    anyhow::ensure!(
        drafted.confirmed.len() == args.figures,
        "{} of {} figures confirm",
        drafted.confirmed.len(),
        args.figures
    );

    let dataset = DatasetSummary {
        content_hash: fixture.upload.content_hash.to_hex(),
        file_name: fixture.upload.file_name.clone(),
        format: "xpt".to_owned(),
        classification: fixture.upload.classification.clone(),
        rows: profile.row_count as u64,
        columns: profile.columns.len() as u64,
        dataset_name: profile.dataset_name.clone(),
        size: fixture.upload.size,
        uploaded_by: "bench".to_owned(),
        uploaded_at: timestamp(now()),
    };
    let loaded = Arc::new(LoadedDataset {
        table: Arc::clone(&fixture.table),
        profile: profile.clone(),
    });
    let request = SetRequest {
        question: args.question.clone(),
        shared: Some(shared),
        members,
        revises: None,
    };
    let started = Instant::now();
    let confirmed = confirm_set(
        &fixture.service,
        &dataset,
        loaded,
        request,
        &Actor::command_line(),
        timestamp(now()),
    )
    .await?;
    let confirm_time = started.elapsed();
    let SetConfirmed::Created(set) = confirmed else {
        anyhow::bail!("the set was refused: {confirmed:?}");
    };

    let queue = Arc::new(RunQueue::new(QueueSettings {
        local_runners: runners,
        ..QueueSettings::default()
    }));
    let context = RunContext {
        execution: fixture.service.clone().observed_by(queue.observer()),
        queue,
        datasets: Arc::new(DatasetCache::new(2)),
    };
    let started = Instant::now();
    let queued = run_all(&context, &set, "bench-run-all", &Actor::command_line())
        .await
        .context("Run all")?;
    anyhow::ensure!(queued == args.figures, "{queued} figures queued");
    let deadline = started + Duration::from_secs(60 * 60);
    for (code, id) in &set.members {
        loop {
            match status_of_revision(fixture.service.database(), id).await? {
                Some(RunStatus::Verified) => break,
                Some(status) if status.is_moving() && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                other => anyhow::bail!("{code} ({id}) did not become Verified: {other:?}"),
            }
        }
    }
    let run_time = started.elapsed();

    let n = args.figures as f64;
    println!();
    println!("| step | wall time | per figure |");
    println!("|---|---|---|");
    for (step, time) in [
        (
            "draft every figure (shared answers, each its own preview)",
            draft_time,
        ),
        (
            "confirm the set (one revision per figure, then the set)",
            confirm_time,
        ),
        ("Run all until every figure is Verified", run_time),
    ] {
        println!(
            "| {step} | {:.2} s | {:.0} ms |",
            time.as_secs_f64(),
            time.as_secs_f64() * 1000.0 / n
        );
    }
    println!(
        "| total | {:.1} s | |",
        (draft_time + confirm_time + run_time).as_secs_f64()
    );
    Ok(())
}
