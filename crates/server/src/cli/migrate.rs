//! `adamviz migrate`: moves an installation from its data directory (the SQLite file and the
//! objects folder) into PostgreSQL and an S3-compatible bucket, verifying both sides; the old
//! installation is only read, never changed.
//!
//! In order: the source must pass its own audit (chain, records, artifacts, rows); the target
//! database gets adamviz's schema and must hold no rows; every object is re-hashed from the
//! folder, written create-only to the bucket and read back from it re-hashed; then every row
//! moves in one transaction that is committed only if the audit of the target, run inside it
//! against the bucket, passes with the same chain head and the same row counts. A failure at
//! any step says what and where, and leaves no row in the target.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::Args;

use adamviz_store::{
    audit::{audit, AuditReport},
    db::{open_read_only, Database, DATABASE_FILE},
    objects::ObjectStore,
    transfer::{check_empty, copy_rows, row_counts},
};

/// Options of `adamviz migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The data directory of the installation to move (its adamviz.sqlite3 and objects/); it
    /// is only read.
    #[arg(long)]
    pub from: PathBuf,
    /// The PostgreSQL database to move it into: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`
    /// (it must exist and hold no adamviz rows; the schema is created).
    #[arg(long, env = "ADAMVIZ_DATABASE", hide_env_values = true, value_parser = crate::locations::database_url)]
    pub to: String,
    /// The bucket the objects go to: `s3://BUCKET[/PREFIX][?endpoint=URL][&region=NAME]`
    /// (credentials from the AWS variables).
    #[arg(long, env = "ADAMVIZ_OBJECTS", value_parser = crate::locations::objects_url)]
    pub objects: String,
}

fn summary(report: &AuditReport) -> String {
    format!(
        "{} records (head {}), {} artifacts of {} accepted bundles",
        report.ledger.records, report.ledger.head, report.artifacts_verified, report.bundles
    )
}

/// Runs `adamviz migrate`.
pub fn run(args: MigrateArgs) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let source_path = args.from.join(DATABASE_FILE);
    if !source_path.is_file() {
        bail!(
            "{} holds no adamviz installation (no {DATABASE_FILE})",
            args.from.display()
        );
    }
    let target_location = adamviz_store::db::DatabaseLocation::parse(&args.to)?;

    // 1. The source, read only, must verify.
    let source = open_read_only(&source_path)
        .with_context(|| format!("cannot open {}", source_path.display()))?;
    let folder = ObjectStore::at(&args.from);
    let before = audit(&source, &folder)?;
    if !before.passed() {
        bail!(
            "the installation in {} does not verify (see `adamviz ledger verify --data-dir {}`): nothing was moved",
            args.from.display(),
            args.from.display()
        );
    }
    println!(
        "source {}: verified, {}",
        args.from.display(),
        summary(&before)
    );

    // 2. The target database: the schema, and no rows yet.
    let target = Database::open_postgres(&args.to)
        .with_context(|| format!("cannot open {}", target_location.describe()))?;
    check_empty(&target.connection()?)?;

    // 3. Every object re-hashed into the bucket and read back from it re-hashed.
    let staging = tempfile::Builder::new()
        .prefix("adamviz-migrate-")
        .tempdir()
        .context("cannot create a staging directory")?;
    let bucket = ObjectStore::open_shared(&staging.path().join("up"), Some(&args.objects))?;
    let reader = ObjectStore::open_shared(&staging.path().join("down"), Some(&args.objects))?;
    let (mut objects, mut bytes, mut created) = (0u64, 0u64, 0u64);
    for digest in folder.local_digests()? {
        let path = folder.path_of(&digest);
        let file = std::fs::File::open(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let stored = bucket.put_stream(file, u64::MAX)?;
        if stored.digest != digest {
            bail!(
                "{}: its bytes hash to {}, not to its name: the source's object folder was changed; nothing was moved to the database",
                path.display(),
                stored.digest
            );
        }
        let _ = std::fs::remove_file(bucket.path_of(&digest));
        // Read back from the bucket (re-hashed on the way), then let the copy go.
        let fetched = reader.local_path(&digest)?;
        let _ = std::fs::remove_file(fetched);
        objects += 1;
        bytes += stored.size;
        created += u64::from(stored.created);
    }
    println!(
        "objects: {objects} ({:.1} MB) re-hashed into {} and read back intact ({created} new, {} already there)",
        bytes as f64 / 1e6,
        args.objects,
        objects - created
    );

    // 4. Every row, in one transaction audited before its commit.
    let mut connection = target.connection()?;
    let transaction = connection.transaction()?;
    let moved = copy_rows(&source, &transaction)?;
    let after = audit(
        &transaction,
        &ObjectStore::at_shared(&staging.path().join("check"), Some(&args.objects))?,
    )?;
    if !after.passed() {
        bail!(
            "the moved installation does not verify in {}: {} chain break(s), {} record, {} artifact and {} row problem(s); nothing was committed",
            target_location.describe(),
            usize::from(after.ledger.first_break.is_some()),
            after.record_problems.len(),
            after.artifact_problems.len(),
            after.row_problems.len()
        );
    }
    if after.ledger.head != before.ledger.head || after.ledger.records != before.ledger.records {
        bail!(
            "the moved chain differs: {} records with head {} in the source, {} with head {} in the target; nothing was committed",
            before.ledger.records,
            before.ledger.head,
            after.ledger.records,
            after.ledger.head
        );
    }
    let (counted_before, counted_after) = (row_counts(&source)?, row_counts(&transaction)?);
    if counted_before != counted_after {
        bail!("row counts differ after the move ({counted_before:?} in the source, {counted_after:?} in the target); nothing was committed");
    }
    transaction.commit()?;
    for (table, rows) in &moved.tables {
        println!("  {table}: {rows} rows");
    }
    println!(
        "target {}: verified, {}",
        target_location.describe(),
        summary(&after)
    );
    println!(
        "migrate: done in {:.1} s; {} is unchanged",
        started.elapsed().as_secs_f64(),
        args.from.display()
    );
    Ok(())
}
