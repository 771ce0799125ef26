//! `adamviz-bench logins`: whether a team can log in at once. A real server (the whole router
//! with its login limiter, on a loopback port, over a fresh SQLite file) and clients that each
//! connect from an address of their own (Linux routes all of 127.0.0.0/8 to loopback, so each
//! client binds 127.0.x.y). Three scenarios, each against the target:
//!
//! 1. 50 right logins at the same moment from 50 addresses: none refused, each ≤ 2 s;
//! 2. 20 right logins at the same moment from one address (a NAT, a proxy): none refused;
//! 3. 200 wrong logins a second from 20 other addresses, and meanwhile right logins from
//!    another address: each ≤ 2 s.
//!
//! Run it from a release build: debug Argon2 and SQLite say little.

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use clap::Args;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use adamviz::api::boundary::{ApiContext, SessionSettings, SetupToken};
use adamviz_model::account::Role;
use adamviz_server::{
    client_address::TrustedProxies,
    config::ServeConfig,
    http::{router, AppState},
    security::OriginPolicy,
};
use adamviz_services::accounts;
use adamviz_store::{db::Database, objects::ObjectStore};

/// Options of `adamviz-bench logins`.
#[derive(Debug, Args)]
pub struct LoginsBenchArgs {
    /// Simultaneous right logins from as many addresses (scenario 1).
    #[arg(long, default_value_t = 50)]
    pub team: usize,
    /// Simultaneous right logins from one address (scenario 2).
    #[arg(long, default_value_t = 20)]
    pub behind_one_address: usize,
    /// Wrong logins per second during scenario 3.
    #[arg(long, default_value_t = 200)]
    pub wrong_per_second: usize,
    /// Addresses the wrong logins come from.
    #[arg(long, default_value_t = 20)]
    pub attackers: usize,
    /// How long the wrong logins go on, in seconds.
    #[arg(long, default_value_t = 10)]
    pub attack_seconds: u64,
}

const PASSWORD: &str = "a long enough password";
/// Each right login must be answered within this.
const TARGET: Duration = Duration::from_secs(2);

/// One login's outcome: the status and how long it took.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    status: u16,
    elapsed: Duration,
}

impl Outcome {
    fn logged_in(&self) -> bool {
        // A right login answers with a redirect (303/302) or 200; a refusal is 429, a wrong
        // password 422.
        self.status < 400
    }
}

/// A login of `name` with `password`, on its own connection from `from`.
async fn log_in(from: IpAddr, server: SocketAddr, name: &str, password: &str) -> Outcome {
    let body = format!("name={name}&password={}", password.replace(' ', "+"));
    let request = format!(
        "POST /api/auth/login HTTP/1.1\r\nHost: {server}\r\nOrigin: http://{server}\r\n\
         Accept: application/json\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let started = Instant::now();
    let status = async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(from, 0))?;
        let mut stream = socket.connect(server).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).await?;
        let head = String::from_utf8_lossy(&bytes);
        Ok::<u16, std::io::Error>(
            head.split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
        )
    }
    .await
    .unwrap_or(0);
    Outcome {
        status,
        elapsed: started.elapsed(),
    }
}

/// The loopback address number `n` of block `block` (127.block.x.y, never .0 or .255).
fn address(block: u8, n: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(
        127,
        block,
        (n / 250) as u8,
        (n % 250) as u8 + 1,
    ))
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}

/// Prints one scenario's line: how many got in, how many were refused, the slowest.
fn report(what: &str, outcomes: &[Outcome]) -> bool {
    let refused = outcomes.iter().filter(|o| o.status == 429).count();
    let other = outcomes
        .iter()
        .filter(|o| !o.logged_in() && o.status != 429)
        .count();
    let mut times: Vec<f64> = outcomes.iter().map(|o| millis(o.elapsed)).collect();
    times.sort_by(f64::total_cmp);
    let (median, slowest) = (times[times.len() / 2], times[times.len() - 1]);
    let met = refused == 0 && other == 0 && slowest <= millis(TARGET);
    println!(
        "{what}: {} of {} logged in, {refused} refused (429), {other} other answers; median {median:.0} ms, slowest {slowest:.0} ms; target none refused, each ≤ {} ms: {}",
        outcomes.len() - refused - other,
        outcomes.len(),
        TARGET.as_millis(),
        verdict(met)
    );
    met
}

/// Runs the benchmark and prints its figures.
pub async fn run_logins_bench(args: LoginsBenchArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let config = ServeConfig::load(Path::new("Leptos.toml"), None, dir.path().join("data"))?;
    let database = Database::open_in(&config.data_dir)?;
    let names: Vec<String> = (0..args.team.max(args.behind_one_address) + 1)
        .map(|i| format!("member-{i}"))
        .collect();
    let started = Instant::now();
    for name in &names {
        let mut connection = database.connection()?;
        accounts::create_account(
            &mut connection,
            name,
            PASSWORD,
            &[Role::Author],
            accounts::PasswordOrigin::ChosenByOwner,
            &accounts::Operator::command_line(),
            None,
            accounts::now(),
        )?;
    }
    eprintln!(
        "{} accounts created in {:.1} s",
        names.len(),
        started.elapsed().as_secs_f64()
    );
    let state = AppState {
        leptos_options: config.leptos_options.clone(),
        data_dir: Arc::new(config.data_dir.clone()),
        api: ApiContext::new(
            adamviz_services::Services::new(database, ObjectStore::open(&config.data_dir)?),
            SessionSettings::default(),
            SetupToken::none(),
        ),
        origins: OriginPolicy::new(None),
        secure_cookies: false,
        trusted_proxies: TrustedProxies::none(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let server = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            router(state).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await;
    });
    // Warm the router (the first page render lists the routes).
    log_in(address(9, 0), server, "nobody", "x").await;

    // 1. The team, each from its own address, at once.
    let team: Vec<_> = (0..args.team)
        .map(|i| {
            let name = names[i].clone();
            tokio::spawn(async move { log_in(address(1, i), server, &name, PASSWORD).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for login in team {
        outcomes.push(login.await?);
    }
    let first = report(
        &format!(
            "{} right logins at once from {} addresses",
            args.team, args.team
        ),
        &outcomes,
    );

    // 2. Behind one address.
    let behind: Vec<_> = (0..args.behind_one_address)
        .map(|i| {
            let name = names[i].clone();
            tokio::spawn(async move { log_in(address(2, 0), server, &name, PASSWORD).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for login in behind {
        outcomes.push(login.await?);
    }
    let second = report(
        &format!(
            "{} right logins at once from one address",
            args.behind_one_address
        ),
        &outcomes,
    );

    // 3. Wrong logins at a steady rate from the attackers, and right ones from elsewhere.
    let attack = Duration::from_secs(args.attack_seconds.max(1));
    let interval = Duration::from_secs_f64(1.0 / args.wrong_per_second.max(1) as f64);
    let attackers = args.attackers.max(1);
    let flood = tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let (mut sent, started) = (0usize, Instant::now());
        let mut answers = Vec::new();
        while started.elapsed() < attack {
            ticker.tick().await;
            let from = address(3, sent % attackers);
            let name = if sent % 2 == 0 {
                "member-0".to_owned()
            } else {
                format!("ghost-{sent}")
            };
            answers.push(tokio::spawn(async move {
                log_in(from, server, &name, "a wrong password").await
            }));
            sent += 1;
        }
        let mut outcomes = Vec::new();
        for answer in answers {
            outcomes.push(answer.await.unwrap_or(Outcome {
                status: 0,
                elapsed: Duration::ZERO,
            }));
        }
        outcomes
    });
    let mut right = Vec::new();
    let probes = (args.attack_seconds.max(1) * 2) as usize;
    for i in 0..probes {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let name = &names[names.len() - 1 - (i % names.len())];
        right.push(log_in(address(4, i), server, name, PASSWORD).await);
    }
    let wrong = flood.await?;
    let refused = wrong.iter().filter(|o| o.status == 429).count();
    let checked = wrong.iter().filter(|o| o.status == 422).count();
    println!(
        "during {} wrong logins over {} s from {attackers} addresses ({checked} checked and wrong, {refused} refused with 429):",
        wrong.len(),
        attack.as_secs()
    );
    let third = report(
        &format!("  {probes} right logins from other addresses, one every 500 ms"),
        &right,
    );
    println!("login targets: {}", verdict(first && second && third));
    Ok(())
}
