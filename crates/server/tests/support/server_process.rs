//! `adamviz serve` as a real process on a free port: its log read line by line, minimal
//! HTTP/1.1 requests, a login as the login form makes it, and an author account added through
//! `adamviz users add` whose owner then chose their own password.
#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    path::Path,
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::Duration,
};

/// A running server; killed on drop if a test did not stop it itself.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: mpsc::Receiver<String>,
    /// The log lines written before the server said where it listens.
    pub early: Vec<String>,
}

impl Server {
    /// Starts `adamviz serve` on a free port with its state under `data_dir`.
    pub fn start(data_dir: &Path, extra_args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
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
    pub fn stop_with(mut self, signal: &str) -> (std::process::ExitStatus, Vec<String>) {
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
    pub fn get(&self, path: &str) -> (u16, String) {
        let (status, _, body) = self.request("GET", path, &[], "");
        (status, body)
    }

    /// A minimal HTTP/1.1 request; returns the status code, the head and the body.
    pub fn request(
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
    pub fn login(&self, name: &str, password: &str) -> String {
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
    pub fn get_as(&self, path: &str, cookie: &str) -> (u16, String) {
        let (status, _, body) = self.request("GET", path, &[("Cookie", cookie)], "");
        (status, body)
    }
}

pub const PASSWORD: &str = "a long enough password";

/// The password `adamviz users add` sets: temporary, replaced by the owner's own before use.
pub const TEMPORARY: &str = "the admin typed this one";

/// Adds an author account with `adamviz users add` (a temporary password on stdin, as from a
/// script), whose owner then chooses their own ([`PASSWORD`]) as the first login makes them.
pub fn add_author(data_dir: &Path, name: &str) {
    add_author_to(data_dir, &[], name, || {
        adamviz_store::db::Database::open_in(data_dir).unwrap()
    });
}

/// [`add_author`] with more options for `adamviz users add` (`--database …`) and the database
/// they name.
pub fn add_author_to(
    data_dir: &Path,
    extra_args: &[&str],
    name: &str,
    database: impl FnOnce() -> adamviz_store::db::Database,
) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(["users", "add", name, "--role", "author", "--data-dir"])
        .arg(data_dir)
        .args(extra_args)
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
    let database = database();
    let mut connection = database.connection().unwrap();
    let account = adamviz_services::accounts::list_accounts(&connection)
        .unwrap()
        .into_iter()
        .find(|a| a.name == name)
        .unwrap();
    assert!(account.password_change_required);
    adamviz_services::accounts::change_own_password(
        &mut connection,
        account.id,
        &adamviz_services::accounts::PasswordChange {
            current_password: TEMPORARY.to_owned(),
            new_password: PASSWORD.to_owned(),
            new_password_again: PASSWORD.to_owned(),
        },
        None,
        None,
        adamviz_services::accounts::now(),
    )
    .unwrap();
}

impl Server {
    /// Presses Run on `id` through the run server function, as the revision page's form does.
    pub fn press_run(&self, cookie: &str, id: &adamviz_model::ids::RevisionId, key: &str) {
        let origin = format!("http://{}", self.addr);
        let (status, _, body) = self.request(
            "POST",
            "/api/revisions/run",
            &[
                ("Origin", &origin),
                ("Cookie", cookie),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Accept", "application/json"),
            ],
            &format!("revision_id={id}&idempotency_key={key}"),
        );
        assert_eq!(status, 200, "Run on {id} through {}: {body}", self.addr);
    }
}

/// Waits until `done`, failing the test after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
