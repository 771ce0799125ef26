//! Hostile and broken uploads, each with the exact error it gets (or, for hostile but valid
//! content, the exact values it keeps), and a check after every one that nothing already stored
//! was lost or changed.

use std::{collections::BTreeSet, path::Path};

use adamviz_engine::ingest::{
    profile::profile_table,
    table::{Column, ColumnData, NumericCell, SourceFormat, Table},
    xpt_writer::write_xpt,
};
use adamviz_model::digest::Sha256Digest;
use adamviz_services::upload::{receive_upload, UploadError};
use adamviz_store::objects::ObjectStore;

/// A small valid dataset in XPORT form, the base of the corrupted variants.
fn small_xpt() -> Vec<u8> {
    write_xpt(&Table {
        source_format: SourceFormat::Xpt,
        dataset_name: Some("ADLB".into()),
        dataset_label: None,
        row_count: 2,
        columns: vec![
            Column {
                declared: Default::default(),
                name: "USUBJID".into(),
                label: None,
                format: None,
                data: ColumnData::Character(vec![Some("S1".into()), Some("S2".into())].into()),
            },
            Column {
                declared: Default::default(),
                name: "AVAL".into(),
                label: None,
                format: None,
                data: ColumnData::Numeric(
                    vec![NumericCell::Value(1.0), NumericCell::Value(2.0)].into(),
                ),
            },
        ],
    })
}

/// Offset of the first namestr in files from `write_xpt`.
const NAMESTR: usize = 640;

fn patched(mut bytes: Vec<u8>, at: usize, with: &[u8]) -> Vec<u8> {
    bytes[at..at + with.len()].copy_from_slice(with);
    bytes
}

/// What a case must produce.
enum Expect {
    /// Refused with exactly this message.
    Error(&'static str),
    /// Refused with a message containing all of these (for messages that embed a content hash).
    ErrorContaining(&'static [&'static str]),
    /// Accepted; the check inspects the table.
    Accepted(fn(&Table)),
}

struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    classification: &'static str,
    limit: u64,
    expect: Expect,
}

fn case(name: &'static str, bytes: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        bytes: bytes.into(),
        classification: "synthetic",
        limit: 1 << 20,
        expect,
    }
}

fn text_values(table: &Table, column: &str) -> Vec<Option<String>> {
    match &table
        .column(column)
        .unwrap_or_else(|| panic!("no column {column:?}"))
        .data
    {
        ColumnData::Character(values) => values.iter().map(|v| v.map(str::to_owned)).collect(),
        other => panic!("{column} is not text: {other:?}"),
    }
}

fn cases() -> Vec<Case> {
    let xpt = small_xpt();
    let mut two_members = xpt.clone();
    two_members.extend_from_slice(&xpt[240..]);
    let mut v8 = xpt.clone();
    v8[..48].copy_from_slice(b"HEADER RECORD*******LIBV8   HEADER RECORD!!!!!!!");
    // Two 30-byte observations fill 60 bytes of the last record; the other 20 must be blanks.
    let mut partial_row = write_xpt(&Table {
        source_format: SourceFormat::Xpt,
        dataset_name: None,
        dataset_label: None,
        row_count: 2,
        columns: vec![Column {
            declared: Default::default(),
            name: "LONG".into(),
            label: None,
            format: None,
            data: ColumnData::Character(vec![Some("x".repeat(30)), Some("y".into())].into()),
        }],
    });
    let end = partial_row.len();
    partial_row[end - 3..].copy_from_slice(b"xyz");
    let hostile_header = "\"we\"\"ird\",\"back\\slash\",\"new\nline\",\"\"\"); system(\"\"rm -rf /\"\"); (\"\"\",Grüße🙂\n\"a\"\"b\",c\\d,\"x\ny\",\"\"\"); system(\"\"id\"\")\",µg/L\n";
    let many_levels: String = std::iter::once("USUBJID,TRTA,AVAL\n".to_owned())
        .chain((0..10_000).map(|i| format!("S{i},Arm {i},{i}\n")))
        .collect();

    let too_many_columns: String = (0..32_768)
        .map(|i| format!("C{i}"))
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
        + &"1,".repeat(32_767)
        + "1\n";
    let long_cell = format!("USUBJID,NOTE\nS1,{}\n", "x".repeat(32_768));
    let long_record = format!("USUBJID,NOTE\nS1,ok\nS2,{}\n", "\"a\",".repeat(6 << 20));
    let long_header = "A".repeat((16 << 20) + 1);
    let long_quoted_header = format!("\"{}", "x\n".repeat(9 << 20));
    vec![
        case(
            "more columns than adamviz reads",
            too_many_columns.into_bytes(),
            Expect::Error("the CSV header has 32768 columns; adamviz reads at most 32767"),
        ),
        case(
            "a cell longer than SAS allows",
            long_cell.into_bytes(),
            Expect::Error("line 2, column \"NOTE\": a cell of 32768 bytes; adamviz reads cells of at most 32767 bytes"),
        ),
        Case {
            name: "a record longer than 16 MiB",
            bytes: long_record.into_bytes(),
            classification: "synthetic",
            limit: 64 << 20,
            expect: Expect::Error("line 3 of the CSV file starts a record of more than 16777216 bytes; adamviz reads records of at most 16777216 bytes"),
        },
        Case {
            name: "a header line longer than 16 MiB",
            bytes: long_header.into_bytes(),
            classification: "synthetic",
            limit: 64 << 20,
            expect: Expect::Error("line 1 of the CSV file starts a record of more than 16777216 bytes; adamviz reads records of at most 16777216 bytes"),
        },
        // Before: the header was read to the end of the file, whatever its length, and the
        // file was then refused for having no data rows.
        Case {
            name: "a quoted header longer than 16 MiB",
            bytes: long_quoted_header.into_bytes(),
            classification: "synthetic",
            limit: 64 << 20,
            expect: Expect::Error("line 1 of the CSV file starts a record of more than 16777216 bytes; adamviz reads records of at most 16777216 bytes"),
        },
        case("empty file", b"".to_vec(), Expect::Error("the CSV file is empty")),
        case("byte-order mark only", b"\xEF\xBB\xBF".to_vec(), Expect::Error("the CSV file is empty")),
        case("blank lines only", b"\n\n  \n".to_vec(), Expect::Error("the CSV file is empty")),
        case(
            "header only",
            b"USUBJID,AVAL\n".to_vec(),
            Expect::Error("the CSV file has a header row but no data rows"),
        ),
        case(
            "ragged row, too short",
            b"A,B,C\n1,2,3\n4,5\n".to_vec(),
            Expect::Error("line 3 of the CSV file has 2 fields, but the header has 3"),
        ),
        case(
            "ragged row, too long",
            b"A,B\n1,2,3\n".to_vec(),
            Expect::Error("line 2 of the CSV file has 3 fields, but the header has 2"),
        ),
        case(
            "invalid UTF-8 (Latin-1 e-acute)",
            b"NAME\nJos\xe9\n".to_vec(),
            Expect::Error("the CSV file is not valid UTF-8: invalid byte sequence at byte 8 (line 2); save it as UTF-8"),
        ),
        case(
            "NUL byte",
            b"A,B\n1,\x002\n".to_vec(),
            Expect::Error("the CSV file contains a NUL byte at byte 6 (line 2); it is not a text file"),
        ),
        case(
            "duplicate column names",
            b"AVAL,PARAM,AVAL\n1,x,2\n".to_vec(),
            Expect::Error("the CSV header names column \"AVAL\" twice (columns 1 and 3)"),
        ),
        case(
            "empty column name",
            b"A,,C\n1,2,3\n".to_vec(),
            Expect::Error("column 2 of the CSV header has no name"),
        ),
        case(
            "number beyond double range",
            b"AVAL\n1\n1e309\n".to_vec(),
            Expect::Error("line 3, column \"AVAL\": \"1e309\" is too large to be a number (beyond \u{b1}1.8e308)"),
        ),
        case(
            "NaN in a numeric column",
            b"AVAL\n1\nNaN\n".to_vec(),
            Expect::Error("line 3, column \"AVAL\": \"NaN\" is not a finite number; leave the cell empty for a missing value"),
        ),
        case(
            "Inf in a numeric column",
            b"AVAL\n-Inf\n2\n".to_vec(),
            Expect::Error("line 2, column \"AVAL\": \"-Inf\" is not a finite number; leave the cell empty for a missing value"),
        ),
        case(
            "XPT cut inside a record",
            xpt[..xpt.len() - 7].to_vec(),
            Expect::Error("SAS XPORT file is truncated or corrupt: its length 1113 bytes is not a multiple of 80"),
        ),
        case(
            "XPT cut after the header records",
            xpt[..560].to_vec(),
            Expect::Error("SAS XPORT file is truncated: the namestr header record is missing at byte 560 (file length 560)"),
        ),
        case(
            "XPT cut inside the variable descriptors",
            xpt[..720].to_vec(),
            Expect::Error("SAS XPORT file is truncated: the variable descriptors is missing at byte 640 (file length 720)"),
        ),
        case(
            "XPT wrong magic",
            patched(xpt.clone(), 60, b"9"),
            Expect::Error("not a SAS XPORT file: the first 80 bytes are not the library header record of version 5 or 8"),
        ),
        case(
            "XPT version 8 library header over version 5 records",
            v8,
            Expect::Error("SAS XPORT file is corrupt: expected the member header record at byte 240"),
        ),
        case(
            "Dataset-JSON row of the wrong width",
            concat!(
                r#"{"datasetJSONCreationDateTime":"2026-12-07T00:00:00","datasetJSONVersion":"1.1.0","itemGroupOID":"IG.ADLB","records":1,"name":"ADLB","label":"Lab","#,
                r#""columns":[{"itemOID":"IT.A","name":"USUBJID","label":"Subject","dataType":"string"},{"itemOID":"IT.B","name":"AVAL","label":"Value","dataType":"double"}]}"#,
                "\n[\"01-701-1015\"]\n"
            )
            .as_bytes()
            .to_vec(),
            Expect::Error("Dataset-JSON row 1 (line 2) has 1 values, but \"columns\" declares 2"),
        ),
        case(
            "XPT unknown variable type",
            patched(xpt.clone(), NAMESTR, &7i16.to_be_bytes()),
            Expect::Error("SAS XPORT file is corrupt: variable 1 (descriptor at byte 640): type code 7 is neither 1 (numeric) nor 2 (character)"),
        ),
        case(
            "XPT numeric length 9",
            patched(xpt.clone(), NAMESTR + 140 + 4, &9i16.to_be_bytes()),
            Expect::Error("SAS XPORT file is corrupt: variable 2 (descriptor at byte 780): numeric length 9 is outside 2..=8"),
        ),
        case(
            "XPT duplicate variable names",
            patched(xpt.clone(), NAMESTR + 140 + 8, b"USUBJID "),
            Expect::Error("SAS XPORT file has two variables named \"USUBJID\" (variables 1 and 2)"),
        ),
        case(
            "XPT corrupted observation header",
            patched(xpt.clone(), 960, b"XEADER"),
            Expect::Error("SAS XPORT file is corrupt: expected the observation header record at byte 960"),
        ),
        case(
            "XPT with two datasets",
            two_members,
            Expect::Error("SAS XPORT file holds a second dataset (member header at byte 1120); upload one dataset per file"),
        ),
        case(
            "XPT with a partial observation",
            partial_row,
            Expect::Error("SAS XPORT file is truncated or corrupt: 20 bytes after the last whole 30-byte observation are not blank padding"),
        ),
        case(
            "ZIP archive (e.g. XLSX)",
            b"PK\x03\x04rest of a zip".to_vec(),
            Expect::Error("the upload is a ZIP (or XLSX) file; adamviz reads CSV, SAS XPORT (.xpt) and CDISC Dataset-JSON v1.1 (.json, .ndjson, .dsjc)"),
        ),
        case(
            "gzip",
            b"\x1f\x8b\x08\x00".to_vec(),
            Expect::Error("compressed Dataset-JSON (.dsjc, gzip) cannot be decompressed near line 1: unexpected end of file"),
        ),
        case(
            "a gzipped CSV",
            adamviz_engine::ingest::dataset_json::writer::compress(
                b"USUBJID,AVAL\n01-701-1015,1\n",
                adamviz_engine::ingest::dataset_json::Framing::Gzip,
            ),
            Expect::Error("the gzip stream does not hold Dataset-NDJSON (its first byte is not '{'); adamviz reads compressed Dataset-JSON (.dsjc), not other compressed files"),
        ),
        case(
            "quotes, backslashes, newlines, R code and Unicode in names and values",
            hostile_header.as_bytes().to_vec(),
            Expect::Accepted(|table| {
                let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
                assert_eq!(
                    names,
                    ["we\"ird", "back\\slash", "new\nline", "\"); system(\"rm -rf /\"); (\"", "Grüße🙂"]
                );
                assert_eq!(text_values(table, "we\"ird"), [Some("a\"b".to_owned())]);
                assert_eq!(text_values(table, "back\\slash"), [Some("c\\d".to_owned())]);
                assert_eq!(text_values(table, "new\nline"), [Some("x\ny".to_owned())]);
                assert_eq!(
                    text_values(table, "\"); system(\"rm -rf /\"); (\""),
                    [Some("\"); system(\"id\")".to_owned())]
                );
                assert_eq!(text_values(table, "Grüße🙂"), [Some("µg/L".to_owned())]);
            }),
        ),
        case(
            "10,000 distinct treatment levels",
            many_levels.into_bytes(),
            Expect::Accepted(|table| {
                assert_eq!(table.row_count, 10_000);
                let levels: BTreeSet<_> = text_values(table, "TRTA").into_iter().collect();
                assert_eq!(levels.len(), 10_000);
                let profile = profile_table(table, Sha256Digest::from_bytes([0; 32]), 5);
                let trta = profile.columns.iter().find(|c| c.name == "TRTA").unwrap();
                assert!(trta.distinct_capped, "the distinct count is capped, not exhaustive");
                assert_eq!(trta.distinct, adamviz_model::profile::DISTINCT_CAP);
            }),
        ),
        Case {
            name: "file over the limit",
            bytes: vec![b'a'; 4097],
            classification: "synthetic",
            limit: 4096,
            expect: Expect::Error("the upload is larger than the limit of 4096 bytes; nothing was stored"),
        },
        Case {
            name: "unknown classification",
            bytes: b"A\n1\n".to_vec(),
            classification: "identified",
            limit: 1 << 20,
            expect: Expect::Error("data classification \"identified\" is not accepted: adamviz holds only `synthetic` or `deidentified` data, never data that identifies a person"),
        },
        Case {
            name: "empty classification",
            bytes: b"A\n1\n".to_vec(),
            classification: "",
            limit: 1 << 20,
            expect: Expect::ErrorContaining(&["data classification \"\" is not accepted"]),
        },
    ]
}

/// Every object file under the store, with its bytes.
fn stored_objects(data_dir: &Path) -> BTreeSet<(String, Vec<u8>)> {
    let mut out = BTreeSet::new();
    let root = data_dir.join("objects/sha256");
    for prefix in std::fs::read_dir(&root).unwrap() {
        for object in std::fs::read_dir(prefix.unwrap().path()).unwrap() {
            let path = object.unwrap().path();
            out.insert((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

#[test]
fn every_hostile_or_broken_upload_gets_its_exact_outcome_and_nothing_stored_is_lost() {
    let temp = tempfile::tempdir().unwrap();
    let store = ObjectStore::open(temp.path()).unwrap();
    let kept = receive_upload(&store, &small_xpt()[..], "deidentified", 1 << 20).unwrap();

    let cases = cases();
    assert!(cases.len() >= 25, "the issue asks for at least 25 cases");
    let mut failures = Vec::new();
    for case in cases {
        let before = stored_objects(temp.path());
        let outcome = receive_upload(&store, &case.bytes[..], case.classification, case.limit);
        let after = stored_objects(temp.path());
        let problem = match (&case.expect, outcome) {
            (Expect::Error(expected), Err(err)) if err.to_string() == *expected => None,
            (Expect::ErrorContaining(parts), Err(err))
                if parts.iter().all(|p| err.to_string().contains(p)) =>
            {
                None
            }
            (Expect::Accepted(check), Ok(upload)) => {
                check(&upload.table);
                None
            }
            (_, Err(err)) => Some(format!("got error: {err}")),
            (_, Ok(_)) => Some("was accepted".to_owned()),
        };
        if let Some(problem) = problem {
            failures.push(format!("{}: {problem}", case.name));
        }
        // Nothing already stored is lost or changed.
        assert!(
            before.is_subset(&after),
            "{}: a stored object was lost or changed",
            case.name
        );
        // Refusals before storing (limit, classification) store nothing at all.
        if case.limit < case.bytes.len() as u64 || case.classification != "synthetic" {
            assert_eq!(before, after, "{}: something was stored", case.name);
        }
        assert_eq!(
            store.get(&kept.object.digest).unwrap(),
            small_xpt(),
            "{}",
            case.name
        );
    }
    assert!(
        failures.is_empty(),
        "cases with the wrong outcome:\n{}",
        failures.join("\n")
    );
    assert_eq!(
        std::fs::read_dir(temp.path().join("objects/tmp"))
            .unwrap()
            .count(),
        0,
        "no temporary file is left behind"
    );
}

#[test]
fn an_unreadable_upload_reports_the_content_hash_it_was_stored_under() {
    let temp = tempfile::tempdir().unwrap();
    let store = ObjectStore::open(temp.path()).unwrap();
    let err = receive_upload(&store, &b"A,B\n1\n"[..], "synthetic", 1 << 20).unwrap_err();
    let UploadError::Unreadable { object, .. } = err else {
        panic!("{err:?}");
    };
    assert_eq!(store.get(&object.digest).unwrap(), b"A,B\n1\n");
}
