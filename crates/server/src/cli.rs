//! The `adamviz` command line: one subcommand per capability. Later capabilities add their
//! subcommands to [`Command`] and a branch to [`run`]. The benchmarks are another crate's
//! (`crates/bench`, the `adamviz-bench` binary).

use std::{net::SocketAddr, path::PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::config::ServeConfig;
pub use crate::locations::{DatabaseArgs, ObjectsArgs};

pub mod demo;
pub mod evidence;
pub mod execute;
pub mod key;
pub mod ledger;
pub mod migrate;
pub mod profile;
pub mod reproduce;
pub mod run;
pub mod spec;
pub mod users;
pub mod worker;

/// adamviz: governed clinical-trial plots from ADaM data.
#[derive(Debug, Parser)]
#[command(name = "adamviz", version = adamviz_services::provenance::VERSION_TEXT, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web application (embedded default: 127.0.0.1:3000, state in ./adamviz-data).
    Serve(ServeArgs),
    /// Read a dataset (CSV, SAS XPORT or Dataset-JSON) and print its profile: columns, roles, warnings.
    Profile(profile::ProfileArgs),
    /// Propose and confirm plot specs.
    #[command(subcommand)]
    Spec(spec::SpecCommand),
    /// Write the records a confirmed spec selects (snapshot.csv, snapshot.json) and their hash.
    Snapshot(spec::SnapshotArgs),
    /// Write the synthetic demo dataset (ADLB-like, generated from a fixed seed).
    DemoData(demo::DemoArgs),
    /// Print or write the R script of a confirmed spec.
    Compile(execute::CompileArgs),
    /// Compile, snapshot and run a confirmed spec in the sandboxed R runner (no store).
    Execute(execute::ExecuteArgs),
    /// The whole governed path, headless: materialize, execute, verify, and print the outcome.
    Run(run::RunArgs),
    /// Take runs from the installation's queue and run them in the sandboxed R, as a server's
    /// runners do, until SIGINT or SIGTERM (a server started with `--runners 0` only serves).
    Worker(worker::WorkerArgs),
    /// Run a Verified or Approved revision's retained result again and record the outcome
    /// (exit 1 when it does not reproduce).
    Reproduce(reproduce::ReproduceArgs),
    /// Browse revisions.
    #[command(subcommand)]
    Revisions(run::RevisionsCommand),
    /// The evidence ledger.
    #[command(subcommand)]
    Ledger(ledger::LedgerCommand),
    /// Accounts: add, list, disable, set a password.
    #[command(subcommand)]
    Users(users::UsersCommand),
    /// Evidence bundles: export.
    #[command(subcommand)]
    Evidence(evidence::EvidenceCommand),
    /// The installation's signing key (evidence bundles are signed with it).
    #[command(subcommand)]
    Key(key::KeyCommand),
    /// Move an installation from its data directory into PostgreSQL and an S3-compatible
    /// bucket, verifying both sides (the old one is only read).
    Migrate(migrate::MigrateArgs),
}

/// Options of `adamviz serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; overrides `site-addr` of the site settings. Port 0 picks a free port.
    #[arg(long, env = "ADAMVIZ_ADDR")]
    pub addr: Option<SocketAddr>,

    /// Directory holding all state (database, artifact objects); created on first start.
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,

    /// Site settings file (a `[package.metadata.leptos]` table), relative to the working directory.
    #[arg(long, env = "ADAMVIZ_SITE_CONFIG", default_value = "Leptos.toml")]
    pub site_config: PathBuf,

    /// `require`: every layer of the R sandbox or no run; `best-effort`: run with the layers
    /// this machine allows (recorded in the evidence, warned about).
    #[arg(long, value_enum, env = "ADAMVIZ_ISOLATION", default_value = "require")]
    pub isolation: adamviz_engine::runner::sandbox::IsolationPolicy,

    /// The URL people reach adamviz at, e.g. https://plots.example.org, when it is behind a
    /// proxy: state-changing requests must come from its origin, and https makes the session
    /// cookie Secure. Default: the address listened on.
    #[arg(long, env = "ADAMVIZ_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// A reverse proxy (a CIDR range or an address; repeatable, or comma-separated in the
    /// variable) whose `Forwarded` / `X-Forwarded-For` headers name the client: the right-most
    /// address in them that is not a trusted proxy is the client's, for the login limits,
    /// lockouts and the security log. Default: none (the peer is the client).
    #[arg(long = "trusted-proxy", env = "ADAMVIZ_TRUSTED_PROXIES", value_delimiter = ',', value_parser = crate::client_address::parse_trusted_proxy)]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    /// A session ends after this many minutes without a request.
    #[arg(long, env = "ADAMVIZ_SESSION_IDLE_MINUTES", default_value_t = 30)]
    pub session_idle_minutes: u64,

    /// A session ends this many hours after login, however active.
    #[arg(long, env = "ADAMVIZ_SESSION_LIFETIME_HOURS", default_value_t = 12)]
    pub session_lifetime_hours: u64,

    /// Uploads larger than this many bytes are refused (413) while they stream.
    #[arg(long, env = "ADAMVIZ_UPLOAD_LIMIT", default_value_t = adamviz_services::upload::DEFAULT_UPLOAD_LIMIT)]
    pub upload_limit: u64,

    /// A password an administrator sets (web or `adamviz users`) stops working this many hours
    /// later; its owner must replace it with their own at the first login before then.
    #[arg(long, env = "ADAMVIZ_TEMPORARY_PASSWORD_HOURS", default_value_t = adamviz_services::accounts::DEFAULT_TEMPORARY_PASSWORD_HOURS, value_parser = clap::value_parser!(i64).range(1..=24 * 90))]
    pub temporary_password_hours: i64,

    /// The run queue: this server's runners, leases, retries.
    #[command(flatten)]
    pub queue: QueueArgs,

    /// Where the database is.
    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Where the objects live.
    #[command(flatten)]
    pub objects: ObjectsArgs,
}

/// How a process takes part in the run queue (`serve` and `worker`).
#[derive(Debug, Args)]
pub struct QueueArgs {
    /// Runners this process starts: each claims queued runs from the database and runs them in
    /// R, one at a time (default: one per core). 0: it takes no runs (a server that only serves;
    /// runs wait for a runner elsewhere).
    #[arg(long, env = "ADAMVIZ_RUNNERS")]
    pub runners: Option<usize>,

    /// Seconds a runner's claim of a run holds without a renewal (runners renew it every sixth
    /// of that): a run whose runner stops renewing goes back to the queue after it.
    #[arg(long, env = "ADAMVIZ_RUN_LEASE_SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(6..=86_400))]
    pub run_lease_seconds: u64,

    /// How many times a run is claimed before it is given up: the first claim and the retries
    /// after a lost runner (each an attempt in the evidence).
    #[arg(long, env = "ADAMVIZ_RUN_MAX_CLAIMS", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub run_max_claims: u32,
}

impl QueueArgs {
    /// The queue settings these flags give.
    pub fn settings(&self) -> adamviz_services::runs::QueueSettings {
        let defaults = adamviz_services::runs::QueueSettings::default();
        let lease = std::time::Duration::from_secs(self.run_lease_seconds);
        adamviz_services::runs::QueueSettings {
            local_runners: self.runners.unwrap_or(defaults.local_runners),
            max_claims: self.run_max_claims,
            lease,
            heartbeat: lease / 6,
            ..defaults
        }
    }
}

impl ServeArgs {
    /// The server's configuration: the site settings file read, these options over it.
    pub fn config(self) -> anyhow::Result<ServeConfig> {
        let mut config = ServeConfig::load(&self.site_config, self.addr, self.data_dir)?;
        config.isolation = self.isolation;
        config.public_url = self.public_url;
        config.trusted_proxies = crate::client_address::TrustedProxies::new(self.trusted_proxies);
        config.upload_limit = self.upload_limit;
        config.temporary_password_hours = self.temporary_password_hours;
        config.queue = self.queue.settings();
        config.database = self.database;
        config.objects = self.objects;
        config.sessions = adamviz::api::boundary::SessionSettings {
            idle_timeout: std::time::Duration::from_secs(self.session_idle_minutes * 60),
            absolute_lifetime: std::time::Duration::from_secs(self.session_lifetime_hours * 3600),
        };
        run::warn_if_best_effort(self.isolation);
        Ok(config)
    }
}

/// Runs one parsed subcommand to completion. `serve` is not one of them: the binary's `main`,
/// the composition root, builds the server from [`ServeArgs::config`].
pub async fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve(_) => {
            anyhow::bail!("`serve` is started by the adamviz binary's main, not by cli::run")
        }
        Command::Profile(args) => profile::run(args),
        Command::Spec(command) => spec::run_spec(command),
        Command::Snapshot(args) => spec::run_snapshot(args),
        Command::DemoData(args) => demo::run(args),
        Command::Compile(args) => execute::run_compile(args),
        Command::Execute(args) => execute::run_execute(args).await,
        Command::Ledger(command) => ledger::run(command),
        Command::Run(args) => run::run_governed(args).await,
        Command::Worker(args) => worker::run(args).await,
        Command::Reproduce(args) => reproduce::run(args).await,
        Command::Revisions(command) => run::run_revisions(command),
        Command::Users(command) => users::run(command),
        Command::Key(command) => key::run(command),
        Command::Evidence(command) => evidence::run(command).await,
        Command::Migrate(args) => tokio::task::spawn_blocking(move || migrate::run(args)).await?,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn serve_without_flags_uses_the_embedded_defaults() {
        let cli = Cli::try_parse_from(["adamviz", "serve"]).expect("parses");
        let Command::Serve(args) = cli.command else {
            panic!("not serve");
        };
        assert_eq!(args.addr, None, "the address comes from the site settings");
        assert_eq!(args.data_dir, PathBuf::from("adamviz-data"));
        assert_eq!(args.site_config, PathBuf::from("Leptos.toml"));
    }

    #[test]
    fn serve_takes_addr_and_data_dir() {
        let cli = Cli::try_parse_from([
            "adamviz",
            "serve",
            "--addr",
            "127.0.0.1:4100",
            "--data-dir",
            "/tmp/somewhere",
        ])
        .expect("parses");
        let Command::Serve(args) = cli.command else {
            panic!("not serve");
        };
        assert_eq!(args.addr, Some("127.0.0.1:4100".parse().unwrap()));
        assert_eq!(args.data_dir, PathBuf::from("/tmp/somewhere"));
    }

    #[test]
    fn a_malformed_address_is_refused_with_its_value() {
        let err = Cli::try_parse_from(["adamviz", "serve", "--addr", "localhost"]).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("'localhost'"), "{message}");
        assert!(message.contains("--addr"), "{message}");
    }
}
