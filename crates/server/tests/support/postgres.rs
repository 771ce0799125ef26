//! A throwaway PostgreSQL cluster for the tests: Debian's server binaries, `initdb` in a temp
//! directory (as the `postgres` system user when the tests run as root, since `initdb` refuses
//! root), a free port on loopback, a socket in the cluster's own directory; stopped and removed
//! when dropped. A machine without PostgreSQL fails the test loudly (`scripts/install-tools.sh`
//! installs the `postgresql` package).
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

/// A running cluster.
pub struct Postgres {
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
}

/// The newest installed server's `bin` directory.
fn server_bin() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed (/usr/lib/postgresql): run scripts/install-tools.sh")
        .filter_map(|entry| entry.ok().map(|e| e.path().join("bin")))
        .filter(|bin| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().expect(
        "no PostgreSQL server binaries under /usr/lib/postgresql: run scripts/install-tools.sh",
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Postgres {
    /// Creates and starts a cluster with a database `adamviz` owned by the user `adamviz`.
    pub fn start() -> Self {
        let bin = server_bin();
        let dir = tempfile::Builder::new()
            .prefix("adamviz-pg-")
            .tempdir()
            .unwrap();
        let as_postgres = unsafe { libc::geteuid() } == 0;
        if as_postgres {
            // The cluster's directory (and the temp directory above it) must be the server's.
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown of the cluster directory failed");
        }
        let port = free_port();
        let cluster = Self {
            port,
            dir,
            bin,
            as_postgres,
        };
        let data = cluster.data_dir();
        cluster.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "adamviz",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            cluster.dir.path().display()
        );
        let log = cluster.dir.path().join("server.log");
        cluster.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &options,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        );
        cluster.wait_ready();
        cluster.run(
            "createdb",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "adamviz",
                "adamviz",
            ],
        );
        cluster
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `program` of the server's binaries, as the cluster's owner.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command
                .args(["-u", "postgres", "--"])
                .arg(path)
                .current_dir("/");
            command
        } else {
            Command::new(path)
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let output = self
            .command(program)
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("cannot run {program}: {error}"));
        assert!(
            output.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn wait_ready(&self) {
        let started = Instant::now();
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .output()
                .is_ok_and(|output| output.status.success());
            if ready {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "PostgreSQL did not accept connections within a minute"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The connection URL of the `adamviz` database.
    pub fn url(&self) -> String {
        format!("postgres://adamviz@127.0.0.1:{}/adamviz", self.port)
    }

    /// The cluster's directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data_dir();
        let _ = self
            .command("pg_ctl")
            .args(["-D", data.to_str().unwrap(), "-m", "immediate", "stop"])
            .output();
    }
}
