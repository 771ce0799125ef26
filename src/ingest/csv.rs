//! CSV reader: UTF-8 (with or without a byte-order mark), comma-separated, RFC 4180 quoting, one
//! header row, empty cell = missing. A column is numeric when every non-empty cell is a finite
//! decimal number; otherwise it is text, kept verbatim.
//!
//! Errors name the line (1-based, as an editor shows it) and the column.

use super::table::{
    Column, ColumnData, NumericCell, NumericValues, SasMissing, SourceFormat, Table, TextBuilder,
    TextValues,
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

/// 1-based line of `byte_offset` in `bytes`.
fn line_of(bytes: &[u8], byte_offset: usize) -> usize {
    1 + bytes[..byte_offset].iter().filter(|&&b| b == b'\n').count()
}

/// How a cell reads as a number.
enum NumberShape {
    Finite(f64),
    OutOfRange,
    NonFinite,
    NotANumber,
}

/// Strict decimal grammar: `[+-]digits[.digits][e[+-]digits]` (or `.digits`), surrounding
/// blanks allowed. Rust's own parser also accepts `inf` and `NaN`, which are classified apart.
fn number_shape(cell: &str) -> NumberShape {
    let text = cell.trim_matches(' ');
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let lower = unsigned.to_ascii_lowercase();
    if matches!(lower.as_str(), "nan" | "inf" | "infinity") {
        return NumberShape::NonFinite;
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (integer, fraction) = match mantissa.split_once('.') {
        Some((integer, fraction)) => (integer, Some(fraction)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(integer)
        && fraction.is_none_or(digits)
        && !(integer.is_empty() && fraction.is_none_or(str::is_empty));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    if !(mantissa_ok && exponent_ok) {
        return NumberShape::NotANumber;
    }
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => NumberShape::Finite(value),
        Ok(_) => NumberShape::OutOfRange,
        Err(_) => NumberShape::NotANumber,
    }
}

/// Reads a CSV file into a table.
pub fn read_csv(bytes: &[u8]) -> Result<Table, CsvError> {
    // 1. Text checks before parsing, so the errors point at bytes, not at parser states.
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let bom = bytes.len() - body.len();
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(CsvError::Empty);
    }
    if let Some(at) = body.iter().position(|&b| b == 0) {
        return Err(CsvError::NulByte {
            byte_offset: bom + at,
            line: line_of(body, at),
        });
    }
    if let Err(err) = std::str::from_utf8(body) {
        let at = err.valid_up_to();
        return Err(CsvError::InvalidUtf8 {
            byte_offset: bom + at,
            line: line_of(body, at),
        });
    }

    // 2. Parse records; the csv crate refuses rows whose length differs from the header's.
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(body);
    let syntax = |err: ::csv::Error| -> CsvError {
        let line = err.position().map_or(0, |p| p.line() as usize);
        match err.kind() {
            ::csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => CsvError::RaggedRow {
                line,
                expected: *expected_len as usize,
                found: *len as usize,
            },
            _ => CsvError::Syntax {
                line,
                detail: err.to_string(),
            },
        }
    };
    let header: Vec<String> = reader
        .headers()
        .map_err(syntax)?
        .iter()
        .map(str::to_owned)
        .collect();
    for (index, name) in header.iter().enumerate() {
        if name.trim().is_empty() {
            return Err(CsvError::EmptyColumnName {
                position: index + 1,
            });
        }
        if let Some(first) = header[..index].iter().position(|other| other == name) {
            return Err(CsvError::DuplicateColumnName {
                name: name.clone(),
                first: first + 1,
                second: index + 1,
            });
        }
    }
    // Every cell is interned as text first: a column's distinct values are then typed once
    // each, instead of parsing every cell as a number.
    let mut cells: Vec<TextBuilder> = header.iter().map(|_| TextBuilder::default()).collect();
    let mut record = ::csv::ByteRecord::new();
    while reader.read_byte_record(&mut record).map_err(syntax)? {
        for (column, cell) in cells.iter_mut().zip(record.iter()) {
            if cell.is_empty() {
                column.push_missing();
            } else {
                // The whole body was checked as UTF-8 above, so this cannot fail.
                column.push_utf8(cell).map_err(|_| CsvError::Syntax {
                    line: record.position().map_or(0, |p| p.line() as usize),
                    detail: "a field is not UTF-8".to_owned(),
                })?;
            }
        }
    }
    let row_count = cells.first().map_or(0, TextBuilder::len);
    if row_count == 0 {
        return Err(CsvError::NoRows);
    }

    // 3. Type each column.
    let columns = header
        .into_iter()
        .zip(cells)
        .map(|(name, values)| type_column(name, values.finish(), body))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Table {
        source_format: SourceFormat::Csv,
        dataset_name: None,
        dataset_label: None,
        columns,
        row_count,
    })
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
    record.position().map_or(0, |p| p.line() as usize)
}

/// Numeric when every non-empty cell is a number (and at least one is); text otherwise. Each
/// distinct value is classified once.
fn type_column(name: String, values: TextValues, body: &[u8]) -> Result<Column, CsvError> {
    let text = |values| Column {
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
        match number_shape(level) {
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
        return Err(match number_shape(&cell) {
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
