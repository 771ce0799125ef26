//! A real S3-compatible server on loopback for the tests (s3s-fs, the `s3s` project's file
//! system backend, run in process): requests are signed and checked with a test key, objects
//! are files under a temporary directory the tests can read and tamper with.
#![allow(dead_code)]

use std::{net::SocketAddr, path::PathBuf};

/// The access key the server accepts.
pub const ACCESS_KEY: &str = "adamviz-test";
/// Its secret.
pub const SECRET_KEY: &str = "adamviz-test-secret-key";
/// The bucket the server starts with.
pub const BUCKET: &str = "adamviz-objects";

/// A running server; stopped when dropped.
pub struct S3Server {
    /// Its address.
    pub addr: SocketAddr,
    /// The directory it keeps buckets in (`<root>/<bucket>/<key>`).
    pub root: PathBuf,
    _dir: tempfile::TempDir,
    runtime: Option<tokio::runtime::Runtime>,
}

impl S3Server {
    /// Starts a server with one empty bucket, [`BUCKET`].
    pub fn start() -> Self {
        use hyper_util::{
            rt::{TokioExecutor, TokioIo},
            server::conn::auto::Builder,
        };
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir(root.join(BUCKET)).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let service = {
            let mut builder =
                s3s::service::S3ServiceBuilder::new(s3s_fs::FileSystem::new(&root).unwrap());
            builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
            builder.build()
        };
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move {
            let http = Builder::new(TokioExecutor::new());
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                let connection = http
                    .serve_connection(TokioIo::new(socket), service.clone())
                    .into_owned();
                tokio::spawn(async move {
                    let _ = connection.await;
                });
            }
        });
        Self {
            addr,
            root,
            _dir: dir,
            runtime: Some(runtime),
        }
    }

    /// The `--objects` URL of the bucket (with `prefix` inside it when not empty).
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{BUCKET}/{prefix}?endpoint=http://{}", self.addr)
    }

    /// The file holding the object `hex` (under `prefix`).
    pub fn object_file(&self, prefix: &str, hex: &str) -> PathBuf {
        let mut path = self.root.join(BUCKET);
        if !prefix.is_empty() {
            path = path.join(prefix);
        }
        path.join("sha256").join(&hex[..2]).join(&hex[2..])
    }

    /// The AWS environment variables a client of this server needs.
    pub fn environment() -> [(&'static str, &'static str); 3] {
        [
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
            ("AWS_REGION", "us-east-1"),
        ]
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
