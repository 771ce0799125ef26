//! `adamviz profile FILE [--json]`: reads a dataset (format from content), profiles it and prints
//! the profile as a readable report or as JSON.

use std::{fmt::Write as _, path::PathBuf};

use anyhow::Context as _;
use clap::Args;
use sha2::{Digest, Sha256};

use adamviz_engine::ingest::{
    profile::profile_table,
    read_dataset,
    sas_dates::{temporal_kind, to_iso8601},
};
use adamviz_model::{
    digest::Sha256Digest,
    profile::{CandidateRoles, ColumnKind, DatasetProfile, DEFAULT_LOW_N_THRESHOLD},
};

/// Options of `adamviz profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The dataset: CSV, SAS XPORT (v5 or v8) or CDISC Dataset-JSON v1.1, recognised from its content.
    pub file: PathBuf,
    /// Print the profile as JSON instead of a report.
    #[arg(long)]
    pub json: bool,
    /// Cells with fewer subjects than this are reported as low N.
    #[arg(long, default_value_t = DEFAULT_LOW_N_THRESHOLD)]
    pub low_n_threshold: usize,
}

/// Reads and profiles `path`.
pub fn profile_file(
    path: &std::path::Path,
    low_n_threshold: usize,
) -> anyhow::Result<DatasetProfile> {
    let bytes = adamviz_engine::ingest::MappedFile::open(path)?;
    let content_hash = Sha256Digest::from_bytes(Sha256::digest(&*bytes).into());
    let table = read_dataset(&bytes).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(profile_table(&table, content_hash, low_n_threshold))
}

/// Runs `adamviz profile`.
pub fn run(args: ProfileArgs) -> anyhow::Result<()> {
    let profile = profile_file(&args.file, args.low_n_threshold)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&profile)?);
    } else {
        print!(
            "{}",
            render_report(&args.file.display().to_string(), &profile)
        );
    }
    Ok(())
}

/// The human-readable report.
pub fn render_report(name: &str, profile: &DatasetProfile) -> String {
    let mut out = String::new();
    let format = match profile.source_format.as_str() {
        "xpt" => "SAS XPORT",
        "dataset_json" => "CDISC Dataset-JSON",
        _ => "CSV",
    };
    let dataset = profile
        .dataset_name
        .as_deref()
        .map(|n| format!(" {n}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{name}: {format} dataset{dataset}, {} records, {} columns",
        profile.row_count,
        profile.columns.len()
    );
    let _ = writeln!(out, "content hash: {}", profile.content_hash);
    write_roles(&mut out, &profile.roles);
    write_columns(&mut out, profile);
    if !profile.parameters.is_empty() {
        let _ = writeln!(out, "\nparameters");
        for p in &profile.parameters {
            let _ = writeln!(
                out,
                "  {:<8} {:<45} {:>7} records  unit {}",
                p.code,
                p.labels.join(" | "),
                p.records,
                join(&p.units)
            );
        }
    }
    let _ = writeln!(out, "\nwarnings ({})", profile.warnings.len());
    for warning in &profile.warnings {
        let _ = writeln!(out, "  - {warning}");
    }
    out
}

/// A list for the report: its items joined, or `-` when empty.
fn join(items: &[String]) -> String {
    if items.is_empty() {
        "-".to_owned()
    } else {
        items.join(", ")
    }
}

/// The candidate role of each part of a plot.
fn write_roles(out: &mut String, roles: &CandidateRoles) {
    let _ = writeln!(out, "\nroles");
    let _ = writeln!(out, "  subject     {}", join(&roles.subject));
    let _ = writeln!(out, "  treatment   {}", join(&roles.treatment));
    let visits: Vec<String> = roles
        .visit
        .iter()
        .map(|v| match &v.order {
            Some(order) => format!("{} (order {order})", v.label),
            None => format!("{} (no order variable)", v.label),
        })
        .collect();
    let _ = writeln!(out, "  visit       {}", join(&visits));
    let _ = writeln!(
        out,
        "  parameter   {} / {}",
        join(&roles.parameter_code),
        join(&roles.parameter_label)
    );
    let _ = writeln!(out, "  value       {}", join(&roles.value));
    let _ = writeln!(out, "  unit        {}", join(&roles.unit));
    let _ = writeln!(out, "  population  {}", join(&roles.population_flags));
    let _ = writeln!(out, "  record flag {}", join(&roles.record_flags));
}

/// Every column: kind, label, missing, distinct and range (dates as ISO 8601).
fn write_columns(out: &mut String, profile: &DatasetProfile) {
    let _ = writeln!(out, "\ncolumns");
    for column in &profile.columns {
        let kind = match column.kind {
            ColumnKind::Numeric => column.temporal.as_deref().unwrap_or("num"),
            ColumnKind::Character => "char",
        };
        let distinct = if column.distinct_capped {
            format!(">{}", column.distinct)
        } else {
            column.distinct.to_string()
        };
        let temporal = column.format.as_deref().and_then(temporal_kind);
        let show = |value: f64| {
            temporal
                .and_then(|kind| to_iso8601(kind, value))
                .unwrap_or_else(|| value.to_string())
        };
        let range = match (column.min, column.max) {
            (Some(min), Some(max)) => format!("  [{}, {}]", show(min), show(max)),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<8} {:<8} {:<40} missing {:>6}  distinct {:>6}{range}",
            column.name,
            kind,
            column.label.as_deref().unwrap_or(""),
            column.missing,
            distinct
        );
    }
}
