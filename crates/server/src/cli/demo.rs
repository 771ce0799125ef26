//! `adamviz demo-data`: writes the synthetic demo dataset (see `adamviz_engine::ingest::demo`).

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use adamviz_engine::ingest::{
    csv::write_table_csv,
    demo::{generate_demo_table, DEMO_SUBJECTS_PER_ARM},
    xpt_writer::write_xpt,
};

/// File format of the demo dataset.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DemoFormat {
    /// SAS XPORT v5.
    Xpt,
    /// CSV.
    Csv,
}

/// Options of `adamviz demo-data`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write it.
    #[arg(long)]
    pub out: PathBuf,
    /// File format.
    #[arg(long, value_enum, default_value_t = DemoFormat::Xpt)]
    pub format: DemoFormat,
    /// Subjects in each of the three arms.
    #[arg(long, default_value_t = DEMO_SUBJECTS_PER_ARM)]
    pub subjects_per_arm: usize,
}

/// Runs `adamviz demo-data`.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    let table = generate_demo_table(args.subjects_per_arm);
    let bytes = match args.format {
        DemoFormat::Xpt => write_xpt(&table),
        DemoFormat::Csv => {
            let mut out = Vec::new();
            write_table_csv(&table, &mut out)?;
            out
        }
    };
    std::fs::write(&args.out, bytes)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "wrote {} ({} records, classification synthetic)",
        args.out.display(),
        table.row_count
    );
    Ok(())
}
