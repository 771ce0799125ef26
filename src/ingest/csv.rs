//! CSV reader: UTF-8 (with or without a byte-order mark), comma-separated, RFC 4180 quoting, one
//! header row, empty cell = missing. A column is numeric when every non-empty cell is a finite
//! decimal number; otherwise it is text, kept verbatim.
//!
//! Errors name the line (1-based, as an editor shows it) and the column.

mod cells;

use cells::{numbers_of, ColumnCells, PushError};

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

/// How a cell reads as a number.
enum NumberShape {
    Finite(f64),
    OutOfRange,
    NonFinite,
    NotANumber,
}

/// Strict decimal grammar: `[+-]digits[.digits][e[+-]digits]` (or `.digits`), surrounding
/// blanks allowed, checked in one pass over the bytes.
///
/// A number of at most 19 digits whose digits make an integer below 2^53, scaled by a power of
/// ten up to 10^22, is computed here as one multiplication or division of two exactly
/// representable doubles, which IEEE 754 rounds correctly: the value Rust's parser gives (the
/// "fast path" of every correct float parser). That covers the cells of a typical ADaM export
/// (days, sequence numbers, results with a few decimals). Any other cell that passes the grammar
/// is handed to Rust's parser (which would also accept `inf` and `NaN`: those are classified
/// apart).
fn number_shape(cell: &[u8]) -> NumberShape {
    /// 10^0 … 10^22, every one exact in a double.
    const POWERS_OF_TEN: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let first = cell.iter().position(|&b| b != b' ').unwrap_or(cell.len());
    let last = cell
        .iter()
        .rposition(|&b| b != b' ')
        .map_or(first, |at| at + 1);
    let bytes = &cell[first..last];
    // The digits read so far, as an integer (exact while there are at most 19 of them).
    let mut mantissa: u64 = 0;
    let digits_from = |mut at: usize, mantissa: &mut u64| {
        while let Some(digit) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            *mantissa = mantissa
                .wrapping_mul(10)
                .wrapping_add(u64::from(digit - b'0'));
            at += 1;
        }
        at
    };
    let negative = bytes.first() == Some(&b'-');
    let mut at = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let unsigned = &bytes[at..];
    let integer_end = digits_from(at, &mut mantissa);
    let mut mantissa_digits = integer_end - at;
    let mut fraction_digits = 0;
    at = integer_end;
    if bytes.get(at) == Some(&b'.') {
        let fraction_end = digits_from(at + 1, &mut mantissa);
        fraction_digits = fraction_end - (at + 1);
        mantissa_digits += fraction_digits;
        at = fraction_end;
    }
    let mut exponent_ok = true;
    let mut exponent: Option<i64> = Some(0);
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        let exponent_negative = bytes.get(at + 1) == Some(&b'-');
        at += 1 + usize::from(matches!(bytes.get(at + 1), Some(b'+' | b'-')));
        let mut written: u64 = 0;
        let exponent_end = digits_from(at, &mut written);
        exponent_ok = exponent_end > at;
        // More than 4 digits: leave it to the parser (it may still be in range, e.g. 1e-00005).
        exponent = (exponent_end - at <= 4).then(|| {
            let written = written as i64;
            if exponent_negative {
                -written
            } else {
                written
            }
        });
        at = exponent_end;
    }
    if mantissa_digits == 0 || !exponent_ok || at != bytes.len() {
        return if [&b"nan"[..], b"inf", b"infinity"]
            .iter()
            .any(|word| unsigned.eq_ignore_ascii_case(word))
        {
            NumberShape::NonFinite
        } else {
            NumberShape::NotANumber
        };
    }
    let exact = mantissa_digits <= 19 && mantissa < 1 << 53;
    let scale = exponent.map(|e| e - fraction_digits as i64);
    if let Some(scale) = scale.filter(|s| exact && s.abs() <= 22) {
        let whole = mantissa as f64;
        let power = POWERS_OF_TEN[scale.unsigned_abs() as usize];
        let value = if scale >= 0 {
            whole * power
        } else {
            whole / power
        };
        // A product can overflow only beyond 2^53 × 10^22, far below the largest double.
        return NumberShape::Finite(if negative { -value } else { value });
    }
    // The grammar admits ASCII only.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return NumberShape::NotANumber;
    };
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => NumberShape::Finite(value),
        Ok(_) => NumberShape::OutOfRange,
        Err(_) => NumberShape::NotANumber,
    }
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
    // 2. The header row (no longer than a record may be).
    let first_line = memchr::memchr(b'\n', &body[..body.len().min(MAX_RECORD_BYTES + 1)]);
    if first_line.is_none() && body.len() > MAX_RECORD_BYTES {
        return Err(CsvError::RecordTooLong {
            line: 1,
            limit: MAX_RECORD_BYTES,
        });
    }
    let mut header_reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(body);
    let header: Vec<String> = header_reader
        .headers()
        .map_err(|err| CsvError::Syntax {
            line: err.position().map_or(1, |p| p.line() as usize),
            detail: err.to_string(),
        })?
        .iter()
        .map(str::to_owned)
        .collect();
    if header.len() > MAX_COLUMNS {
        return Err(CsvError::TooManyColumns {
            found: header.len(),
            limit: MAX_COLUMNS,
        });
    }
    // Each name is looked up once in a map of the names before it: linear in the header.
    let mut seen: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    for (index, name) in header.iter().enumerate() {
        if name.trim().is_empty() {
            return Err(CsvError::EmptyColumnName {
                position: index + 1,
            });
        }
        if let Some(&first) = seen.get(name.as_str()) {
            return Err(CsvError::DuplicateColumnName {
                name: name.clone(),
                first: first + 1,
                second: index + 1,
            });
        }
        seen.insert(name, index);
    }
    // 3. The records. Every cell is interned as text first: a column's distinct values are
    // then typed once each, instead of parsing every cell as a number.
    // Where the header record ends (the reader skips blank lines before it): a split of the
    // file must come after it.
    let header_end = header_reader.position().byte() as usize;
    let (first, second) = read_records(body, &header, header_end, tuning)?;
    let row_count = first.first().map_or(0, ColumnCells::len)
        + second
            .as_ref()
            .and_then(|s| s.first())
            .map_or(0, ColumnCells::len);
    if row_count == 0 {
        return Err(CsvError::NoRows);
    }

    // 4. Join the halves and type each column, the columns shared out over the cores. The
    // first error in column order is reported, as a column-by-column pass would.
    // `read_records` gave both halves of a column the same form.
    let mut second = second.map(Vec::into_iter);
    let pieces: Vec<(String, ColumnCells, Option<ColumnCells>)> = header
        .into_iter()
        .zip(first)
        .map(|(name, first)| (name, first, second.as_mut().and_then(Iterator::next)))
        .collect();
    let columns = map_in_parallel(pieces, |(name, first, rest)| match (first, rest) {
        (ColumnCells::Numbers(mut numbers), rest) => {
            match rest {
                Some(ColumnCells::Numbers(rest)) => numbers.append(rest),
                None => {}
                Some(ColumnCells::Text(_)) => unreachable!("read_records gives halves one form"),
            }
            Ok(Column {
                name,
                label: None,
                format: None,
                data: ColumnData::Numeric(numbers),
            })
        }
        (ColumnCells::Text(mut values), rest) => {
            match rest {
                Some(ColumnCells::Text(rest)) => values.append(rest.finish()),
                None => {}
                Some(ColumnCells::Numbers(_)) => unreachable!("read_records gives halves one form"),
            }
            type_column(name, values.finish(), body)
        }
    })
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    Ok(Table {
        source_format: SourceFormat::Csv,
        dataset_name: None,
        dataset_label: None,
        columns,
        row_count,
    })
}

/// Reads the data records of `body` (header included) into the cells of each column, in two
/// halves on two threads when `body` is large enough and has a record boundary near its middle.
/// Both halves of a column come back in the same form (text or numbers).
fn read_records(
    body: &[u8],
    names: &[String],
    header_end: usize,
    tuning: CsvTuning,
) -> Result<(Vec<ColumnCells>, Option<Vec<ColumnCells>>), CsvError> {
    let width = names.len();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let split = if body.len() >= tuning.parallel_min_bytes && cores > 1 {
        record_start_near_middle(body, header_end)
    } else {
        None
    };
    let Some(split) = split else {
        let mut text_only = vec![!tuning.numbers_directly; width];
        return Ok((
            read_chunk_as_text_where_needed(
                body,
                0..body.len(),
                body.len(),
                header_end,
                names,
                &mut text_only,
            )?,
            None,
        ));
    };
    let text = !tuning.numbers_directly;
    let (mut first_text, mut second_text) = (vec![text; width], vec![text; width]);
    let (first, second) = std::thread::scope(|scope| {
        let first_text = &mut first_text;
        let first = scope.spawn(move || {
            read_chunk_as_text_where_needed(
                body,
                0..split,
                body.len(),
                header_end,
                names,
                first_text,
            )
        });
        let second = read_chunk_as_text_where_needed(
            body,
            split..body.len(),
            body.len() - split,
            header_end,
            names,
            &mut second_text,
        );
        (
            first.join().expect("reading CSV records does not panic"),
            second,
        )
    });
    // An error in the first half comes first in the file.
    let (mut first, mut second) = (first?, second?);
    // A column read as numbers in one half and as text in the other: the text half becomes
    // numbers when all its values are numbers; otherwise the column is read again as text in
    // both halves. A half read again gives every other column its first form back (a text
    // half made numbers above is text again), so the check is repeated until no column differs;
    // each round marks one more column as text, so this ends.
    loop {
        let mut read_again = false;
        for column in 0..width {
            let (a, b) = (&mut first[column], &mut second[column]);
            let numbers_in_first = matches!(a, ColumnCells::Numbers(_));
            if numbers_in_first == matches!(b, ColumnCells::Numbers(_)) {
                continue;
            }
            let text = if numbers_in_first { b } else { a };
            let ColumnCells::Text(builder) = text else {
                unreachable!("the halves differ")
            };
            let values = std::mem::take(builder).finish();
            match numbers_of(&values) {
                Some(numbers) => *text = ColumnCells::Numbers(numbers),
                None => {
                    // The text half's builder was taken apart to look at its values, and is
                    // read again too.
                    first_text[column] = true;
                    second_text[column] = true;
                    read_again = true;
                }
            }
        }
        if !read_again {
            break;
        }
        first = read_chunk_as_text_where_needed(
            body,
            0..split,
            body.len(),
            header_end,
            names,
            &mut first_text,
        )?;
        second = read_chunk_as_text_where_needed(
            body,
            split..body.len(),
            body.len() - split,
            header_end,
            names,
            &mut second_text,
        )?;
    }
    Ok((first, Some(second)))
}

/// [`read_chunk`], read again (once) with every column as text that, read as numbers, met a
/// cell that is not a number; `text_only` ends up marking those columns.
///
/// One pass finds every such column (a column that fails stops taking cells, the others go
/// on), and the columns that did not fail read the same cells the same way the second time, so
/// a chunk is read at most twice however many columns change form.
fn read_chunk_as_text_where_needed(
    body: &[u8],
    range: std::ops::Range<usize>,
    room_bytes: usize,
    header_end: usize,
    names: &[String],
    text_only: &mut [bool],
) -> Result<Vec<ColumnCells>, CsvError> {
    let mut passes = 0;
    loop {
        passes += 1;
        match read_chunk(body, range.clone(), room_bytes, header_end, text_only) {
            Ok(cells) => return Ok(cells),
            Err(ChunkError::NotNumbers { columns }) => {
                debug_assert_eq!(passes, 1, "a chunk is read at most twice");
                for column in columns {
                    text_only[column] = true;
                }
            }
            Err(ChunkError::CellTooLong {
                line,
                column,
                length,
            }) => {
                return Err(CsvError::CellTooLong {
                    line,
                    column: names[column].clone(),
                    length,
                    limit: MAX_CELL_BYTES,
                })
            }
            Err(ChunkError::Csv(error)) => return Err(error),
        }
    }
}

/// `f` applied to every item, the items shared out over the available cores (item i to worker
/// i mod workers); results in item order.
fn map_in_parallel<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len());
    if workers <= 1 {
        return items.into_iter().map(f).collect();
    }
    let count = items.len();
    let mut shares: Vec<Vec<(usize, T)>> = (0..workers).map(|_| Vec::new()).collect();
    for (index, item) in items.into_iter().enumerate() {
        shares[index % workers].push((index, item));
    }
    let mut slots: Vec<Option<R>> = (0..count).map(|_| None).collect();
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                scope.spawn(move || {
                    share
                        .into_iter()
                        .map(|(index, item)| (index, f(item)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            for (index, result) in handle.join().expect("column work does not panic") {
                slots[index] = Some(result);
            }
        }
    });
    slots
        .into_iter()
        .map(|slot| slot.expect("every item mapped"))
        .collect()
}

/// Records read before the remaining ones are estimated.
const SAMPLE_RECORDS: usize = 256;

/// Why a chunk could not be read.
enum ChunkError {
    /// The file is wrong.
    Csv(CsvError),
    /// Columns read as numbers met cells that are not numbers: read them as text.
    NotNumbers {
        /// The columns, in order.
        columns: Vec<usize>,
    },
    /// A cell longer than [`MAX_CELL_BYTES`].
    CellTooLong {
        /// 1-based line of its record.
        line: usize,
        /// Its column.
        column: usize,
        /// Its length.
        length: usize,
    },
}

impl From<CsvError> for ChunkError {
    fn from(error: CsvError) -> Self {
        Self::Csv(error)
    }
}

/// Appends one field to its column; a row wider than the header only counts its fields. A
/// column read as numbers that meets a cell that is not a number is marked in `failed` and
/// takes no more cells (the chunk is read again with it as text).
fn push_field(
    cells: &mut [ColumnCells],
    failed: &mut [bool],
    column: usize,
    field: &[u8],
    body: &[u8],
    record_start: usize,
) -> Result<(), ChunkError> {
    let Some(cell) = cells.get_mut(column) else {
        return Ok(());
    };
    if field.len() > MAX_CELL_BYTES {
        return Err(ChunkError::CellTooLong {
            line: record_line(body, record_start),
            column,
            length: field.len(),
        });
    }
    if failed[column] {
        return Ok(());
    }
    if field.is_empty() {
        cell.push_missing();
        return Ok(());
    }
    cell.push(field).or_else(|error| match error {
        // `read_csv` turns this into the precise UTF-8 error.
        PushError::NotUtf8 => Err(ChunkError::Csv(CsvError::Syntax {
            line: record_line(body, record_start),
            detail: "a field is not UTF-8".to_owned(),
        })),
        PushError::NotANumber => {
            failed[column] = true;
            Ok(())
        }
    })
}

/// Calls `on_comma` with the position of every comma in `line`, in order, finding them eight
/// bytes at a time in a machine word: with fields a few bytes long that is cheaper than a
/// `memchr` call per field.
fn for_each_comma<E>(
    line: &[u8],
    mut on_comma: impl FnMut(usize) -> Result<(), E>,
) -> Result<(), E> {
    const LOW_BITS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const COMMAS: u64 = 0x2c2c_2c2c_2c2c_2c2c;
    let mut words = line.chunks_exact(8);
    let mut base = 0;
    for word in &mut words {
        // The bytes that are commas become zero; then exactly the zero bytes get their high
        // bit set (adding 0x7f to a byte's low bits carries into its high bit unless all are
        // zero, and no carry crosses into the next byte).
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ COMMAS;
        let mut commas = !(((x & LOW_BITS) + LOW_BITS) | x | LOW_BITS);
        while commas != 0 {
            on_comma(base + (commas.trailing_zeros() / 8) as usize)?;
            commas &= commas - 1;
        }
        base += 8;
    }
    for (offset, &byte) in words.remainder().iter().enumerate() {
        if byte == b',' {
            on_comma(base + offset)?;
        }
    }
    Ok(())
}

/// Splits a line that has quotes, when every quote is a plain one: a field that starts with
/// `"` and ends with `"` right before a comma or the line's end, with no `"` inside. Returns
/// false (and the caller uses the full parser) for a line without quotes, or with doubled
/// quotes, a quoted line break or a quote elsewhere.
fn split_quoted_line(line: &[u8], spans: &mut Vec<(usize, usize)>) -> bool {
    spans.clear();
    let next_quote_from =
        |at: usize| memchr::memchr(b'"', &line[at..]).map_or(line.len(), |i| at + i);
    let mut next_quote = next_quote_from(0);
    if next_quote == line.len() {
        return false;
    }
    // The start of the current field.
    let mut at = 0;
    loop {
        if at == next_quote {
            // A quoted field: it ends at the next quote, which a comma or the line's end follows.
            let Some(close) = memchr::memchr(b'"', &line[at + 1..]).map(|i| at + 1 + i) else {
                return false;
            };
            spans.push((at + 1, close));
            match line.get(close + 1) {
                None => return true,
                Some(b',') => at = close + 2,
                Some(_) => return false,
            }
            if at == line.len() {
                // A trailing comma: one more, empty field.
                spans.push((at, at));
                return true;
            }
            next_quote = next_quote_from(at);
            continue;
        }
        // Unquoted fields up to the next quote (or the line's end), split at their commas.
        let mut field_start = at;
        let _ = for_each_comma(&line[at..next_quote], |comma| {
            spans.push((field_start, at + comma));
            field_start = at + comma + 1;
            Ok::<(), ()>(())
        });
        if next_quote == line.len() {
            spans.push((field_start, line.len()));
            return true;
        }
        // A quote anywhere but at the start of a field is not a plain one.
        if field_start != next_quote {
            return false;
        }
        at = next_quote;
    }
}

/// Reads one record of `input` with the csv state machine; returns the bytes consumed and the
/// number of fields (0 when only line breaks were left). The fields are in `output`, ending at
/// the offsets in `ends`.
fn read_one_record(
    core: &mut csv_core::Reader,
    input: &[u8],
    output: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> (usize, usize) {
    let (mut read, mut written, mut ended) = (0, 0, 0);
    loop {
        let (result, nin, nout, nend) =
            core.read_record(&input[read..], &mut output[written..], &mut ends[ended..]);
        read += nin;
        written += nout;
        ended += nend;
        match result {
            // The whole rest of the chunk was given: an empty slice next says "end of input".
            csv_core::ReadRecordResult::InputEmpty => {}
            csv_core::ReadRecordResult::OutputFull => output.resize(output.len() * 2, 0),
            csv_core::ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            csv_core::ReadRecordResult::Record => return (read, ended),
            csv_core::ReadRecordResult::End => return (read, 0),
        }
    }
}

/// Reads the records in `range` of `body` (records start at `header_end` at the earliest).
/// Once the first records show how long a record is, the cells make room for `room_bytes` of
/// records: the whole file for its first half, so that the second half is later appended
/// without moving (and faulting in) the first again.
///
/// A line without quotes or stray carriage returns (nearly every line of an ADaM export) is
/// split at its commas directly; any other record goes through the csv state machine
/// (`csv-core`, the parser of the `csv` crate), which also handles quoted line breaks. Both
/// follow the same rules: `\n`, `\r\n` and a lone `\r` end a record, blank lines are skipped.
///
/// Every column starts as text; after the first records, a column not marked in `text_only`
/// whose values are many distinct numbers goes on as numbers (see [`cells`]).
fn read_chunk(
    body: &[u8],
    range: std::ops::Range<usize>,
    room_bytes: usize,
    header_end: usize,
    text_only: &[bool],
) -> Result<Vec<ColumnCells>, ChunkError> {
    #[cfg(test)]
    re_read_tests::CHUNK_READS.with(|reads| reads.set(reads.get() + 1));
    let width = text_only.len();
    let begin = range.start.max(header_end);
    let end = range.end;
    let mut cells: Vec<ColumnCells> = (0..width).map(|_| ColumnCells::default()).collect();
    let mut failed = vec![false; width];
    let mut core = csv_core::Reader::new();
    let mut output = vec![0u8; 4096];
    let mut ends = vec![0usize; width.max(1) + 1];
    let mut records = 0usize;
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(width + 1);
    let mut at = begin;
    while at < end {
        // Room for all records at once, instead of the code vectors growing (and being copied)
        // step by step.
        if records == SAMPLE_RECORDS {
            let per_record = (at - begin) as f64 / SAMPLE_RECORDS as f64;
            let expected = (room_bytes as f64 / per_record.max(1.0) * 1.05) as usize;
            for (column, &text) in cells.iter_mut().zip(text_only) {
                if !text {
                    column.consider_numbers();
                }
                column.reserve(expected.saturating_sub(records));
            }
        }
        let rest = &body[at..end];
        let line_length = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        if line_length > MAX_RECORD_BYTES {
            return Err(ChunkError::Csv(CsvError::RecordTooLong {
                line: record_line(body, at),
                limit: MAX_RECORD_BYTES,
            }));
        }
        let line = &rest[..line_length];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // Nearly every line has neither quotes nor carriage returns: one scan finds out.
        let plain = memchr::memchr2(b'"', b'\r', line).is_none();
        let simple_quotes =
            !plain && memchr::memchr(b'\r', line).is_none() && split_quoted_line(line, &mut spans);
        let found = if plain {
            if line.is_empty() {
                at += line_length + 1;
                continue;
            }
            let mut column = 0;
            let mut field_start = 0;
            for_each_comma(line, |comma| {
                push_field(
                    &mut cells,
                    &mut failed,
                    column,
                    &line[field_start..comma],
                    body,
                    at,
                )?;
                column += 1;
                field_start = comma + 1;
                Ok::<(), ChunkError>(())
            })?;
            push_field(
                &mut cells,
                &mut failed,
                column,
                &line[field_start..],
                body,
                at,
            )?;
            let record_start = at;
            at += line_length + 1;
            (record_start, column + 1)
        } else if simple_quotes {
            for (column, &(from, to)) in spans.iter().enumerate() {
                push_field(&mut cells, &mut failed, column, &line[from..to], body, at)?;
            }
            let record_start = at;
            at += line_length + 1;
            (record_start, spans.len())
        } else {
            let (consumed, count) = read_one_record(&mut core, rest, &mut output, &mut ends);
            if consumed > MAX_RECORD_BYTES {
                return Err(ChunkError::Csv(CsvError::RecordTooLong {
                    line: record_line(body, at),
                    limit: MAX_RECORD_BYTES,
                }));
            }
            let record_start = at;
            at += consumed.max(1);
            if count == 0 {
                continue;
            }
            let mut field_start = 0;
            for (column, &field_end) in ends[..count].iter().enumerate() {
                push_field(
                    &mut cells,
                    &mut failed,
                    column,
                    &output[field_start..field_end],
                    body,
                    record_start,
                )?;
                field_start = field_end;
            }
            (record_start, count)
        };
        records += 1;
        if found.1 != width {
            return Err(ChunkError::Csv(CsvError::RaggedRow {
                line: record_line(body, found.0),
                expected: width,
                found: found.1,
            }));
        }
    }
    if failed.contains(&true) {
        let columns = (0..width).filter(|&column| failed[column]).collect();
        return Err(ChunkError::NotNumbers { columns });
    }
    Ok(cells)
}

/// The start of a record near the middle of `body` (and not before `header_end`): just after the
/// first line break past that point that is not inside a quoted field. Quoting follows the reader's rules: a quote opens a
/// quoted field only at the start of a field, `""` inside one is a quote, and any other quote
/// ends it. Only quote characters are examined, so this costs little more than finding them.
fn record_start_near_middle(body: &[u8], header_end: usize) -> Option<usize> {
    let middle = (body.len() / 2).max(header_end);
    if middle >= body.len() {
        return None;
    }
    let mut candidate = middle + memchr::memchr(b'\n', &body[middle..])?;
    let mut quotes = memchr::memchr_iter(b'"', body).peekable();
    let mut in_quotes = false;
    loop {
        while let Some(&quote) = quotes.peek() {
            if quote >= candidate {
                break;
            }
            quotes.next();
            if in_quotes {
                if body.get(quote + 1) == Some(&b'"') {
                    quotes.next();
                } else {
                    in_quotes = false;
                }
            } else if quote == 0 || matches!(body[quote - 1], b',' | b'\n' | b'\r') {
                in_quotes = true;
            }
        }
        if !in_quotes {
            let start = candidate + 1;
            return (start < body.len()).then_some(start);
        }
        // Inside a quoted field: the boundary is after the next line break past its end.
        let next_quote = *quotes.peek()?;
        candidate = next_quote + memchr::memchr(b'\n', &body[next_quote..])?;
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
mod number_shape_tests {
    use proptest::prelude::*;

    use super::{number_shape, NumberShape};

    /// The grammar as it was first written (split at `e` and `.`): the oracle of the one-pass
    /// [`number_shape`].
    ///
    /// Strict decimal grammar: `[+-]digits[.digits][e[+-]digits]` (or `.digits`), surrounding
    /// blanks allowed. Rust's own parser also accepts `inf` and `NaN`, which are classified apart.
    fn number_shape_reference(cell: &str) -> NumberShape {
        let text = cell.trim_matches(' ');
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        if ["nan", "inf", "infinity"]
            .iter()
            .any(|word| unsigned.eq_ignore_ascii_case(word))
        {
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

    fn same(a: &NumberShape, b: &NumberShape) -> bool {
        match (a, b) {
            (NumberShape::Finite(x), NumberShape::Finite(y)) => x.to_bits() == y.to_bits(),
            (NumberShape::OutOfRange, NumberShape::OutOfRange)
            | (NumberShape::NonFinite, NumberShape::NonFinite)
            | (NumberShape::NotANumber, NumberShape::NotANumber) => true,
            _ => false,
        }
    }

    #[test]
    fn known_cells() {
        for (cell, finite) in [
            ("1", true),
            (" -2.5e-3 ", true),
            ("+.5", true),
            ("1.", true),
            (".", false),
            ("e5", false),
            ("1e", false),
            ("1e+", false),
            ("1.2.3", false),
            ("0x10", false),
            ("", false),
        ] {
            assert_eq!(
                matches!(number_shape(cell.as_bytes()), NumberShape::Finite(_)),
                finite,
                "{cell:?}"
            );
        }
        assert!(matches!(number_shape(b"-Infinity"), NumberShape::NonFinite));
        assert!(matches!(number_shape(b"nan"), NumberShape::NonFinite));
        assert!(matches!(number_shape(b"1e309"), NumberShape::OutOfRange));
    }

    proptest! {
        // 4,000 cases by default; PROPTEST_CASES sets another number for a longer run.
        #![proptest_config(ProptestConfig::with_cases(
            std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(4000)
        ))]

        #[test]
        fn the_one_pass_grammar_is_the_original_one(cell in "[0-9 .eE+-aAnNiIfFtTyY]{0,8}") {
            let (fast, reference) = (number_shape(cell.as_bytes()), number_shape_reference(&cell));
            prop_assert!(same(&fast, &reference), "{:?}", cell);
        }

        #[test]
        fn commas_found_by_words_are_the_ones_memchr_finds(
            line in proptest::collection::vec(prop_oneof![Just(b','), any::<u8>()], 0..80)
        ) {
            let mut found = Vec::new();
            super::for_each_comma(&line, |at| {
                found.push(at);
                Ok::<(), ()>(())
            })
            .unwrap();
            prop_assert_eq!(found, memchr::memchr_iter(b',', &line).collect::<Vec<_>>());
        }

        #[test]
        fn numbers_computed_directly_equal_the_parsers(
            cell in " {0,2}[+-]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][+-]?[0-9]{1,5})? {0,2}"
        ) {
            let (fast, reference) = (number_shape(cell.as_bytes()), number_shape_reference(&cell));
            prop_assert!(same(&fast, &reference), "{:?}", cell);
        }
    }
}

#[cfg(test)]
mod re_read_tests {
    use super::*;

    thread_local! {
        /// Chunk reads on this thread (the regression test below counts them).
        pub(super) static CHUNK_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Before: each column read as numbers that met text sent the whole chunk back to be read
    /// again, one column at a time: 200 such columns meant 201 reads of the file. Now one pass
    /// finds them all: two reads.
    #[test]
    fn columns_that_change_form_cost_one_re_read_in_all() {
        let columns = 200;
        let mut text = (0..columns)
            .map(|c| format!("C{c}"))
            .collect::<Vec<_>>()
            .join(",");
        text.push('\n');
        for row in 0..400 {
            let cells: Vec<String> = (0..columns)
                .map(|c| format!("{}.{row}", c * 1000 + row))
                .collect();
            text.push_str(&cells.join(","));
            text.push('\n');
        }
        text.push_str(&vec!["text"; columns].join(","));
        text.push('\n');
        CHUNK_READS.with(|reads| reads.set(0));
        let table = read_csv_with(text.as_bytes(), usize::MAX).unwrap();
        assert_eq!(CHUNK_READS.with(|reads| reads.get()), 2);
        assert!(table
            .columns
            .iter()
            .all(|column| matches!(column.data, ColumnData::Character(_))));
        let interned = read_csv_tuned(
            text.as_bytes(),
            CsvTuning {
                parallel_min_bytes: usize::MAX,
                numbers_directly: false,
            },
        )
        .unwrap();
        assert_eq!(table, interned);
    }
}
