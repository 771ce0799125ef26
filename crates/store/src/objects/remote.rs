//! The shared copy of the content-addressed store in S3-compatible storage (`--objects
//! s3://bucket[/prefix]?endpoint=…`), through the `object_store` crate. Objects are written
//! create-only (`If-None-Match: *`: an object already there is never replaced) under
//! `<prefix>/sha256/<2 hex>/<62 hex>`, and every byte read back is re-hashed before it is used.
//!
//! The store's callers are synchronous and run on blocking threads (or in CLI commands): each
//! remote operation runs on a small runtime of its own and the caller waits for its answer, so
//! the store works the same inside and outside the server's runtime.

use std::{future::Future, sync::mpsc};

use futures_util::StreamExt;
use object_store::{
    aws::AmazonS3Builder, path::Path as RemotePath, ObjectStore as _, ObjectStoreExt as _, PutMode,
    PutOptions, PutPayload,
};

use adamviz_model::digest::Sha256Digest;

/// Where the shared objects live, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLocation {
    /// The bucket.
    pub bucket: String,
    /// The key prefix inside the bucket (no leading or trailing `/`; may be empty).
    pub prefix: String,
    /// The S3 endpoint, when not AWS's own (`http://127.0.0.1:9000`).
    pub endpoint: Option<String>,
    /// The region, when given in the URL (else `AWS_REGION` or `us-east-1`).
    pub region: Option<String>,
}

/// Why an `--objects` URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--objects {url:?}: {problem} (expected s3://BUCKET[/PREFIX][?endpoint=URL][&region=NAME])"
)]
pub struct LocationError {
    /// The URL as given.
    pub url: String,
    /// What is wrong with it.
    pub problem: String,
}

impl RemoteLocation {
    /// Reads `s3://bucket[/prefix][?endpoint=URL][&region=NAME]`.
    pub fn parse(text: &str) -> Result<Self, LocationError> {
        let refuse = |problem: &str| LocationError {
            url: text.to_owned(),
            problem: problem.to_owned(),
        };
        let url = url::Url::parse(text).map_err(|error| refuse(&error.to_string()))?;
        if url.scheme() != "s3" {
            return Err(refuse(&format!(
                "the scheme {:?} is not supported",
                url.scheme()
            )));
        }
        let bucket = url.host_str().unwrap_or_default().to_owned();
        if bucket.is_empty() {
            return Err(refuse("no bucket is named"));
        }
        // (The URL parser has already resolved any `.` and `..` in the path.)
        let prefix = url.path().trim_matches('/').to_owned();
        let (mut endpoint, mut region) = (None, None);
        for (key, value) in url.query_pairs() {
            match key.as_ref() {
                "endpoint" => {
                    let parsed = url::Url::parse(&value)
                        .map_err(|error| refuse(&format!("endpoint {value:?}: {error}")))?;
                    if !matches!(parsed.scheme(), "http" | "https") {
                        return Err(refuse("the endpoint must be an http or https URL"));
                    }
                    endpoint = Some(value.trim_end_matches('/').to_owned());
                }
                "region" => region = Some(value.into_owned()),
                other => return Err(refuse(&format!("unknown parameter {other:?}"))),
            }
        }
        Ok(Self {
            bucket,
            prefix,
            endpoint,
            region,
        })
    }

    /// The location as a URL without credentials (for logs and messages).
    pub fn display(&self) -> String {
        let mut text = format!("s3://{}", self.bucket);
        if !self.prefix.is_empty() {
            text.push('/');
            text.push_str(&self.prefix);
        }
        if let Some(endpoint) = &self.endpoint {
            text.push_str(&format!(" at {endpoint}"));
        }
        text
    }
}

/// A remote operation that failed.
#[derive(Debug, thiserror::Error)]
#[error("{operation} {key} in {location}: {source}")]
pub struct RemoteError {
    /// What was being done (`reading`, `writing`, `looking up`).
    pub operation: &'static str,
    /// The object's key.
    pub key: String,
    /// The store (`s3://bucket at endpoint`).
    pub location: String,
    /// What the storage said.
    #[source]
    pub source: Box<object_store::Error>,
}

/// The S3-compatible store and the runtime its requests run on.
pub(super) struct Remote {
    location: RemoteLocation,
    store: std::sync::Arc<dyn object_store::ObjectStore>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("location", &self.location)
            .finish()
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        // Dropping a runtime blocks until its tasks end, which panics inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// What a download found: the bytes' digest and size (the bytes went to the writer).
pub(super) struct Downloaded {
    pub digest: Sha256Digest,
    pub size: u64,
}

impl Remote {
    /// Connects to `location` with the credentials of the usual AWS environment variables
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`).
    pub(super) fn connect(location: RemoteLocation) -> Result<Self, RemoteError> {
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(&location.bucket);
        if let Some(endpoint) = &location.endpoint {
            builder = builder
                .with_endpoint(endpoint)
                .with_allow_http(endpoint.starts_with("http://"));
        }
        if let Some(region) = &location.region {
            builder = builder.with_region(region);
        }
        let store = builder.build().map_err(|source| RemoteError {
            operation: "connecting to",
            key: String::new(),
            location: location.display(),
            source: Box::new(source),
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("adamviz-objects")
            .enable_all()
            .build()
            .expect("a runtime for the object store's requests");
        Ok(Self {
            location,
            store: std::sync::Arc::new(store),
            runtime: Some(runtime),
        })
    }

    /// Where the objects are, for messages.
    pub(super) fn location(&self) -> &RemoteLocation {
        &self.location
    }

    /// The key of the object `digest`.
    pub(super) fn key_of(&self, digest: &Sha256Digest) -> String {
        let hex = digest.to_hex();
        let name = format!("sha256/{}/{}", &hex[..2], &hex[2..]);
        if self.location.prefix.is_empty() {
            name
        } else {
            format!("{}/{name}", self.location.prefix)
        }
    }

    fn error(
        &self,
        operation: &'static str,
        key: &str,
        source: object_store::Error,
    ) -> RemoteError {
        RemoteError {
            operation,
            key: key.to_owned(),
            location: self.location.display(),
            source: Box::new(source),
        }
    }

    /// Runs `future` on the store's runtime and waits for it (from any thread, in or out of
    /// another runtime).
    fn wait<T: Send + 'static>(&self, future: impl Future<Output = T> + Send + 'static) -> T {
        let (answer, answered) = mpsc::sync_channel(1);
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the store")
            .spawn(async move {
                let _ = answer.send(future.await);
            });
        answered
            .recv()
            .expect("the object store's runtime answers every request it was given")
    }

    fn shared(&self) -> std::sync::Arc<dyn object_store::ObjectStore> {
        // A handle per request lets the request own it on the runtime.
        std::sync::Arc::clone(&self.store)
    }

    /// The size of the object `digest`, or `None` when there is none.
    pub(super) fn size_of(&self, digest: &Sha256Digest) -> Result<Option<u64>, RemoteError> {
        let key = self.key_of(digest);
        let store = self.shared();
        let path = RemotePath::from(key.as_str());
        match self.wait(async move { store.head(&path).await }) {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(source) => Err(self.error("looking up", &key, source)),
        }
    }

    /// Writes the local file `file` (`size` bytes, already hashed to `digest`) as the object
    /// `digest` unless an object of that name is there already; true when this call created it.
    ///
    /// Up to [`SINGLE_PUT_LIMIT`] bytes go in one create-only request (`If-None-Match: *`), so
    /// that of two nodes writing one name only one succeeds. Larger objects are written in
    /// parts after the presence check (S3 has no create-only multipart write that every
    /// compatible server honours); the object appears whole when the upload completes, and a
    /// node writing the same name at the same time can only write the same bytes, since the
    /// name is their hash and every reader re-hashes.
    pub(super) fn put_file_if_absent(
        &self,
        digest: &Sha256Digest,
        file: &std::path::Path,
        size: u64,
    ) -> Result<bool, PutError> {
        if self.size_of(digest)?.is_some() {
            return Ok(false);
        }
        let key = self.key_of(digest);
        let store = self.shared();
        let path = RemotePath::from(key.as_str());
        if size <= SINGLE_PUT_LIMIT {
            let bytes = std::fs::read(file).map_err(PutError::Local)?;
            let options = PutOptions {
                mode: PutMode::Create,
                ..PutOptions::default()
            };
            let put = self.wait(async move {
                store
                    .put_opts(&path, PutPayload::from(bytes), options)
                    .await
            });
            return match put {
                Ok(_) => Ok(true),
                // Another node wrote the same name first: the same bytes, if its name is true
                // (a reader re-hashes them either way).
                Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                Err(source) => Err(self.error("writing", &key, source).into()),
            };
        }
        let mut reader = std::fs::File::open(file).map_err(PutError::Local)?;
        let written = self.wait(async move {
            use std::io::Read as _;
            let upload = store
                .put_multipart(&path)
                .await
                .map_err(PutFailure::Remote)?;
            let mut writer = object_store::WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
            let mut buffer = vec![0u8; PART_SIZE];
            loop {
                // At most two parts in flight: memory stays a few parts whatever the size.
                if let Err(error) = writer.wait_for_capacity(2).await {
                    return Err(PutFailure::Remote(error));
                }
                let read = match reader.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(read) => read,
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(error) => {
                        let _ = writer.abort().await;
                        return Err(PutFailure::Local(error));
                    }
                };
                writer.write(&buffer[..read]);
            }
            writer.finish().await.map_err(PutFailure::Remote)
        });
        match written {
            Ok(_) => Ok(true),
            Err(PutFailure::Remote(source)) => Err(self.error("writing", &key, source).into()),
            Err(PutFailure::Local(error)) => Err(PutError::Local(error)),
        }
    }

    /// Streams the object `digest` into `sink`, hashing on the way; `None` when there is no
    /// such object. The caller compares the digest with the name.
    pub(super) fn download(
        &self,
        digest: &Sha256Digest,
        mut sink: std::fs::File,
    ) -> Result<Option<Downloaded>, DownloadError> {
        use sha2::{Digest as _, Sha256};
        use std::io::Write as _;
        let key = self.key_of(digest);
        let store = self.shared();
        let path = RemotePath::from(key.as_str());
        let fetched = self.wait(async move {
            let result = match store.get(&path).await {
                Ok(result) => result,
                Err(error) => return Err(StreamFailure::Remote(error)),
            };
            let mut stream = result.into_stream();
            let (mut hasher, mut size) = (Sha256::new(), 0u64);
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(StreamFailure::Remote)?;
                hasher.update(&chunk);
                size += chunk.len() as u64;
                sink.write_all(&chunk).map_err(StreamFailure::Local)?;
            }
            sink.sync_all().map_err(StreamFailure::Local)?;
            let digest = Sha256Digest::from_bytes(hasher.finalize().into());
            Ok(Downloaded { digest, size })
        });
        match fetched {
            Ok(done) => Ok(Some(done)),
            Err(StreamFailure::Remote(object_store::Error::NotFound { .. })) => Ok(None),
            Err(StreamFailure::Remote(source)) => {
                Err(DownloadError::Remote(self.error("reading", &key, source)))
            }
            Err(StreamFailure::Local(error)) => Err(DownloadError::Local(error)),
        }
    }
}

/// Objects up to this size are written in one create-only request.
pub(super) const SINGLE_PUT_LIMIT: u64 = 64 * 1024 * 1024;

/// The part size of larger writes.
const PART_SIZE: usize = 16 * 1024 * 1024;

/// Why a write stopped.
#[derive(Debug)]
pub(super) enum PutError {
    /// The storage failed.
    Remote(RemoteError),
    /// Reading the local copy failed.
    Local(std::io::Error),
}

impl From<RemoteError> for PutError {
    fn from(error: RemoteError) -> Self {
        Self::Remote(error)
    }
}

enum PutFailure {
    Remote(object_store::Error),
    Local(std::io::Error),
}

/// Why a download stopped.
pub(super) enum DownloadError {
    /// The storage failed.
    Remote(RemoteError),
    /// Writing the local copy failed.
    Local(std::io::Error),
}

enum StreamFailure {
    Remote(object_store::Error),
    Local(std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_s3_url_gives_bucket_prefix_endpoint_and_region() {
        let location = RemoteLocation::parse(
            "s3://plots/study-1/objects?endpoint=http://127.0.0.1:9000/&region=eu-west-1",
        )
        .unwrap();
        assert_eq!(
            location,
            RemoteLocation {
                bucket: "plots".into(),
                prefix: "study-1/objects".into(),
                endpoint: Some("http://127.0.0.1:9000".into()),
                region: Some("eu-west-1".into()),
            }
        );
        assert_eq!(
            location.display(),
            "s3://plots/study-1/objects at http://127.0.0.1:9000"
        );
        let bare = RemoteLocation::parse("s3://plots").unwrap();
        assert_eq!((bare.prefix.as_str(), bare.endpoint), ("", None));
    }

    #[test]
    fn a_url_adamviz_cannot_use_is_refused_with_the_reason() {
        for (url, problem) in [
            ("plots", "relative URL without a base"),
            ("gs://plots", "the scheme \"gs\" is not supported"),
            ("s3://plots?endpoint=h", "endpoint \"h\""),
            ("s3://plots?secret=x", "unknown parameter \"secret\""),
        ] {
            let error = RemoteLocation::parse(url).unwrap_err();
            assert!(error.problem.contains(problem), "{url}: {error}");
            assert!(
                error.to_string().contains("expected s3://BUCKET"),
                "{error}"
            );
        }
    }
}
