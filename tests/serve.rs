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
        let addr = loop {
            let line = log
                .recv_timeout(Duration::from_secs(30))
                .expect("the server logs its address within 30 s");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                break rest.split_whitespace().next().unwrap().parse().unwrap();
            }
        };
        Server { child, addr, log }
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
        let mut stream = TcpStream::connect(self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }
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
    let server = Server::start(&temp.path().join("d"), &[]);
    let (status, html) = server.get("/");
    assert_eq!(status, 200);
    for expected in [
        r#"data-hydrated="false""#,
        r#"href="/datasets""#,
        r#"href="/revisions""#,
        r#"href="/evidence""#,
        "Governed boxplots from ADaM data",
        "/pkg/adamviz.js",
    ] {
        assert!(
            html.contains(expected),
            "home page lacks {expected}: {html}"
        );
    }
}

#[test]
fn each_section_page_renders_and_unknown_paths_are_404() {
    let temp = tempfile::tempdir().unwrap();
    let server = Server::start(&temp.path().join("d"), &[]);
    for (path, heading) in [
        ("/datasets", "Datasets"),
        ("/revisions", "Revisions"),
        ("/evidence", "Evidence"),
    ] {
        let (status, html) = server.get(path);
        assert_eq!(status, 200, "{path}");
        assert!(
            html.contains(&format!("<h1>{heading}</h1>")),
            "{path}: {html}"
        );
    }
    let (status, html) = server.get("/no-such-page");
    assert_eq!(status, 404, "{html}");
    assert!(html.contains("Page not found"), "{html}");
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
