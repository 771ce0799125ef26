//! Datasets through the web boundary, in process (the real router, a real SQLite file and
//! object store): the pilot's ADLBC streamed in as a multipart upload, the same bytes twice as
//! one dataset, refusals that keep nothing (no classification, a file no reader accepts, a
//! file past the limit), the plain-form answers (redirects), the list, the profile with its
//! warnings, and the demo dataset.

use std::path::{Path, PathBuf};

use adamviz::api::boundary::{ApiContext, SessionSettings, SetupToken};
use adamviz_model::{account::Role, dataset::UploadOutcome};
use adamviz_server::{
    config::ServeConfig,
    http::{router, AppState},
    security::OriginPolicy,
};
use adamviz_services::accounts;
use adamviz_store::db::Database;
use axum::{body::Body, http::Request, Router};
use http_body_util::BodyExt;
use tower::ServiceExt;

const PASSWORD: &str = "a long enough password";
const HOST: &str = "127.0.0.1:3000";
const ORIGIN: &str = "http://127.0.0.1:3000";

struct App {
    router: Router,
    data_dir: PathBuf,
    database: Database,
    _dir: tempfile::TempDir,
}

fn app(upload_limit: u64) -> App {
    let dir = tempfile::tempdir().unwrap();
    let config = ServeConfig::load(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Leptos.toml")),
        None,
        dir.path().join("data"),
    )
    .unwrap();
    let database = Database::open_in(&config.data_dir).unwrap();
    let mut connection = database.connection().unwrap();
    for (name, role) in [("ann", Role::Author), ("rex", Role::Reviewer)] {
        accounts::create_account(
            &mut connection,
            name,
            PASSWORD,
            &[role],
            adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
            &adamviz_services::accounts::Operator::setup(),
            None,
            accounts::now(),
        )
        .unwrap();
    }
    drop(connection);
    let objects = adamviz_store::objects::ObjectStore::open(&config.data_dir).unwrap();
    let services =
        adamviz_services::Services::new(database.clone(), objects).with_upload_limit(upload_limit);
    let context = ApiContext::new(services, SessionSettings::default(), SetupToken::none());
    let state = AppState {
        leptos_options: config.leptos_options,
        data_dir: std::sync::Arc::new(config.data_dir.clone()),
        api: context,
        origins: OriginPolicy::new(None),
        secure_cookies: false,
        trusted_proxies: adamviz_server::client_address::TrustedProxies::none(),
    };
    App {
        router: router(state),
        data_dir: config.data_dir,
        database,
        _dir: dir,
    }
}

struct Answer {
    status: u16,
    location: String,
    cookie: Option<String>,
    body: String,
}

async fn send(app: &App, request: Request<Body>) -> Answer {
    let response = app.router.clone().oneshot(request).await.unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let location = header("location").join("");
    let cookie = header("set-cookie")
        .into_iter()
        .find(|c| c.starts_with("adamviz_session="))
        .map(|c| c.split(';').next().unwrap().to_owned());
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        location,
        cookie,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

async fn login(app: &App, name: &str) -> String {
    let request = Request::post("/api/auth/login")
        .header("host", HOST)
        .header("origin", ORIGIN)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(Body::from(format!(
            "name={name}&password={}",
            PASSWORD.replace(' ', "+")
        )))
        .unwrap();
    send(app, request).await.cookie.expect("a session at login")
}

/// A multipart upload: the classification field (if any), then the file.
fn upload(
    cookie: &str,
    classification: Option<&str>,
    name: &str,
    bytes: &[u8],
    html: bool,
) -> Request<Body> {
    let mut body = Vec::new();
    if let Some(classification) = classification {
        body.extend_from_slice(
            format!("--XB\r\nContent-Disposition: form-data; name=\"classification\"\r\n\r\n{classification}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!("--XB\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n")
            .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(b"\r\n--XB--\r\n");
    Request::post("/api/datasets/upload")
        .header("host", HOST)
        .header("origin", ORIGIN)
        .header("cookie", cookie)
        .header(
            "accept",
            if html {
                "text/html"
            } else {
                "application/json"
            },
        )
        .header("content-type", "multipart/form-data; boundary=XB")
        .body(Body::from(body))
        .unwrap()
}

async fn call(app: &App, cookie: &str, path: &str, body: &str) -> Answer {
    let request = Request::post(path)
        .header("host", HOST)
        .header("origin", ORIGIN)
        .header("cookie", cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    send(app, request).await
}

fn stored_objects(app: &App) -> usize {
    walk(&app.data_dir.join("objects/sha256"))
}

fn walk(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        walk(&e.path())
                    } else {
                        1
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn dataset_rows(app: &App) -> i64 {
    app.database
        .connection()
        .unwrap()
        .as_sqlite()
        .unwrap()
        .query_row("SELECT count(*) FROM datasets", [], |r| r.get(0))
        .unwrap()
}

fn pilot_bytes() -> Vec<u8> {
    std::fs::read(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("../shared/data/adlbc.xpt"),
    )
    .expect("the public test data ../shared/data/adlbc.xpt")
}

#[tokio::test]
async fn the_pilot_is_uploaded_once_and_profiled_with_its_warnings() {
    let app = app(1 << 30);
    let author = login(&app, "ann").await;
    let bytes = pilot_bytes();
    let first = send(
        &app,
        upload(&author, Some("deidentified"), "adlbc.xpt", &bytes, false),
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let outcome: UploadOutcome = serde_json::from_str(&first.body).unwrap();
    assert!(outcome.new);
    let dataset = &outcome.dataset;
    assert_eq!(
        (
            dataset.format.as_str(),
            dataset.rows,
            dataset.columns,
            dataset.size
        ),
        ("xpt", 74_264, 46, bytes.len() as u64)
    );
    assert_eq!(
        (dataset.uploaded_by.as_str(), dataset.file_name.as_str()),
        ("ann", "adlbc.xpt")
    );
    let again = send(
        &app,
        upload(&author, Some("deidentified"), "copy.xpt", &bytes, false),
    )
    .await;
    let again: UploadOutcome = serde_json::from_str(&again.body).unwrap();
    assert!(!again.new, "the same bytes are the same dataset");
    assert_eq!(again.dataset, outcome.dataset);
    assert_eq!((dataset_rows(&app), stored_objects(&app)), (1, 1));

    // Any logged-in account reads the list and the profile.
    let reviewer = login(&app, "rex").await;
    let list = call(&app, &reviewer, "/api/datasets/list", "").await;
    assert!(list.body.contains(&dataset.content_hash), "{}", list.body);
    let detail = call(
        &app,
        &reviewer,
        "/api/datasets/detail",
        &format!("content_hash={}", dataset.content_hash),
    )
    .await;
    assert_eq!(detail.status, 200, "{}", detail.body);
    let detail: adamviz_model::dataset::DatasetDetail = serde_json::from_str(&detail.body).unwrap();
    assert_eq!(detail.profile.columns.len(), 46);
    let kinds: Vec<String> = detail
        .profile
        .warnings
        .iter()
        .map(|w| {
            serde_json::to_value(w).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for expected in ["padded_visit_labels", "visits_without_order"] {
        assert!(kinds.iter().any(|k| k == expected), "{kinds:?}");
    }
    // The page renders them, in words.
    let page = send(
        &app,
        Request::get(format!("/datasets/{}", dataset.content_hash))
            .header("host", HOST)
            .header("cookie", &reviewer)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("Reviewer warnings") && page.body.contains("leading or trailing blanks"),
        "{}",
        page.body
    );
    let missing = call(
        &app,
        &reviewer,
        "/api/datasets/detail",
        &format!("content_hash={}", "ab".repeat(32)),
    )
    .await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn refusals_keep_nothing() {
    let app = app(1 << 20);
    let author = login(&app, "ann").await;
    let no_classification = send(&app, upload(&author, None, "x.csv", b"A,B\n1,2\n", false)).await;
    assert_eq!(no_classification.status, 422, "{}", no_classification.body);
    assert!(
        no_classification.body.contains("classification"),
        "{}",
        no_classification.body
    );
    let wrong_classification = send(
        &app,
        upload(&author, Some("identified"), "x.csv", b"A,B\n1,2\n", false),
    )
    .await;
    assert_eq!(
        wrong_classification.status, 422,
        "{}",
        wrong_classification.body
    );
    let garbage = send(
        &app,
        upload(
            &author,
            Some("synthetic"),
            "photo.png",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
            false,
        ),
    )
    .await;
    assert_eq!(garbage.status, 422, "{}", garbage.body);
    assert!(garbage.body.contains("photo.png: the upload is a PNG file; adamviz reads CSV, SAS XPORT (.xpt) and CDISC Dataset-JSON v1.1 (.json, .ndjson, .dsjc); no dataset was added"), "{}", garbage.body);
    let ragged = send(
        &app,
        upload(
            &author,
            Some("synthetic"),
            "ragged.csv",
            b"A,B\n1,2,3\n",
            false,
        ),
    )
    .await;
    assert_eq!(ragged.status, 422, "{}", ragged.body);
    // Past the limit (1 MiB here): 413 with the limit, refused while streaming.
    let big = send(
        &app,
        upload(
            &author,
            Some("deidentified"),
            "adlbc.xpt",
            &pilot_bytes(),
            false,
        ),
    )
    .await;
    assert_eq!(big.status, 413, "{}", big.body);
    assert!(
        big.body
            .contains("larger than the upload limit of 1 MiB (1048576 bytes)"),
        "{}",
        big.body
    );
    assert_eq!(
        (dataset_rows(&app), stored_objects(&app)),
        (0, 0),
        "nothing kept"
    );
    assert_eq!(
        walk(&app.data_dir.join("objects/tmp")),
        0,
        "no partial file left"
    );
    // Bytes that were stored before (an artifact, say) are not removed by a refused upload of
    // the same bytes.
    let objects = adamviz_store::objects::ObjectStore::open(&app.data_dir).unwrap();
    let artifact_bytes: &[u8] = b"\x89PNG\r\n\x1a\n an artifact";
    let artifact = objects.put(artifact_bytes, 1 << 20).unwrap();
    let same = send(
        &app,
        upload(
            &author,
            Some("synthetic"),
            "same.png",
            artifact_bytes,
            false,
        ),
    )
    .await;
    assert_eq!(same.status, 422, "{}", same.body);
    assert_eq!(objects.get(&artifact.digest).unwrap(), artifact_bytes);
    assert_eq!(stored_objects(&app), 1);

    // A plain form (no wasm): back to the form with the message, or on to the dataset.
    let form_refused = send(
        &app,
        upload(
            &author,
            Some("synthetic"),
            "ragged.csv",
            b"A,B\n1,2,3\n",
            true,
        ),
    )
    .await;
    assert_eq!(form_refused.status, 303);
    assert!(
        form_refused
            .location
            .starts_with("/datasets?upload_error=ragged.csv"),
        "{}",
        form_refused.location
    );
    let form_ok = send(
        &app,
        upload(
            &author,
            Some("synthetic"),
            "ok.csv",
            b"USUBJID,AVAL\nS1,2\n",
            true,
        ),
    )
    .await;
    assert_eq!(form_ok.status, 303);
    assert!(
        form_ok.location.starts_with("/datasets/")
            && form_ok.location.len() == "/datasets/".len() + 64,
        "{}",
        form_ok.location
    );
}

#[tokio::test]
async fn the_demo_dataset_is_one_click() {
    let app = app(1 << 30);
    let author = login(&app, "ann").await;
    let answer = call(&app, &author, "/api/datasets/demo", "").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let outcome: UploadOutcome = serde_json::from_str(&answer.body).unwrap();
    let shipped = std::fs::read(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("public/demo/adlb-synthetic.xpt"),
    )
    .unwrap();
    let hash = adamviz_model::digest::Sha256Digest::from_bytes(
        <sha2::Sha256 as sha2::Digest>::digest(&shipped).into(),
    );
    assert_eq!(
        outcome.dataset.content_hash,
        hash.to_hex(),
        "the same bytes as the shipped file"
    );
    assert_eq!(
        (outcome.dataset.classification.as_str(), outcome.new),
        ("synthetic", true)
    );
    let reviewer = login(&app, "rex").await;
    assert_eq!(
        call(&app, &reviewer, "/api/datasets/demo", "").await.status,
        403
    );
}
