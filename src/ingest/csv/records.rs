//! Reading a CSV file's records into the cells of each column: lines split at commas directly
//! or through the csv state machine, a column going on as numbers or as text, the file read in
//! two halves on two threads when it is large, the limits on records and cells enforced.

use super::{
    cells::{numbers_of, ColumnCells, PushError},
    record_line, CsvError, CsvTuning, MAX_CELL_BYTES, MAX_RECORD_BYTES,
};

/// Reads the data records of `body` (header included) into the cells of each column, in two
/// halves on two threads when `body` is large enough and has a record boundary near its middle.
/// Both halves of a column come back in the same form (text or numbers).
pub(super) fn read_records(
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
pub(super) fn for_each_comma<E>(
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

#[cfg(test)]
mod re_read_tests {
    use super::super::{read_csv_tuned, read_csv_with};
    use super::*;
    use crate::ingest::table::ColumnData;

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
