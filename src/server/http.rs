//! HTTP wiring: the axum router (health check, pages, static files), the listener and graceful
//! shutdown. Every route that is not a page or a server function is listed in [`other_routes`].

use std::{path::PathBuf, sync::Arc};

use axum::{
    extract::{FromRef, State},
    http::StatusCode,
    routing::get,
    Json, Router,
};
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};
use serde::Serialize;
use tower_http::trace::TraceLayer;

use super::{
    config::ServeConfig,
    security::{canonical_paths, csrf_guard, page_guard, security_headers, OriginPolicy},
};
use crate::{
    api::boundary::{ApiContext, SetupToken},
    app::{shell, App},
    store::sessions::{delete_expired_sessions_every, DatabaseSessionStore, EXPIRED_SESSION_SWEEP},
};

/// Shared state of the request handlers.
#[derive(Clone)]
pub struct AppState {
    /// Site settings, needed by the page renderer and the static file handler.
    pub leptos_options: LeptosOptions,
    /// The directory that holds all state.
    pub data_dir: Arc<PathBuf>,
    /// What server functions and the page guard need: database, sessions, setup token.
    pub api: ApiContext,
    /// Where state-changing requests must come from.
    pub origins: OriginPolicy,
    /// Whether the session cookie is `Secure` (the public URL is https).
    pub secure_cookies: bool,
}

impl FromRef<AppState> for ApiContext {
    fn from_ref(state: &AppState) -> Self {
        state.api.clone()
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

/// Body of `GET /healthz`.
#[derive(Debug, Serialize)]
struct Health {
    status: &'static str,
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

/// Healthy while the data directory is still there and the database answers (within three
/// seconds): without either nothing can be stored. A load balancer or Kubernetes probe takes a
/// node that is not healthy out of rotation.
async fn healthz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let data_dir_present = tokio::fs::metadata(state.data_dir.as_path())
        .await
        .is_ok_and(|meta| meta.is_dir());
    let unavailable = |reason| {
        let health = Health {
            status: "unavailable",
            version: env!("CARGO_PKG_VERSION"),
            reason: Some(reason),
        };
        (StatusCode::SERVICE_UNAVAILABLE, Json(health))
    };
    if !data_dir_present {
        return unavailable("the data directory is missing");
    }
    let ping = state.api.database.call(|connection| {
        use crate::store::sql::Sql as _;
        connection
            .query_one("SELECT 1", &[])
            .map_err(crate::store::db::DatabaseError::from)
    });
    match tokio::time::timeout(std::time::Duration::from_secs(3), ping).await {
        Ok(Ok(_)) => {
            let health = Health {
                status: "ok",
                version: env!("CARGO_PKG_VERSION"),
                reason: None,
            };
            (StatusCode::OK, Json(health))
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, "health check: the database does not answer");
            unavailable("the database does not answer")
        }
        Err(_) => unavailable("the database does not answer"),
    }
}

/// Every route that is neither a page of `App` nor a server function, with its handler. The
/// router is built from this list, and `tests/access.rs` compares its paths with
/// `api::ROUTE_ACCESS` and `api::PAGE_ACCESS`, so a route added here without its access rule
/// fails a test.
pub fn other_routes() -> Vec<(&'static str, axum::routing::MethodRouter<AppState>)> {
    vec![
        ("/healthz", get(healthz)),
        // Streamed: the upload limit is enforced while the body arrives, not by axum's
        // default body limit.
        (
            "/api/datasets/upload",
            axum::routing::post(crate::api::datasets::upload::upload_dataset)
                .layer(axum::extract::DefaultBodyLimit::disable()),
        ),
        (
            "/api/revisions/{id}/events",
            get(crate::api::revisions::events::status_events),
        ),
        (
            "/api/revisions/{id}/files/{name}",
            get(crate::api::revisions::files::revision_file),
        ),
        (
            "/api/revisions/{id}/evidence",
            get(crate::api::revisions::files::revision_evidence),
        ),
        (
            "/api/sets/{id}/evidence",
            get(crate::api::sets::evidence::set_evidence),
        ),
    ]
}

/// The paths of [`other_routes`].
pub fn other_route_paths() -> Vec<&'static str> {
    other_routes().into_iter().map(|(path, _)| path).collect()
}

/// The pages of `App`, listed once per process. Listing them renders `App` with resource loads
/// suppressed by a process-wide flag (leptos issue #4773), so a second listing while another
/// router of this process is rendering a page can leave that page's resources never loaded
/// and its response hung; the test suites build a router per test, in parallel.
fn page_routes() -> Vec<leptos_axum::AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<leptos_axum::AxumRouteListing>> =
        std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// The complete router: health check, every page of `App` and every server function, static
/// files and the 404 fallback; inside out, the page guard, the session layer, the CSRF check,
/// the refusal of non-canonical paths and the security headers around all of them.
pub fn router(state: AppState) -> Router {
    router_with(state, true)
}

/// [`router`], optionally without the page guard (`adamviz-bench auth` measures what the guard
/// and the session lookup add to a page).
pub fn router_with(state: AppState, guard_pages: bool) -> Router {
    let page_routes = page_routes();
    let leptos_options = state.leptos_options.clone();
    let context = state.api.clone();
    // One login limiter per router: per-address budgets and the bound on password checks.
    let logins = crate::service::accounts::login_limits::LoginLimiter::new(Default::default());
    let sessions = tower_sessions::SessionManagerLayer::new(DatabaseSessionStore::new(
        state.api.database.clone(),
    ))
    .with_name("adamviz_session")
    .with_http_only(true)
    .with_same_site(tower_sessions::cookie::SameSite::Strict)
    .with_secure(state.secure_cookies)
    .with_expiry(tower_sessions::Expiry::OnInactivity(
        tower_sessions::cookie::time::Duration::seconds(
            state.api.sessions.idle_timeout.as_secs() as i64
        ),
    ));
    let mut routes = Router::new();
    for (path, route) in other_routes() {
        routes = routes.route(path, route);
    }
    let routes = routes
        .leptos_routes_with_context(
            &state,
            page_routes,
            move || {
                provide_context(context.clone());
                provide_context(logins.clone());
            },
            move || shell(leptos_options.clone()),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell));
    let routes = if guard_pages {
        routes.layer(axum::middleware::from_fn_with_state(
            state.api.clone(),
            page_guard,
        ))
    } else {
        routes
    };
    routes
        .layer(sessions)
        .layer(axum::middleware::from_fn_with_state(
            state.origins.clone(),
            csrf_guard,
        ))
        // Outside the page guard and the router: they see canonical paths only.
        .layer(axum::middleware::from_fn(canonical_paths))
        .layer(axum::middleware::from_fn(security_headers))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Binds the configured address and serves until SIGINT or SIGTERM, then drains open requests.
pub async fn serve(config: ServeConfig) -> anyhow::Result<()> {
    // A schema file that differs from this build's identity constants stops the server.
    crate::evidence::schemas::check_schema_identities()?;
    let addr = config.leptos_options.site_addr;
    let data_dir = Arc::new(config.data_dir);
    let shutdown = shutdown_signal()
        .map_err(|err| anyhow::anyhow!("cannot install the SIGINT/SIGTERM handlers: {err}"))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|err| anyhow::anyhow!("cannot listen on {addr}: {err}"))?;
    let bound = listener.local_addr()?;
    let database = open_database(&data_dir, &config.database).await?;
    let setup = setup_token(&database, config.public_url.as_deref(), bound).await?;
    let objects = config.objects.open(&data_dir)?;
    tracing::info!(objects = %objects.describe(), "object store");
    // The installation's signing key, created at the first start.
    let key = crate::service::installation_key::InstallationKey::load_or_create(&data_dir)?;
    tracing::info!(fingerprint = %key.fingerprint(), "evidence bundles are signed with the installation key");
    let store = DatabaseSessionStore::new(database.clone());
    delete_expired_sessions_every(store, EXPIRED_SESSION_SWEEP);
    let state = AppState {
        leptos_options: config.leptos_options,
        data_dir,
        api: ApiContext::with_runner(
            database,
            objects,
            config.sessions,
            setup,
            config.upload_limit,
            Arc::new(crate::runner::Runner::new(crate::runner::RunnerConfig {
                isolation: config.isolation,
                ..crate::runner::RunnerConfig::new()
            })),
        )
        .with_key(key)
        .with_temporary_password_hours(config.temporary_password_hours)
        .with_queue_settings(config.queue),
        origins: OriginPolicy::new(config.public_url.as_deref()),
        secure_cookies: config
            .public_url
            .as_deref()
            .is_some_and(|url| url.to_ascii_lowercase().starts_with("https://")),
    };
    // Runs accepted before a crash or a restart resume by themselves.
    let runs = state.api.run_context();
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
    crate::service::runs::release_this_process_claims(&runs).await;
    tracing::info!("adamviz stopped");
    Ok(())
}

/// Opens the database (`--database`, or the one in `data_dir`; migrations applied: a failed one stops the server), removes
/// what gone processes left, and ends the attempts a crash left active as failed, their revisions
/// left retryable.
async fn open_database(
    data_dir: &Arc<std::path::PathBuf>,
    database: &crate::server::cli::DatabaseArgs,
) -> anyhow::Result<crate::store::db::Database> {
    let (opening, database) = (Arc::clone(data_dir), database.clone());
    let database = tokio::task::spawn_blocking(move || {
        let data_dir = opening;
        let location = database.location(&data_dir)?;
        let database =
            crate::store::db::Database::open_location(location.clone()).map_err(|err| {
                anyhow::anyhow!("cannot open the database {}: {err}", location.describe())
            })?;
        tracing::info!(database = %location.describe(), "database");
        // What processes that are gone left behind: run directories (data extracts) and
        // partial object writes.
        let objects = crate::store::objects::ObjectStore::open(&data_dir)?;
        crate::service::startup::remove_leftovers(
            &objects,
            &crate::runner::RunnerConfig::new().work_root,
        )?;
        Ok::<_, anyhow::Error>(database)
    })
    .await??;
    let reconciled = database
        .call(|connection| {
            let transaction = connection.transaction()?;
            let ids = crate::store::repository::reconcile_active_attempts(
                &transaction,
                crate::store::repository::RECONCILED_AT_START,
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
    database: &crate::store::db::Database,
    public_url: Option<&str>,
    bound: std::net::SocketAddr,
) -> anyhow::Result<SetupToken> {
    // No account yet: a one-time link to create the first admin, on stderr.
    let accounts = database
        .call(|connection| {
            crate::service::accounts::account_count(connection)
                .map_err(crate::store::db::DatabaseError::from)
        })
        .await?;
    let setup = if accounts == 0 {
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

/// Registers SIGINT and SIGTERM handlers now (so a signal that arrives before the server is
/// polled is not lost to the default action) and returns a future that completes at the first.
pub(crate) fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => tracing::info!("SIGINT received, shutting down"),
            _ = terminate.recv() => tracing::info!("SIGTERM received, shutting down"),
        }
    })
}
