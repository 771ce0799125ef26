//! Shared by the R-side tests: specs and snapshots built directly (any names, levels, units
//! and titles), the pilot ALT spec, and a runner configured for tests.
#![allow(dead_code)]

use std::{path::PathBuf, sync::Arc, sync::OnceLock};

use adamviz_engine::compiler::{compile_boxplot_script, CompiledScript, ImageSize};
use adamviz_engine::ingest::{
    confirm::confirm_spec,
    profile::profile_table,
    read_dataset,
    snapshot::{snapshot_hash, ColumnClass, Snapshot, SnapshotColumn, SnapshotValue},
};
use adamviz_engine::runner::{RunRequest, RunResult, Runner, RunnerConfig};
use adamviz_model::{
    digest::Sha256Digest,
    spec::{
        LowNAction, LowNPolicy, ParameterChoice, PlotSpec, RecordsPerSubjectVisit, SpecState,
        TreatmentChoice, VisitChoice, VisitOrderSource, YScale,
    },
};
use adamviz_services::prepare::{prepare_execution, PreparedExecution};
use sha2::{Digest, Sha256};

/// Every text a generated spec carries.
#[derive(Debug, Clone)]
pub struct SpecTexts {
    pub subject_column: String,
    pub treatment_column: String,
    pub visit_column: String,
    pub value_column: String,
    pub levels: Vec<String>,
    pub visits: Vec<String>,
    pub unit: Option<String>,
    pub title: String,
    pub question: String,
}

impl SpecTexts {
    pub fn plain() -> Self {
        Self {
            subject_column: "USUBJID".into(),
            treatment_column: "TRTA".into(),
            visit_column: "AVISIT".into(),
            value_column: "AVAL".into(),
            levels: vec!["Placebo".into(), "Active".into()],
            visits: vec!["Baseline".into(), "Week 4".into(), "Week 8".into()],
            unit: Some("mg/dL".into()),
            title: "Glucose by visit".into(),
            question: "glucose over time".into(),
        }
    }
}

/// A confirmed spec over the columns of `texts`.
pub fn spec_from(texts: &SpecTexts, y_scale: YScale, below: LowNAction) -> PlotSpec {
    PlotSpec {
        state: SpecState::Confirmed,
        dataset_content_hash: Sha256Digest::from_bytes([7; 32]),
        question: texts.question.clone(),
        parameter: Some(ParameterChoice {
            column: "PARAMCD".into(),
            value: "GLUC".into(),
            label: Some("Glucose".into()),
        }),
        filters: Vec::new(),
        records_per_subject_visit: Some(RecordsPerSubjectVisit::One),
        treatment: TreatmentChoice {
            column: texts.treatment_column.clone(),
            levels: texts.levels.clone(),
        },
        value_column: texts.value_column.clone(),
        subject_column: texts.subject_column.clone(),
        visit: VisitChoice {
            column: texts.visit_column.clone(),
            order_source: VisitOrderSource::AsListed,
            visits: texts.visits.clone(),
        },
        y_scale,
        unit: texts.unit.clone(),
        low_n: LowNPolicy {
            threshold: 3,
            below,
        },
        title: texts.title.clone(),
    }
}

/// Records for `texts`: per treatment × visit, five subjects, except that the last visit of
/// the last treatment has two (a low-N cell) and one record there has no value.
pub fn snapshot_from(texts: &SpecTexts) -> Snapshot {
    let text = |s: &str| SnapshotValue::Text(Arc::from(s));
    let columns = vec![
        SnapshotColumn {
            name: texts.subject_column.clone(),
            class: ColumnClass::Character,
            role: "subject",
        },
        SnapshotColumn {
            name: texts.treatment_column.clone(),
            class: ColumnClass::Character,
            role: "treatment",
        },
        SnapshotColumn {
            name: texts.visit_column.clone(),
            class: ColumnClass::Character,
            role: "visit",
        },
        SnapshotColumn {
            name: texts.value_column.clone(),
            class: ColumnClass::Numeric,
            role: "value",
        },
    ];
    let mut rows = Vec::new();
    for (t, level) in texts.levels.iter().enumerate() {
        for (v, visit) in texts.visits.iter().enumerate() {
            let last_cell = t + 1 == texts.levels.len() && v + 1 == texts.visits.len();
            let subjects = if last_cell { 3 } else { 5 };
            for s in 0..subjects {
                let value = if last_cell && s == 2 {
                    SnapshotValue::Missing
                } else {
                    SnapshotValue::Number(
                        80.0 + 7.5 * t as f64 + 3.25 * v as f64 + (s * s) as f64 * 1.1,
                    )
                };
                rows.push(vec![
                    text(&format!("S-{t}-{s}")),
                    text(level),
                    text(visit),
                    value,
                ]);
            }
        }
    }
    Snapshot { columns, rows }
}

/// A compiled script for `spec` over `snapshot`, and the runner request for it.
pub fn compiled(spec: &PlotSpec, snapshot: Snapshot) -> (CompiledScript, RunRequest) {
    let hash = snapshot_hash(&snapshot);
    let image = ImageSize::default();
    let script = compile_boxplot_script(spec, &snapshot.columns, &hash, image).unwrap();
    let request = RunRequest {
        script: script.bytes.clone(),
        expected_script_hash: script.script_hash,
        snapshot: Arc::new(snapshot),
        expected_snapshot_hash: hash,
        image,
        report: None,
    };
    (script, request)
}

/// `../shared/data/adlbc.xpt` with the ALT-by-arm spec, prepared for execution.
pub fn pilot_alt() -> &'static (PlotSpec, PreparedExecution) {
    static PILOT: OnceLock<(PlotSpec, PreparedExecution)> = OnceLock::new();
    PILOT.get_or_init(|| {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("../shared/data/adlbc.xpt");
        let bytes = std::fs::read(&path).expect("the public test data ../shared/data/adlbc.xpt");
        let hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
        let table = read_dataset(&bytes).unwrap();
        let profile = profile_table(&table, hash, 5);
        let draft =
            adamviz_engine::ingest::draft::draft_spec("ALT over time by arm", &profile, &table)
                .unwrap()
                .spec;
        let spec = confirm_spec(&draft, &table, hash).unwrap();
        let prepared = prepare_execution(&spec, &table, &hash, ImageSize::default()).unwrap();
        (spec, prepared)
    })
}

/// A runner configuration for tests: work directories under a temp dir of the test's own.
pub fn test_config(work_root: &std::path::Path) -> RunnerConfig {
    let mut config = RunnerConfig::new();
    config.work_root = work_root.to_path_buf();
    config
}

/// `Rscript --vanilla -e CODE ARGS…`, which must succeed; its stdout.
pub fn rscript(code: &str, args: &[&std::path::Path]) -> String {
    let output = std::process::Command::new("Rscript")
        .arg("--vanilla")
        .arg("-e")
        .arg(code)
        .args(args)
        .output()
        .expect("Rscript must be installed (make tools installs r-base-core)");
    assert!(
        output.status.success(),
        "Rscript failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A request that runs `script` (R code the harness sources) on a small snapshot.
pub fn script_request(script: &str) -> RunRequest {
    let snapshot = snapshot_from(&SpecTexts::plain());
    let hash = snapshot_hash(&snapshot);
    RunRequest {
        script: script.as_bytes().to_vec(),
        expected_script_hash: Sha256Digest::from_bytes(Sha256::digest(script.as_bytes()).into()),
        snapshot: Arc::new(snapshot),
        expected_snapshot_hash: hash,
        image: ImageSize::default(),
        report: None,
    }
}

/// Runs `request` on a runner with `config`, in a runtime of its own.
pub fn run_with(config: RunnerConfig, request: RunRequest) -> RunResult {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async { Runner::new(config).run(request).await })
}
