//! `adamviz evidence export`: a Verified revision's evidence bundle (one zip, its manifest signed
//! with the installation's key) written to a file; and `adamviz evidence validate`, the offline
//! validator's command line (crate `adamviz-evidence`, shared with `adamviz-verify`).

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use adamviz_model::ids::RevisionId;
use adamviz_services::{bundle::export_bundle, installation_key::InstallationKey};

/// `adamviz evidence …`.
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Write a Verified revision's evidence bundle (zip) to a file.
    Export(ExportArgs),
    /// Check an evidence bundle offline. Exit 0 PASS (every check holds and the manifest is
    /// signed by the --trusted-key); 3 CONSISTENT, ORIGIN NOT PROVEN (every check holds, but no
    /// --trusted-key was given: anyone can make a bundle that agrees with itself); 5 FAIL;
    /// 2 bad invocation, or an archive refused before any check (unreadable, unsafe entry
    /// names, more than 10,000 entries or 2 GiB inflated).
    Validate(ValidateArgs),
}

/// Options of `adamviz evidence validate` (shared with the `adamviz-verify` binary).
pub use adamviz_evidence::cli::ValidateArgs;

/// Options of `adamviz evidence export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The revision (`rev-` and 32 hex digits).
    pub revision: String,
    /// The file to write.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// The data directory.
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
    /// Where the database is.
    #[command(flatten)]
    pub database: super::DatabaseArgs,
    /// Where the objects live.
    #[command(flatten)]
    pub objects: super::ObjectsArgs,
}

/// Runs `adamviz evidence …`.
pub async fn run(command: EvidenceCommand) -> anyhow::Result<()> {
    match command {
        EvidenceCommand::Validate(args) => std::process::exit(
            adamviz_evidence::cli::validate_command("adamviz evidence validate", &args).await,
        ),
        EvidenceCommand::Export(args) => {
            let id = RevisionId::parse(&args.revision).map_err(|_| {
                anyhow::anyhow!(
                    "{:?} is not a revision id (rev- and 32 hex digits)",
                    args.revision
                )
            })?;
            let database = args.database.open_existing(&args.data_dir)?;
            let objects = args.objects.open(&args.data_dir)?;
            let key = InstallationKey::load_or_create(&args.data_dir)?;
            let connection = database.connection()?;
            let bytes = export_bundle(&connection, &objects, &key, &id)?;
            std::fs::write(&args.output, &bytes)
                .with_context(|| format!("cannot write {}", args.output.display()))?;
            println!(
                "wrote {} ({} bytes), signed by {}",
                args.output.display(),
                bytes.len(),
                key.fingerprint()
            );
            Ok(())
        }
    }
}
