//! The CSV and SAS XPORT readers on real public data (the CDISC pilot's ADLBC) and on data
//! made here, including round trips through the XPORT writer.

use std::path::PathBuf;

use adamviz_engine::ingest::{
    self,
    table::{Column, ColumnData, NumericCell, SasMissing, SourceFormat, Table},
    xpt::{ibm_to_numeric, numeric_to_ibm, read_xpt},
    xpt_writer::write_xpt,
};
use proptest::prelude::*;

/// `../shared/data/NAME`; the public test data must be there (CI copies shared/ beside the clone).
fn shared_data(name: &str) -> Vec<u8> {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("../shared/data")
        .join(name);
    std::fs::read(&path)
        .unwrap_or_else(|err| panic!("public test data {} is required: {err}", path.display()))
}

fn character(table: &Table, name: &str) -> Vec<Option<String>> {
    match &table
        .column(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .data
    {
        ColumnData::Character(values) => values.iter().map(|v| v.map(str::to_owned)).collect(),
        other => panic!("{name} is not character: {other:?}"),
    }
}

fn numeric(table: &Table, name: &str) -> Vec<NumericCell> {
    match &table
        .column(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .data
    {
        ColumnData::Numeric(values) => values.iter().collect(),
        other => panic!("{name} is not numeric: {other:?}"),
    }
}

#[test]
fn adlbc_xpt_is_read_exactly() {
    let table = ingest::read_dataset(&shared_data("adlbc.xpt")).expect("adlbc.xpt reads");
    assert_eq!(table.source_format, SourceFormat::Xpt);
    assert_eq!(table.row_count, 74_264);
    assert_eq!(table.columns.len(), 46);
    assert_eq!(table.dataset_name.as_deref(), Some("ADLBC"));
    for column in &table.columns {
        assert_eq!(column.data.len(), 74_264, "{}", column.name);
    }
    let first_names: Vec<&str> = table
        .columns
        .iter()
        .take(4)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(first_names, ["STUDYID", "SUBJID", "USUBJID", "TRTP"]);
    let label = |name: &str| table.column(name).unwrap().label.clone();
    assert_eq!(label("STUDYID").as_deref(), Some("Study Identifier"));
    assert_eq!(
        label("USUBJID").as_deref(),
        Some("Unique Subject Identifier")
    );
    assert_eq!(label("AVAL").as_deref(), Some("Analysis Value"));

    let trta = character(&table, "TRTA");
    let mut levels: Vec<&str> = trta.iter().flatten().map(String::as_str).collect();
    levels.sort_unstable();
    levels.dedup();
    assert_eq!(
        levels,
        ["Placebo", "Xanomeline High Dose", "Xanomeline Low Dose"]
    );

    // Known quirks of the pilot data (DESIGN §4): 36 parameters, right-aligned AVISIT labels,
    // unscheduled records without AVISITN.
    let paramcd = character(&table, "PARAMCD");
    let mut params: Vec<&str> = paramcd.iter().flatten().map(String::as_str).collect();
    params.sort_unstable();
    params.dedup();
    assert_eq!(params.len(), 36);
    assert!(character(&table, "AVISIT")
        .iter()
        .flatten()
        .any(|v| v.starts_with(' ')));
    let no_visit_number = numeric(&table, "AVISITN")
        .iter()
        .filter(|cell| matches!(cell, NumericCell::Missing(_)))
        .count();
    assert_eq!(no_visit_number, 1_482);
}

#[test]
fn adlbc_alt_values_are_plausible_and_dates_carry_their_format() {
    let table = ingest::read_dataset(&shared_data("adlbc.xpt")).unwrap();
    let paramcd = character(&table, "PARAMCD");
    let aval = numeric(&table, "AVAL");
    let alt: Vec<f64> = paramcd
        .iter()
        .zip(aval)
        .filter(|(code, _)| code.as_deref() == Some("ALT"))
        .filter_map(|(_, cell)| cell.value())
        .collect();
    assert!(!alt.is_empty());
    assert!(
        alt.iter()
            .all(|v| *v >= 0.0 && *v < 10_000.0 && v.fract() == 0.0),
        "ALT is whole U/L"
    );
    let adt = table.column("ADT").expect("ADT");
    assert!(
        adt.format.as_deref().is_some_and(|f| f.starts_with("DATE")),
        "{:?}",
        adt.format
    );
}

#[test]
fn ibm_floats_decode_to_known_values() {
    // Examples from SAS TS-140: 1 = 41 10 00.., -118.625 = C2 76 A0 00..; 0.1 rounds.
    assert_eq!(
        ibm_to_numeric(&[0x41, 0x10, 0, 0, 0, 0, 0, 0]),
        NumericCell::Value(1.0)
    );
    assert_eq!(
        ibm_to_numeric(&[0xC2, 0x76, 0xA0, 0, 0, 0, 0, 0]),
        NumericCell::Value(-118.625)
    );
    assert_eq!(ibm_to_numeric(&[0; 8]), NumericCell::Value(0.0));
    assert_eq!(
        ibm_to_numeric(&[0x40, 0x19, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A]),
        NumericCell::Value(0.1)
    );
    // A shortened (length 3) numeric is padded with zeros.
    assert_eq!(ibm_to_numeric(&[0x41, 0x10, 0]), NumericCell::Value(1.0));
}

#[test]
fn all_28_sas_missing_values_are_distinguished() {
    let mut markers = vec![b'.', b'_'];
    markers.extend(b'A'..=b'Z');
    assert_eq!(markers.len(), 28);
    let mut seen = std::collections::BTreeSet::new();
    for marker in markers {
        let cell = ibm_to_numeric(&[marker, 0, 0, 0, 0, 0, 0, 0]);
        let NumericCell::Missing(missing) = cell else {
            panic!("{marker} decodes as {cell:?}");
        };
        assert_eq!(numeric_to_ibm(cell)[0], marker);
        seen.insert(missing.to_string());
    }
    assert_eq!(seen.len(), 28);
    assert!(seen.contains(".") && seen.contains("._") && seen.contains(".Z"));
}

fn sample_table() -> Table {
    Table {
        source_format: SourceFormat::Xpt,
        dataset_name: Some("ADLB".into()),
        dataset_label: Some("Lab Analysis".into()),
        row_count: 3,
        columns: vec![
            Column {
                declared: Default::default(),
                name: "USUBJID".into(),
                label: Some("Unique Subject Identifier".into()),
                format: None,
                data: ColumnData::Character(
                    vec![Some("01-001".into()), Some("01-002".into()), None].into(),
                ),
            },
            Column {
                declared: Default::default(),
                name: "AVAL".into(),
                label: Some("Analysis Value".into()),
                format: None,
                data: ColumnData::Numeric(
                    vec![
                        NumericCell::Value(32.5),
                        NumericCell::Missing(SasMissing::Letter(b'B')),
                        NumericCell::Value(-0.125),
                    ]
                    .into(),
                ),
            },
            Column {
                declared: Default::default(),
                name: "ADT".into(),
                label: None,
                format: Some("DATE9.".into()),
                data: ColumnData::Numeric(
                    vec![
                        NumericCell::Value(19725.0),
                        NumericCell::Missing(SasMissing::Dot),
                        NumericCell::Value(0.0),
                    ]
                    .into(),
                ),
            },
        ],
    }
}

#[test]
fn xpt_written_here_reads_back_identically() {
    let table = sample_table();
    let bytes = write_xpt(&table);
    assert_eq!(bytes.len() % 80, 0);
    let back = read_xpt(&bytes).unwrap();
    // A character variable's length is declared in the file: the longest value here.
    assert_eq!(back.columns[0].declared.length, Some("01-001".len()));
    assert_eq!(without_declared(back), table);
}

/// `table` without what the file declared beyond names, labels and formats.
fn without_declared(mut table: Table) -> Table {
    for column in &mut table.columns {
        column.declared = Default::default();
    }
    table
}

#[test]
fn csv_reads_types_quotes_bom_and_missing() {
    let bytes = "\u{feff}USUBJID,AVAL,PARAM\n01-001,32,\"Alanine Aminotransferase (U/L)\"\n01-002,,\"say \"\"hi\"\", ok\"\n01-003,1.5e2,\n";
    let table = ingest::read_dataset(bytes.as_bytes()).unwrap();
    assert_eq!(table.source_format, SourceFormat::Csv);
    assert_eq!(table.row_count, 3);
    assert_eq!(
        numeric(&table, "AVAL"),
        [
            NumericCell::Value(32.0),
            NumericCell::Missing(SasMissing::Dot),
            NumericCell::Value(150.0)
        ]
    );
    assert_eq!(
        character(&table, "PARAM"),
        [
            Some("Alanine Aminotransferase (U/L)".into()),
            Some("say \"hi\", ok".into()),
            None
        ]
    );
    assert_eq!(
        character(&table, "USUBJID")[0].as_deref(),
        Some("01-001"),
        "BOM is not in the name"
    );
}

#[test]
fn a_column_with_any_non_number_is_text_kept_verbatim() {
    let table = ingest::read_dataset(b"VISIT\n1\nWeek 2\n 3\n").unwrap();
    assert_eq!(
        character(&table, "VISIT"),
        [Some("1".into()), Some("Week 2".into()), Some(" 3".into())]
    );
}

proptest! {
    #[test]
    fn ibm_encoding_round_trips_every_double_it_can_hold(value in proptest::num::f64::NORMAL) {
        // IBM floats hold 56-bit fractions (53 bits are significant after normalisation by hex
        // digits at worst) within 16^-65..16^63; every double in that range survives.
        prop_assume!(value.abs() > 1e-75 && value.abs() < 7e75);
        let cell = NumericCell::Value(value);
        prop_assert_eq!(ibm_to_numeric(&numeric_to_ibm(cell)), cell);
    }

    #[test]
    fn xpt_round_trips_generated_tables(
        rows in proptest::collection::vec(
            ("[A-Za-z0-9 .,()/-]{0,20}", proptest::option::of(-1.0e12f64..1.0e12)), 0..40)
    ) {
        let text: Vec<Option<String>> = rows.iter().map(|(s, _)| {
            let trimmed = s.trim_end_matches(' ');
            (!trimmed.is_empty()).then(|| trimmed.to_owned())
        }).collect();
        let numbers: Vec<NumericCell> = rows.iter().map(|(_, v)| match v {
            Some(v) => NumericCell::Value(*v),
            None => NumericCell::Missing(SasMissing::Dot),
        }).collect();
        let table = Table {
            source_format: SourceFormat::Xpt,
            dataset_name: Some("GEN".into()),
            dataset_label: None,
            row_count: rows.len(),
            columns: vec![
                Column { declared: Default::default(), name: "TXT".into(), label: Some("Text".into()), format: None, data: ColumnData::Character(text.into()) },
                Column { declared: Default::default(), name: "NUM".into(), label: None, format: None, data: ColumnData::Numeric(numbers.into()) },
            ],
        };
        let back = read_xpt(&write_xpt(&table)).unwrap();
        prop_assert_eq!(without_declared(back), table);
    }
}

/// An XPORT file whose table would need more memory than the read may use is refused from its
/// header, before the columns are allocated, with the figures in the message: the pilot's ADLBC
/// (74,264 × 46 × 8 bytes ≈ 27.3 MB) under a 10 MB budget; under the default (8× the file) it
/// reads.
#[test]
fn an_xpt_table_over_the_memory_budget_is_refused_before_allocating() {
    let bytes = shared_data("adlbc.xpt");
    let refused =
        ingest::read_dataset_within(&bytes, ingest::xpt::TableBudget { bytes: 10_000_000 })
            .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the SAS XPORT data set has 74264 observations of 46 variables: its table needs about 27329152 bytes, more than the 10000000 bytes a read may use (8× the file or 4 GiB, whichever is less, unless configured otherwise)"
    );
    assert_eq!(
        ingest::xpt::TableBudget::for_file(bytes.len()).bytes,
        8 * bytes.len() as u64
    );
    assert_eq!(
        ingest::xpt::TableBudget::for_file(1 << 30).bytes,
        4 << 30,
        "4 GiB at most"
    );
    assert!(ingest::read_dataset(&bytes).is_ok());
}

/// The XPORT budget is a read limit the caller sets (`ReadLimits`), also when the file is read
/// through its mapping as uploads are; unset, it is the default (8× the file or 4 GiB), under
/// which the pilot's ADLBC reads.
#[test]
fn read_limits_set_the_xpt_budget_of_a_mapped_read() {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("../shared/data/adlbc.xpt");
    let limits = ingest::ReadLimits {
        xpt_table_bytes: Some(10_000_000),
    };
    let refused = ingest::read_dataset_file_with(&path, limits).unwrap_err();
    assert!(
        matches!(
            refused,
            ingest::FileReadError::Content(ingest::ReadError::Xpt(
                ingest::xpt::XptError::TableTooLarge {
                    rows: 74_264,
                    variables: 46,
                    needed_bytes: 27_329_152,
                    budget_bytes: 10_000_000,
                }
            ))
        ),
        "{refused}"
    );
    let file_len = std::fs::metadata(&path).unwrap().len() as usize;
    assert_eq!(
        ingest::ReadLimits::default().xpt_budget(file_len),
        ingest::xpt::TableBudget::for_file(file_len)
    );
    let table = ingest::read_dataset_file_with(&path, ingest::ReadLimits::default()).unwrap();
    assert_eq!((table.row_count, table.columns.len()), (74_264, 46));
}
