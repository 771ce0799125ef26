//! `adamviz ledger verify`: audits a data directory (see `store::audit`): the ledger's chain
//! (naming the first broken record), every record against its schema and type, and every
//! artifact of every accepted bundle re-hashed from the store; prints each problem and exits 1
//! if there is any. Signatures soon after a password reset by someone else are listed as
//! findings to review (they do not fail it).

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};

use adamviz_store::{
    audit::{
        approvals::{signatures_after_reset, ResetFinding},
        audit, AuditReport,
    },
    db::{open_postgres_read_only, open_read_only, DatabaseLocation},
    objects::ObjectStore,
};

/// `adamviz ledger …`.
#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Re-check the evidence ledger (chain, schemas, types) and every accepted bundle's
    /// artifacts; exit 1 naming each problem.
    Verify(LedgerArgs),
}

/// Options of `adamviz ledger verify`.
#[derive(Debug, Args)]
pub struct LedgerArgs {
    /// The data directory holding adamviz.sqlite3.
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
    /// Where the database is.
    #[command(flatten)]
    pub database: super::DatabaseArgs,
    /// Where the objects live.
    #[command(flatten)]
    pub objects: super::ObjectsArgs,
    /// Signatures made within this many hours after someone else (an administrator, the
    /// command line) set the signer's password are listed as findings to review (they do not
    /// fail the check).
    #[arg(long, default_value_t = 72, value_parser = clap::value_parser!(u32).range(1..=24 * 365))]
    pub reset_window_hours: u32,
}

/// Runs `adamviz ledger …`.
pub fn run(command: LedgerCommand) -> anyhow::Result<()> {
    let LedgerCommand::Verify(args) = command;
    // Read-only as the database: objects read from a bucket are re-hashed, not kept.
    let objects = ObjectStore::at_shared(&args.data_dir, args.objects.objects.as_deref())?;
    let started = std::time::Instant::now();
    // Read-only: no migration, no change of any setting, every write refused.
    let location = args.database.location(&args.data_dir)?;
    let described = location.describe();
    let window = args.reset_window_hours;
    let (report, findings) = match location {
        DatabaseLocation::File(path) => {
            if !path.is_file() {
                bail!("there is no adamviz database at {described}");
            }
            let connection =
                open_read_only(&path).with_context(|| format!("cannot open {described}"))?;
            (
                audit(&connection, &objects)?,
                signatures_after_reset(&connection, window)?,
            )
        }
        DatabaseLocation::Postgres(url) => {
            let connection = open_postgres_read_only(&url)
                .with_context(|| format!("cannot open {described}"))?;
            (
                audit(&connection, &objects)?,
                signatures_after_reset(&connection, window)?,
            )
        }
    };
    let elapsed = started.elapsed();
    print!("{}", describe(&report));
    print!("{}", describe_findings(&findings, args.reset_window_hours));
    println!(
        "ledger verify: {} in {:.3} s",
        if report.passed() { "PASS" } else { "FAIL" },
        elapsed.as_secs_f64()
    );
    if !report.passed() {
        bail!("the evidence does not verify: see the problems above");
    }
    Ok(())
}

/// The signatures soon after a reset by someone else, as text: findings to review, not
/// failures.
fn describe_findings(findings: &[ResetFinding], window_hours: u32) -> String {
    let mut text = format!(
        "findings to review: {} signature(s) made within {window_hours} h after someone else set the signer's password\n",
        findings.len()
    );
    for finding in findings {
        text.push_str(&format!(
            "  approval record {} of revision {}: {} signed at {}, {} h {:02} min after {} set their password at {}\n",
            finding.seq,
            finding.revision_id,
            finding.signer,
            finding.signed_at,
            finding.minutes_after / 60,
            finding.minutes_after % 60,
            finding.reset_by,
            finding.reset_at
        ));
    }
    text
}

/// The report as text: one line per pass, then one per problem.
fn describe(report: &AuditReport) -> String {
    let mut text = String::new();
    let ledger = &report.ledger;
    match &ledger.first_break {
        None => text.push_str(&format!(
            "evidence ledger OK: {} records verified, chain intact, head {}\n",
            ledger.records, ledger.head
        )),
        Some(broken) => text.push_str(&format!(
            "evidence ledger BROKEN: {broken} ({} records before it verified)\n",
            ledger.records
        )),
    }
    text.push_str(&format!(
        "records: {} verified against their schemas and types, {} failed\n",
        report.records_verified,
        report.record_problems.len()
    ));
    for problem in &report.record_problems {
        text.push_str(&format!(
            "  record {} ({}): {}\n",
            problem.seq, problem.kind, problem.detail
        ));
    }
    text.push_str(&format!(
        "artifacts: {} re-hashed intact from {} accepted bundles, {} failed\n",
        report.artifacts_verified,
        report.bundles,
        report.artifact_problems.len()
    ));
    for problem in &report.artifact_problems {
        let whose = if problem.name == "upload" {
            "uploaded dataset".to_owned()
        } else {
            format!(
                "artifact {} of revision {}",
                problem.name, problem.revision_id
            )
        };
        text.push_str(&format!(
            "  {whose} (object {}, {}): {}\n",
            problem.digest,
            problem.path.display(),
            problem.detail
        ));
    }
    text.push_str(&format!(
        "rows: {} of revisions, attempts and bundles not explained by the records\n",
        report.row_problems.len()
    ));
    for problem in &report.row_problems {
        text.push_str(&format!(
            "  {} {}: {}\n",
            problem.table, problem.id, problem.detail
        ));
    }
    text.push_str(&format!(
        "approvals: {} replayed against accounts, role history, authorship and the security log, {} not backed\n",
        report.approvals,
        report.approval_problems.len()
    ));
    for problem in &report.approval_problems {
        text.push_str(&format!(
            "  approval record {} of revision {}: {} {}\n",
            problem.seq, problem.revision_id, problem.code, problem.detail
        ));
    }
    text
}
