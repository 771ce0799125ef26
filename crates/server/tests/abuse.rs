//! Abuse that must not work (issue 22), each a named attack against the real router served over
//! real TCP in process, with real SQLite, real objects and (for the downloads) real R. Client
//! sockets bind to different loopback addresses (Linux routes all of 127/8 to lo), so that an
//! attacker (127.0.0.2) and a victim (127.0.0.3) are different clients as the server sees them.

#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/study_shapes.rs"]
mod study_shapes;

use std::{
    net::SocketAddr,
    path::Path,
    time::{Duration, Instant},
};

use adamviz::api::boundary::{ApiContext, SessionSettings, SetupToken};
use adamviz_model::{account::Role, ids::RevisionId};
use adamviz_server::{
    client_address::{parse_trusted_proxy, TrustedProxies},
    config::ServeConfig,
    http::{router, AppState},
    security::OriginPolicy,
};
use adamviz_services::{
    accounts::{self, login, login_limits::UNKNOWN_NAMES, LoginError},
    installation_key::InstallationKey,
};
use adamviz_store::{db::Database, objects::ObjectStore};
use chrono::{DateTime, Utc};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PASSWORD: &str = "a long enough password";
const ATTACKER: &str = "127.0.0.2";
const VICTIM: &str = "127.0.0.3";

/// The one place tests here create accounts.
fn create_account(database: &Database, name: &str, roles: &[Role]) {
    let mut connection = database.connection().unwrap();
    accounts::create_account(
        &mut connection,
        name,
        PASSWORD,
        roles,
        accounts::PasswordOrigin::ChosenByOwner,
        &accounts::Operator::setup(),
        None,
        accounts::now(),
    )
    .unwrap();
}

/// The server, listening on a free port of 127.0.0.1 with peer addresses, as `adamviz serve`.
struct Served {
    addr: SocketAddr,
    context: ApiContext,
}

async fn serve(data_dir: &Path, database: Database, objects: ObjectStore) -> Served {
    serve_behind(data_dir, database, objects, TrustedProxies::none()).await
}

/// [`serve`] behind the reverse proxies `trusted` (`--trusted-proxy`).
async fn serve_behind(
    data_dir: &Path,
    database: Database,
    objects: ObjectStore,
    trusted: TrustedProxies,
) -> Served {
    let config = ServeConfig::load(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Leptos.toml")),
        None,
        data_dir.to_owned(),
    )
    .unwrap();
    let services = adamviz_services::Services::new(database, objects)
        .with_upload_limit(1 << 20)
        .with_key(InstallationKey::load_or_create(data_dir).unwrap());
    let context = ApiContext::new(services, SessionSettings::default(), SetupToken::none());
    let state = AppState {
        leptos_options: config.leptos_options,
        data_dir: std::sync::Arc::new(config.data_dir),
        api: context.clone(),
        origins: OriginPolicy::new(None),
        secure_cookies: false,
        trusted_proxies: trusted,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            router(state).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    Served { addr, context }
}

/// A fresh data directory with accounts, served.
async fn served_with_accounts(dir: &tempfile::TempDir) -> Served {
    served_with_accounts_behind(dir, TrustedProxies::none()).await
}

/// [`served_with_accounts`] behind the reverse proxies `trusted`.
async fn served_with_accounts_behind(dir: &tempfile::TempDir, trusted: TrustedProxies) -> Served {
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let database = Database::open_in(&data).unwrap();
    let objects = ObjectStore::open(&data).unwrap();
    for (name, roles) in [
        ("ann-author", vec![Role::Author]),
        ("vic-reviewer", vec![Role::Reviewer]),
        ("ada-admin", vec![Role::Admin]),
    ] {
        create_account(&database, name, &roles);
    }
    serve_behind(&data, database, objects, trusted).await
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }

    fn cookie(&self) -> Option<String> {
        self.head
            .lines()
            .filter_map(|line| line.split_once(':'))
            .filter(|(key, _)| key.eq_ignore_ascii_case("set-cookie"))
            .map(|(_, value)| value.trim())
            .find(|c| c.starts_with("adamviz_session=") && !c.starts_with("adamviz_session=;"))
            .map(|c| c.split(';').next().unwrap().to_owned())
    }
}

/// A connection to `server` from the loopback address `from`, with `request` written.
async fn connect(from: &str, server: SocketAddr, request: &str) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(from.parse().unwrap(), 0))
        .unwrap();
    let mut stream = socket.connect(server).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

fn request_text(
    method: &str,
    server: SocketAddr,
    path: &str,
    cookie: Option<&str>,
    body: &str,
) -> String {
    request_text_with(method, server, path, cookie, &[], body)
}

fn request_text_with(
    method: &str,
    server: SocketAddr,
    path: &str,
    cookie: Option<&str>,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {server}\r\nOrigin: http://{server}\r\n\
         Accept: application/json\r\nConnection: close\r\n"
    );
    if let Some(cookie) = cookie {
        text.push_str(&format!("Cookie: {cookie}\r\n"));
    }
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    if method == "POST" {
        text.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    text
}

fn parse(bytes: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"));
    Reply {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// One HTTP/1.1 request over its own connection from the loopback address `from`.
async fn http(
    from: &str,
    server: SocketAddr,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    body: &str,
) -> Reply {
    let mut stream = connect(
        from,
        server,
        &request_text(method, server, path, cookie, body),
    )
    .await;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.unwrap();
    parse(&bytes)
}

async fn try_login(from: &str, server: SocketAddr, name: &str, password: &str) -> Reply {
    http(
        from,
        server,
        "POST",
        "/api/auth/login",
        None,
        &format!("name={name}&password={}", password.replace(' ', "+")),
    )
    .await
}

async fn log_in(from: &str, server: SocketAddr, name: &str) -> String {
    let reply = try_login(from, server, name, PASSWORD).await;
    assert!(reply.status < 400, "login {name}: {reply:?}");
    reply.cookie().expect("a session cookie at login")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn attack_a_flood_of_wrong_logins_does_not_stop_anothers_right_login() {
    let dir = tempfile::tempdir().unwrap();
    let served = served_with_accounts(&dir).await;
    let server = served.addr;
    // 200 wrong logins at once from one address, for an existing name and for missing ones.
    let flood: Vec<_> = (0..200)
        .map(|i| {
            let name = if i % 2 == 0 {
                "ann-author".to_owned()
            } else {
                format!("ghost-{i}")
            };
            tokio::spawn(async move {
                try_login(ATTACKER, server, &name, "wrong password!")
                    .await
                    .status
            })
        })
        .collect();
    let started = Instant::now();
    let cookie = log_in(VICTIM, server, "vic-reviewer").await;
    let elapsed = started.elapsed();
    let finished_meanwhile = flood.iter().filter(|task| task.is_finished()).count();
    let mut statuses = Vec::new();
    for task in flood {
        statuses.push(task.await.unwrap());
    }
    let refused = statuses.iter().filter(|s| **s == 429).count();
    let checked = statuses.iter().filter(|s| **s == 422).count();
    println!(
        "right login during a flood of 200 wrong ones: {} ms ({finished_meanwhile} of the flood answered by then; {checked} checked and wrong, {refused} refused with 429)",
        elapsed.as_millis()
    );
    assert!(
        elapsed < Duration::from_secs(2),
        "the right login took {elapsed:?}"
    );
    assert_eq!(checked + refused, 200, "{statuses:?}");
    assert!(
        refused >= 150,
        "most of the flood is refused at once: {statuses:?}"
    );
    let whoami = http(
        VICTIM,
        server,
        "POST",
        "/api/auth/whoami",
        Some(&cookie),
        "",
    )
    .await;
    assert!(whoami.body.contains("vic-reviewer"), "{whoami:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_failures_from_one_address_do_not_lock_the_owner_out() {
    let dir = tempfile::tempdir().unwrap();
    let served = served_with_accounts(&dir).await;
    let server = served.addr;
    let mut statuses = Vec::new();
    for _ in 0..6 {
        statuses.push(
            try_login(ATTACKER, server, "vic-reviewer", "wrong password!")
                .await
                .status,
        );
    }
    assert_eq!(statuses, [422, 422, 422, 422, 429, 429]);
    // Locked for the attacker's address, even with the right password…
    let attacker = try_login(ATTACKER, server, "vic-reviewer", PASSWORD).await;
    assert_eq!(attacker.status, 429);
    assert!(attacker.body.contains("locked"), "{attacker:?}");
    // …and not for the owner's.
    log_in(VICTIM, server, "vic-reviewer").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_team_logs_in_at_once_from_many_addresses_and_from_one() {
    let dir = tempfile::tempdir().unwrap();
    let served = served_with_accounts(&dir).await;
    let server = served.addr;
    let database = served.context.services.database().clone();
    let team: Vec<String> = (0..20).map(|i| format!("member-{i}")).collect();
    for name in &team {
        create_account(&database, name, &[Role::Author]);
    }
    // Twenty at once from one address (a NAT, a proxy), then twenty from twenty addresses.
    for from in [
        vec!["127.0.0.9".to_owned(); 20],
        (0..20).map(|i| format!("127.0.1.{}", i + 1)).collect(),
    ] {
        let logins: Vec<_> = team
            .iter()
            .zip(from)
            .map(|(name, from)| {
                let name = name.clone();
                tokio::spawn(async move { try_login(&from, server, &name, PASSWORD).await.status })
            })
            .collect();
        let mut statuses = Vec::new();
        for login in logins {
            statuses.push(login.await.unwrap());
        }
        assert!(
            statuses.iter().all(|s| *s < 400),
            "every right login gets in, none refused: {statuses:?}"
        );
    }
}

/// Posts the Change password form with `cookie` from `from`.
async fn change_password(
    from: &str,
    server: SocketAddr,
    cookie: &str,
    current: &str,
    new: &str,
) -> Reply {
    let body = format!(
        "current_password={}&new_password={}&new_password_again={}",
        current.replace(' ', "+"),
        new.replace(' ', "+"),
        new.replace(' ', "+")
    );
    http(
        from,
        server,
        "POST",
        "/api/auth/change-password",
        Some(cookie),
        &body,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_a_stolen_session_cookie_cannot_guess_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let served = served_with_accounts(&dir).await;
    let server = served.addr;
    // The thief holds ann's session cookie and sends from its own address.
    let cookie = log_in(ATTACKER, server, "ann-author").await;
    let new = "the thief's own password";
    // A weak new password is refused for itself, whether or not the current one is right: the
    // answer tells nothing about the current password.
    let weak_wrong = change_password(ATTACKER, server, &cookie, "a guess!", "x").await;
    let weak_right = change_password(ATTACKER, server, &cookie, PASSWORD, "x").await;
    assert_eq!(weak_wrong.status, 422, "{weak_wrong:?}");
    assert_eq!(
        weak_wrong.body, weak_right.body,
        "the same answer either way"
    );
    // Wrong guesses count as failed logins of the name from this address: the fifth locks it
    // and ends the session.
    let mut statuses = Vec::new();
    for guess in 0..5 {
        let reply = change_password(
            ATTACKER,
            server,
            &cookie,
            &format!("guess number {guess}"),
            new,
        )
        .await;
        statuses.push(reply.status);
        if guess < 4 {
            assert!(
                reply.body.contains("current password is not right"),
                "{reply:?}"
            );
        } else {
            assert!(reply.body.contains("locked"), "{reply:?}");
        }
    }
    assert_eq!(statuses, [422, 422, 422, 422, 429]);
    let whoami = http(
        ATTACKER,
        server,
        "POST",
        "/api/auth/whoami",
        Some(&cookie),
        "",
    )
    .await;
    assert!(
        !whoami.body.contains("ann-author"),
        "the session that guessed is over: {whoami:?}"
    );
    // Even the right password no longer works for ann from the thief's address…
    let locked = try_login(ATTACKER, server, "ann-author", PASSWORD).await;
    assert_eq!(locked.status, 429, "{locked:?}");
    // …while ann logs in from her own, and her password is unchanged.
    log_in(VICTIM, server, "ann-author").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_each_client_is_known_by_its_forwarded_address() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = "127.0.0.7";
    let served = served_with_accounts_behind(
        &dir,
        TrustedProxies::new(vec![parse_trusted_proxy(proxy).unwrap()]),
    )
    .await;
    let server = served.addr;
    let login_from = |from: &'static str, forwarded: &'static str, password: &'static str| async move {
        let body = format!("name=vic-reviewer&password={}", password.replace(' ', "+"));
        let request = request_text_with(
            "POST",
            server,
            "/api/auth/login",
            None,
            &[("X-Forwarded-For", forwarded)],
            &body,
        );
        let mut stream = connect(from, server, &request).await;
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).await.unwrap();
        parse(&bytes).status
    };
    // Through the proxy, an attacker at 198.51.100.7 (writing a fake first entry) locks the
    // name for itself only…
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(login_from(proxy, "203.0.113.1, 198.51.100.7", "wrong password!").await);
    }
    assert_eq!(statuses, [422, 422, 422, 422, 429]);
    // …and its owner at 198.51.100.8, through the same proxy, logs in.
    assert!(login_from(proxy, "198.51.100.8", PASSWORD).await < 400);
    // A peer that is not a trusted proxy cannot choose its address: the header is ignored, so
    // claiming the owner's address does not get past the lockout of its own.
    for _ in 0..5 {
        login_from(ATTACKER, "198.51.100.8", "wrong password!").await;
    }
    assert_eq!(login_from(ATTACKER, "198.51.100.8", PASSWORD).await, 429);
    assert!(login_from(proxy, "198.51.100.8", PASSWORD).await < 400);
    // The security log names the clients, not the proxy.
    let database = served.context.services.database().clone();
    let connection = database.connection().unwrap();
    let addresses: Vec<String> = adamviz_store::sql::Sql::query(
        &connection,
        "SELECT DISTINCT remote_addr FROM security_events WHERE remote_addr IS NOT NULL",
        &[],
    )
    .unwrap()
    .iter()
    .map(|row| row.get::<String>(0).unwrap())
    .collect();
    assert!(
        addresses.contains(&"198.51.100.7".to_owned()),
        "{addresses:?}"
    );
    assert!(
        addresses.contains(&"198.51.100.8".to_owned()),
        "{addresses:?}"
    );
    assert!(!addresses.contains(&proxy.to_owned()), "{addresses:?}");
}

fn at(minutes: f64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-04T09:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
        + chrono::Duration::milliseconds((minutes * 60_000.0) as i64)
}

fn count(database: &Database, sql: &str) -> i64 {
    database
        .connection()
        .unwrap()
        .as_sqlite()
        .unwrap()
        .query_row(sql, [], |row| row.get(0))
        .unwrap()
}

#[test]
fn attack_a_thousand_failed_logins_add_a_bounded_number_of_log_rows() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open_in(dir.path()).unwrap();
    create_account(&database, "vic-reviewer", &[Role::Reviewer]);
    let before = count(&database, "SELECT count(*) FROM security_events");
    let connection = database.connection().unwrap();
    // 1,000 failures for one name over 50 minutes (four log windows) from two addresses.
    let mut locked = 0;
    for i in 0..1000 {
        let from = if i % 2 == 0 { ATTACKER } else { "127.0.0.4" };
        match login(
            &connection,
            "vic-reviewer",
            "wrong password!",
            Some(from),
            at(i as f64 * 0.05),
        ) {
            Err(LoginError::Locked { .. }) => locked += 1,
            Err(LoginError::Invalid) => {}
            other => panic!("{other:?}"),
        }
    }
    drop(connection);
    let added = count(&database, "SELECT count(*) FROM security_events") - before;
    let counted = count(
        &database,
        "SELECT sum(repeat_count) FROM security_events WHERE event = 'login' AND outcome = 'failure'",
    );
    println!("1,000 failed logins: {added} security_events rows, {locked} refused as locked");
    // Per 15-minute window: one row for wrong passwords, one for refusals while locked, one
    // for the lockouts.
    assert!(added <= 4 * 3, "{added} rows");
    assert_eq!(counted, 1000, "every failure is counted");
    assert!(locked > 900, "{locked}");

    // Names without an account share one row per window and reason.
    let connection = database.connection().unwrap();
    for i in 0..20 {
        let _ = login(
            &connection,
            &format!("ghost-{i}"),
            "wrong password!",
            Some(ATTACKER),
            at(100.0),
        );
    }
    let ghosts = count(
        &database,
        &format!("SELECT count(*) FROM security_events WHERE account_name = '{UNKNOWN_NAMES}'"),
    );
    assert_eq!(ghosts, 1);
}

#[test]
fn attack_rewriting_the_security_log_through_a_counted_row_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open_in(dir.path()).unwrap();
    create_account(&database, "vic-reviewer", &[Role::Reviewer]);
    let connection = database.connection().unwrap();
    let _ = login(
        &connection,
        "vic-reviewer",
        "wrong password!",
        None,
        at(1.0),
    );
    let _ = login(
        &connection,
        "vic-reviewer",
        "wrong password!",
        None,
        at(2.0),
    );
    let (repeat, last): (i64, String) = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT repeat_count, last_at FROM security_events WHERE event = 'login'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!((repeat, last.as_str()), (2, "2026-12-04T09:02:00.000000Z"));
    for sql in [
        "UPDATE security_events SET repeat_count = 1 WHERE event = 'login'",
        "UPDATE security_events SET repeat_count = 9, detail = 'forged' WHERE event = 'login'",
        "UPDATE security_events SET repeat_count = 9, remote_addr = '10.9.9.9' WHERE event = 'login'",
        "UPDATE security_events SET repeat_count = 9, last_at = '2026-01-01' WHERE event = 'login'",
        "UPDATE security_events SET repeat_count = 2 WHERE event = 'account_created'",
        "DELETE FROM security_events WHERE event = 'login'",
    ] {
        let error = connection.as_sqlite().unwrap().execute(sql, []).unwrap_err();
        assert!(
            error.to_string().contains("security_events is append-only"),
            "{sql}: {error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_dot_segments_and_encoded_paths_do_not_pass_the_page_guard() {
    let dir = tempfile::tempdir().unwrap();
    let served = served_with_accounts(&dir).await;
    let server = served.addr;
    let author = log_in(VICTIM, server, "ann-author").await;
    let get = |path: &'static str, cookie: Option<String>| async move {
        http(VICTIM, server, "GET", path, cookie.as_deref(), "").await
    };
    // The canonical path: the guard refuses an author.
    assert_eq!(
        get("/admin/accounts", Some(author.clone())).await.status,
        403
    );
    for path in [
        "/pkg/../admin/accounts",
        "//admin/accounts",
        "/admin/./accounts",
        "/./admin/accounts",
        "/pkg/%2e%2e/admin/accounts",
        "/pkg/%2E%2E/admin/accounts",
        "/pkg/..%2fadmin/accounts",
        "/pkg/..\\admin/accounts",
        "/api/../admin/accounts",
        "/datasets/../admin/accounts",
    ] {
        for cookie in [Some(author.clone()), None] {
            let reply = get(path, cookie.clone()).await;
            assert_eq!(
                reply.status,
                400,
                "{path} ({}): {reply:?}",
                if cookie.is_some() {
                    "author"
                } else {
                    "anonymous"
                }
            );
            assert!(!reply.body.contains("Accounts"), "{path}: {}", reply.body);
        }
    }
    // Ordinary paths still work.
    assert_eq!(get("/datasets", Some(author.clone())).await.status, 200);
    assert_eq!(get("/healthz", None).await.status, 200);
}

/// A revision with an attempt left active: its status stays moving, so its event stream stays
/// open until something else ends it.
async fn moving_revision(server: &flow_server::Server) -> RevisionId {
    use adamviz_store::repository::{attempt_id_for, start_attempt, AttemptLease};
    let id = server.revision(None).await;
    let mut connection = server.database.connection().unwrap();
    let transaction = connection.transaction().unwrap();
    start_attempt(
        &transaction,
        &id,
        &attempt_id_for(&id, "held-open-0001"),
        &adamviz_model::digest::Sha256Digest::from_bytes([1; 32]),
        &AttemptLease::of_this_process(Duration::from_secs(600)),
        &server.actor,
    )
    .unwrap();
    transaction.commit().unwrap();
    id
}

/// Reads the event stream until its first `status` event, then runs `end_session`, then reads
/// until the server ends the stream (or fails after ten seconds).
async fn stream_ends_after(
    served: &Served,
    cookie: &str,
    revision: &RevisionId,
    end_session: impl std::future::Future<Output = ()>,
) {
    let path = format!("/api/revisions/{revision}/events");
    let mut stream = connect(
        VICTIM,
        served.addr,
        &request_text("GET", served.addr, &path, Some(cookie), ""),
    )
    .await;
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("event: status") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer))
            .await
            .expect("a first status event")
            .unwrap();
        assert!(n > 0, "the stream ended before its first event");
        seen.extend_from_slice(&buffer[..n]);
    }
    assert!(
        String::from_utf8_lossy(&seen).contains("active"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    end_session.await;
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the stream stayed open after its session ended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_an_open_event_stream_outlives_its_session() {
    let server = flow_server::server(1);
    let data = server._dir.path().join("data");
    create_account(&server.database, "ann-author", &[Role::Author]);
    create_account(&server.database, "ada-admin", &[Role::Admin]);
    let revision = moving_revision(&server).await;
    let served = serve(&data, server.database.clone(), server.objects.clone()).await;

    // Logged out (in another tab): the open stream ends.
    let cookie = log_in(VICTIM, served.addr, "ann-author").await;
    let logout = async {
        let reply = http(
            VICTIM,
            served.addr,
            "POST",
            "/api/auth/logout",
            Some(&cookie),
            "",
        )
        .await;
        assert!(reply.status < 400, "{reply:?}");
    };
    stream_ends_after(&served, &cookie, &revision, logout).await;

    // Disabled by an admin: the open stream ends.
    let cookie = log_in(VICTIM, served.addr, "ann-author").await;
    let database = served.context.services.database().clone();
    let disable = async move {
        let mut connection = database.connection().unwrap();
        accounts::disable_account(
            &mut connection,
            "ann-author",
            &accounts::Operator::command_line(),
            None,
            accounts::now(),
        )
        .unwrap();
    };
    stream_ends_after(&served, &cookie, &revision, disable).await;
    // The revision is still moving: the stream ended for its session, not its status.
    assert!(server.status(&revision).await.is_moving());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_subject_level_files_cached_by_the_browser() {
    let server = flow_server::server(1);
    let data = server._dir.path().join("data");
    create_account(&server.database, "ann-author", &[Role::Author]);
    let revision = server.revision(None).await;
    let served = serve(&data, server.database.clone(), server.objects.clone()).await;
    let cookie = log_in(VICTIM, served.addr, "ann-author").await;
    for name in ["snapshot.csv", "script.R"] {
        let reply = http(
            VICTIM,
            served.addr,
            "GET",
            &format!("/api/revisions/{revision}/files/{name}"),
            Some(&cookie),
            "",
        )
        .await;
        assert_eq!(reply.status, 200, "{name}");
        assert_eq!(reply.header("cache-control").as_deref(), Some("no-store"));
        assert!(
            reply.header("etag").is_some(),
            "{name}: the hash stays the ETag"
        );
    }
}

/// A Verified revision of a larger study than the pilot (ALT of 18,000 subjects at 9 visits:
/// a snapshot of some megabytes), so that exporting its bundle takes a while.
async fn large_verified_revision(server: &flow_server::Server) -> RevisionId {
    use adamviz_model::revision::RunStatus;
    use adamviz_services::{
        drafts::answer_draft,
        execution::UploadInfo,
        upload::{receive_upload, DEFAULT_UPLOAD_LIMIT},
    };
    let shape = study_shapes::Shape {
        subjects_per_arm: 6000,
        arms: vec!["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"],
        parameters: vec![("ALT", "Alanine Aminotransferase (U/L)", "U/L")],
        visits: vec![
            "Baseline", "Week 2", "Week 4", "Week 6", "Week 8", "Week 12", "Week 16", "Week 20",
            "Week 24",
        ],
        time_points: Vec::new(),
        replicates: 1,
        average: false,
        flag_on_average: None,
        unscheduled: false,
        retests: false,
        text_parameter: None,
        order_variables: true,
        safety_flag: true,
        reverse_arms: false,
        seed: 7,
    };
    let bytes = study_shapes::csv(&shape);
    let loaded = flow_server::load(&bytes);
    let received = receive_upload(
        &server.objects,
        std::io::Cursor::new(&bytes),
        "synthetic",
        DEFAULT_UPLOAD_LIMIT,
    )
    .unwrap();
    let upload = UploadInfo {
        content_hash: received.object.digest,
        classification: "synthetic".to_owned(),
        file_name: "large.csv".to_owned(),
        size: received.object.size,
    };
    let draft = answer_draft(
        flow_server::QUESTION,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        None,
    )
    .unwrap();
    let spec = draft
        .confirmed
        .expect("the large study's proposals confirm");
    let id = server
        .run
        .execution
        .materialize(
            &spec,
            std::sync::Arc::clone(&loaded.table),
            &upload,
            &server.actor,
        )
        .await
        .unwrap()
        .revision
        .id;
    adamviz_services::runs::start_run(&server.run, &id, "downloads-key-0001", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(server.settled(&id).await, RunStatus::Verified);
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn attack_parallel_evidence_downloads_hold_the_database() {
    let server = flow_server::server(1);
    let data = server._dir.path().join("data");
    create_account(&server.database, "ann-author", &[Role::Author]);
    let started = Instant::now();
    let revision = large_verified_revision(&server).await;
    println!(
        "the large revision: Verified in {} s",
        started.elapsed().as_secs()
    );
    let served = serve(&data, server.database.clone(), server.objects.clone()).await;
    let cookie = log_in(VICTIM, served.addr, "ann-author").await;
    let addr = served.addr;
    let path = format!("/api/revisions/{revision}/evidence");
    // Nine downloads at once, three times each, while whoami is asked again and again.
    let downloads: Vec<_> = (0..9)
        .map(|_| {
            let (cookie, path) = (cookie.clone(), path.clone());
            tokio::spawn(async move {
                let mut sizes = Vec::new();
                for _ in 0..3 {
                    let reply = http(ATTACKER, addr, "GET", &path, Some(&cookie), "").await;
                    assert_eq!(reply.status, 200, "{}", reply.head);
                    sizes.push(reply.body.len());
                }
                sizes
            })
        })
        .collect();
    let mut slowest = Duration::ZERO;
    let mut asked = 0;
    while downloads.iter().any(|d| !d.is_finished()) {
        let started = Instant::now();
        let reply = http(VICTIM, addr, "POST", "/api/auth/whoami", Some(&cookie), "").await;
        slowest = slowest.max(started.elapsed());
        asked += 1;
        assert!(reply.body.contains("ann-author"), "{reply:?}");
    }
    let mut size = 0;
    for download in downloads {
        size = download.await.unwrap()[0];
    }
    println!(
        "whoami during 27 evidence downloads (9 at a time, about {} KB each): slowest of {asked} answers {} ms",
        size / 1024,
        slowest.as_millis()
    );
    assert!(asked > 0);
    assert!(
        slowest < Duration::from_secs(1),
        "whoami waited {slowest:?} behind the downloads"
    );
}
