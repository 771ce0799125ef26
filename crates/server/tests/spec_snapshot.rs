//! Question → draft → confirmed spec → snapshot, on the CDISC pilot's ADLBC and on generated
//! data: the matcher's choices, the precise validation errors, the snapshot's invariances and
//! its encodings (canonical JSON against serde_jcs, CSV read back by real R).

use std::{collections::HashSet, path::PathBuf, process::Command, sync::OnceLock};

use adamviz_engine::ingest::{
    confirm::confirm_spec,
    profile::profile_table,
    read_dataset,
    snapshot::{
        snapshot_hash, take_snapshot, write_canonical, write_csv, ColumnClass, Snapshot,
        SnapshotColumn, SnapshotValue,
    },
    table::{Column, ColumnData, NumericCell, SasMissing, SourceFormat, Table},
};
use adamviz_engine::question::{answer::apply_text_answer, matcher::propose_draft};
use adamviz_model::{
    digest::Sha256Digest,
    profile::DatasetProfile,
    spec::{PlotSpec, SpecState},
};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

struct Pilot {
    table: Table,
    hash: Sha256Digest,
    profile: DatasetProfile,
}

fn pilot() -> &'static Pilot {
    static PILOT: OnceLock<Pilot> = OnceLock::new();
    PILOT.get_or_init(|| {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("../shared/data/adlbc.xpt");
        let bytes = std::fs::read(&path).expect("the public test data ../shared/data/adlbc.xpt");
        let hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
        let table = read_dataset(&bytes).unwrap();
        let profile = profile_table(&table, hash, 5);
        Pilot {
            table,
            hash,
            profile,
        }
    })
}

fn draft(question: &str) -> PlotSpec {
    let p = pilot();
    adamviz_engine::ingest::draft::draft_spec(question, &p.profile, &p.table)
        .unwrap()
        .spec
}

fn confirmed(question: &str) -> PlotSpec {
    let p = pilot();
    confirm_spec(&draft(question), &p.table, p.hash).unwrap()
}

/// Subjects with a value per (treatment, visit) in a snapshot.
fn subjects_per_cell(snapshot: &Snapshot, treatment: &str, visit: &str) -> usize {
    let mut subjects: Vec<&str> = snapshot
        .rows
        .iter()
        .filter(|row| {
            row[1] == SnapshotValue::Text(treatment.into())
                && row[2] == SnapshotValue::Text(visit.into())
                && matches!(row.last(), Some(SnapshotValue::Number(_)))
        })
        .map(|row| match &row[0] {
            SnapshotValue::Text(s) => &**s,
            other => panic!("{other:?}"),
        })
        .collect();
    subjects.sort_unstable();
    subjects.dedup();
    subjects.len()
}

#[test]
fn alt_over_time_by_arm_matches_the_pilot_counts() {
    let (spec, notes) = propose_draft("ALT over time by arm", &pilot().profile).unwrap();
    assert_eq!(spec.state, SpecState::Draft);
    assert_eq!(spec.parameter.as_ref().unwrap().value, "ALT");
    assert_eq!(spec.treatment.column, "TRTA");
    assert_eq!(
        spec.treatment.levels,
        ["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"]
    );
    assert_eq!(spec.value_column, "AVAL");
    assert_eq!(spec.unit.as_deref(), Some("U/L"));
    assert_eq!(
        spec.visit.visits.first().map(String::as_str),
        Some("Baseline")
    );
    assert_eq!(
        spec.visit.visits.last().map(String::as_str),
        Some("Week 26")
    );
    assert!(
        !spec.visit.visits.iter().any(|v| v.contains("End of")),
        "{:?}",
        spec.visit.visits
    );
    let parameter_note = notes.iter().find(|n| n.field == "parameter").unwrap();
    assert_eq!(parameter_note.words, ["alt"]);

    let spec = confirmed("ALT over time by arm");
    let snapshot = take_snapshot(&spec, &pilot().table).unwrap();
    // DESIGN §4: ALT's N per arm falls from 86/84/82 at baseline to 57/27/25 at week 26.
    assert_eq!(subjects_per_cell(&snapshot, "Placebo", "Baseline"), 86);
    assert_eq!(
        subjects_per_cell(&snapshot, "Xanomeline High Dose", "Baseline"),
        84
    );
    assert_eq!(
        subjects_per_cell(&snapshot, "Xanomeline Low Dose", "Baseline"),
        82
    );
    assert_eq!(subjects_per_cell(&snapshot, "Placebo", "Week 26"), 57);
    assert_eq!(
        subjects_per_cell(&snapshot, "Xanomeline High Dose", "Week 26"),
        27
    );
    assert_eq!(
        subjects_per_cell(&snapshot, "Xanomeline Low Dose", "Week 26"),
        25
    );
}

#[test]
fn change_from_baseline_in_creatinine_uses_chg_and_leaves_out_baseline() {
    let (spec, notes) =
        propose_draft("change from baseline in creatinine", &pilot().profile).unwrap();
    assert_eq!(spec.parameter.as_ref().unwrap().value, "CREAT");
    assert_eq!(spec.value_column, "CHG");
    assert!(!spec.visit.visits.contains(&"Baseline".to_owned()));
    assert!(
        spec.title.starts_with("Change from baseline in Creatinine"),
        "{}",
        spec.title
    );
    assert_eq!(
        notes.iter().find(|n| n.field == "parameter").unwrap().words,
        ["creatinine"]
    );
    assert_eq!(
        notes
            .iter()
            .find(|n| n.field == "value_variable")
            .unwrap()
            .words,
        ["change"]
    );
}

#[test]
fn albumin_week_12_vs_baseline_keeps_just_those_visits_and_not_the_flag_that_drops_baseline() {
    let (spec, notes) = propose_draft("albumin week 12 vs baseline", &pilot().profile).unwrap();
    assert_eq!(spec.parameter.as_ref().unwrap().value, "ALB");
    assert_eq!(spec.visit.visits, ["Baseline", "Week 12"]);
    assert!(
        spec.filters.iter().all(|f| f.column != "ANL01FL"),
        "{:?}",
        spec.filters
    );
    let visits = notes.iter().find(|n| n.field == "visits").unwrap();
    assert_eq!(visits.words, ["baseline", "week 12"]);
}

#[test]
fn an_empty_question_is_refused() {
    let err = propose_draft("   ", &pilot().profile).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the question is empty: say what to plot, e.g. \"ALT over time by arm\""
    );
}

#[test]
fn each_invalid_choice_gets_its_precise_error() {
    let p = pilot();
    type Case = (&'static [(&'static str, &'static str)], &'static str);
    let cases: Vec<Case> = vec![
        (
            &[("treatment_variable", "TRTX")],
            "treatment_variable: there is no column \"TRTX\" in the dataset",
        ),
        (
            &[("treatment_levels", "Placebo|Dose 99")],
            "treatment_levels: \"Dose 99\" does not occur in column \"TRTA\"",
        ),
        (
            &[("treatment_levels", "Placebo|Placebo")],
            "treatment_levels: \"Placebo\" is listed twice",
        ),
        (
            &[("visits", "Baseline|Week 99")],
            "visits: \"Week 99\" does not occur in column \"AVISIT\"",
        ),
        (
            &[("value_variable", "PARAM")],
            "value_variable: column \"PARAM\" is character, but must be numeric",
        ),
        (
            &[("parameter", "NOPE")],
            "parameter: \"NOPE\" does not occur in column \"PARAMCD\"",
        ),
        (
            &[("unit", "mg/dL")],
            "unit \"mg/dL\" contradicts the data, which records ALT in U/L",
        ),
        (
            &[("filters", r#"{"ANL01FL":["Y"]}"#), ("visits", "Baseline")],
            "the parameter, filters, treatment levels and visits together leave no record to plot",
        ),
        (
            &[("filters", r#"{"SAFFL":["maybe"]}"#)],
            "filters: \"maybe\" does not occur in column \"SAFFL\"",
        ),
        (&[("visits", "")], "visits: at least one is needed"),
    ];
    for (answers, expected) in cases {
        let mut spec = draft("ALT over time by arm");
        for (id, answer) in answers {
            apply_text_answer(&mut spec, &p.profile, id, answer).unwrap();
        }
        let errors = confirm_spec(&spec, &p.table, p.hash).unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages, [expected], "{answers:?}");
    }
}

#[test]
fn a_spec_for_other_data_is_refused() {
    let p = pilot();
    let spec = draft("ALT over time by arm");
    let other = Sha256Digest::from_bytes([1; 32]);
    let errors = confirm_spec(&spec, &p.table, other).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .to_string()
            .starts_with("the spec is for dataset b9f6b510"),
        "{}",
        errors[0]
    );
}

#[test]
fn the_spec_hash_is_the_sha256_of_the_rfc8785_form_and_changes_with_any_choice() {
    let spec = confirmed("ALT over time by arm");
    let canonical = serde_jcs::to_vec(&spec).unwrap();
    assert_eq!(
        spec.spec_hash().unwrap(),
        Sha256Digest::from_bytes(Sha256::digest(&canonical).into())
    );
    assert_eq!(
        spec.spec_hash().unwrap(),
        confirmed("ALT over time by arm").spec_hash().unwrap()
    );
    let mut other = spec.clone();
    other.title.push(' ');
    assert_ne!(other.spec_hash().unwrap(), spec.spec_hash().unwrap());
    // The JSON form round-trips and refuses unknown fields.
    let json = serde_json::to_string(&spec).unwrap();
    assert_eq!(serde_json::from_str::<PlotSpec>(&json).unwrap(), spec);
    let extra = json.replacen('{', "{\"surprise\":1,", 1);
    assert!(serde_json::from_str::<PlotSpec>(&extra).is_err());
}

/// A generated record: subject number, arm index, visit index, value.
type GenRow = (u8, u8, u8, Option<f64>);

/// A small ADaM-like table built from generated rows.
fn generated_table(rows: &[GenRow]) -> Table {
    let arms = ["Placebo", "Drug \"A\"", "Drög\\B"];
    let visits = ["  Baseline", "Week 1", "Week 2"];
    let text = |f: &dyn Fn(&GenRow) -> String| {
        ColumnData::Character(rows.iter().map(|r| Some(f(r))).collect())
    };
    Table {
        source_format: SourceFormat::Csv,
        dataset_name: None,
        dataset_label: None,
        row_count: rows.len(),
        columns: vec![
            Column {
                declared: Default::default(),
                name: "USUBJID".into(),
                label: None,
                format: None,
                data: text(&|r| format!("S{:02}", r.0)),
            },
            Column {
                declared: Default::default(),
                name: "PARAMCD".into(),
                label: None,
                format: None,
                data: text(&|_| "ALT".into()),
            },
            Column {
                declared: Default::default(),
                name: "TRTA".into(),
                label: None,
                format: None,
                data: text(&|r| arms[r.1 as usize].into()),
            },
            Column {
                declared: Default::default(),
                name: "AVISIT".into(),
                label: None,
                format: None,
                data: text(&|r| visits[r.2 as usize].into()),
            },
            Column {
                declared: Default::default(),
                name: "AVISITN".into(),
                label: None,
                format: None,
                data: ColumnData::Numeric(
                    rows.iter()
                        .map(|r| NumericCell::Value(f64::from(r.2)))
                        .collect(),
                ),
            },
            Column {
                declared: Default::default(),
                name: "AVAL".into(),
                label: None,
                format: None,
                data: ColumnData::Numeric(
                    rows.iter()
                        .map(|r| {
                            r.3.map_or(NumericCell::Missing(SasMissing::Dot), NumericCell::Value)
                        })
                        .collect(),
                ),
            },
        ],
    }
}

fn generated_spec(table: &Table) -> PlotSpec {
    let hash = Sha256Digest::from_bytes([7; 32]);
    let profile = profile_table(table, hash, 5);
    let (mut spec, _) = propose_draft("ALT by visit", &profile).unwrap();
    // Generated values may all be missing (no proposal then); this spec is about the snapshot.
    spec.parameter = Some(adamviz_model::spec::ParameterChoice {
        column: "PARAMCD".into(),
        value: "ALT".into(),
        label: None,
    });
    spec.treatment.levels = vec!["Placebo".into(), "Drug \"A\"".into(), "Drög\\B".into()];
    spec.visit.visits = vec!["Baseline".into(), "Week 1".into(), "Week 2".into()];
    spec.records_per_subject_visit = Some(adamviz_model::spec::RecordsPerSubjectVisit::One);
    spec.state = SpecState::Confirmed;
    spec
}

fn permuted(table: &Table, row_order: &[usize], rotate_columns: usize) -> Table {
    let mut columns: Vec<Column> = table
        .columns
        .iter()
        .map(|c| Column {
            declared: Default::default(),
            data: match &c.data {
                ColumnData::Character(v) => {
                    ColumnData::Character(row_order.iter().map(|&i| v.get(i)).collect())
                }
                ColumnData::Numeric(v) => {
                    ColumnData::Numeric(row_order.iter().map(|&i| v.get(i)).collect())
                }
            },
            ..c.clone()
        })
        .collect();
    let len = columns.len();
    columns.rotate_left(rotate_columns % len);
    Table {
        columns,
        ..table.clone()
    }
}

fn row_strategy() -> impl Strategy<Value = Vec<GenRow>> {
    proptest::collection::vec(
        (
            0u8..20,
            0u8..3,
            0u8..3,
            proptest::option::of(-1.0e6f64..1.0e6),
        ),
        1..60,
    )
}

proptest! {
    #[test]
    fn shuffling_rows_or_columns_leaves_the_snapshot_hash_unchanged(
        rows in row_strategy(),
        seed in any::<u64>(),
        rotate in 0usize..6,
    ) {
        let table = generated_table(&rows);
        let spec = generated_spec(&table);
        let original = snapshot_hash(&take_snapshot(&spec, &table).unwrap());
        let mut order: Vec<usize> = (0..rows.len()).collect();
        // A deterministic shuffle from the seed.
        let mut state = seed | 1;
        for i in (1..order.len()).rev() {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let shuffled = permuted(&table, &order, rotate);
        prop_assert_eq!(snapshot_hash(&take_snapshot(&spec, &shuffled).unwrap()), original);
    }

    #[test]
    fn changing_one_selected_value_changes_the_snapshot_hash(
        rows in row_strategy(),
        pick in any::<prop::sample::Index>(),
        delta in 1.0e-3f64..10.0,
    ) {
        let table = generated_table(&rows);
        let spec = generated_spec(&table);
        let original = snapshot_hash(&take_snapshot(&spec, &table).unwrap());
        let mut changed = rows.clone();
        let i = pick.index(rows.len());
        changed[i].3 = Some(changed[i].3.unwrap_or(0.0) + delta);
        let table = generated_table(&changed);
        prop_assert_ne!(snapshot_hash(&take_snapshot(&spec, &table).unwrap()), original);
    }

    #[test]
    fn the_streamed_canonical_encoding_equals_serde_jcs(
        texts in proptest::collection::vec("\\PC{0,12}|[\"\\\\\n\t\u{1}\u{7f}]{1,4}", 1..20),
        numbers in proptest::collection::vec(proptest::option::of(prop_oneof![
            any::<f64>().prop_filter("finite", |v| v.is_finite()),
            // Whole numbers take their own path: small ones, ones near 2^53 and beyond it.
            (-100_000i64..100_000).prop_map(|v| v as f64),
            (-(1i64 << 54)..(1i64 << 54)).prop_map(|v| v as f64),
            (-1e22f64..1e22).prop_map(f64::trunc),
            (-1000i64..1000).prop_map(|v| v as f64 / 8.0),
        ]), 1..20),
    ) {
        let snapshot = Snapshot {
            columns: vec![
                SnapshotColumn { name: "T \"x\"".into(), class: ColumnClass::Character, role: "subject" },
                SnapshotColumn { name: "N".into(), class: ColumnClass::Numeric, role: "value" },
            ],
            rows: texts.iter().zip(numbers.iter().cycle()).map(|(t, n)| vec![
                SnapshotValue::Text(t.as_str().into()),
                n.map_or(SnapshotValue::Missing, SnapshotValue::Number),
            ]).collect(),
        };
        let mut streamed = Vec::new();
        write_canonical(&snapshot, &mut streamed).unwrap();
        let value = serde_json::json!({
            "version": "snapshot-v1",
            "columns": snapshot.columns.iter().map(|c| serde_json::json!({
                "name": c.name, "class": c.class.as_str(), "role": c.role,
            })).collect::<Vec<_>>(),
            "rows": snapshot.rows.iter().map(|r| r.iter().map(|v| match v {
                SnapshotValue::Text(t) => serde_json::json!(&**t),
                SnapshotValue::Number(n) => serde_json::json!(n),
                SnapshotValue::Missing => serde_json::Value::Null,
            }).collect::<Vec<_>>()).collect::<Vec<_>>(),
        });
        let reference = serde_jcs::to_vec(&value).unwrap();
        prop_assert_eq!(String::from_utf8(streamed).unwrap(), String::from_utf8(reference).unwrap());
    }
}

/// A snapshot well above the size at which encoding and hashing run on separate threads;
/// `seed` varies its values.
fn large_snapshot(seed: u32) -> Snapshot {
    let rows: Vec<Vec<SnapshotValue>> = (0..50_000)
        .map(|i| {
            vec![
                SnapshotValue::Text(format!("01-{:04}", (i + seed) % 997).into()),
                SnapshotValue::Text(if i % 3 == 0 { "Placebo \"P\"" } else { "Dose" }.into()),
                if i % 11 == 0 {
                    SnapshotValue::Missing
                } else {
                    SnapshotValue::Number(f64::from(i + seed) * 0.37)
                },
            ]
        })
        .collect();
    Snapshot {
        columns: vec![
            SnapshotColumn {
                name: "USUBJID".into(),
                class: ColumnClass::Character,
                role: "subject",
            },
            SnapshotColumn {
                name: "TRTA".into(),
                class: ColumnClass::Character,
                role: "treatment",
            },
            SnapshotColumn {
                name: "AVAL".into(),
                class: ColumnClass::Numeric,
                role: "value",
            },
        ],
        rows,
    }
}

fn sha256_of_canonical(snapshot: &Snapshot) -> Sha256Digest {
    let mut bytes = Vec::new();
    write_canonical(snapshot, &mut bytes).unwrap();
    Sha256Digest::from_bytes(Sha256::digest(&bytes).into())
}

#[test]
fn a_large_snapshot_hashed_on_two_threads_hashes_its_canonical_bytes() {
    let snapshot = large_snapshot(0);
    let mut bytes = Vec::new();
    write_canonical(&snapshot, &mut bytes).unwrap();
    assert!(bytes.len() > 1_000_000, "{} bytes", bytes.len());
    assert_eq!(snapshot_hash(&snapshot), sha256_of_canonical(&snapshot));
    // And the bytes are the canonical JSON of the same document.
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(serde_jcs::to_vec(&value).unwrap(), bytes);
}

#[test]
fn large_snapshots_hashed_at_the_same_time_each_get_their_own_hash() {
    // One of them has the hashing thread; the others hash on their own thread meanwhile.
    let snapshots: Vec<Snapshot> = (0..4).map(large_snapshot).collect();
    let expected: Vec<Sha256Digest> = snapshots.iter().map(sha256_of_canonical).collect();
    for _ in 0..3 {
        let hashes: Vec<Sha256Digest> = std::thread::scope(|scope| {
            let running: Vec<_> = snapshots
                .iter()
                .map(|snapshot| scope.spawn(|| snapshot_hash(snapshot)))
                .collect();
            running.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(hashes, expected);
    }
    assert_eq!(expected.iter().collect::<HashSet<_>>().len(), 4);
}

/// Runs R on the CSV and returns, per column, the values R read (numbers as %.17g, NA as null).
fn read_back_with_r(csv: &[u8], classes: &[&str]) -> serde_json::Value {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("snapshot.csv");
    std::fs::write(&path, csv).unwrap();
    let classes = classes
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(",");
    let script = format!(
        r#"d <- read.csv(commandArgs(TRUE)[1], colClasses = c({classes}), na.strings = "",
             check.names = FALSE, encoding = "UTF-8", stringsAsFactors = FALSE)
           out <- lapply(d, function(x) if (is.numeric(x)) ifelse(is.na(x), NA, sprintf("%.17g", x)) else x)
           names(out) <- NULL
           cat(jsonlite::toJSON(list(names = names(d), columns = out), auto_unbox = FALSE, na = "null"))"#
    );
    let output = Command::new("Rscript")
        .args(["--vanilla", "-e", &script])
        .arg(&path)
        .output()
        .expect("Rscript must be installed (make test installs it): the CSV is checked by real R");
    assert!(
        output.status.success(),
        "R failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn r_reads_the_snapshot_csv_back_to_the_same_values() {
    let hostile = [
        "plain",
        "with \"quotes\"",
        "back\\slash",
        "new\nline",
        "\"); system(\"id\"); (\"",
        "Grüße 🙂 µg/L",
        "NA",
        "  padded  ",
        "comma, inside",
        "tab\there",
    ];
    let numbers = [
        0.1,
        -0.0,
        1e-300,
        1.7976931348623157e308,
        123_456_789.123_456_79,
        2.0f64.powi(60),
        -5e-324,
        1e21,
        1e-7,
        3.0,
    ];
    let snapshot = Snapshot {
        columns: vec![
            SnapshotColumn {
                name: "we\"ird name".into(),
                class: ColumnClass::Character,
                role: "subject",
            },
            SnapshotColumn {
                name: "AVAL".into(),
                class: ColumnClass::Numeric,
                role: "value",
            },
        ],
        rows: hostile
            .iter()
            .zip(numbers)
            .map(|(t, n)| vec![SnapshotValue::Text((*t).into()), SnapshotValue::Number(n)])
            .chain(std::iter::once(vec![
                SnapshotValue::Text("missing value".into()),
                SnapshotValue::Missing,
            ]))
            .collect(),
    };
    let mut csv = Vec::new();
    write_csv(&snapshot, &mut csv).unwrap();
    let back = read_back_with_r(&csv, &["character", "numeric"]);
    assert_eq!(back["names"], serde_json::json!(["we\"ird name", "AVAL"]));
    let texts: Vec<String> = serde_json::from_value(back["columns"][0].clone()).unwrap();
    let expected_texts: Vec<String> = hostile
        .iter()
        .map(|s| (*s).to_owned())
        .chain(["missing value".to_owned()])
        .collect();
    assert_eq!(texts, expected_texts);
    let values: Vec<Option<String>> = serde_json::from_value(back["columns"][1].clone()).unwrap();
    for (i, number) in numbers.iter().enumerate() {
        let read: f64 = values[i].as_deref().unwrap().parse().unwrap();
        assert_eq!(
            read.to_bits(),
            if *number == 0.0 {
                0.0f64.to_bits()
            } else {
                number.to_bits()
            },
            "row {i}: {number}"
        );
    }
    assert_eq!(values[numbers.len()], None, "missing stays missing");
}

#[test]
fn r_reads_the_pilot_alt_snapshot_back_exactly() {
    let spec = confirmed("ALT over time by arm");
    let snapshot = take_snapshot(&spec, &pilot().table).unwrap();
    let mut csv = Vec::new();
    write_csv(&snapshot, &mut csv).unwrap();
    let back = read_back_with_r(
        &csv,
        &["character", "character", "character", "numeric", "numeric"],
    );
    let values: Vec<Option<String>> = serde_json::from_value(back["columns"][4].clone()).unwrap();
    assert_eq!(values.len(), snapshot.rows.len());
    for (row, read) in snapshot.rows.iter().zip(values) {
        match (&row[4], read) {
            (SnapshotValue::Number(n), Some(text)) => assert_eq!(text.parse::<f64>().unwrap(), *n),
            (SnapshotValue::Missing, None) => {}
            (expected, read) => panic!("{expected:?} read back as {read:?}"),
        }
    }
}
