//! `adamviz evidence export`: a Verified revision's evidence bundle (one zip, its manifest signed
//! with the installation's key) written to a file.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use crate::{
    domain::ids::RevisionId,
    service::{bundle::export_bundle, installation_key::InstallationKey},
    store::{db::Database, objects::ObjectStore},
};

/// `adamviz evidence …`.
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Write a Verified revision's evidence bundle (zip) to a file.
    Export(ExportArgs),
    /// Check an evidence bundle offline; exit 0 PASS, 5 FAIL, 2 bad invocation.
    Validate(ValidateArgs),
}

/// Options of `adamviz evidence validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The bundle (zip).
    pub bundle: PathBuf,
    /// Print the report as canonical JSON with its own digest.
    #[arg(long)]
    pub json: bool,
    /// A file with the Ed25519 public key (64 hex digits) the manifest must be signed by.
    #[arg(long)]
    pub trusted_key: Option<PathBuf>,
    /// Run the script again in the sandboxed R and compare the analytical hash.
    #[arg(long)]
    pub replay: bool,
    /// A git repository (e.g. a clone of adamviz) the recorded source commit must exist in.
    #[arg(long)]
    pub repository: Option<PathBuf>,
}

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
}

/// Runs `adamviz evidence …`.
pub async fn run(command: EvidenceCommand) -> anyhow::Result<()> {
    match command {
        EvidenceCommand::Validate(args) => {
            let invocation = |message: String| -> ! {
                eprintln!("adamviz evidence validate: {message}");
                std::process::exit(2)
            };
            let bytes = std::fs::read(&args.bundle).unwrap_or_else(|e| {
                invocation(format!("cannot read {}: {e}", args.bundle.display()))
            });
            let trusted_key = args.trusted_key.as_ref().map(|path| {
                let text = std::fs::read_to_string(path)
                    .unwrap_or_else(|e| invocation(format!("cannot read {}: {e}", path.display())));
                crate::evidence::dsse::public_key_from_hex(&text)
                    .unwrap_or_else(|e| invocation(format!("{}: {e}", path.display())))
            });
            let mut report = crate::evidence::validate::validate(
                &bytes,
                &crate::evidence::validate::Options {
                    trusted_key,
                    repository: args.repository.clone(),
                },
            );
            if args.replay {
                report.record_replay(replay(&bytes).await);
            }
            if args.json {
                println!(
                    "{}",
                    String::from_utf8_lossy(&crate::evidence::validate::report_json(&report)?)
                );
            } else {
                print!("{}", report.text());
            }
            std::process::exit(if report.verdict == "PASS" { 0 } else { 5 })
        }
        EvidenceCommand::Export(args) => {
            let id = RevisionId::parse(&args.revision).map_err(|_| {
                anyhow::anyhow!(
                    "{:?} is not a revision id (rev- and 32 hex digits)",
                    args.revision
                )
            })?;
            let database = Database::open_in(&args.data_dir)?;
            let objects = ObjectStore::open(&args.data_dir)?;
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

/// Check 10: the bundle's script run again in the sandbox on its own snapshot; the statistics
/// must hash (canonically) to the analytical hash the bundle records.
async fn replay(bytes: &[u8]) -> Result<String, String> {
    let (request, expected) = crate::evidence::validate::replay_request(bytes)?;
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut config = crate::runner::RunnerConfig::new();
    config.work_root = work.path().to_path_buf();
    let runner = crate::runner::Runner::new(config);
    let result = runner.run(request).await;
    match result.analytical_hash {
        Some(actual) if actual.to_hex() == expected => Ok(format!(
            "the script re-ran in the sandbox: analytical hash {actual}"
        )),
        Some(actual) => Err(format!(
            "the re-run's statistics hash to {actual}, the bundle records {expected}"
        )),
        None => Err(format!(
            "the re-run gave no statistics ({:?})",
            result.failure
        )),
    }
}
