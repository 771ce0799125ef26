//! `adamviz serve` as a real process: starts with the embedded defaults, answers the health
//! check and pages, and shuts down cleanly on SIGTERM and SIGINT.
#![cfg(feature = "ssr")]

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    path::Path,
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::Duration,
};

/// A running server; killed on drop if a test did not stop it itself.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: mpsc::Receiver<String>,
    /// The log lines written before the server said where it listens.
    early: Vec<String>,
}

impl Server {
    /// Starts `adamviz serve` on a free port with its state under `data_dir`.
    fn start(data_dir: &Path, extra_args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .args(extra_args)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("adamviz starts");
        let stderr = child.stderr.take().unwrap();
        let (sender, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut early = Vec::new();
        let addr = loop {
            let line = log
                .recv_timeout(Duration::from_secs(30))
                .expect("the server logs its address within 30 s");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                break rest.split_whitespace().next().unwrap().parse().unwrap();
            }
            early.push(line);
        };
        Server {
            child,
            addr,
            log,
            early,
        }
    }

    /// Sends `signal` and returns the exit status and the log lines written until exit.
    fn stop_with(mut self, signal: &str) -> (std::process::ExitStatus, Vec<String>) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        let lines = self.log.try_iter().collect();
        (exit, lines)
    }

    /// A minimal HTTP/1.1 GET; returns the status code and the body.
    fn get(&self, path: &str) -> (u16, String) {
        let (status, _, body) = self.request("GET", path, &[], "");
        (status, body)
    }

    /// A minimal HTTP/1.1 request; returns the status code, the head and the body.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String, String) {
        let mut stream = TcpStream::connect(self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let extra: String = headers
            .iter()
            .map(|(name, value)| format!("{name}: {value}\r\n"))
            .collect();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        (status, head.to_owned(), body.to_owned())
    }

    /// Logs in through the login server function, as the login form does; the session cookie.
    fn login(&self, name: &str, password: &str) -> String {
        let origin = format!("http://{}", self.addr);
        let (status, head, body) = self.request(
            "POST",
            "/api/auth/login",
            &[
                ("Origin", &origin),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Accept", "application/json"),
            ],
            &format!("name={name}&password={}", password.replace(' ', "+")),
        );
        assert!(status < 400, "login: {status} {body}");
        head.lines()
            .find_map(|line| line.strip_prefix("set-cookie: "))
            .and_then(|cookie| cookie.split(';').next())
            .expect("a session cookie")
            .to_owned()
    }

    /// GET with a session cookie.
    fn get_as(&self, path: &str, cookie: &str) -> (u16, String) {
        let (status, _, body) = self.request("GET", path, &[("Cookie", cookie)], "");
        (status, body)
    }
}

const PASSWORD: &str = "a long enough password";

/// The password `adamviz users add` sets: temporary, replaced by the owner's own before use.
const TEMPORARY: &str = "the admin typed this one";

/// Adds an author account with `adamviz users add` (a temporary password on stdin, as from a
/// script), whose owner then chooses their own ([`PASSWORD`]) as the first login makes them.
fn add_author(data_dir: &Path, name: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(["users", "add", name, "--role", "author", "--data-dir"])
        .arg(data_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{TEMPORARY}\n").as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.starts_with(&format!(
            "created {name} (author) with a temporary password"
        )),
        "{said}"
    );
    let database = adamviz::store::db::Database::open_in(data_dir).unwrap();
    let mut connection = database.connection().unwrap();
    let account = adamviz::service::accounts::list_accounts(&connection)
        .unwrap()
        .into_iter()
        .find(|a| a.name == name)
        .unwrap();
    assert!(account.password_change_required);
    adamviz::service::accounts::change_own_password(
        &mut connection,
        account.id,
        &adamviz::service::accounts::PasswordChange {
            current_password: TEMPORARY.to_owned(),
            new_password: PASSWORD.to_owned(),
            new_password_again: PASSWORD.to_owned(),
        },
        None,
        None,
        adamviz::service::accounts::now(),
    )
    .unwrap();
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn healthz_answers_ok_and_the_data_dir_is_created() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("adamviz-data");
    let server = Server::start(&data_dir, &[]);
    assert!(data_dir.is_dir(), "created on first start");

    let (status, body) = server.get("/healthz");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""status":"ok""#), "{body}");
    assert!(body.contains(env!("CARGO_PKG_VERSION")), "{body}");
}

#[test]
fn healthz_reports_unavailable_when_the_data_dir_disappears() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("adamviz-data");
    let server = Server::start(&data_dir, &[]);
    // It holds the database now; all of it goes.
    std::fs::remove_dir_all(&data_dir).unwrap();
    let (status, body) = server.get("/healthz");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("the data directory is missing"), "{body}");
}

#[test]
fn home_page_is_rendered_on_the_server_with_the_sections_and_hydration_marker() {
    let temp = tempfile::tempdir().unwrap();
    add_author(&temp.path().join("d"), "ann");
    let server = Server::start(&temp.path().join("d"), &[]);
    let (status, head, _) = server.request("GET", "/", &[], "");
    assert_eq!(status, 303, "a visitor is sent to log in");
    assert!(head.contains("location: /login?next=/"), "{head}");
    let cookie = server.login("ann", PASSWORD);
    let (status, html) = server.get_as("/", &cookie);
    assert_eq!(status, 200);
    for expected in [
        r#"data-hydrated="false""#,
        r#"href="/datasets""#,
        r#"href="/revisions""#,
        r#"href="/evidence""#,
        "Governed boxplots from ADaM data",
        "/pkg/adamviz.js",
        r#"<div aria-label="Account" class="account-menu"><span class="account-name">ann"#,
    ] {
        assert!(
            html.contains(expected),
            "home page lacks {expected}: {html}"
        );
    }
}

#[test]
fn each_section_page_renders_and_unknown_paths_are_404() {
    // (Each page streams in order: no part of it waits in a <template> for a script.)
    let temp = tempfile::tempdir().unwrap();
    add_author(&temp.path().join("d"), "ann");
    let server = Server::start(&temp.path().join("d"), &[]);
    let cookie = server.login("ann", PASSWORD);
    for (path, heading) in [
        ("/datasets", "Datasets"),
        ("/revisions", "Revisions"),
        ("/evidence", "Evidence"),
    ] {
        let (status, html) = server.get_as(path, &cookie);
        assert_eq!(status, 200, "{path}");
        assert!(
            !html.contains("<template"),
            "{path}: streamed out of order: {html}"
        );
        assert!(
            html.contains(&format!("<h1>{heading}</h1>")),
            "{path}: {html}"
        );
    }
    let (status, html) = server.get_as("/no-such-page", &cookie);
    assert_eq!(status, 404, "{html}");
    assert!(html.contains("Page not found"), "{html}");
}

#[test]
fn a_first_start_prints_a_setup_link_and_a_start_with_accounts_does_not() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("d");
    let setup_path = |server: &Server| {
        let line = server
            .early
            .iter()
            .find(|l| l.contains("create the first admin at"))
            .unwrap_or_else(|| panic!("no setup line in {:?}", server.early))
            .clone();
        let link = line
            .split(" at ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        let prefix = format!("http://{}/setup?token=", server.addr);
        let token = link
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{link}"));
        assert!(
            token.len() == 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
            "{token}"
        );
        format!("/setup?token={token}")
    };
    let server = Server::start(&data_dir, &[]);
    let first = setup_path(&server);
    assert_eq!(server.get(&first).0, 200);
    assert_eq!(
        server
            .get("/setup?token=00000000000000000000000000000000")
            .0,
        404
    );
    assert_eq!(server.get("/setup").0, 404);
    drop(server);
    // Valid until the server stops: the next start has another.
    let server = Server::start(&data_dir, &[]);
    let second = setup_path(&server);
    assert_ne!(first, second);
    assert_eq!(server.get(&first).0, 404);
    drop(server);
    add_author(&data_dir, "ann");
    let server = Server::start(&data_dir, &[]);
    assert!(
        !server
            .early
            .iter()
            .any(|l| l.contains("create the first admin")),
        "{:?}",
        server.early
    );
    assert_eq!(server.get(&second).0, 404);
}

#[test]
fn sigterm_shuts_down_gracefully() {
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(&temp.path().join("d"), &[]);
    let (exit, log) = server.stop_with("TERM");
    assert!(exit.success(), "exit status {exit:?}, log {log:?}");
    assert!(
        log.iter().any(|l| l.contains("SIGTERM received")),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.contains("adamviz stopped")), "{log:?}");
}

/// Regression: the handlers used to be installed lazily, after the "listening" line, so a SIGINT
/// sent at once killed the process by the default action (exit by signal 2).
#[test]
fn sigint_sent_right_after_start_is_handled_not_fatal() {
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(&temp.path().join("d"), &[]);
    let (exit, log) = server.stop_with("INT");
    assert!(exit.success(), "exit status {exit:?}, log {log:?}");
    assert!(log.iter().any(|l| l.contains("SIGINT received")), "{log:?}");
}

#[test]
fn a_missing_site_settings_file_is_a_clear_startup_error() {
    let temp = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .current_dir(temp.path())
        .args(["serve", "--addr", "127.0.0.1:0", "--data-dir", "d"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read the site settings file Leptos.toml"),
        "{stderr}"
    );
    assert!(
        !temp.path().join("d").exists(),
        "nothing is created on a failed start"
    );
}
