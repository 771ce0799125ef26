//! CDISC Dataset-JSON v1.1 read as well as SAS XPORT: the pilot ADLBC written (by the engine's
//! test writer) as JSON, NDJSON and compressed NDJSON (zlib, as the standard says, and gzip, as
//! some writers do) reads to the same columns, profile and snapshot hash as the XPT, and the
//! same plot through the real command line and R; every way a file can disagree with itself is
//! an error naming the row, line and column.

#[path = "support/cli.rs"]
mod cli;

use std::{path::PathBuf, sync::OnceLock};

use adamviz_engine::ingest::{
    confirm::confirm_spec,
    dataset_json::{
        writer::{compress, write, Form},
        DatasetJsonError, Framing,
    },
    draft::draft_spec,
    profile::profile_table,
    read_dataset,
    snapshot::{snapshot_hash, take_snapshot},
    table::{ColumnData, SourceFormat, Table},
    ReadError,
};
use adamviz_model::digest::Sha256Digest;
use sha2::{Digest, Sha256};

fn pilot_xpt() -> &'static (Vec<u8>, Table) {
    static PILOT: OnceLock<(Vec<u8>, Table)> = OnceLock::new();
    PILOT.get_or_init(|| {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("../shared/data/adlbc.xpt");
        let bytes = std::fs::read(&path).expect("the public test data ../shared/data/adlbc.xpt");
        let table = read_dataset(&bytes).unwrap();
        (bytes, table)
    })
}

/// The pilot in every Dataset-JSON form: (form's name, bytes).
fn pilot_forms() -> Vec<(&'static str, Vec<u8>)> {
    let table = &pilot_xpt().1;
    let ndjson = write(table, Form::Ndjson);
    vec![
        ("json", write(table, Form::Json)),
        ("dsjc (zlib)", compress(&ndjson, Framing::Zlib)),
        ("dsjc (gzip)", compress(&ndjson, Framing::Gzip)),
        ("ndjson", ndjson),
    ]
}

fn digest(bytes: &[u8]) -> Sha256Digest {
    Sha256Digest::from_bytes(Sha256::digest(bytes).into())
}

/// The pilot's values as SAS holds them, column by column, except the kind of a numeric
/// missing value (Dataset-JSON has only `null`).
fn values_of(table: &Table) -> Vec<(String, Vec<Option<String>>)> {
    table
        .columns
        .iter()
        .map(|column| {
            let cells = match &column.data {
                ColumnData::Numeric(values) => values
                    .values()
                    .map(|v| v.map(|v| format!("{v:?}")))
                    .collect(),
                ColumnData::Character(values) => {
                    values.iter().map(|v| v.map(str::to_owned)).collect()
                }
            };
            (column.name.clone(), cells)
        })
        .collect()
}

#[test]
fn every_form_reads_to_the_xpt_columns_profile_and_snapshot() {
    let (xpt_bytes, xpt) = pilot_xpt();
    let xpt_profile = profile_table(xpt, digest(xpt_bytes), 5);
    let question = "ALT over time by arm";
    let xpt_draft = draft_spec(question, &xpt_profile, xpt).unwrap().spec;
    let xpt_spec = confirm_spec(&xpt_draft, xpt, digest(xpt_bytes)).unwrap();
    let xpt_snapshot = snapshot_hash(&take_snapshot(&xpt_spec, xpt).unwrap());

    for (form, bytes) in pilot_forms() {
        let table = read_dataset(&bytes).unwrap_or_else(|e| panic!("{form}: {e}"));
        assert_eq!(table.source_format, SourceFormat::DatasetJson, "{form}");
        assert_eq!(table.row_count, 74_264, "{form}");
        assert_eq!(table.dataset_name, xpt.dataset_name, "{form}");
        assert_eq!(table.dataset_label, xpt.dataset_label, "{form}");
        for (ours, theirs) in table.columns.iter().zip(&xpt.columns) {
            // Labels, formats and lengths come from the file's metadata.
            assert_eq!(
                (&ours.name, &ours.label, &ours.format, ours.declared.length),
                (
                    &theirs.name,
                    &theirs.label,
                    &theirs.format,
                    theirs.declared.length
                ),
                "{form}"
            );
        }
        assert!(values_of(&table) == values_of(xpt), "{form}: values differ");

        let profile = profile_table(&table, digest(&bytes), 5);
        assert_eq!(profile.source_format, "dataset_json");
        // Dataset-JSON declares a dataType for every column, which XPT has no word for.
        assert!(profile.columns.iter().all(|c| c.data_type.is_some()));
        let mut compared = profile.clone();
        compared.source_format = xpt_profile.source_format.clone();
        compared.content_hash = xpt_profile.content_hash;
        for column in &mut compared.columns {
            column.data_type = None;
        }
        assert!(compared == xpt_profile, "{form}: the profile differs");

        let draft = draft_spec(question, &profile, &table).unwrap().spec;
        let spec = confirm_spec(&draft, &table, digest(&bytes)).unwrap();
        assert_eq!(
            snapshot_hash(&take_snapshot(&spec, &table).unwrap()),
            xpt_snapshot,
            "{form}"
        );
    }
}

/// What a governed run of `question` on `data` (real binary, real R) produced, with the
/// spec's hash written out of it: the spec names the dataset by its content hash, so the
/// script's header and the figure's caption name a different spec for each file.
struct Run {
    snapshot_hash: String,
    /// The script with the spec's hash replaced by `SPEC`.
    script: String,
    /// `statistics.json` without its `spec_hash`.
    statistics: serde_json::Value,
}

fn governed_run(dir: &std::path::Path, data: &std::path::Path, question: &str) -> Run {
    let data_dir = dir.join("data");
    let adamviz = |args: &[&str]| cli::ok(cli::adamviz(args, &data_dir));
    let data = data.to_str().unwrap();
    let draft_path = dir.join("draft.json");
    std::fs::write(
        &draft_path,
        adamviz(&["spec", "draft", data, "--question", question]),
    )
    .unwrap();
    let spec_path = dir.join("spec.json");
    let confirmed = adamviz(&["spec", "confirm", data, draft_path.to_str().unwrap()]);
    std::fs::write(&spec_path, confirmed).unwrap();
    let run = adamviz(&[
        "run",
        data,
        "--spec",
        spec_path.to_str().unwrap(),
        "--question",
        question,
        "--classification",
        "deidentified",
    ]);
    assert!(run.contains("status: Verified"), "{run}");
    let id = run.split_whitespace().nth(1).unwrap().to_owned();
    let shown: serde_json::Value =
        serde_json::from_str(&adamviz(&["revisions", "show", &id, "--json"])).unwrap();
    let spec_hash = shown["spec_hash"].as_str().unwrap().to_owned();
    let bundle = dir.join(format!("{id}.zip"));
    adamviz(&["evidence", "export", &id, "-o", bundle.to_str().unwrap()]);
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&bundle).unwrap()).unwrap();
    let mut entry = |suffix: &str| {
        let name = archive
            .file_names()
            .find(|name| name.ends_with(suffix))
            .unwrap_or_else(|| panic!("no {suffix} in the bundle"))
            .to_owned();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut archive.by_name(&name).unwrap(), &mut text).unwrap();
        text
    };
    let script = entry(".R").replace(&spec_hash, "SPEC");
    let mut statistics: serde_json::Value =
        serde_json::from_str(&entry("statistics.json")).unwrap();
    assert_eq!(statistics["spec_hash"], spec_hash.as_str());
    statistics.as_object_mut().unwrap().remove("spec_hash");
    Run {
        snapshot_hash: shown["snapshot_hash"].as_str().unwrap().to_owned(),
        script,
        statistics,
    }
}

#[test]
fn the_compressed_form_plots_what_the_xpt_plots_through_r() {
    let dir = tempfile::tempdir().unwrap();
    let xpt = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("../shared/data/adlbc.xpt");
    let dsjc = dir.path().join("adlbc.dsjc");
    let table = &pilot_xpt().1;
    std::fs::write(&dsjc, compress(&write(table, Form::Ndjson), Framing::Zlib)).unwrap();
    let question = "ALT over time by arm";
    let from_json = governed_run(dir.path(), &dsjc, question);
    let from_xpt = governed_run(dir.path(), &xpt, question);
    // The same records, the same R script (but for the spec it names), the same statistics:
    // the same plot, whose caption names its own spec.
    assert_eq!(from_json.snapshot_hash, from_xpt.snapshot_hash);
    assert!(
        from_json.script == from_xpt.script,
        "the scripts differ beyond the spec hash"
    );
    assert_eq!(from_json.statistics, from_xpt.statistics);
    assert!(from_xpt
        .statistics
        .to_string()
        .contains("Xanomeline High Dose"));
}

/// A small valid NDJSON file: three rows, a text, an integer, a decimal and a date column.
const SMALL: &str = r#"{"datasetJSONCreationDateTime":"2026-12-07T00:00:00","datasetJSONVersion":"1.1.0","itemGroupOID":"IG.ADVS","records":3,"name":"ADVS","label":"Vital Signs Analysis","columns":[{"itemOID":"IT.USUBJID","name":"USUBJID","label":"Unique Subject Identifier","dataType":"string","length":11},{"itemOID":"IT.AVISITN","name":"AVISITN","label":"Analysis Visit (N)","dataType":"integer"},{"itemOID":"IT.AVAL","name":"AVAL","label":"Analysis Value","dataType":"decimal"},{"itemOID":"IT.ADT","name":"ADT","label":"Analysis Date","dataType":"date","targetDataType":"integer","displayFormat":"DATE9."}]}
["01-701-1015",0,"120.5","2014-01-02"]
["01-701-1015",2,null,"2014-01-16"]
["01-701-1023",0,"131",null]
"#;

fn read(text: &str) -> Result<Table, ReadError> {
    read_dataset(text.as_bytes())
}

fn error(text: &str) -> DatasetJsonError {
    match read(text) {
        Err(ReadError::DatasetJson(error)) => *error,
        other => panic!("expected a Dataset-JSON error, got {other:?}"),
    }
}

#[test]
fn a_small_file_reads_with_its_types_labels_and_dates() {
    let table = read(SMALL).unwrap();
    assert_eq!(table.row_count, 3);
    assert_eq!(table.dataset_label.as_deref(), Some("Vital Signs Analysis"));
    let adt = table.column("ADT").unwrap();
    assert_eq!(adt.format.as_deref(), Some("DATE9."));
    assert_eq!(adt.declared.data_type.as_deref(), Some("date"));
    let ColumnData::Numeric(days) = &adt.data else {
        panic!("a date with targetDataType integer is a SAS number")
    };
    // 2014-01-02 is day 19725 after 1960-01-01.
    assert_eq!(
        days.values().collect::<Vec<_>>(),
        [Some(19725.0), Some(19739.0), None]
    );
    let ColumnData::Numeric(aval) = &table.column("AVAL").unwrap().data else {
        panic!("decimal is numeric")
    };
    assert_eq!(
        aval.values().collect::<Vec<_>>(),
        [Some(120.5), None, Some(131.0)]
    );
    let usubjid = table.column("USUBJID").unwrap();
    assert_eq!(usubjid.declared.length, Some(11));
    assert_eq!(usubjid.label.as_deref(), Some("Unique Subject Identifier"));

    // The JSON form of the same data reads to the same table.
    let mut lines = SMALL.lines();
    let head = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    let json = format!(
        "{{\n  {},\n  \"rows\": [\n    {}\n  ]\n}}\n",
        &head[1..head.len() - 1],
        rows.join(",\n    ")
    );
    assert_eq!(read(&json).unwrap(), table);
}

#[test]
fn a_row_of_the_wrong_width_is_named_with_its_line() {
    let text = SMALL.replace(
        r#"["01-701-1015",2,null,"2014-01-16"]"#,
        r#"["01-701-1015",2,null]"#,
    );
    assert_eq!(
        error(&text),
        DatasetJsonError::RowWidth {
            row: 2,
            line: 3,
            expected: 4,
            found: 3
        }
    );
    let text = SMALL.replace(r#""131",null]"#, r#""131",null,"extra"]"#);
    assert!(matches!(
        error(&text),
        DatasetJsonError::RowWidth {
            row: 3,
            line: 4,
            found: 5,
            ..
        }
    ));
}

#[test]
fn a_value_that_does_not_fit_its_data_type_is_named_with_row_line_and_column() {
    let text = SMALL.replace(r#"["01-701-1015",2,"#, r#"["01-701-1015",2.5,"#);
    let found = error(&text);
    assert_eq!(
        found,
        DatasetJsonError::CellType {
            row: 2,
            line: 3,
            column: "AVISITN".into(),
            data_type: "integer".into(),
            target_data_type: None,
            found: "2.5".into()
        }
    );
    assert_eq!(
        found.to_string(),
        "Dataset-JSON row 2 (line 3), column AVISITN: dataType \"integer\" but the value is 2.5"
    );
    let text = SMALL.replace(r#""120.5""#, r#""about 120""#);
    assert!(
        matches!(error(&text), DatasetJsonError::CellType { row: 1, ref column, .. } if column == "AVAL")
    );
    let text = SMALL.replace(r#""2014-01-16""#, r#""2014-01""#);
    let found = error(&text);
    assert!(
        found.to_string().contains("column ADT: dataType \"date\" (targetDataType \"integer\") but the value is \"2014-01\""),
        "{found}"
    );
    let text = SMALL.replace(r#"["01-701-1023","#, r#"[1023,"#);
    assert!(
        matches!(error(&text), DatasetJsonError::CellType { row: 3, ref column, .. } if column == "USUBJID")
    );
}

#[test]
fn records_that_differ_from_the_rows_are_named() {
    let fewer = SMALL.replace(r#""records":3"#, r#""records":2"#);
    assert_eq!(
        error(&fewer),
        DatasetJsonError::RecordsMismatch {
            declared: 2,
            found: 3
        }
    );
    let more = SMALL.replace(r#""records":3"#, r#""records":4"#);
    assert_eq!(
        error(&more),
        DatasetJsonError::RecordsMismatch {
            declared: 4,
            found: 3
        }
    );
}

#[test]
fn metadata_problems_are_named() {
    let no_version = SMALL.replace(r#""datasetJSONVersion":"1.1.0","#, "");
    assert_eq!(
        error(&no_version),
        DatasetJsonError::MissingAttribute {
            attribute: "datasetJSONVersion"
        }
    );
    let old = SMALL.replace(r#""1.1.0""#, r#""1.0.0""#);
    assert!(error(&old)
        .to_string()
        .contains("version 1.0.0 is not read"));
    let no_records = SMALL.replace(r#""records":3,"#, "");
    assert_eq!(
        error(&no_records),
        DatasetJsonError::MissingAttribute {
            attribute: "records"
        }
    );
    let unknown = SMALL.replace(r#""dataType":"decimal""#, r#""dataType":"money""#);
    assert_eq!(
        error(&unknown).to_string(),
        "Dataset-JSON column AVAL has dataType \"money\", which v1.1 does not define"
    );
    let twice = SMALL.replace(r#""name":"AVISITN""#, r#""name":"USUBJID""#);
    assert!(matches!(
        error(&twice),
        DatasetJsonError::DuplicateColumn { index: 2, .. }
    ));
    let rows_first =
        r#"{"rows":[[1]],"columns":[{"itemOID":"A","name":"A","label":"A","dataType":"integer"}]}"#;
    assert_eq!(error(rows_first), DatasetJsonError::RowsBeforeColumns);
    let broken = &SMALL[..SMALL.len() - 20];
    assert!(
        matches!(error(broken), DatasetJsonError::Syntax { line: 4, .. }),
        "{}",
        error(broken)
    );
}

#[test]
fn compressed_files_that_are_cut_or_not_dataset_json_are_named() {
    let table = &pilot_xpt().1;
    let dsjc = compress(&write(table, Form::Ndjson), Framing::Zlib);
    let cut = &dsjc[..dsjc.len() / 2];
    let found = match read_dataset(cut) {
        Err(ReadError::DatasetJson(error)) => *error,
        other => panic!("{other:?}"),
    };
    assert!(
        matches!(
            found,
            DatasetJsonError::Decompress {
                framing: "zlib",
                ..
            }
        ),
        "{found}"
    );
    let gzip_of_csv = compress(b"USUBJID,AVAL\n1,2\n", Framing::Gzip);
    let found = read_dataset(&gzip_of_csv).unwrap_err();
    assert!(
        found.to_string().contains("does not hold Dataset-NDJSON"),
        "{found}"
    );
}

#[test]
fn an_installation_from_before_dataset_json_keeps_its_datasets_and_rules() {
    let dir = tempfile::tempdir().unwrap();
    drop(adamviz_store::db::Database::open_in(dir.path()).unwrap());
    // Put the database back as it was before migration 11, with a dataset row in it.
    let raw = rusqlite::Connection::open(dir.path().join("adamviz.sqlite3")).unwrap();
    raw.execute_batch(concat!(
        "DELETE FROM schema_migrations WHERE version = 11; DROP TABLE datasets;",
        include_str!("../../store/src/migrations/0006_datasets.sql"),
    ))
    .unwrap();
    let insert = |format: &str, hash: char| {
        raw.execute(
            "INSERT INTO datasets (content_hash, file_name, format, classification, row_count,
                 column_count, dataset_name, size, uploaded_by, uploaded_by_name, uploaded_at)
             VALUES (?1, 'adlbc.xpt', ?2, 'deidentified', 74264, 46, 'ADLBC', 34190640, NULL,
                 'migrated', '2026-12-01T00:00:00Z')",
            rusqlite::params![hash.to_string().repeat(64), format],
        )
    };
    insert("xpt", 'a').unwrap();
    assert!(
        insert("dataset_json", 'b').is_err(),
        "the old rule refuses it"
    );

    drop(adamviz_store::db::Database::open_in(dir.path()).unwrap());
    let kept: (String, i64) = raw
        .query_row("SELECT format, row_count FROM datasets", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!(kept, ("xpt".to_owned(), 74264));
    insert("dataset_json", 'b').unwrap();
    let refused = insert("parquet", 'c').unwrap_err().to_string();
    assert!(refused.contains("CHECK constraint"), "{refused}");
    let refused = raw
        .execute("UPDATE datasets SET row_count = 1", [])
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("a dataset row is never changed"),
        "{refused}"
    );
    let refused = raw
        .execute("DELETE FROM datasets", [])
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("a dataset row is never deleted"),
        "{refused}"
    );
}
