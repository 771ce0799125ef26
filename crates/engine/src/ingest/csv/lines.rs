//! Finding fields and records in a CSV file's bytes: the commas of a plain line a machine word
//! at a time, the fields of a line with plain quotes, one record through the csv state machine,
//! and a record boundary near the middle of the file to split it at.

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
pub(super) fn split_quoted_line(line: &[u8], spans: &mut Vec<(usize, usize)>) -> bool {
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
pub(super) fn read_one_record(
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

/// The start of a record near the middle of `body` (and not before `header_end`): just after the
/// first line break past that point that is not inside a quoted field. Quoting follows the reader's rules: a quote opens a
/// quoted field only at the start of a field, `""` inside one is a quote, and any other quote
/// ends it. Only quote characters are examined, so this costs little more than finding them.
pub(super) fn record_start_near_middle(body: &[u8], header_end: usize) -> Option<usize> {
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
