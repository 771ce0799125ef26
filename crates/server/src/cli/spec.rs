//! `adamviz spec draft|confirm` and `adamviz snapshot`: the first half of the flow from the
//! command line — question to draft, draft to confirmed spec, confirmed spec to snapshot.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};
use sha2::{Digest, Sha256};

use adamviz_engine::ingest::{
    confirm::{confirm_spec, SpecError},
    draft::{draft_spec, questions_for},
    profile::profile_table,
    read_dataset,
    snapshot::{snapshot_hash, take_snapshot, write_canonical, write_csv},
    table::Table,
};
use adamviz_engine::question::answer::apply_text_answer;
use adamviz_model::{
    confirmation::{AllowedAnswers, QUESTION_IDS},
    digest::Sha256Digest,
    profile::{DatasetProfile, DEFAULT_LOW_N_THRESHOLD},
    spec::PlotSpec,
};

/// `adamviz spec …`.
#[derive(Debug, Subcommand)]
pub enum SpecCommand {
    /// Propose a draft spec from a question; prints it with the confirmation questions.
    Draft {
        /// The dataset (CSV, SAS XPORT or CDISC Dataset-JSON).
        file: PathBuf,
        /// The question, in words, e.g. "ALT over time by arm".
        #[arg(long)]
        question: String,
    },
    /// Confirm a draft: accept the proposed answers unless overridden, validate, print the spec.
    Confirm {
        /// The dataset the draft was made for.
        file: PathBuf,
        /// The draft: the output of `spec draft`, or a bare spec.
        draft: PathBuf,
        /// Override one answer, e.g. `--set visits='Baseline|Week 12'` (repeatable).
        #[arg(long = "set", value_name = "QUESTION=ANSWER")]
        answers: Vec<String>,
    },
}

/// Options of `adamviz snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The dataset.
    pub file: PathBuf,
    /// The confirmed spec (output of `spec confirm`).
    #[arg(long)]
    pub spec: PathBuf,
    /// Directory for snapshot.csv and snapshot.json (created if needed).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

/// A dataset read from disk, with its content hash.
pub(crate) struct LoadedDataset {
    pub(crate) table: Table,
    pub(crate) content_hash: Sha256Digest,
}

pub(crate) fn load(path: &Path) -> anyhow::Result<LoadedDataset> {
    let bytes = adamviz_engine::ingest::MappedFile::open(path)?;
    let content_hash = Sha256Digest::from_bytes(Sha256::digest(&*bytes).into());
    let table = read_dataset(&bytes).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(LoadedDataset {
        table,
        content_hash,
    })
}

fn profile(dataset: &LoadedDataset) -> DatasetProfile {
    profile_table(
        &dataset.table,
        dataset.content_hash,
        DEFAULT_LOW_N_THRESHOLD,
    )
}

/// Reads a spec file: a bare spec, or an object with a `spec` member (the output of `spec draft`).
pub(crate) fn read_spec(path: &Path) -> anyhow::Result<PlotSpec> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let spec = match value.get("spec") {
        Some(inner) => inner.clone(),
        None => value,
    };
    serde_json::from_value(spec).with_context(|| format!("{} is not a plot spec", path.display()))
}

/// Runs `adamviz spec …`.
pub fn run_spec(command: SpecCommand) -> anyhow::Result<()> {
    match command {
        SpecCommand::Draft { file, question } => {
            let dataset = load(&file)?;
            let profile = profile(&dataset);
            let draft = draft_spec(&question, &profile, &dataset.table)?;
            println!("{}", serde_json::to_string_pretty(&draft)?);
            if !draft.open_questions.is_empty() {
                eprintln!(
                    "open questions (answer with spec confirm --set QUESTION=ANSWER): {}",
                    draft.open_questions.join(", ")
                );
            }
            Ok(())
        }
        SpecCommand::Confirm {
            file,
            draft,
            answers,
        } => {
            let dataset = load(&file)?;
            let profile = profile(&dataset);
            let mut spec = read_spec(&draft)?;
            let mut parsed = Vec::new();
            for answer in &answers {
                let Some((id, value)) = answer.split_once('=') else {
                    bail!("--set {answer:?}: expected QUESTION=ANSWER, e.g. --set y_scale=fixed");
                };
                parsed.push((id, value));
            }
            // Unknown ids first, then answers in question order (a variable before its levels).
            for (id, _) in &parsed {
                if !QUESTION_IDS.contains(id) {
                    bail!(
                        "--set {id}=…: there is no confirmation question {id:?}; the questions are: {}",
                        QUESTION_IDS.join(", ")
                    );
                }
            }
            for id in QUESTION_IDS {
                for (_, value) in parsed.iter().filter(|(given, _)| *given == id) {
                    apply_text_answer(&mut spec, &profile, id, value)?;
                }
            }
            match confirm_spec(&spec, &dataset.table, dataset.content_hash) {
                Ok(confirmed) => {
                    println!("{}", serde_json::to_string_pretty(&confirmed)?);
                    eprintln!("spec hash: {}", confirmed.spec_hash()?);
                    Ok(())
                }
                Err(errors) => {
                    let mut lines: Vec<String> =
                        errors.iter().map(|e| format!("  - {e}")).collect();
                    let about_records = errors.iter().any(|e| {
                        matches!(
                            e,
                            SpecError::SeveralRecordsPerSubjectVisit { .. }
                                | SpecError::Unanswered {
                                    question: "records_per_subject_visit",
                                    ..
                                }
                        )
                    });
                    if about_records {
                        lines.push(records_choices(&spec, &profile, &dataset.table));
                    }
                    bail!(
                        "the spec cannot be confirmed ({} problems):\n{}",
                        errors.len(),
                        lines.join("\n")
                    )
                }
            }
        }
    }
}

/// The answers "Which record per subject and visit?" allows for `spec`, one per line.
fn records_choices(spec: &PlotSpec, profile: &DatasetProfile, table: &Table) -> String {
    let (questions, _) = questions_for(spec, profile, table);
    let options = questions.iter().find_map(|q| match &q.allowed {
        AllowedAnswers::RecordChoice { options } => Some(options),
        _ => None,
    });
    let mut text = "answer with --set records_per_subject_visit=ANSWER, one of:".to_owned();
    for option in options.into_iter().flatten() {
        text.push_str(&format!(
            "\n      {}  ({})",
            option.answer, option.description
        ));
        // The answers that keep the same records, under the one offered.
        if let Some(aliases) = option.aliases_in_words() {
            text.push_str(&format!("\n          {aliases}"));
        }
    }
    text
}

/// Runs `adamviz snapshot`.
pub fn run_snapshot(args: SnapshotArgs) -> anyhow::Result<()> {
    let dataset = load(&args.file)?;
    let spec = read_spec(&args.spec)?;
    if spec.dataset_content_hash != dataset.content_hash {
        bail!(
            "the spec is for dataset {}, but {} hashes to {}",
            spec.dataset_content_hash,
            args.file.display(),
            dataset.content_hash
        );
    }
    let snapshot = take_snapshot(&spec, &dataset.table)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let csv_path = args.out.join("snapshot.csv");
    let json_path = args.out.join("snapshot.json");
    let mut csv = Vec::new();
    write_csv(&snapshot, &mut csv)?;
    std::fs::write(&csv_path, csv)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let mut canonical = Vec::new();
    write_canonical(&snapshot, &mut canonical)?;
    std::fs::write(&json_path, canonical)
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    println!("snapshot hash: {}", snapshot_hash(&snapshot));
    println!("records: {}", snapshot.rows.len());
    println!("spec hash: {}", spec.spec_hash()?);
    println!("wrote {} and {}", csv_path.display(), json_path.display());
    Ok(())
}
