//! Reading a CSV file's records into the cells of each column: lines split at commas directly
//! or through the csv state machine, a column going on as numbers or as text, the file read in
//! two halves on two threads when it is large, the limits on records and cells enforced.

use super::lines::{for_each_comma, read_one_record, record_start_near_middle, split_quoted_line};
use super::{
    cells::{numbers_of, ColumnCells, PushError},
    number_shape, record_line, CsvError, CsvTuning, NumberShape, MAX_CELL_BYTES, MAX_RECORD_BYTES,
};
use crate::ingest::table::TextBuilder;

/// Reads the data records of `body` (header included) into the cells of each column, in two
/// halves on two threads when `body` is large enough and has a record boundary near its middle.
/// Both halves of a column come back in the same form (text or numbers), and each half is read
/// at most twice however many columns change form.
///
/// Long by design: the split into halves, the two threads and the re-reading of a half whose
/// columns changed form share one set of buffers and budgets.
pub(super) fn read_records(
    body: &[u8],
    names: &[String],
    header_end: usize,
    tuning: CsvTuning,
) -> Result<(Vec<ColumnCells>, Option<Vec<ColumnCells>>), CsvError> {
    let width = names.len();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // A `parallel_min_bytes` of 0 asks for halves even on one core (the tests use it to check
    // that the halves always give the sequential result, on any machine).
    let split = if body.len() >= tuning.parallel_min_bytes
        && (cores > 1 || tuning.parallel_min_bytes == 0)
    {
        record_start_near_middle(body, header_end)
    } else {
        None
    };
    let csv_error = |error| chunk_error_to_csv(error, names);
    let Some(split) = split else {
        let mut text_only = vec![!tuning.numbers_directly; width];
        let read = read_chunk(body, 0..body.len(), body.len(), header_end, &text_only)
            .map_err(csv_error)?;
        if read.not_numbers.is_empty() {
            return Ok((read.cells, None));
        }
        // One pass found every column that met text; the others read the same cells the same
        // way again, so the second read is the last.
        for &column in &read.not_numbers {
            text_only[column] = true;
        }
        drop(read);
        let again = read_chunk(body, 0..body.len(), body.len(), header_end, &text_only)
            .map_err(csv_error)?;
        debug_assert!(
            again.not_numbers.is_empty(),
            "a chunk is read at most twice"
        );
        return Ok((again.cells, None));
    };
    let halves = [0..split, split..body.len()];
    // The first half's cells make room for the whole file, so that the second is appended
    // without moving it.
    let room = [body.len(), body.len() - split];
    let text = !tuning.numbers_directly;
    let mut text_only = [vec![text; width], vec![text; width]];
    let [first, second] = read_chunks_at_once(
        body,
        &halves,
        &room,
        header_end,
        [Some(&text_only[0]), Some(&text_only[1])],
    );
    // An error in the first half comes first in the file.
    let (first, second) = (
        first.expect("asked").map_err(csv_error)?,
        second.expect("asked").map_err(csv_error)?,
    );
    let mut reads = [first, second];
    // The columns that must be text in both halves: those that met a cell that is not a number
    // in either half, and those read as numbers in one half and as text in the other where
    // that text is not all numbers. Every one of them is known after the first reads, so each
    // half is read again at most once, and only when it has to: when it met text in a column
    // of numbers (those cells are incomplete), or read as numbers a column that must be text.
    let mut text_in_both = vec![false; width];
    for read in &reads {
        for &column in &read.not_numbers {
            text_in_both[column] = true;
        }
    }
    for (column, must_be_text) in text_in_both.iter_mut().enumerate() {
        if *must_be_text {
            continue;
        }
        match (&reads[0].cells[column], &reads[1].cells[column]) {
            (ColumnCells::Numbers(_), ColumnCells::Text(text))
            | (ColumnCells::Text(text), ColumnCells::Numbers(_)) => {
                *must_be_text = !all_numbers(text);
            }
            _ => {}
        }
    }
    let read_again: [bool; 2] = std::array::from_fn(|half| {
        !reads[half].not_numbers.is_empty()
            || (0..width).any(|column| {
                text_in_both[column] && matches!(reads[half].cells[column], ColumnCells::Numbers(_))
            })
    });
    if read_again.contains(&true) {
        for (column, _) in text_in_both.iter().enumerate().filter(|(_, &text)| text) {
            text_only[0][column] = true;
            text_only[1][column] = true;
        }
        for half in 0..2 {
            if read_again[half] {
                // The cells read so far go before the half is read again (never both at once).
                reads[half].cells = Vec::new();
            }
        }
        let again = read_chunks_at_once(
            body,
            &halves,
            &room,
            header_end,
            [
                read_again[0].then_some(&text_only[0]),
                read_again[1].then_some(&text_only[1]),
            ],
        );
        for (half, read) in again.into_iter().enumerate() {
            if let Some(read) = read {
                let read = read.map_err(csv_error)?;
                debug_assert!(read.not_numbers.is_empty(), "a half is read at most twice");
                reads[half] = read;
            }
        }
    }
    // What still differs is a column of numbers in one half whose text in the other is all
    // numbers: that text becomes numbers.
    let [ChunkRead {
        cells: mut first, ..
    }, ChunkRead {
        cells: mut second, ..
    }] = reads;
    for (a, b) in first.iter_mut().zip(second.iter_mut()) {
        let text = match (&*a, &*b) {
            (ColumnCells::Numbers(_), ColumnCells::Text(_)) => b,
            (ColumnCells::Text(_), ColumnCells::Numbers(_)) => a,
            _ => continue,
        };
        let ColumnCells::Text(builder) = text else {
            unreachable!("the halves differ")
        };
        let numbers = numbers_of(&std::mem::take(builder).finish())
            .expect("a column left in two forms has text that is all numbers");
        *text = ColumnCells::Numbers(numbers);
    }
    Ok((first, Some(second)))
}

/// Whether every value so far of a text column is a finite number.
fn all_numbers(text: &TextBuilder) -> bool {
    text.levels()
        .iter()
        .all(|level| matches!(number_shape(level.as_bytes()), NumberShape::Finite(_)))
}

/// Reads the chunks that have a `text_only` (columns marked there are read as text), the first
/// on a thread of its own.
fn read_chunks_at_once(
    body: &[u8],
    ranges: &[std::ops::Range<usize>; 2],
    room_bytes: &[usize; 2],
    header_end: usize,
    text_only: [Option<&Vec<bool>>; 2],
) -> [Option<Result<ChunkRead, ChunkError>>; 2] {
    let read = |half: usize| {
        text_only[half].map(|text_only| {
            read_chunk(
                body,
                ranges[half].clone(),
                room_bytes[half],
                header_end,
                text_only,
            )
        })
    };
    if text_only.iter().all(Option::is_some) {
        std::thread::scope(|scope| {
            let first = scope.spawn(|| read(0));
            let second = read(1);
            [
                first.join().expect("reading CSV records does not panic"),
                second,
            ]
        })
    } else {
        [read(0), read(1)]
    }
}

/// The file's error for a chunk's.
fn chunk_error_to_csv(error: ChunkError, names: &[String]) -> CsvError {
    match error {
        ChunkError::Csv(error) => error,
        ChunkError::CellTooLong {
            line,
            column,
            length,
        } => CsvError::CellTooLong {
            line,
            column: names[column].clone(),
            length,
            limit: MAX_CELL_BYTES,
        },
    }
}

/// `f` applied to every item, the items shared out over the available cores (item i to worker
/// i mod workers); results in item order.
pub(super) fn map_in_parallel<T: Send, R: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
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

/// Files with at least this many columns and fewer records than [`SAMPLE_RECORDS`] read their
/// columns of numbers as numbers from the first record.
const WIDE_COLUMNS: usize = 1024;

/// A chunk's cells, column by column.
struct ChunkRead {
    /// Every column's cells; those of the columns in `not_numbers` are incomplete.
    cells: Vec<ColumnCells>,
    /// The columns read as numbers that met a cell that is not a number, in order: the chunk
    /// must be read again with them as text.
    not_numbers: Vec<usize>,
}

/// Why a chunk could not be read.
enum ChunkError {
    /// The file is wrong.
    Csv(CsvError),
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
///
/// Long by design: the per-record loop of the upload path, whose state (position, the current
/// record's cells, each column's form) every branch shares; it is measured against
/// `data.table::fread` in `adamviz-bench ingest`.
fn read_chunk(
    body: &[u8],
    range: std::ops::Range<usize>,
    room_bytes: usize,
    header_end: usize,
    text_only: &[bool],
) -> Result<ChunkRead, ChunkError> {
    #[cfg(test)]
    re_read_tests::count_chunk_read(body, &range);
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
        // A chunk that looks too short for a sample (a few records of many columns): each
        // column whose first cell is a number goes on as numbers at once. Interning would cost
        // a dictionary per column for a handful of cells; a column that meets text later is
        // read again as text, as any column of numbers is.
        if records == 1 && text_only.len() >= WIDE_COLUMNS {
            let expected = room_bytes / (at - begin).max(1);
            if expected < SAMPLE_RECORDS {
                for (column, &text) in cells.iter_mut().zip(text_only) {
                    if !text {
                        column.numbers_if_all_numbers();
                    }
                }
            }
        }
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
            // The state machine sees at most one byte more than a record may have, so a
            // quote never closed costs a record's worth of memory, not the rest of the file.
            let window = &rest[..rest.len().min(MAX_RECORD_BYTES + 1)];
            let (consumed, count) = read_one_record(&mut core, window, &mut output, &mut ends);
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
    let not_numbers = (0..width).filter(|&column| failed[column]).collect();
    Ok(ChunkRead { cells, not_numbers })
}

#[cfg(test)]
mod re_read_tests {
    use super::super::{read_csv_tuned, read_csv_with};
    use super::*;
    use crate::ingest::table::ColumnData;

    /// Every chunk read: the address of the file's bytes and where the chunk starts (tests run
    /// at once, so each counts the reads of its own file only).
    static CHUNK_READS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

    pub(super) fn count_chunk_read(body: &[u8], range: &std::ops::Range<usize>) {
        let mut reads = CHUNK_READS.lock().unwrap_or_else(|e| e.into_inner());
        reads.push((body.as_ptr() as usize, range.start));
    }

    /// Forgets the reads recorded for the address of `body`: an earlier test's file, freed,
    /// may have had it (no other file can have it while `body` lives).
    fn forget_chunk_reads_of(body: &[u8]) {
        let mut reads = CHUNK_READS.lock().unwrap_or_else(|e| e.into_inner());
        reads.retain(|(at, _)| *at != body.as_ptr() as usize);
    }

    /// How many times each chunk of `body` was read, by where it starts.
    fn chunk_reads_of(body: &[u8]) -> std::collections::BTreeMap<usize, usize> {
        let reads = CHUNK_READS.lock().unwrap_or_else(|e| e.into_inner());
        let mut counts = std::collections::BTreeMap::new();
        for &(_, start) in reads.iter().filter(|(at, _)| *at == body.as_ptr() as usize) {
            *counts.entry(start).or_default() += 1;
        }
        counts
    }

    /// `columns` columns of distinct decimal numbers over `rows` rows, then a row of text.
    fn numbers_then_text(columns: usize, rows: usize) -> String {
        let mut text = (0..columns)
            .map(|c| format!("C{c}"))
            .collect::<Vec<_>>()
            .join(",");
        text.push('\n');
        for row in 0..rows {
            let cells: Vec<String> = (0..columns)
                .map(|c| format!("{}.{row}", c * 1000 + row))
                .collect();
            text.push_str(&cells.join(","));
            text.push('\n');
        }
        text.push_str(&vec!["text"; columns].join(","));
        text.push('\n');
        text
    }

    fn interned(text: &str) -> crate::ingest::table::Table {
        read_csv_tuned(
            text.as_bytes(),
            CsvTuning {
                parallel_min_bytes: usize::MAX,
                numbers_directly: false,
            },
        )
        .unwrap()
    }

    /// Before: each column read as numbers that met text sent the whole chunk back to be read
    /// again, one column at a time: 200 such columns meant 201 reads of the file. Now one pass
    /// finds them all: two reads.
    #[test]
    fn columns_that_change_form_cost_one_re_read_in_all() {
        let text = numbers_then_text(200, 400);
        forget_chunk_reads_of(text.as_bytes());
        let table = read_csv_with(text.as_bytes(), usize::MAX).unwrap();
        assert_eq!(
            chunk_reads_of(text.as_bytes())
                .into_values()
                .collect::<Vec<_>>(),
            [2]
        );
        assert!(table
            .columns
            .iter()
            .all(|column| matches!(column.data, ColumnData::Character(_))));
        assert_eq!(table, interned(&text));
    }

    /// Before: read in two halves, a file whose columns of numbers meet text in the last row
    /// had its second half read three times: once as numbers, once with those columns as text,
    /// and once more when the halves were made to agree (both halves were read again, the
    /// first for the second time). Now every column that must be text is known after the first
    /// reads: each half is read at most twice.
    #[test]
    fn columns_that_change_form_cost_one_re_read_per_half() {
        let text = numbers_then_text(20, 1_200);
        forget_chunk_reads_of(text.as_bytes());
        let table = read_csv_with(text.as_bytes(), 0).unwrap();
        let reads = chunk_reads_of(text.as_bytes());
        assert_eq!(reads.len(), 2, "read in two halves: {reads:?}");
        assert!(reads.values().all(|&n| n <= 2), "{reads:?}");
        assert!(table
            .columns
            .iter()
            .all(|column| matches!(column.data, ColumnData::Character(_))));
        assert_eq!(table, interned(&text));
    }

    /// A file of many columns and a few records reads its columns of numbers as numbers from
    /// the first record; columns that meet text (or a number out of range) later are read again
    /// as text, once, and the table (or the error) is the one interning gives.
    #[test]
    fn a_wide_short_file_reads_numbers_directly_and_gives_the_interned_table() {
        let columns = 2 * WIDE_COLUMNS;
        let mut text = (0..columns)
            .map(|c| format!("C{c}"))
            .collect::<Vec<_>>()
            .join(",");
        text.push('\n');
        for row in 0..20 {
            let cells: Vec<String> = (0..columns)
                .map(|c| match (c % 4, row) {
                    // Text after numbers, in the last row.
                    (1, 19) => "late text".to_owned(),
                    // Missing first, then numbers.
                    (2, 0) => String::new(),
                    // Text throughout.
                    (3, _) => format!("t{row}"),
                    _ => format!("{}.5", row * c),
                })
                .collect();
            text.push_str(&cells.join(","));
            text.push('\n');
        }
        forget_chunk_reads_of(text.as_bytes());
        let table = read_csv_with(text.as_bytes(), usize::MAX).unwrap();
        assert!(chunk_reads_of(text.as_bytes()).values().all(|&n| n <= 2));
        assert_eq!(table, interned(&text));
        assert_eq!(
            read_csv_with(text.as_bytes(), 0).unwrap(),
            table,
            "in halves"
        );
        let kinds: Vec<bool> = table.columns[..4]
            .iter()
            .map(|column| matches!(column.data, ColumnData::Numeric(_)))
            .collect();
        assert_eq!(kinds, [true, false, true, false]);

        // A number out of range in a column of numbers is the same error either way.
        let out_of_range = text.replacen("0.5,", "1e999,", 1);
        let tuning = |numbers_directly| CsvTuning {
            parallel_min_bytes: usize::MAX,
            numbers_directly,
        };
        assert_eq!(
            read_csv_tuned(out_of_range.as_bytes(), tuning(true)).unwrap_err(),
            read_csv_tuned(out_of_range.as_bytes(), tuning(false)).unwrap_err()
        );
    }

    /// A column of numbers in the second half whose first half is text that is not all numbers
    /// (so only the half of numbers is read again), and one whose text is all numbers (so no
    /// half is read again for it): each half is read at most twice, and the table is the one
    /// interning gives.
    #[test]
    fn halves_that_disagree_on_a_column_agree_after_one_re_read_at_most() {
        let mut text = String::from("WORDS,NUMBERS\n");
        for row in 0..1_200 {
            let words = if row < 600 {
                format!("w{row}")
            } else {
                format!("{row}.5")
            };
            let numbers = if row < 600 {
                format!("{}", row % 3)
            } else {
                format!("{row}.25")
            };
            text.push_str(&format!("{words},{numbers}\n"));
        }
        forget_chunk_reads_of(text.as_bytes());
        let table = read_csv_with(text.as_bytes(), 0).unwrap();
        let reads = chunk_reads_of(text.as_bytes());
        assert_eq!(reads.len(), 2, "read in two halves: {reads:?}");
        assert!(reads.values().all(|&n| n <= 2), "{reads:?}");
        assert!(matches!(
            table.column("WORDS").unwrap().data,
            ColumnData::Character(_)
        ));
        assert!(matches!(
            table.column("NUMBERS").unwrap().data,
            ColumnData::Numeric(_)
        ));
        assert_eq!(table, interned(&text));
    }
}
