//! The `adamviz` binary and its composition root. `adamviz serve` is put together here, in one
//! place and in order: configuration → database → object store → services → router. Every
//! other subcommand is run by `adamviz_server::cli`.

use std::{io::IsTerminal, sync::Arc};

use anyhow::Context as _;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use adamviz::api::boundary::{ApiContext, SetupToken};
use adamviz_engine::runner::{Runner, RunnerConfig};
use adamviz_server::{
    cli::{self, Cli, Command},
    config::ServeConfig,
    http::{router, AppState},
    security::OriginPolicy,
    sessions::{delete_expired_sessions_every, DatabaseSessionStore, EXPIRED_SESSION_SWEEP},
    shutdown::shutdown_signal,
};
use adamviz_services::{installation_key::InstallationKey, Services};
use adamviz_store::{db::Database, objects::ObjectStore, repository};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Logs go to stderr so that commands printing JSON keep stdout clean.
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,adamviz=info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();

    let outcome = match Cli::parse().command {
        Command::Serve(args) => match args.config() {
            Ok(config) => serve(config).await,
            Err(error) => Err(error),
        },
        command => cli::run(command).await,
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Binds the configured address and serves until SIGINT or SIGTERM, then drains open requests.
async fn serve(config: ServeConfig) -> anyhow::Result<()> {
    // A schema file that differs from this build's identity constants stops the server.
    adamviz_evidence::schemas::check_schema_identities()?;
    let addr = config.leptos_options.site_addr;
    let data_dir = Arc::new(config.data_dir);
    let shutdown = shutdown_signal()
        .map_err(|err| anyhow::anyhow!("cannot install the SIGINT/SIGTERM handlers: {err}"))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|err| anyhow::anyhow!("cannot listen on {addr}: {err}"))?;
    let bound = listener.local_addr()?;

    // The database, with what gone processes and a crash left behind cleaned up.
    let database = open_database(&data_dir, &config.database).await?;
    // The object store.
    let objects = config.objects.open(&data_dir)?;
    tracing::info!(objects = %objects.describe(), "object store");
    // The installation's signing key, created at the first start.
    let key = InstallationKey::load_or_create(&data_dir)?;
    tracing::info!(fingerprint = %key.fingerprint(), "evidence bundles are signed with the installation key");

    // The services over them.
    let runner = Runner::new(RunnerConfig {
        isolation: config.isolation,
        ..RunnerConfig::new()
    });
    let services = Services::with_runner(database.clone(), objects, Arc::new(runner))
        .with_upload_limit(config.upload_limit)
        .with_key(key)
        .with_temporary_password_hours(config.temporary_password_hours)
        .with_queue_settings(config.queue);
    let setup = setup_token(&services, config.public_url.as_deref(), bound).await?;
    delete_expired_sessions_every(DatabaseSessionStore::new(database), EXPIRED_SESSION_SWEEP);

    // The router over the services.
    let state = AppState {
        leptos_options: config.leptos_options,
        data_dir,
        api: ApiContext::new(services, config.sessions, setup),
        origins: OriginPolicy::new(config.public_url.as_deref()),
        secure_cookies: config
            .public_url
            .as_deref()
            .is_some_and(|url| url.to_ascii_lowercase().starts_with("https://")),
        trusted_proxies: config.trusted_proxies,
    };
    // Runs accepted before a crash or a restart resume by themselves.
    let runs = state.api.services.run_context();
    runs.ensure_local_runners();
    tracing::info!(
        runners = config.queue.local_runners,
        "run queue: this server's runners claim queued runs"
    );
    tracing::info!(
        addr = %bound,
        data_dir = %state.data_dir.display(),
        site_root = %state.leptos_options.site_root,
        "adamviz listening on http://{bound}"
    );
    axum::serve(
        listener,
        router(state).into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await?;
    adamviz_services::runs::release_this_process_claims(&runs).await;
    tracing::info!("adamviz stopped");
    Ok(())
}

/// Opens the database (`--database`, or the one in `data_dir`; migrations applied: a failed
/// one stops the server), removes what gone processes left, and ends the attempts a crash left
/// active as failed, their revisions left retryable.
async fn open_database(
    data_dir: &Arc<std::path::PathBuf>,
    database: &cli::DatabaseArgs,
) -> anyhow::Result<Database> {
    let (opening, database) = (Arc::clone(data_dir), database.clone());
    let database = tokio::task::spawn_blocking(move || {
        let data_dir = opening;
        let location = database.location(&data_dir)?;
        let database = Database::open_location(location.clone())
            .with_context(|| format!("cannot open the database {}", location.describe()))?;
        tracing::info!(database = %location.describe(), "database");
        // What processes that are gone left behind: run directories (data extracts) and
        // partial object writes.
        let objects = ObjectStore::open(&data_dir)?;
        adamviz_services::startup::remove_leftovers(&objects, &RunnerConfig::new().work_root)?;
        Ok::<_, anyhow::Error>(database)
    })
    .await??;
    let reconciled = database
        .call(|connection| {
            let transaction = connection.transaction()?;
            let ids = repository::reconcile_active_attempts(
                &transaction,
                repository::RECONCILED_AT_START,
            )?;
            transaction.commit()?;
            Ok::<_, anyhow::Error>(ids)
        })
        .await?;
    for attempt in &reconciled {
        tracing::warn!(%attempt, "reconciled an attempt left active: marked failed, revision retryable");
    }
    Ok(database)
}

/// With no account yet, a one-time link to create the first admin, printed on stderr.
async fn setup_token(
    services: &Services,
    public_url: Option<&str>,
    bound: std::net::SocketAddr,
) -> anyhow::Result<SetupToken> {
    let setup = if services.account_count().await? == 0 {
        SetupToken::fresh()
    } else {
        SetupToken::none()
    };
    let public_url = public_url
        .map(str::to_owned)
        .unwrap_or_else(|| format!("http://{bound}"));
    if let Some(token) = setup.current() {
        eprintln!(
            "adamviz has no account yet: create the first admin at {}/setup?token={token} (valid until used or until this server stops)",
            public_url.trim_end_matches('/')
        );
    }
    Ok(setup)
}
