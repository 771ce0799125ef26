//! `adamviz ledger verify`: re-checks the whole evidence ledger of a data directory (every
//! record's canonical form, self-hash and link, and that none is missing) and names the first
//! broken record.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};

use crate::store::{db::Database, db::DATABASE_FILE, ledger::verify_ledger};

/// `adamviz ledger …`.
#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Re-check every record of the evidence ledger; exit 1 naming the first broken one.
    Verify(LedgerArgs),
}

/// Options of `adamviz ledger verify`.
#[derive(Debug, Args)]
pub struct LedgerArgs {
    /// The data directory holding adamviz.sqlite3.
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
}

/// Runs `adamviz ledger …`.
pub fn run(command: LedgerCommand) -> anyhow::Result<()> {
    let LedgerCommand::Verify(args) = command;
    let path = args.data_dir.join(DATABASE_FILE);
    if !path.is_file() {
        bail!("there is no adamviz database at {}", path.display());
    }
    let database =
        Database::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let connection = database.connection()?;
    let started = std::time::Instant::now();
    let report = verify_ledger(&connection)?;
    let elapsed = started.elapsed();
    match report.first_break {
        None => {
            println!(
                "evidence ledger OK: {} records verified in {:.3} s, head {}",
                report.records,
                elapsed.as_secs_f64(),
                report.head
            );
            Ok(())
        }
        Some(broken) => bail!("{broken}\n({} records before it verified)", report.records),
    }
}
