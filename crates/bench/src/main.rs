//! `adamviz-bench`: adamviz's benchmarks, which print figures (a missed target is reported,
//! never an error), in a crate of their own so that neither the product's library nor
//! `adamviz --help` carries them. Sets up logging and runs one benchmark (`cli`).

use std::io::IsTerminal;

mod bench;
mod bench_auth;
mod bench_execute;
mod bench_governed;
mod bench_ledger;
mod bench_logins;
mod bench_queue;
mod bench_sets;
mod bench_web;
mod cli;

use clap::Parser;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = cli::BenchCli::parse();
    match cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
