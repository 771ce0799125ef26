//! `adamviz-bench auth`: what accounts cost. The median of a login (an Argon2id verification
//! plus its security event, on a real SQLite file), and the median time of one page request
//! (`GET /datasets`, rendered in full) through the whole router with a valid session, against
//! the same page with the same session through the router without the page guard: the
//! difference is what the guard's session lookup and account check add. (The page's own server
//! functions check the session in both, so a request without one is refused: 401.)

use std::{path::Path, time::Instant};

use axum::{body::Body, http::Request};
use clap::Args;
use http_body_util::BodyExt;
use tower::ServiceExt;

use adamviz::api::boundary::{ApiContext, SessionSettings, SetupToken};
use adamviz_model::account::Role;
use adamviz_server::{
    config::ServeConfig,
    http::{router_with, AppState},
    security::OriginPolicy,
};
use adamviz_services::accounts;
use adamviz_store::db::Database;

/// Options of `adamviz-bench auth`.
#[derive(Debug, Args)]
pub struct AuthBenchArgs {
    /// Logins timed.
    #[arg(long, default_value_t = 21)]
    pub logins: usize,
    /// Page requests timed, each way.
    #[arg(long, default_value_t = 301)]
    pub requests: usize,
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

const PASSWORD: &str = "a long enough password";

/// Runs the benchmark and prints its figures.
pub async fn run_auth_bench(args: AuthBenchArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let config = ServeConfig::load(Path::new("Leptos.toml"), None, dir.path().join("data"))?;
    let database = Database::open_in(&config.data_dir)?;
    {
        let mut connection = database.connection()?;
        accounts::create_account(
            &mut connection,
            "bench",
            PASSWORD,
            &[Role::Author],
            accounts::PasswordOrigin::ChosenByOwner,
            &accounts::Operator::setup(),
            None,
            accounts::now(),
        )?;
    }

    let login_ms = time_logins(&database, args.logins.max(1)).await?;

    let state = |database: Database| AppState {
        leptos_options: config.leptos_options.clone(),
        data_dir: std::sync::Arc::new(config.data_dir.clone()),
        api: ApiContext::new(
            adamviz_services::Services::new(
                database,
                adamviz_store::objects::ObjectStore::at(&config.data_dir),
            ),
            SessionSettings::default(),
            SetupToken::none(),
        ),
        origins: OriginPolicy::new(None),
        secure_cookies: false,
        trusted_proxies: adamviz_server::client_address::TrustedProxies::none(),
    };
    let guarded = router_with(state(database.clone()), true);
    let bare = router_with(state(database.clone()), false);
    let cookie = session_cookie(&guarded).await?;
    let (mut with_session, mut without) =
        time_pages(&guarded, &bare, &cookie, args.requests).await?;
    with_session.sort_by(f64::total_cmp);
    without.sort_by(f64::total_cmp);
    let login = median(login_ms);
    let (with_session, without) = (median(with_session), median(without));
    let added = with_session - without;
    println!(
        "login (Argon2id m=19456 KiB, t={}, p=1, + security event): median {login:.1} ms over {} logins; target 50–250 ms: {}",
        accounts::ARGON2_PASSES,
        args.logins.max(1),
        if (50.0..=250.0).contains(&login) { "met" } else { "missed" }
    );
    println!(
        "GET /datasets with a valid session (guard + session lookup + account check): median {with_session:.3} ms"
    );
    println!("GET /datasets with the same session, without the page guard: median {without:.3} ms");
    println!(
        "added by the page guard (session lookup + account check): {added:.3} ms median ({} requests each way); target < 1 ms: {}",
        args.requests.max(1),
        if added < 1.0 { "met" } else { "missed" }
    );
    Ok(())
}

/// `count` logins: Argon2id verification and the security event, on a blocking thread as
/// served; milliseconds each.
async fn time_logins(database: &Database, count: usize) -> anyhow::Result<Vec<f64>> {
    let mut login_ms = Vec::new();
    for _ in 0..count {
        let database = database.clone();
        let started = Instant::now();
        tokio::task::spawn_blocking(move || {
            let connection = database.connection()?;
            accounts::login(&connection, "bench", PASSWORD, None, accounts::now())
                .map_err(anyhow::Error::from)
        })
        .await??;
        login_ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok(login_ms)
}

/// Logs in through `router` and returns the session cookie.
async fn session_cookie(router: &axum::Router) -> anyhow::Result<String> {
    let login = router
        .clone()
        .oneshot(
            Request::post("/api/auth/login")
                .header("host", "127.0.0.1:3000")
                .header("origin", "http://127.0.0.1:3000")
                .header("content-type", "application/x-www-form-urlencoded")
                .header("accept", "application/json")
                .body(Body::from(format!(
                    "name=bench&password={}",
                    PASSWORD.replace(' ', "+")
                )))?,
        )
        .await?;
    let cookie = login
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("adamviz_session="))
        .and_then(|c| c.split(';').next())
        .ok_or_else(|| anyhow::anyhow!("no session cookie at login"))?
        .to_owned();
    Ok(cookie)
}

/// `GET /datasets` with `cookie` through the guarded router and through the bare one,
/// alternately `requests` times after a warm-up; milliseconds each way.
async fn time_pages(
    guarded: &axum::Router,
    bare: &axum::Router,
    cookie: &str,
    requests: usize,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let cookie = cookie.to_owned();

    let page = |router: axum::Router, cookie: Option<String>| async move {
        let mut request = Request::get("/datasets").header("host", "127.0.0.1:3000");
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        let started = Instant::now();
        let response = router.oneshot(request.body(Body::empty())?).await?;
        anyhow::ensure!(
            response.status() == 200,
            "GET /datasets: {}",
            response.status()
        );
        let body = response.into_body().collect().await?.to_bytes();
        anyhow::ensure!(!body.is_empty(), "an empty page");
        Ok::<_, anyhow::Error>(started.elapsed().as_secs_f64() * 1e3)
    };
    // Warm both, then alternate so that drift affects both alike.
    for _ in 0..20 {
        page(guarded.clone(), Some(cookie.clone())).await?;
        page(bare.clone(), Some(cookie.clone())).await?;
    }
    let (mut with_session, mut without) = (Vec::new(), Vec::new());
    for _ in 0..requests.max(1) {
        with_session.push(page(guarded.clone(), Some(cookie.clone())).await?);
        without.push(page(bare.clone(), Some(cookie.clone())).await?);
    }
    Ok((with_session, without))
}
