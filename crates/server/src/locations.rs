//! Where an installation's state is: the `--database` and `--objects` options every command
//! that reads or writes it shares, checked when the command line is read.

use clap::Args;

/// Where the database is (every command that reads or writes it).
#[derive(Debug, Clone, Default, Args)]
pub struct DatabaseArgs {
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`: keep accounts, sessions, datasets,
    /// revisions, attempts, the run queue, security events and the evidence ledger in
    /// PostgreSQL, shared by every node (give a password through this variable or PGPASSWORD
    /// rather than on the command line). Default: the data directory's `adamviz.sqlite3`.
    #[arg(long, env = "ADAMVIZ_DATABASE", hide_env_values = true, value_parser = database_url)]
    pub database: Option<String>,
}

/// Checks a `--database` value when the command line is read.
pub(crate) fn database_url(text: &str) -> Result<String, String> {
    adamviz_store::db::DatabaseLocation::parse(text)
        .map(|_| text.to_owned())
        .map_err(|error| match error {
            adamviz_store::db::DatabaseError::Location { problem, .. } => problem,
            other => other.to_string(),
        })
}

impl DatabaseArgs {
    /// Where the database is for data directory `data_dir`.
    pub fn location(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<adamviz_store::db::DatabaseLocation, adamviz_store::db::DatabaseError> {
        adamviz_store::db::DatabaseLocation::choose(data_dir, self.database.as_deref())
    }

    /// Opens (creating if needed) the database, applying the migrations it lacks.
    pub fn open(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<adamviz_store::db::Database, adamviz_store::db::DatabaseError> {
        adamviz_store::db::Database::open_location(self.location(data_dir)?)
    }

    /// Opens a database that must already be an installation's (a worker, a reader): refused
    /// if there is none there.
    pub fn open_existing(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<adamviz_store::db::Database, adamviz_store::db::DatabaseError> {
        adamviz_store::db::Database::open_existing(self.location(data_dir)?)
    }
}

/// Where the content-addressed objects of record live (every command that reads or writes
/// them).
#[derive(Debug, Clone, Default, Args)]
pub struct ObjectsArgs {
    /// `s3://BUCKET[/PREFIX]?endpoint=URL`: keep the objects (datasets, scripts, snapshots,
    /// plots, bundles) in S3-compatible storage shared by every node, written create-only and
    /// re-hashed on every read; credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
    /// AWS_REGION. Default: the data directory's `objects` folder. With a bucket that folder
    /// holds this node's copies.
    #[arg(long, env = "ADAMVIZ_OBJECTS", value_parser = objects_url)]
    pub objects: Option<String>,
}

/// Checks an `--objects` value when the command line is read.
pub(crate) fn objects_url(text: &str) -> Result<String, String> {
    adamviz_store::objects::RemoteLocation::parse(text)
        .map(|_| text.to_owned())
        .map_err(|error| error.problem)
}

impl ObjectsArgs {
    /// Opens the object store under `data_dir` with these options.
    pub fn open(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<adamviz_store::objects::ObjectStore, adamviz_store::objects::ObjectStoreError> {
        adamviz_store::objects::ObjectStore::open_shared(data_dir, self.objects.as_deref())
    }
}
