//! `adamviz key show`: the installation's signing key (created at the first start in the data
//! directory): its public key and fingerprint. The private key is never printed.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use adamviz_services::installation_key::InstallationKey;

/// `adamviz key …`.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Print the public key (hex) and its fingerprint; creates the key if there is none yet.
    Show(KeyArgs),
}

/// Where the installation lives.
#[derive(Debug, Args)]
pub struct KeyArgs {
    /// The data directory.
    #[arg(long, env = "ADAMVIZ_DATA_DIR", default_value = "adamviz-data")]
    pub data_dir: PathBuf,
}

/// Runs `adamviz key …`.
pub fn run(command: KeyCommand) -> anyhow::Result<()> {
    match command {
        KeyCommand::Show(args) => {
            let key = InstallationKey::load_or_create(&args.data_dir)?;
            println!("public key  {}", key.public_hex());
            println!("fingerprint {}", key.fingerprint());
            Ok(())
        }
    }
}
