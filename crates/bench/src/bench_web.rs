//! `adamviz-bench web`: how fast the pages answer. A real server (the whole router, on a
//! loopback port, over a fresh data directory) holds the pilot ADLBC and one Verified revision
//! of "ALT over time by arm" (run once through real R); a small HTTP/1.1 client with a logged-in
//! session then times the dataset page, the revision page and the preview server function, at
//! 1 and at 20 concurrent clients, and prints median and p95 against the targets.
//! Run it from a release build (`make bench`): debug figures say little.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use clap::Args;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use adamviz::api::boundary::{ApiContext, SessionSettings, SetupToken};
use adamviz_evidence::actor::Actor;
use adamviz_model::{
    account::{Account, Role},
    dataset::DatasetSummary,
    ids::RevisionId,
    revision::RunStatus,
};
use adamviz_server::{
    config::ServeConfig,
    http::{router, AppState},
    security::OriginPolicy,
};
use adamviz_services::{
    accounts,
    confirm::{confirm, ConfirmRequest, Confirmed},
    datasets::{self, LoadedDataset},
    runs::{start_run, status_of_revision},
    upload::{receive_upload, DEFAULT_UPLOAD_LIMIT},
};
use adamviz_store::{db::Database, objects::ObjectStore};

/// Options of `adamviz-bench web`.
#[derive(Debug, Args)]
pub struct WebBenchArgs {
    /// The dataset (the pilot ADLBC by default).
    #[arg(long, default_value = "../shared/data/adlbc.xpt")]
    pub file: PathBuf,
    /// Requests timed per page and concurrency.
    #[arg(long, default_value_t = 200)]
    pub requests: usize,
    /// Concurrent clients of the second round.
    #[arg(long, default_value_t = 20)]
    pub clients: usize,
    /// Revisions in the history the history pages are timed over.
    #[arg(long, default_value_t = 10_000)]
    pub history: usize,
    /// The database (`postgres://…`, an empty one; default: a fresh SQLite file).
    #[arg(long)]
    pub database: Option<String>,
    /// The objects (`s3://…`, credentials from the AWS variables; default: a local folder).
    #[arg(long)]
    pub objects: Option<String>,
}

const PASSWORD: &str = "a long enough password";

/// One request's answer: status and body.
struct Answer {
    status: u16,
    headers: String,
    body: Vec<u8>,
}

/// Sends one HTTP/1.1 request on a fresh connection (`Connection: close`) and reads the whole
/// answer.
async fn send(addr: SocketAddr, request: &str, body: &[u8]) -> anyhow::Result<Answer> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    stream.write_all(request.as_bytes()).await?;
    stream.write_all(body).await?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await?;
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow::anyhow!("no header end in the answer"))?;
    let headers = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let status = headers
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no status line"))?;
    Ok(Answer {
        status,
        headers,
        body: bytes[split + 4..].to_vec(),
    })
}

fn get(path: &str, cookie: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\nAccept: text/html\r\nConnection: close\r\n\r\n"
    )
}

fn post(path: &str, cookie: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\nCookie: {cookie}\r\n\
         Accept: application/json\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
}

/// One timed request kind.
#[derive(Clone)]
struct Probe {
    name: &'static str,
    request: String,
    body: String,
}

impl Probe {
    async fn once(&self, addr: SocketAddr) -> anyhow::Result<f64> {
        let started = Instant::now();
        let answer = send(addr, &self.request, self.body.as_bytes()).await?;
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        anyhow::ensure!(
            answer.status == 200 && !answer.body.is_empty(),
            "{}: status {}",
            self.name,
            answer.status
        );
        Ok(elapsed)
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Times `probe` `requests` times at `clients` concurrent clients; median and p95 (ms).
async fn measure(
    addr: SocketAddr,
    probe: &Probe,
    requests: usize,
    clients: usize,
) -> anyhow::Result<(f64, f64)> {
    let per_client = requests.div_ceil(clients).max(1);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let probe = probe.clone();
        tasks.spawn(async move {
            let mut samples = Vec::with_capacity(per_client);
            for _ in 0..per_client {
                samples.push(probe.once(addr).await?);
            }
            Ok::<_, anyhow::Error>(samples)
        });
    }
    let mut samples = Vec::new();
    while let Some(done) = tasks.join_next().await {
        samples.extend(done??);
    }
    samples.sort_by(f64::total_cmp);
    Ok((percentile(&samples, 0.5), percentile(&samples, 0.95)))
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}

/// Runs the benchmark and prints its figures.
pub async fn run_web_bench(args: WebBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.file.exists(),
        "{} does not exist (pass --file)",
        args.file.display()
    );
    let dir = tempfile::tempdir()?;
    let bench = Installation::open(&args, dir.path()).await?;
    let verified = bench.verified_revision().await?;
    bench
        .approve_and_fill_history(&verified, args.history)
        .await?;
    bench.time_the_bundle(&verified)?;
    let (addr, cookie) = bench.serve().await?;
    let probes = probes(&bench.summary.content_hash, &cookie, &verified);
    println!(
        "adamviz-bench web: {} requests per figure over HTTP/1.1 on loopback, a logged-in session, {} build; database {}, objects {}",
        args.requests,
        if cfg!(debug_assertions) { "DEBUG" } else { "release" },
        bench.database.location().describe(),
        args.objects.as_deref().unwrap_or("a local folder")
    );
    for probe in &probes {
        time_the_probe(addr, probe, &args).await?;
    }
    Ok(())
}

/// The installation the benchmark measures: its database and objects, the author, the API's
/// context, and the dataset uploaded and read.
struct Installation {
    config: ServeConfig,
    database: Database,
    objects: ObjectStore,
    account: Account,
    context: ApiContext,
    summary: DatasetSummary,
    loaded: Arc<LoadedDataset>,
}

/// The question every revision of the benchmark answers.
const QUESTION: &str = "ALT over time by arm";

impl Installation {
    /// A fresh installation in `dir` with one author and `args.file` uploaded as an upload is.
    async fn open(args: &WebBenchArgs, dir: &Path) -> anyhow::Result<Self> {
        let config = ServeConfig::load(Path::new("Leptos.toml"), None, dir.join("data"))?;
        let database = Database::open_at(&config.data_dir, args.database.as_deref())?;
        let objects = ObjectStore::open_shared(&config.data_dir, args.objects.as_deref())?;
        let account = {
            let mut connection = database.connection()?;
            accounts::create_account(
                &mut connection,
                "bench",
                PASSWORD,
                // A reviewer too, so that the home page's work list computes every section,
                // "waiting for my signature" (the one that reads the ledger) included.
                &[Role::Author, Role::Reviewer],
                accounts::PasswordOrigin::ChosenByOwner,
                &accounts::Operator::setup(),
                None,
                accounts::now(),
            )?
        };
        let context = ApiContext::new(
            adamviz_services::Services::new(database.clone(), objects.clone()),
            SessionSettings::default(),
            SetupToken::none(),
        );

        // The dataset, as an upload records it.
        let file = std::fs::File::open(&args.file)?;
        let store = objects.clone();
        let received = tokio::task::spawn_blocking(move || {
            receive_upload(&store, file, "synthetic", DEFAULT_UPLOAD_LIMIT)
        })
        .await??;
        let summary = {
            let connection = database.connection()?;
            datasets::record_upload(
                &connection,
                &received,
                "adlbc.xpt",
                &account,
                accounts::now(),
            )?
            .dataset
        };
        let digest = received.object.digest;
        let loaded = {
            let (cache, store) = (context.services.dataset_cache().clone(), objects.clone());
            tokio::task::spawn_blocking(move || cache.load(&store, &digest)).await??
        };
        Ok(Self {
            config,
            database,
            objects,
            account,
            context,
            summary,
            loaded,
        })
    }

    /// A new revision of [`QUESTION`] with the matcher's proposals, confirmed.
    async fn confirmed(&self) -> anyhow::Result<RevisionId> {
        let request = ConfirmRequest {
            question: QUESTION.to_owned(),
            answers: None,
            parent: None,
        };
        let actor = Actor::web(&self.account);
        let loaded = Arc::clone(&self.loaded);
        match confirm(
            self.context.services.execution(),
            &self.summary,
            loaded,
            request,
            &actor,
        )
        .await?
        {
            Confirmed::Created(made) => Ok(made.revision.id),
            Confirmed::Refused { errors } => {
                anyhow::bail!("the draft does not confirm: {errors:?}")
            }
        }
    }

    /// One Verified revision of [`QUESTION`], through real R.
    async fn verified_revision(&self) -> anyhow::Result<RevisionId> {
        let (database, context) = (&self.database, &self.context);
        let id = self.confirmed().await?;
        let run = context.services.run_context();
        start_run(&run, &id, "bench-run-0001", Actor::web(&self.account)).await?;
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let status = status_of_revision(database, &id).await?;
            let running = status.as_ref().is_some_and(RunStatus::is_moving);
            if status == Some(RunStatus::Verified) {
                return Ok(id);
            }
            anyhow::ensure!(
                running && Instant::now() < deadline,
                "the revision did not become Verified (is R installed? the log says why)"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A reviewer approves `verified` (the password checked with Argon2id, as at any signing);
    /// a second revision stays a Draft; the history is filled with `history` copies of both.
    async fn approve_and_fill_history(
        &self,
        verified: &RevisionId,
        history: usize,
    ) -> anyhow::Result<()> {
        let database = &self.database;
        {
            let mut connection = database.connection()?;
            let reviewer = accounts::create_account(
                &mut connection,
                "bench-reviewer",
                PASSWORD,
                &[Role::Reviewer],
                accounts::PasswordOrigin::ChosenByOwner,
                &accounts::Operator::setup(),
                None,
                accounts::now(),
            )?;
            adamviz_services::approvals::sign(
                &mut connection,
                &reviewer,
                &adamviz_services::approvals::SignRequest {
                    revision_id: verified.clone(),
                    decision: adamviz_evidence::approval::Decision::Approved,
                    meaning: Some(adamviz_evidence::approval::SignatureMeaning::Approved),
                    comment: None,
                    password: PASSWORD.to_owned(),
                    evidence_head_seen: None,
                    user_name: None,
                },
                None,
                accounts::now(),
            )?;
        }
        let draft = self.confirmed().await?;
        {
            let mut connection = database.connection()?;
            let attempt = adamviz_store::repository::latest_attempt(&connection, verified)?
                .ok_or_else(|| anyhow::anyhow!("the verified revision has no attempt"))?;
            let started = Instant::now();
            adamviz_store::copies::fill_history(
                &mut connection,
                (verified, attempt.id.as_str()),
                &draft,
                history,
                accounts::now() - chrono::Duration::days(30),
            )?;
            println!(
                "history: {} revisions (a quarter Draft, half Verified, a quarter Approved; {} authors) copied through the database's rules in {:.1} s",
                history + 2,
                adamviz_store::copies::AUTHORS,
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }

    /// The evidence bundle of `verified`: exported, then validated offline (without
    /// `--replay`), 21 times each; the medians printed.
    fn time_the_bundle(&self, verified: &RevisionId) -> anyhow::Result<()> {
        let (database, objects) = (&self.database, &self.objects);
        {
            let key_dir = tempfile::tempdir()?;
            let key = adamviz_services::installation_key::InstallationKey::load_or_create(
                key_dir.path(),
            )?;
            let connection = database.connection()?;
            let (mut export_ms, mut validate_ms) = (Vec::new(), Vec::new());
            let mut bundle = Vec::new();
            for _ in 0..21 {
                let started = Instant::now();
                bundle =
                    adamviz_services::bundle::export_bundle(&connection, objects, &key, verified)?;
                export_ms.push(started.elapsed().as_secs_f64() * 1e3);
            }
            for _ in 0..21 {
                let started = Instant::now();
                let report = adamviz_evidence::validate::validate(
                    &bundle,
                    &adamviz_evidence::validate::Options {
                        trusted_key: Some(key.public_key()),
                        ..Default::default()
                    },
                );
                validate_ms.push(started.elapsed().as_secs_f64() * 1e3);
                anyhow::ensure!(
                    report.verdict == adamviz_evidence::validate::Verdict::Pass,
                    "the bundle does not validate:\n{}",
                    report.text()
                );
            }
            export_ms.sort_by(f64::total_cmp);
            validate_ms.sort_by(f64::total_cmp);
            let (export, validate) = (percentile(&export_ms, 0.5), percentile(&validate_ms, 0.5));
            println!(
                "evidence bundle ({} bytes): export median {export:.1} ms (target ≤ 100 ms: {}); validate without --replay median {validate:.1} ms (target ≤ 200 ms: {}); 21 runs each",
                bundle.len(),
                verdict(export <= 100.0),
                verdict(validate <= 200.0)
            );
        }
        Ok(())
    }

    /// The web server on a free loopback port, and a logged-in session's cookie.
    async fn serve(&self) -> anyhow::Result<(SocketAddr, String)> {
        let (config, context) = (&self.config, &self.context);
        let state = AppState {
            leptos_options: config.leptos_options.clone(),
            data_dir: Arc::new(config.data_dir.clone()),
            api: context.clone(),
            origins: OriginPolicy::new(Some("http://127.0.0.1")),
            secure_cookies: false,
            trusted_proxies: adamviz_server::client_address::TrustedProxies::none(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move {
            let _ = axum::serve(
                listener,
                router(state).into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await;
        });
        let body = format!("name=bench&password={}", PASSWORD.replace(' ', "+"));
        let login = send(addr, &post("/api/auth/login", "", &body), body.as_bytes()).await?;
        let cookie = login
            .headers
            .lines()
            .filter_map(|l| l.strip_prefix("set-cookie: "))
            .find(|c| c.starts_with("adamviz_session="))
            .and_then(|c| c.split(';').next())
            .ok_or_else(|| anyhow::anyhow!("no session cookie at login ({})", login.status))?
            .to_owned();
        Ok((addr, cookie))
    }
}

/// The requests timed: pages, the history with filters, and the preview server function.
fn probes(hash: &str, cookie: &str, revision: &RevisionId) -> Vec<Probe> {
    let cookie = cookie.to_owned();
    let preview_body = format!(
        "content_hash={hash}&question=ALT+over+time+by+arm&answers%5Blow_n_threshold%5D=20&answers%5Blevels_of%5D=TRTA&answers%5Btreatment_levels%5D%5B%5D=Xanomeline+High+Dose&answers%5Btreatment_levels%5D%5B%5D=Placebo&answers%5Btreatment_levels%5D%5B%5D=Xanomeline+Low+Dose&answers%5Bfilters%5D%5BSAFFL%5D%5B%5D=Y"
    );
    vec![
        Probe {
            name: "dataset page",
            request: get(&format!("/datasets/{hash}"), &cookie),
            body: String::new(),
        },
        Probe {
            name: "history page 1 (all)",
            request: get("/revisions", &cookie),
            body: String::new(),
        },
        Probe {
            name: "history page 200 (all)",
            request: get("/revisions?page=200", &cookie),
            body: String::new(),
        },
        Probe {
            name: "history, Approved by author-3, page 10",
            request: get(
                "/revisions?status=approved&author=author-3&page=10",
                &cookie,
            ),
            body: String::new(),
        },
        Probe {
            name: "history, dataset filter, page 1",
            request: get(&format!("/revisions?dataset={hash}"), &cookie),
            body: String::new(),
        },
        Probe {
            name: "home page (the work list)",
            request: get("/", &cookie),
            body: String::new(),
        },
        Probe {
            name: "work list server function",
            request: post("/api/work/list", &cookie, ""),
            body: String::new(),
        },
        Probe {
            name: "revision page (Approved)",
            request: get(&format!("/revisions/{}", revision), &cookie),
            body: String::new(),
        },
        Probe {
            name: "preview server function (adlbc ALT)",
            request: post("/api/drafts/preview", &cookie, &preview_body),
            body: preview_body.clone(),
        },
    ]
}

/// Times `probe` at one client and at `args.clients` (after 10 warm-up requests) and prints the
/// medians and p95 against its targets.
async fn time_the_probe(
    addr: SocketAddr,
    probe: &Probe,
    args: &WebBenchArgs,
) -> anyhow::Result<()> {
    for _ in 0..10 {
        probe.once(addr).await?;
    }
    let (one_median, one_p95) = measure(addr, probe, args.requests, 1).await?;
    let (many_median, many_p95) = measure(addr, probe, args.requests, args.clients).await?;
    let targets = if probe.name.starts_with("history") {
        format!(
            "target ≤ 50 ms median at 1 client: {}",
            verdict(one_median <= 50.0)
        )
    } else if probe.name.starts_with("preview") {
        format!(
            "target ≤ 100 ms median at 1 client: {}",
            verdict(one_median <= 100.0)
        )
    } else {
        format!(
            "targets ≤ 20 ms median at 1 client: {}; ≤ 100 ms p95 at {}: {}",
            verdict(one_median <= 20.0),
            args.clients,
            verdict(many_p95 <= 100.0)
        )
    };
    println!(
        "{:<38} 1 client: median {one_median:7.2} ms, p95 {one_p95:7.2} ms | {} clients: median {many_median:7.2} ms, p95 {many_p95:7.2} ms | {targets}",
        probe.name, args.clients
    );
    Ok(())
}
