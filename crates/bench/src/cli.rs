//! The `adamviz-bench` command line: the benchmarks that print figures, in a binary of their
//! own so that `adamviz --help` lists only the product's commands. The measurements live in
//! `bench*.rs` beside this file; build with `--release`.

use clap::{Parser, Subcommand};

use crate::{
    bench, bench_auth, bench_execute, bench_governed, bench_ledger, bench_logins, bench_queue,
    bench_sets, bench_web,
};

/// adamviz-bench: adamviz's benchmarks (they print figures; a missed target is reported, never
/// an error).
#[derive(Debug, Parser)]
#[command(name = "adamviz-bench", version, about, long_about = None)]
pub struct BenchCli {
    /// Which benchmark.
    #[command(subcommand)]
    pub command: BenchCommand,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Readers, profile and snapshot hash against R's haven and data.table.
    Ingest(bench::IngestBenchArgs),
    /// Governed execution (with and without a warm pool) against a bare Rscript run.
    Execute(bench_execute::ExecuteBenchArgs),
    /// The governed path end to end against the R run inside it.
    Governed(bench_governed::GovernedBenchArgs),
    /// `adamviz ledger verify` over the records, rows and artifacts of many revisions.
    Ledger(bench_ledger::LedgerBenchArgs),
    /// A login's cost and what sessions and authorization add to a page request.
    Auth(bench_auth::AuthBenchArgs),
    /// A team logging in at once: from many addresses, from one, and during a flood of wrong
    /// logins (release build).
    Logins(bench_logins::LoginsBenchArgs),
    /// Page and preview latency over HTTP at 1 and 20 clients (release build: `make bench`).
    Web(bench_web::WebBenchArgs),
    /// Governed runs per minute through the durable run queue against bare Rscript.
    Queue(bench_queue::QueueBenchArgs),
    /// A figure set of 20 parameters: draft, confirm and Run all until every figure is Verified.
    Sets(bench_sets::SetsBenchArgs),
    /// One measured read + profile, run by `adamviz-bench ingest` in a fresh process.
    #[command(hide = true)]
    BenchChild(bench::BenchChildArgs),
}

/// Runs one parsed benchmark command line.
pub async fn run(cli: BenchCli) -> anyhow::Result<()> {
    match cli.command {
        BenchCommand::Ingest(args) => bench::run_ingest(args),
        BenchCommand::Execute(args) => bench_execute::run_execute_bench(args).await,
        BenchCommand::Governed(args) => bench_governed::run_governed_bench(args).await,
        BenchCommand::Ledger(args) => bench_ledger::run_ledger_bench(args).await,
        BenchCommand::Auth(args) => bench_auth::run_auth_bench(args).await,
        BenchCommand::Logins(args) => bench_logins::run_logins_bench(args).await,
        BenchCommand::Web(args) => bench_web::run_web_bench(args).await,
        BenchCommand::Queue(args) => bench_queue::run_queue_bench(args).await,
        BenchCommand::Sets(args) => bench_sets::run_sets_bench(args).await,
        BenchCommand::BenchChild(args) => bench::run_child(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn bench_cli_definition_is_consistent() {
        BenchCli::command().debug_assert();
    }
}
