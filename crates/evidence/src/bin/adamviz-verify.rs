//! `adamviz-verify`: the offline validator alone, for an auditor who builds it from this crate
//! (`cargo build --release --locked -p adamviz-evidence --bin adamviz-verify`) without the web
//! application. The same checks, report and exit codes as `adamviz evidence validate`.

use clap::Parser;

/// Check an adamviz evidence bundle offline. Exit 0 PASS (every check holds and the manifest is
/// signed by the --trusted-key); 3 CONSISTENT, ORIGIN NOT PROVEN (every check holds, but no
/// --trusted-key was given: anyone can make a bundle that agrees with itself); 5 FAIL; 2 bad
/// invocation, or an archive refused before any check (unreadable, unsafe entry names, more
/// than 10,000 entries or 2 GiB inflated).
#[derive(Debug, Parser)]
#[command(name = "adamviz-verify", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    validate: adamviz_evidence::cli::ValidateArgs,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cli = Cli::parse();
    let code = adamviz_evidence::cli::validate_command("adamviz-verify", &cli.validate).await;
    std::process::exit(code)
}
