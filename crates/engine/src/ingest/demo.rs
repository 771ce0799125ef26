//! The synthetic demo dataset: an ADLB-like lab dataset generated here from a fixed seed, about
//! no real person (classification `synthetic`). Used on first run and in tests; the shipped copy
//! `public/demo/adlb-synthetic.xpt` is this generator's output, which a test checks.

use super::table::{Column, ColumnData, NumericCell, SasMissing, SourceFormat, Table};

/// SplitMix64: a tiny, fully specified generator, so the data never changes with a crate update.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Approximately standard normal: the sum of twelve uniforms minus six (no libm calls, so
    /// every platform produces the same bits).
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
    }
}

const ARMS: [(&str, f64); 3] = [
    ("Placebo", 0.0),
    ("Drug Low Dose", 54.0),
    ("Drug High Dose", 81.0),
];
const VISITS: [(&str, f64, f64); 5] = [
    ("Baseline", 0.0, 0.0),
    ("Week 2", 2.0, 14.0),
    ("Week 4", 4.0, 28.0),
    ("Week 8", 8.0, 56.0),
    ("Week 12", 12.0, 84.0),
];
/// Code, label, typical value, spread, per-dose-step drift per visit.
const PARAMETERS: [(&str, &str, f64, f64, f64); 4] = [
    ("ALT", "Alanine Aminotransferase (U/L)", 22.0, 7.0, 0.8),
    ("AST", "Aspartate Aminotransferase (U/L)", 24.0, 6.0, 0.5),
    ("CREAT", "Creatinine (umol/L)", 85.0, 15.0, 0.3),
    ("ALB", "Albumin (g/L)", 41.0, 3.0, -0.1),
];

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// Subjects per arm in the shipped demo dataset (`public/demo/adlb-synthetic.xpt`).
pub const DEMO_SUBJECTS_PER_ARM: usize = 20;

/// Generates the demo dataset with `subjects_per_arm` subjects in each of three arms.
pub fn generate_demo_table(subjects_per_arm: usize) -> Table {
    let mut rng = SplitMix64(0x000A_DA4D_1A95);
    let mut rows: Vec<[Cell; 16]> = Vec::new();
    for arm_index in 0..ARMS.len() {
        for subject in 1..=subjects_per_arm {
            subject_rows(&mut rng, &mut rows, arm_index, subject, subjects_per_arm);
        }
    }
    let columns = columns_of(&rows);
    Table {
        source_format: SourceFormat::Xpt,
        dataset_name: Some("ADLB".to_owned()),
        dataset_label: Some("Synthetic Laboratory Data (adamviz demo)".to_owned()),
        row_count: rows.len(),
        columns,
    }
}

/// The records of one subject of arm `arm_index`: every parameter at every visit up to a
/// random dropout, values drifting with the dose.
fn subject_rows(
    rng: &mut SplitMix64,
    rows: &mut Vec<[Cell; 16]>,
    arm_index: usize,
    subject: usize,
    subjects_per_arm: usize,
) {
    let (arm, dose) = &ARMS[arm_index];
    let usubjid = format!("DEMO-{}{subject:03}", arm_index + 1);
    let safety = if subject == subjects_per_arm {
        "N"
    } else {
        "Y"
    };
    // Drop out after a visit with a small chance, more often on the high dose.
    let dropout_visit = (1..VISITS.len())
        .find(|_| rng.uniform() < 0.06 + 0.03 * arm_index as f64)
        .unwrap_or(VISITS.len());
    let start_day = 19_000.0 + (rng.uniform() * 200.0).floor();
    for (code, label, typical, spread, drift) in PARAMETERS {
        let baseline = round1((typical + spread * rng.normal()).max(typical * 0.3));
        for (visit_index, (visit, visit_number, day)) in VISITS.iter().enumerate() {
            if visit_index >= dropout_visit {
                break;
            }
            let is_baseline = visit_index == 0;
            let value = if is_baseline {
                baseline
            } else {
                round1(
                    (baseline
                        + drift * dose / 27.0 * visit_index as f64
                        + spread * 0.5 * rng.normal())
                    .max(typical * 0.2),
                )
            };
            // One value in forty is not reported: a missing AVAL the plot must count.
            let reported = is_baseline || rng.uniform() >= 0.025;
            rows.push([
                Cell::Text("ADAMVIZ-DEMO".into()),
                Cell::Text(usubjid.clone()),
                Cell::Text((*arm).into()),
                Cell::Number(*dose),
                Cell::Text(safety.into()),
                Cell::Text(code.into()),
                Cell::Text(label.into()),
                Cell::Text((*visit).into()),
                Cell::Number(*visit_number),
                Cell::Number(start_day + day),
                if reported {
                    Cell::Number(value)
                } else {
                    Cell::Missing
                },
                Cell::Number(baseline),
                if is_baseline || !reported {
                    Cell::Missing
                } else {
                    Cell::Number(round1(value - baseline))
                },
                Cell::Text(if is_baseline { "Y" } else { "" }.into()),
                Cell::Text(if is_baseline { "" } else { "Y" }.into()),
                Cell::Text(
                    label
                        .rsplit('(')
                        .next()
                        .unwrap_or("")
                        .trim_end_matches(')')
                        .into(),
                ),
            ]);
        }
    }
}

/// The demo's columns: name, label, display format, numeric?
const COLUMNS: [(&str, &str, Option<&str>, bool); 16] = [
    ("STUDYID", "Study Identifier", None, false),
    ("USUBJID", "Unique Subject Identifier", None, false),
    ("TRTA", "Actual Treatment", None, false),
    ("TRTAN", "Actual Treatment (N)", None, true),
    ("SAFFL", "Safety Population Flag", None, false),
    ("PARAMCD", "Parameter Code", None, false),
    ("PARAM", "Parameter", None, false),
    ("AVISIT", "Analysis Visit", None, false),
    ("AVISITN", "Analysis Visit (N)", None, true),
    ("ADT", "Analysis Date", Some("DATE9."), true),
    ("AVAL", "Analysis Value", None, true),
    ("BASE", "Baseline Value", None, true),
    ("CHG", "Change from Baseline", None, true),
    ("ABLFL", "Baseline Record Flag", None, false),
    ("ANL01FL", "Analysis Record Flag 01", None, false),
    ("AVALU", "Analysis Value Unit", None, false),
];

/// The columns of the generated `rows`, as [`COLUMNS`] describes them.
fn columns_of(rows: &[[Cell; 16]]) -> Vec<Column> {
    COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (name, label, format, numeric))| {
            let data = if *numeric {
                ColumnData::Numeric(
                    rows.iter()
                        .map(|r| match &r[i] {
                            Cell::Number(v) => NumericCell::Value(*v),
                            _ => NumericCell::Missing(SasMissing::Dot),
                        })
                        .collect(),
                )
            } else {
                ColumnData::Character(
                    rows.iter()
                        .map(|r| match &r[i] {
                            Cell::Text(t) if !t.is_empty() => Some(t.as_str()),
                            _ => None,
                        })
                        .collect(),
                )
            };
            Column {
                declared: Default::default(),
                name: (*name).to_owned(),
                label: Some((*label).to_owned()),
                format: format.map(str::to_owned),
                data,
            }
        })
        .collect()
}

/// One generated value.
enum Cell {
    Text(String),
    Number(f64),
    Missing,
}
