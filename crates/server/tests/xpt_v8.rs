//! SAS XPORT version 8 read as well as version 5: the pilot written as v8 reads to the same
//! columns, profile (plus the note that regulators expect v5) and snapshot as the v5 file; names
//! up to 32 bytes, labels past 40 characters (LABELV8) and text past 200 bytes survive.

use std::path::PathBuf;

use adamviz_engine::ingest::{
    confirm::confirm_spec,
    draft::draft_spec,
    profile::profile_table,
    read_dataset,
    snapshot::{snapshot_hash, take_snapshot},
    table::{Column, ColumnData, NumericCell, SourceFormat, Table},
    xpt::read_xpt,
    xpt_writer::{write_xpt, write_xpt_v8},
};
use adamviz_model::{digest::Sha256Digest, profile::ProfileWarning};
use sha2::{Digest, Sha256};

fn digest(bytes: &[u8]) -> Sha256Digest {
    Sha256Digest::from_bytes(Sha256::digest(bytes).into())
}

#[test]
fn the_pilot_as_version_8_reads_to_the_version_5_table_profile_and_snapshot() {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("../shared/data/adlbc.xpt");
    let v5_bytes = std::fs::read(&path).expect("the public test data ../shared/data/adlbc.xpt");
    let v5 = read_dataset(&v5_bytes).unwrap();
    let v8_bytes = write_xpt_v8(&v5);
    assert!(v8_bytes.starts_with(b"HEADER RECORD*******LIBV8   HEADER RECORD!!!!!!!"));
    let v8 = read_dataset(&v8_bytes).unwrap();
    assert_eq!(v8.source_format, SourceFormat::XptV8);
    assert_eq!(
        (&v8.dataset_name, &v8.dataset_label, v8.row_count),
        (&v5.dataset_name, &v5.dataset_label, v5.row_count)
    );
    assert!(v8.columns == v5.columns, "the columns differ");

    let v5_profile = profile_table(&v5, digest(&v5_bytes), 5);
    let mut v8_profile = profile_table(&v8, digest(&v8_bytes), 5);
    let note = v8_profile.warnings.pop();
    assert_eq!(note, Some(ProfileWarning::XportVersion8));
    assert!(note
        .unwrap()
        .to_string()
        .contains("submissions to FDA and PMDA still expect XPORT version 5"));
    assert!(!v5_profile.warnings.contains(&ProfileWarning::XportVersion8));
    let for_comparison = {
        let mut p = v8_profile.clone();
        p.content_hash = v5_profile.content_hash;
        p
    };
    assert!(
        for_comparison == v5_profile,
        "the profiles differ beyond the note"
    );

    let question = "ALT over time by arm";
    let snapshot = |table: &Table, bytes: &[u8], profile| {
        let draft = draft_spec(question, profile, table).unwrap().spec;
        let spec = confirm_spec(&draft, table, digest(bytes)).unwrap();
        snapshot_hash(&take_snapshot(&spec, table).unwrap())
    };
    v8_profile.warnings.push(ProfileWarning::XportVersion8);
    assert_eq!(
        snapshot(&v8, &v8_bytes, &v8_profile),
        snapshot(&v5, &v5_bytes, &v5_profile)
    );
}

/// A table that only version 8 can hold.
fn long_names_and_labels() -> Table {
    let long_text = "x".repeat(500);
    let long_label =
        "Analysis Value Derived from the Mean of Triplicate Readings at the Planned Time Point";
    Table {
        source_format: SourceFormat::XptV8,
        dataset_name: Some("ADEG_TRIPLICATE_AVERAGES".into()),
        dataset_label: Some("ECG Analysis Dataset".into()),
        row_count: 3,
        columns: vec![
            Column {
                declared: Default::default(),
                name: "USUBJID".into(),
                label: Some("Unique Subject Identifier".into()),
                format: None,
                data: ColumnData::Character(
                    [Some("01-701-1015"), Some("01-701-1023"), None]
                        .into_iter()
                        .collect(),
                ),
            },
            Column {
                declared: Default::default(),
                name: "AVAL_TRIPLICATE_MEAN_OF_READINGS".into(),
                label: Some(long_label.into()),
                format: Some("BEST12.".into()),
                data: ColumnData::Numeric(
                    [
                        NumericCell::Value(401.5),
                        NumericCell::Value(-3.25),
                        NumericCell::Value(0.0),
                    ]
                    .into_iter()
                    .collect(),
                ),
            },
            Column {
                declared: Default::default(),
                name: "COMMENT_TEXT".into(),
                label: Some("A comment longer than version 5 allows".into()),
                format: None,
                data: ColumnData::Character(
                    [Some(long_text.as_str()), Some("short"), Some("é accent")]
                        .into_iter()
                        .collect(),
                ),
            },
        ],
    }
}

#[test]
fn long_names_labels_and_text_survive_version_8() {
    let table = long_names_and_labels();
    let bytes = write_xpt_v8(&table);
    let back = read_xpt(&bytes).unwrap();
    assert_eq!(
        back.dataset_name.as_deref(),
        Some("ADEG_TRIPLICATE_AVERAGES")
    );
    let names: Vec<&str> = back.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "USUBJID",
            "AVAL_TRIPLICATE_MEAN_OF_READINGS",
            "COMMENT_TEXT"
        ]
    );
    for (read, written) in back.columns.iter().zip(&table.columns) {
        assert_eq!(read.label, written.label, "{}", written.name);
        assert_eq!(read.format, written.format, "{}", written.name);
        assert_eq!(read.data, written.data, "{}", written.name);
    }
    assert_eq!(back.columns[2].declared.length, Some(500));
}

#[test]
fn a_cut_version_8_file_is_an_error_never_a_guess() {
    let bytes = write_xpt_v8(&long_names_and_labels());
    // Cut inside the LABELV8 section, and inside the observations (whole records kept).
    for cut in (80..bytes.len()).step_by(80) {
        if let Ok(table) = read_xpt(&bytes[..cut]) {
            assert!(
                table.row_count < 3,
                "a file cut at {cut} of {} read whole",
                bytes.len()
            );
            for column in &table.columns {
                assert_eq!(column.data.len(), table.row_count);
            }
        }
    }
}

#[test]
fn version_5_still_holds_short_names_only() {
    // The same table written as version 5 keeps 8-byte names and 40-character labels: the
    // reason version 8 exists.
    let mut table = long_names_and_labels();
    table.columns.pop();
    let back = read_xpt(&write_xpt(&table)).unwrap();
    assert_eq!(back.source_format, SourceFormat::Xpt);
    assert_eq!(back.columns[1].name, "AVAL_TRI");
    let label = back.columns[1].label.clone().unwrap();
    let full = table.columns[1].label.clone().unwrap();
    assert!(label.len() <= 40 && full.starts_with(&label), "{label}");
}
