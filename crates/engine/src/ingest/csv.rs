//! CSV reader: UTF-8 (with or without a byte-order mark), comma-separated, RFC 4180 quoting, one
//! header row, empty cell = missing. A column is numeric when every non-empty cell is a finite
//! decimal number; otherwise it is text, kept verbatim.
//!
//! Errors name the line (1-based, as an editor shows it) and the column.
//!
//! Here: the checks of the whole text, the header, and typing the columns. The records are read
//! in `csv/records.rs`, each column's cells kept in `csv/cells.rs`, numbers recognised in
//! `csv/number.rs`.

mod cells;
mod lines;
mod number;
mod records;

use cells::ColumnCells;
use number::{number_shape, NumberShape};
use records::{map_in_parallel, read_records};

use super::table::{
    Column, ColumnData, NumericCell, NumericValues, SasMissing, SourceFormat, Table, TextValues,
};

/// Why a CSV file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CsvError {
    /// Zero bytes (or only a byte-order mark).
    #[error("the CSV file is empty")]
    Empty,
    /// Not valid UTF-8.
    #[error("the CSV file is not valid UTF-8: invalid byte sequence at byte {byte_offset} (line {line}); save it as UTF-8")]
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        byte_offset: usize,
        /// Its line.
        line: usize,
    },
    /// A NUL byte, which never belongs in a text file.
    #[error("the CSV file contains a NUL byte at byte {byte_offset} (line {line}); it is not a text file")]
    NulByte {
        /// Offset of the NUL.
        byte_offset: usize,
        /// Its line.
        line: usize,
    },
    /// A header row and nothing else.
    #[error("the CSV file has a header row but no data rows")]
    NoRows,
    /// A header cell is empty.
    #[error("column {position} of the CSV header has no name")]
    EmptyColumnName {
        /// 1-based column position.
        position: usize,
    },
    /// Two header cells are equal.
    #[error("the CSV header names column {name:?} twice (columns {first} and {second})")]
    DuplicateColumnName {
        /// The name.
        name: String,
        /// 1-based position of the first.
        first: usize,
        /// 1-based position of the second.
        second: usize,
    },
    /// More columns than adamviz reads.
    #[error("the CSV header has {found} columns; adamviz reads at most {limit}")]
    TooManyColumns {
        /// Columns in the header.
        found: usize,
        /// The limit ([`MAX_COLUMNS`]).
        limit: usize,
    },
    /// A record longer than adamviz reads.
    #[error("line {line} of the CSV file starts a record of more than {limit} bytes; adamviz reads records of at most {limit} bytes")]
    RecordTooLong {
        /// 1-based line where the record starts.
        line: usize,
        /// The limit ([`MAX_RECORD_BYTES`]).
        limit: usize,
    },
    /// A cell longer than adamviz reads.
    #[error("line {line}, column {column:?}: a cell of {length} bytes; adamviz reads cells of at most {limit} bytes")]
    CellTooLong {
        /// 1-based line of the record.
        line: usize,
        /// Column name.
        column: String,
        /// The cell's length in bytes.
        length: usize,
        /// The limit ([`MAX_CELL_BYTES`]).
        limit: usize,
    },
    /// A row with a different number of fields than the header.
    #[error("line {line} of the CSV file has {found} fields, but the header has {expected}")]
    RaggedRow {
        /// 1-based line where the row starts.
        line: usize,
        /// Fields in the header.
        expected: usize,
        /// Fields in the row.
        found: usize,
    },
    /// A number too large for a double, such as `1e309`.
    #[error(
        "line {line}, column {column:?}: {text:?} is too large to be a number (beyond ±1.8e308)"
    )]
    NumberOutOfRange {
        /// 1-based line.
        line: usize,
        /// Column name.
        column: String,
        /// The cell as written.
        text: String,
    },
    /// `NaN` or `Inf` in an otherwise numeric column.
    #[error("line {line}, column {column:?}: {text:?} is not a finite number; leave the cell empty for a missing value")]
    NonFiniteNumber {
        /// 1-based line.
        line: usize,
        /// Column name.
        column: String,
        /// The cell as written.
        text: String,
    },
    /// A malformed quoted field or other syntax error.
    #[error("line {line} of the CSV file is malformed: {detail}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What the CSV parser reported.
        detail: String,
    },
}

/// The 1-based line of the record that starts at `record_start`. The csv reader puts a record's
/// start just after the previous record's end, which for CRLF line ends (and after blank lines)
/// is on the previous line: line breaks are skipped first, so the line is the one an editor shows.
fn record_line(body: &[u8], record_start: usize) -> usize {
    let mut at = record_start.min(body.len());
    while at < body.len() && matches!(body[at], b'\r' | b'\n') {
        at += 1;
    }
    line_of(body, at)
}

/// 1-based line of `byte_offset` in `bytes`.
fn line_of(bytes: &[u8], byte_offset: usize) -> usize {
    1 + bytes[..byte_offset].iter().filter(|&&b| b == b'\n').count()
}

/// Files at least this large are read in two halves at once.
pub const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// The most columns a CSV file may have (SAS allows 32,767 variables in a data set of the
/// transport formats adamviz reads; ADaM data sets have tens to hundreds).
pub const MAX_COLUMNS: usize = 32_767;

/// The longest record (header included), in bytes.
pub const MAX_RECORD_BYTES: usize = 16 << 20;

/// The longest cell, in bytes (SAS's longest character value is 32,767 bytes).
pub const MAX_CELL_BYTES: usize = 32_767;

/// Reads a CSV file into a table.
pub fn read_csv(bytes: &[u8]) -> Result<Table, CsvError> {
    read_csv_with(bytes, PARALLEL_MIN_BYTES)
}

/// [`read_csv`], reading in two halves at once when the file has at least `parallel_min_bytes`
/// (tests pass 0 to check that the halves always give the sequential result).
pub fn read_csv_with(bytes: &[u8], parallel_min_bytes: usize) -> Result<Table, CsvError> {
    read_csv_tuned(
        bytes,
        CsvTuning {
            parallel_min_bytes,
            numbers_directly: true,
        },
    )
}

/// How [`read_csv_tuned`] reads; neither changes the result (the tests check it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvTuning {
    /// Files at least this large are read in two halves at once.
    pub parallel_min_bytes: usize,
    /// Columns of many distinct numbers are parsed as numbers while reading instead of being
    /// interned as text first (see `csv/cells.rs`).
    pub numbers_directly: bool,
}

/// [`read_csv`] with the given tuning.
pub fn read_csv_tuned(bytes: &[u8], tuning: CsvTuning) -> Result<Table, CsvError> {
    // 1. Text checks before parsing, so the errors point at bytes, not at parser states.
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let bom = bytes.len() - body.len();
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(CsvError::Empty);
    }
    if let Some(at) = memchr::memchr(0, body) {
        return Err(CsvError::NulByte {
            byte_offset: bom + at,
            line: line_of(body, at),
        });
    }
    // UTF-8 is checked per distinct value as the cells are interned (every byte that is not a
    // delimiter, quote or line break belongs to a cell, and those are ASCII), which spares a
    // pass over the file. When anything goes wrong, the file is checked whole, so invalid UTF-8
    // is reported first and where it is, as if it had been checked before parsing.
    read_valid_csv(body, tuning).map_err(|problem| match std::str::from_utf8(body) {
        Err(err) => {
            let at = err.valid_up_to();
            CsvError::InvalidUtf8 {
                byte_offset: bom + at,
                line: line_of(body, at),
            }
        }
        Ok(_) => problem,
    })
}

/// Reads the CSV text `body` (after the byte-order mark).
fn read_valid_csv(body: &[u8], tuning: CsvTuning) -> Result<Table, CsvError> {
    let (header, header_end) = read_header(body)?;
    // 3. The records. Every cell is interned as text first: a column's distinct values are
    // then typed once each, instead of parsing every cell as a number.
    let (first, second) = read_records(body, &header, header_end, tuning)?;
    let row_count = first.first().map_or(0, ColumnCells::len)
        + second
            .as_ref()
            .and_then(|s| s.first())
            .map_or(0, ColumnCells::len);
    if row_count == 0 {
        return Err(CsvError::NoRows);
    }
    let columns = join_and_type(body, header, first, second)?;
    Ok(Table {
        source_format: SourceFormat::Csv,
        dataset_name: None,
        dataset_label: None,
        columns,
        row_count,
    })
}

/// Step 2, the header row's names and where it ends (the reader skips blank lines before it:
/// a split of the file must come after it). The row may be no longer than a record: it is read
/// from the first MAX_RECORD_BYTES + 1 bytes only, and its fields are counted before any is
/// kept (a header of millions of empty names would otherwise take memory for each before being
/// refused).
fn read_header(body: &[u8]) -> Result<(Vec<String>, usize), CsvError> {
    let header_window = &body[..body.len().min(MAX_RECORD_BYTES + 1)];
    let whole_text = body.len() <= MAX_RECORD_BYTES;
    let Some(columns) = header_field_count(header_window, whole_text) else {
        return Err(CsvError::RecordTooLong {
            line: 1,
            limit: MAX_RECORD_BYTES,
        });
    };
    if columns > MAX_COLUMNS {
        return Err(CsvError::TooManyColumns {
            found: columns,
            limit: MAX_COLUMNS,
        });
    }
    let mut header_reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(header_window);
    let header: Vec<String> = header_reader
        .headers()
        .map_err(|err| CsvError::Syntax {
            line: err.position().map_or(1, |p| p.line() as usize),
            detail: err.to_string(),
        })?
        .iter()
        .map(str::to_owned)
        .collect();
    let header_end = header_reader.position().byte() as usize;
    // The first problem in header order: an empty name, or a name given twice.
    let empty = header.iter().position(|name| name.trim().is_empty());
    let duplicate = first_duplicate(header.iter().map(String::as_str));
    match (empty, duplicate) {
        (Some(position), duplicate) if duplicate.is_none_or(|(_, second)| position < second) => {
            Err(CsvError::EmptyColumnName {
                position: position + 1,
            })
        }
        (_, Some((first, second))) => Err(CsvError::DuplicateColumnName {
            name: header[second].clone(),
            first: first + 1,
            second: second + 1,
        }),
        _ => Ok((header, header_end)),
    }
}

/// Step 4: join the halves and type each column, the columns shared out over the cores. The
/// first error in column order is reported, as a column-by-column pass would. `read_records`
/// gave both halves of a column the same form.
fn join_and_type(
    body: &[u8],
    header: Vec<String>,
    first: Vec<ColumnCells>,
    second: Option<Vec<ColumnCells>>,
) -> Result<Vec<Column>, CsvError> {
    let mut second = second.map(Vec::into_iter);
    let pieces: Vec<(String, ColumnCells, Option<ColumnCells>)> = header
        .into_iter()
        .zip(first)
        .map(|(name, first)| (name, first, second.as_mut().and_then(Iterator::next)))
        .collect();
    map_in_parallel(pieces, |(name, first, rest)| match (first, rest) {
        (ColumnCells::Numbers(mut numbers), rest) => {
            match rest {
                Some(ColumnCells::Numbers(rest)) => numbers.append(rest),
                None => {}
                Some(ColumnCells::Text(_)) => unreachable!("read_records gives halves one form"),
            }
            Ok(Column {
                declared: Default::default(),
                name,
                label: None,
                format: None,
                data: ColumnData::Numeric(numbers),
            })
        }
        (ColumnCells::Text(mut values), rest) => {
            match rest {
                Some(ColumnCells::Text(rest)) => values.append(rest),
                None => {}
                Some(ColumnCells::Numbers(_)) => unreachable!("read_records gives halves one form"),
            }
            type_column(name, values.finish(), body)
        }
    })
    .into_iter()
    .collect()
}

/// The first name equal to an earlier one, as (earlier position, its position), 0-based. Each
/// name is looked up once in a map of the names before it: linear in the number of names.
fn first_duplicate<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<(usize, usize)> {
    let mut seen: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    for (position, name) in names.into_iter().enumerate() {
        if let Some(&first) = seen.get(name) {
            return Some((first, position));
        }
        seen.insert(name, position);
    }
    None
}

/// The number of fields of the first record of `window` (blank lines before it skipped, as the
/// header reader does), counted by the csv state machine without keeping them; `None` when
/// the record does not end within `window` and `window` is not the whole text.
fn header_field_count(window: &[u8], whole_text: bool) -> Option<usize> {
    let mut core = csv_core::Reader::new();
    // The fields' bytes and ends are not needed: full buffers are simply reused.
    let mut output = [0u8; 4096];
    let mut ends = [0usize; 256];
    let (mut input, mut fields) = (window, 0);
    loop {
        let (result, read, _, ended) = core.read_record(input, &mut output, &mut ends);
        input = &input[read..];
        fields += ended;
        match result {
            // The window is used up: the record goes on beyond it, unless the text ends here
            // (an empty input next says so).
            csv_core::ReadRecordResult::InputEmpty if !whole_text => return None,
            csv_core::ReadRecordResult::InputEmpty
            | csv_core::ReadRecordResult::OutputFull
            | csv_core::ReadRecordResult::OutputEndsFull => {}
            csv_core::ReadRecordResult::Record | csv_core::ReadRecordResult::End => {
                return Some(fields)
            }
        }
    }
}

/// The 1-based line on which data row `row` (0-based, after the header) starts. Only errors
/// need it, so the rows are read again rather than every line being remembered.
fn line_of_row(body: &[u8], row: usize) -> usize {
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(body);
    let mut record = ::csv::ByteRecord::new();
    for _ in 0..=row {
        if !reader.read_byte_record(&mut record).unwrap_or(false) {
            return 0;
        }
    }
    record_line(body, record.position().map_or(0, |p| p.byte() as usize))
}

/// Numeric when every non-empty cell is a number (and at least one is); text otherwise. Each
/// distinct value is classified once.
fn type_column(name: String, values: TextValues, body: &[u8]) -> Result<Column, CsvError> {
    let text = |values| Column {
        declared: Default::default(),
        name: name.clone(),
        label: None,
        format: None,
        data: ColumnData::Character(values),
    };
    if values.levels().is_empty() {
        // Every cell is empty: text with no values.
        return Ok(text(values));
    }
    let mut numbers = Vec::with_capacity(values.levels().len() + 1);
    numbers.push(NumericCell::Missing(SasMissing::Dot));
    let mut problem_codes = Vec::new();
    for (index, level) in values.levels().iter().enumerate() {
        match number_shape(level.as_bytes()) {
            NumberShape::Finite(value) => numbers.push(NumericCell::Value(value)),
            // Text column: keep every cell verbatim.
            NumberShape::NotANumber => return Ok(text(values)),
            NumberShape::OutOfRange | NumberShape::NonFinite => {
                problem_codes.push(index as u32 + 1);
                numbers.push(NumericCell::Missing(SasMissing::Dot));
            }
        }
    }
    if !problem_codes.is_empty() {
        // Every other cell is a number: this is a numeric column with a value that is not one.
        // Report the first such cell in file order.
        let row = values
            .codes()
            .iter()
            .position(|code| problem_codes.contains(code))
            .expect("a problem level occurs in some row");
        let cell = values.get(row).unwrap_or_default().to_owned();
        let line = line_of_row(body, row);
        return Err(match number_shape(cell.as_bytes()) {
            NumberShape::OutOfRange => CsvError::NumberOutOfRange {
                line,
                column: name,
                text: cell,
            },
            _ => CsvError::NonFiniteNumber {
                line,
                column: name,
                text: cell,
            },
        });
    }
    let mut cells = NumericValues::with_capacity(values.len());
    for &code in values.codes() {
        cells.push(numbers[code as usize]);
    }
    Ok(Column {
        declared: Default::default(),
        name,
        label: None,
        format: None,
        data: ColumnData::Numeric(cells),
    })
}

/// Writes `table` as CSV (header row, RFC 4180 quoting where needed, numbers in shortest
/// round-trip form, missing as an empty cell): the inverse of [`read_csv`] for finite data.
pub fn write_table_csv(table: &Table, out: impl std::io::Write) -> Result<(), ::csv::Error> {
    let mut writer = ::csv::Writer::from_writer(out);
    writer.write_record(table.columns.iter().map(|c| c.name.as_str()))?;
    let mut record: Vec<String> = Vec::with_capacity(table.columns.len());
    for row in 0..table.row_count {
        record.clear();
        for column in &table.columns {
            record.push(match &column.data {
                ColumnData::Numeric(cells) => match cells.get(row) {
                    NumericCell::Value(value) => format!("{value}"),
                    NumericCell::Missing(_) => String::new(),
                },
                ColumnData::Character(values) => values.get(row).unwrap_or_default().to_owned(),
            });
        }
        writer.write_record(&record)?;
    }
    writer.flush()?;
    Ok(())
}

#[cfg(test)]
mod header_tests {
    use super::*;

    /// Before, each header name was compared with every name before it: n²/2 comparisons, so
    /// a million names (5 × 10^11 comparisons) would not finish in a test's time. Each name is
    /// now looked up once.
    #[test]
    fn duplicate_header_check_is_linear_in_columns() {
        let mut names: Vec<String> = (0..1_000_000).map(|i| format!("V{i}")).collect();
        assert_eq!(first_duplicate(names.iter().map(String::as_str)), None);
        names.push("V123456".to_owned());
        assert_eq!(
            first_duplicate(names.iter().map(String::as_str)),
            Some((123_456, 1_000_000))
        );
    }

    /// The first problem in header order is the one reported.
    #[test]
    fn an_empty_name_or_a_repeated_one_whichever_comes_first() {
        let error = |text: &str| read_csv(text.as_bytes()).unwrap_err();
        assert_eq!(
            error("A,,A\n1,2,3\n"),
            CsvError::EmptyColumnName { position: 2 }
        );
        assert_eq!(
            error("A,A,\n1,2,3\n"),
            CsvError::DuplicateColumnName {
                name: "A".into(),
                first: 1,
                second: 2
            }
        );
        assert_eq!(
            error("A, ,B, \n1,2,3,4\n"),
            CsvError::EmptyColumnName { position: 2 }
        );
    }
}
