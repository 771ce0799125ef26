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

use crate::client_address::{forwarded_client, TrustedProxies};
use crate::security::{canonical_paths, csrf_guard, page_guard, security_headers, OriginPolicy};
use crate::sessions::DatabaseSessionStore;
use adamviz::api::boundary::ApiContext;
use adamviz::app::{shell, App};

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
    /// The reverse proxies whose forwarding headers name the client.
    pub trusted_proxies: TrustedProxies,
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
    let ping = state.api.services.database_answers();
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
            axum::routing::post(adamviz::api::datasets::upload::upload_dataset)
                .layer(axum::extract::DefaultBodyLimit::disable()),
        ),
        (
            "/api/revisions/{id}/events",
            get(adamviz::api::revisions::events::status_events),
        ),
        (
            "/api/revisions/{id}/files/{name}",
            get(adamviz::api::revisions::files::revision_file),
        ),
        (
            "/api/revisions/{id}/evidence",
            get(adamviz::api::revisions::files::revision_evidence),
        ),
        (
            "/api/sets/{id}/evidence",
            get(adamviz::api::sets::evidence::set_evidence),
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
    let logins = adamviz_services::accounts::login_limiter::LoginLimiter::new(Default::default());
    let sessions = tower_sessions::SessionManagerLayer::new(DatabaseSessionStore::new(
        state.api.services.database().clone(),
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
        // Outermost: every layer and handler sees the client behind a trusted proxy.
        .layer(axum::middleware::from_fn_with_state(
            state.trusted_proxies.clone(),
            forwarded_client,
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
