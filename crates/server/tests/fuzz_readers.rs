//! Fuzzing the readers (CSV, SAS XPORT v5 and v8, Dataset-JSON in its three forms) with
//! proptest: any bytes give a table or a typed error, never a panic; the two-halves CSV read always equals the one-pass read; and written tables read back
//! unchanged. A normal `cargo test` runs a few hundred cases per property; a long run is
//!
//! ```text
//! PROPTEST_CASES=200000 cargo test --release -p adamviz-server --test fuzz_readers
//! ```
//!
//! Inputs found by such runs that once failed are kept below as named regression tests.

use adamviz_engine::ingest::{
    csv::{read_csv_tuned, read_csv_with, write_table_csv, CsvError, CsvTuning},
    dataset_json::{
        writer::{compress, write, Form},
        Framing,
    },
    demo::generate_demo_table,
    read_dataset,
    table::{Column, ColumnData, SourceFormat, Table},
    xpt::read_xpt,
    xpt_writer::{write_xpt, write_xpt_v8},
};
use proptest::prelude::*;

/// The one-pass read (no split, whatever the size) and the two-halves read (split even for a
/// few bytes) of the same CSV.
fn both_csv_reads(bytes: &[u8]) -> (String, String) {
    let sequential = format!("{:?}", read_csv_with(bytes, usize::MAX));
    let halves = format!("{:?}", read_csv_with(bytes, 0));
    (sequential, halves)
}

/// CSV-like text built from the characters that matter to the reader's state machine.
fn csv_like() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => Just(b",".to_vec()),
        3 => Just(b"\n".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        3 => Just(b"\"".to_vec()),
        1 => Just(b"\"\"".to_vec()),
        4 => "[a-c1-3 .e+-]{1,4}".prop_map(String::into_bytes),
        1 => Just("é".as_bytes().to_vec()),
        1 => Just(vec![0xff]),
        1 => Just(b"1e309".to_vec()),
        1 => Just(b"NaN".to_vec()),
    ];
    proptest::collection::vec(piece, 0..80).prop_map(|pieces| pieces.concat())
}

/// A small valid XPT file to corrupt.
fn demo_xpt() -> Vec<u8> {
    write_xpt(&small_demo())
}

fn small_demo() -> Table {
    let mut table = generate_demo_table(2);
    table.columns.truncate(6);
    table
}

/// The small demo in every other written form: XPT v8, and Dataset-JSON as JSON, NDJSON and
/// zlib- and gzip-compressed NDJSON.
fn other_forms() -> &'static [Vec<u8>] {
    static FORMS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    FORMS.get_or_init(|| {
        let table = small_demo();
        let ndjson = write(&table, Form::Ndjson);
        vec![
            write_xpt_v8(&table),
            write(&table, Form::Json),
            compress(&ndjson, Framing::Zlib),
            compress(&ndjson, Framing::Gzip),
            ndjson,
        ]
    })
}

/// The fields of one record, as raw bytes.
type Fields = Vec<Vec<u8>>;

/// The records of `bytes` as the `csv` crate reads them (the reference the reader's own line
/// splitter must agree with): header and data records, fields as raw bytes.
fn reference_records(bytes: &[u8]) -> Option<(Fields, Vec<Fields>)> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(body);
    let header = reader
        .byte_headers()
        .ok()?
        .iter()
        .map(<[u8]>::to_vec)
        .collect();
    let mut records = Vec::new();
    for record in reader.byte_records() {
        records.push(record.ok()?.iter().map(<[u8]>::to_vec).collect());
    }
    Some((header, records))
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_reader_splits_records_and_fields_as_the_csv_crate_does(bytes in csv_like()) {
        let Some((header, records)) = reference_records(&bytes) else {
            return Ok(());
        };
        match read_csv_with(&bytes, usize::MAX) {
            Ok(table) => {
                prop_assert_eq!(table.columns.len(), header.len());
                prop_assert_eq!(table.row_count, records.len());
                for (index, column) in table.columns.iter().enumerate() {
                    if let ColumnData::Character(values) = &column.data {
                        for (row, record) in records.iter().enumerate() {
                            let expected = std::str::from_utf8(&record[index]).unwrap();
                            let expected = (!expected.is_empty()).then_some(expected);
                            prop_assert_eq!(values.get(row), expected, "row {} column {}", row, index);
                        }
                    }
                }
            }
            Err(CsvError::RaggedRow { expected, found, .. }) => {
                prop_assert_eq!(expected, header.len());
                prop_assert!(records.iter().any(|r| r.len() == found), "no record has {} fields", found);
            }
            Err(_) => {}
        }
    }

    #[test]
    fn any_bytes_give_a_table_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut xpt = b"HEADER RECORD*******LIBRARY HEADER RECORD!!!!!!!000000000000000000000000000000  ".to_vec();
        xpt.extend_from_slice(&bytes);
        // No panic; and whatever was read is a consistent table.
        let results = [read_dataset(&bytes), read_xpt(&xpt).map_err(Into::into)];
        for table in results.iter().flatten() {
            for column in &table.columns {
                prop_assert_eq!(column.data.len(), table.row_count);
            }
        }
    }

    #[test]
    fn csv_read_in_halves_equals_the_one_pass_read(bytes in csv_like()) {
        let (sequential, halves) = both_csv_reads(&bytes);
        prop_assert_eq!(sequential, halves);
    }

    #[test]
    fn a_corrupted_xpt_gives_a_table_or_an_error(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = demo_xpt();
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Ok(table) = read_xpt(&bytes) {
            // Whatever was read is a consistent table.
            for column in &table.columns {
                prop_assert_eq!(column.data.len(), table.row_count);
            }
        }
    }

    #[test]
    fn a_corrupted_xpt_v8_or_dataset_json_gives_a_table_or_an_error(
        form in 0usize..5,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = other_forms()[form].clone();
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Ok(table) = read_dataset(&bytes) {
            for column in &table.columns {
                prop_assert_eq!(column.data.len(), table.row_count);
            }
        }
    }

    #[test]
    fn dataset_json_round_trips_written_tables(
        mut rows in proptest::collection::vec(("[A-Za-z0-9 ,\"\\\n\u{e9}]{0,12}", proptest::option::of(-1.0e9f64..1.0e9)), 1..30),
        first_value in -1.0e9f64..1.0e9,
    ) {
        rows[0].1 = Some(first_value);
        let text: Vec<Option<String>> = rows
            .iter()
            .map(|(t, _)| Some(t.trim_end_matches(' ').to_owned()).filter(|t| !t.is_empty()))
            .collect();
        let table = Table {
            source_format: SourceFormat::DatasetJson,
            dataset_name: Some("ADFUZZ".into()),
            dataset_label: Some("Fuzz".into()),
            row_count: rows.len(),
            columns: vec![
                Column {
                    declared: Default::default(),
                    name: "TXT".into(),
                    label: Some("Text".into()),
                    format: None,
                    data: ColumnData::Character(text.iter().map(|t| t.as_deref()).collect()),
                },
                Column {
                    declared: Default::default(),
                    name: "NUM".into(),
                    label: Some("Number".into()),
                    format: None,
                    data: ColumnData::Numeric(rows.iter().map(|(_, v)| match v {
                        Some(v) => adamviz_engine::ingest::table::NumericCell::Value(*v),
                        None => adamviz_engine::ingest::table::NumericCell::Missing(
                            adamviz_engine::ingest::table::SasMissing::Dot,
                        ),
                    }).collect()),
                },
            ],
        };
        let ndjson = write(&table, Form::Ndjson);
        for bytes in [write(&table, Form::Json), compress(&ndjson, Framing::Zlib), ndjson] {
            let back = read_dataset(&bytes).unwrap();
            prop_assert_eq!(&back.columns[0].data, &table.columns[0].data);
            prop_assert_eq!(&back.columns[1].data, &table.columns[1].data);
        }
    }

    #[test]
    fn csv_round_trips_written_tables(
        mut rows in proptest::collection::vec(("x[A-Za-z0-9 ,\"\n]{0,12}", proptest::option::of(-1.0e9f64..1.0e9)), 1..30),
        first_value in -1.0e9f64..1.0e9,
    ) {
        // An all-missing numeric column reads back as text: the first row has a value.
        rows[0].1 = Some(first_value);
        let table = Table {
            source_format: SourceFormat::Csv,
            dataset_name: None,
            dataset_label: None,
            row_count: rows.len(),
            columns: vec![
                Column {
                    declared: Default::default(),
                    name: "TXT".into(),
                    label: None,
                    format: None,
                    data: ColumnData::Character(rows.iter().map(|(t, _)| Some(t.as_str())).collect()),
                },
                Column {
                    declared: Default::default(),
                    name: "NUM \"q\"".into(),
                    label: None,
                    format: None,
                    data: ColumnData::Numeric(rows.iter().map(|(_, v)| match v {
                        Some(v) => adamviz_engine::ingest::table::NumericCell::Value(*v),
                        None => adamviz_engine::ingest::table::NumericCell::Missing(
                            adamviz_engine::ingest::table::SasMissing::Dot,
                        ),
                    }).collect()),
                },
            ],
        };
        let mut bytes = Vec::new();
        write_table_csv(&table, &mut bytes).unwrap();
        for parallel_min in [0, usize::MAX] {
            let back = read_csv_with(&bytes, parallel_min).unwrap();
            prop_assert_eq!(&back, &table);
        }
    }
}

#[test]
fn a_large_csv_read_in_halves_equals_the_one_pass_read() {
    // The demo dataset as CSV, with quoted fields holding commas, quotes and line breaks placed
    // so that the middle of the file falls inside one of them.
    let table = generate_demo_table(12);
    let mut bytes = Vec::new();
    write_table_csv(&table, &mut bytes).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let middle = text.len() / 2;
    let line_start = text[..middle].rfind('\n').unwrap() + 1;
    let mut hostile = text[..line_start].to_owned();
    let fields = text[line_start..]
        .split('\n')
        .next()
        .unwrap()
        .matches(',')
        .count()
        + 1;
    let quoted = "\"a, \"\"b\"\"\nc\n\nd\"";
    hostile.push_str(&vec![quoted; fields].join(","));
    hostile.push('\n');
    hostile.push_str(&text[line_start..]);
    let (sequential, halves) = both_csv_reads(hostile.as_bytes());
    assert!(sequential.starts_with("Ok("), "{}", &sequential[..200]);
    assert_eq!(sequential, halves);
}

/// Found by `csv_read_in_halves_equals_the_one_pass_read` in a long run: blank lines before the
/// header put the middle of the file before the header's end, and the split read the header as
/// a data row.
#[test]
fn regression_a_split_never_falls_before_the_header_ends() {
    for bytes in [
        &b"\n\n\n+"[..],
        b"\n\n\nA,B\r\n1,2\r\n",
        b"\r\n\r\nA\n\"x\ny\"\n",
    ] {
        let (sequential, halves) = both_csv_reads(bytes);
        assert_eq!(sequential, halves, "{:?}", String::from_utf8_lossy(bytes));
    }
    assert_eq!(read_csv_with(b"\n\n\n+", 0), Err(CsvError::NoRows));
}

/// Found by `csv_read_in_halves_equals_the_one_pass_read`: the csv reader puts the start of a
/// record that follows a CRLF line end on the previous line, so errors named the line above
/// the broken one (in one-pass reads only, which is how the two reads came to disagree).
#[test]
fn regression_error_lines_after_crlf_are_the_lines_an_editor_shows() {
    let found = b"\n+\n\"\"\"\"\r\n,1e309,";
    let expected = Err(CsvError::RaggedRow {
        line: 4,
        expected: 1,
        found: 3,
    });
    assert_eq!(read_csv_with(found, usize::MAX), expected);
    assert_eq!(read_csv_with(found, 0), expected);
    assert_eq!(
        read_csv_with(b"A,B\r\n1,2\r\n3\r\n", usize::MAX),
        Err(CsvError::RaggedRow {
            line: 3,
            expected: 2,
            found: 1
        })
    );
    assert_eq!(
        read_csv_with(b"A,B\r\n1,2\r\n\r\n1e309,2\r\n", usize::MAX),
        Err(CsvError::NumberOutOfRange {
            line: 4,
            column: "A".into(),
            text: "1e309".into()
        })
    );
}

/// Every way of reading `bytes`: one pass or two halves, numbers parsed while reading or
/// interned as text first. All must give the same table or the same error.
fn every_csv_read(bytes: &[u8]) -> Vec<String> {
    let mut reads = Vec::new();
    for parallel_min_bytes in [usize::MAX, 0] {
        for numbers_directly in [true, false] {
            reads.push(format!(
                "{:?}",
                read_csv_tuned(
                    bytes,
                    CsvTuning {
                        parallel_min_bytes,
                        numbers_directly
                    }
                )
            ));
        }
    }
    reads
}

/// One column of a long CSV: many distinct numbers (written with trailing zeros, so a text
/// column must keep them verbatim), optionally with one surprise cell at some row, or few
/// distinct numbers, or text.
fn long_column(rows: usize) -> impl Strategy<Value = Vec<String>> {
    let surprise = prop_oneof![
        Just("n/a"),
        Just("NaN"),
        Just("1e400"),
        Just(""),
        Just(" 7"),
        Just("+3."),
        Just("\"1,5\""),
        Just("é"),
        Just("inf"),
    ];
    prop_oneof![
        3 => (any::<u32>(), proptest::option::of((0..rows, surprise))).prop_map(move |(seed, odd)| {
            let mut cells: Vec<String> = (0..rows)
                .map(|row| format!("{}.{:02}0", (seed as usize + row * 7) % 100_000, row % 100))
                .collect();
            if let Some((row, cell)) = odd {
                cells[row] = cell.to_owned();
            }
            cells
        }),
        1 => Just((0..rows).map(|row| format!("{}", row % 5)).collect()),
        1 => Just((0..rows).map(|row| format!("T{}", row % 300)).collect()),
    ]
}

fn long_csv() -> impl Strategy<Value = Vec<u8>> {
    (260usize..900, 1usize..4)
        .prop_flat_map(|(rows, width)| proptest::collection::vec(long_column(rows), width))
        .prop_map(|columns| {
            let mut text = (0..columns.len())
                .map(|c| format!("C{c}"))
                .collect::<Vec<_>>()
                .join(",");
            text.push('\n');
            for row in 0..columns[0].len() {
                let cells: Vec<&str> = columns.iter().map(|c| c[row].as_str()).collect();
                text.push_str(&cells.join(","));
                text.push('\n');
            }
            text.into_bytes()
        })
}

proptest! {
    // Each case reads a CSV of hundreds of rows four ways: 64 by default, PROPTEST_CASES for
    // a longer run.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64)
    ))]

    /// Parsing numbers while reading is only a faster way to the same result.
    #[test]
    fn numbers_parsed_while_reading_give_the_interned_result(bytes in long_csv()) {
        let reads = every_csv_read(&bytes);
        for read in &reads[1..] {
            prop_assert_eq!(read, &reads[0]);
        }
    }
}

#[test]
fn a_column_of_many_numbers_with_one_text_cell_keeps_every_value_verbatim() {
    let mut text = String::from("AVAL,N\n");
    for row in 0..600 {
        let value = if row == 500 {
            "n/a".to_owned()
        } else {
            format!("{row}.50")
        };
        text.push_str(&format!("{value},{row}\n"));
    }
    for parallel_min_bytes in [usize::MAX, 0] {
        let table = read_csv_with(text.as_bytes(), parallel_min_bytes).unwrap();
        let ColumnData::Character(aval) = &table.columns[0].data else {
            panic!("AVAL must be text: it has a cell that is not a number")
        };
        assert_eq!(aval.get(0), Some("0.50"));
        assert_eq!(aval.get(500), Some("n/a"));
        assert_eq!(aval.get(599), Some("599.50"));
        let ColumnData::Numeric(n) = &table.columns[1].data else {
            panic!("N is numeric")
        };
        assert_eq!(n.value(599), Some(599.0));
    }
    // A non-finite number late in such a column is the error it always was, on its line.
    let text = text.replace("n/a", "NaN");
    assert_eq!(
        read_csv_with(text.as_bytes(), usize::MAX),
        Err(CsvError::NonFiniteNumber {
            line: 502,
            column: "AVAL".into(),
            text: "NaN".into()
        })
    );
}

#[test]
fn regression_a_number_column_keeps_every_cell_when_a_text_column_precedes_it() {
    // Found by `numbers_parsed_while_reading_give_the_interned_result`: three columns of 516
    // distinct numbers, the first with one text cell in its first row. Read in two halves, the
    // second half was too short to read C1 as numbers, so its text was made numbers; then C0
    // made both halves be read again, which gave C1 its text form back, and the join dropped
    // that half of C1 (the table had 516 rows but C1 only 256 values).
    let column = |seed: usize| -> Vec<String> {
        (0..516)
            .map(|row| format!("{}.{:02}0", (seed + row * 7) % 100_000, row % 100))
            .collect()
    };
    let (mut first, second, third) = (column(0), column(97_284), column(9_979));
    first[0] = "n/a".to_owned();
    let mut text = String::from("C0,C1,C2\n");
    for row in 0..516 {
        text.push_str(&format!("{},{},{}\n", first[row], second[row], third[row]));
    }
    let reads = every_csv_read(text.as_bytes());
    for read in &reads[1..] {
        assert_eq!(read, &reads[0]);
    }
}
