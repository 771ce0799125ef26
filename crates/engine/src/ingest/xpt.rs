//! SAS XPORT version 5 reader (the transport format ADaM datasets are submitted in).
//!
//! The file is a sequence of 80-byte records: a library header, one member (dataset) header with
//! one 140-byte (136 on VAX) "namestr" per variable, then the observations packed back to back
//! and padded with blanks to a multiple of 80. Numbers are IBM System/360 hexadecimal floating
//! point, big endian, 2 to 8 bytes; a missing number is a marker byte (`.`, `_`, `A`–`Z`)
//! followed by zeros. See SAS's technical note TS-140 for the layout.
//!
//! The reader is strict: anything it does not understand is an [`XptError`] naming the byte
//! offset, never a guess. It reads exactly one member: ADaM files hold one dataset each.

use super::table::{
    Column, ColumnData, NumericCell, NumericValues, SasMissing, SourceFormat, Table, TextBuilder,
};

mod error;
mod ibm;

pub use error::{VariableProblem, XptError};
pub use ibm::{ibm_to_numeric, numeric_to_ibm};

/// Every XPORT record is this long.
const RECORD: usize = 80;
const LIBRARY_HEADER: &[u8] =
    b"HEADER RECORD*******LIBRARY HEADER RECORD!!!!!!!000000000000000000000000000000  ";
const LIBRARY_HEADER_V8: &[u8] = b"HEADER RECORD*******LIBV8   HEADER RECORD!!!!!!!";
const MEMBER_HEADER_PREFIX: &[u8] = b"HEADER RECORD*******MEMBER  HEADER RECORD!!!!!!!";
const DESCRIPTOR_HEADER_PREFIX: &[u8] = b"HEADER RECORD*******DSCRPTR HEADER RECORD!!!!!!!";
const NAMESTR_HEADER_PREFIX: &[u8] = b"HEADER RECORD*******NAMESTR HEADER RECORD!!!!!!!";
const OBS_HEADER_PREFIX: &[u8] = b"HEADER RECORD*******OBS     HEADER RECORD!!!!!!!";

/// One variable as its namestr describes it.
struct Variable {
    name: String,
    label: Option<String>,
    format: Option<String>,
    numeric: bool,
    length: usize,
    position: usize,
}

/// How much memory a read may build its table in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableBudget {
    /// Bytes; a table of rows × variables × 8 bytes above it is refused before anything is
    /// allocated.
    pub bytes: u64,
}

impl TableBudget {
    /// The default for a file of `file_len` bytes: 8× the file or 4 GiB, whichever is less.
    pub fn for_file(file_len: usize) -> Self {
        Self {
            bytes: (file_len as u64).saturating_mul(8).min(4 << 30),
        }
    }
}

/// Reads the one dataset of an XPORT v5 file, within the default [`TableBudget`].
pub fn read_xpt(bytes: &[u8]) -> Result<Table, XptError> {
    read_xpt_within(bytes, TableBudget::for_file(bytes.len()))
}

/// Reads the one dataset of an XPORT v5 file; a table larger than `budget` is refused before
/// its columns are allocated.
pub fn read_xpt_within(bytes: &[u8], budget: TableBudget) -> Result<Table, XptError> {
    let file = XptFile::check(bytes)?;
    let member = file.member()?;
    let row_length: usize = member.variables.iter().map(|v| v.length).sum();
    let data = file.observations(member.namestr_end)?;
    let row_count = observation_count(data, row_length)?;
    let needed_bytes = (row_count as u64)
        .saturating_mul(member.variables.len() as u64)
        .saturating_mul(8);
    if needed_bytes > budget.bytes {
        return Err(XptError::TableTooLarge {
            rows: row_count,
            variables: member.variables.len(),
            needed_bytes,
            budget_bytes: budget.bytes,
        });
    }
    // 7. Decode every value of every variable.
    let columns = decode_columns(data, row_length, row_count, member.variables);
    Ok(Table {
        source_format: SourceFormat::Xpt,
        dataset_name: member.dataset_name,
        dataset_label: member.dataset_label,
        columns,
        row_count,
    })
}

/// An XPORT file whose library header and record framing have been checked.
struct XptFile<'a> {
    bytes: &'a [u8],
}

/// The member header of the file's one dataset.
struct MemberHeader {
    dataset_name: Option<String>,
    dataset_label: Option<String>,
    variables: Vec<Variable>,
    /// Where the last namestr ends (the observation header follows at the next record).
    namestr_end: usize,
}

impl<'a> XptFile<'a> {
    /// Steps 1–2: the library header identifies the format (v8 is refused by name), and the
    /// whole file is 80-byte records (a cut file almost always breaks this).
    fn check(bytes: &'a [u8]) -> Result<Self, XptError> {
        if bytes.len() < RECORD || &bytes[..RECORD] != LIBRARY_HEADER {
            if bytes.starts_with(LIBRARY_HEADER_V8) {
                return Err(XptError::Version8);
            }
            return Err(XptError::NotXport);
        }
        if !bytes.len().is_multiple_of(RECORD) {
            return Err(XptError::NotWholeRecords {
                length: bytes.len(),
            });
        }
        Ok(Self { bytes })
    }

    /// The 80-byte record at `offset`, or which record the file was cut before.
    fn record(&self, offset: usize, expected: &'static str) -> Result<&'a [u8], XptError> {
        self.bytes
            .get(offset..offset + RECORD)
            .ok_or(XptError::Truncated {
                expected,
                offset,
                length: self.bytes.len(),
            })
    }

    /// The record at `offset`, which must be the header record starting with `prefix`.
    fn header(
        &self,
        offset: usize,
        prefix: &[u8],
        expected: &'static str,
    ) -> Result<&'a [u8], XptError> {
        let record = self.record(offset, expected)?;
        if !record.starts_with(prefix) {
            return Err(XptError::UnexpectedRecord { expected, offset });
        }
        Ok(record)
    }

    /// Steps 3–5: the library records, the member header (with the namestr size), the member's
    /// name and label, and one namestr per variable.
    fn member(&self) -> Result<MemberHeader, XptError> {
        self.record(80, "first library record")?;
        self.record(160, "second library record")?;
        let member = self.header(240, MEMBER_HEADER_PREFIX, "member header record")?;
        let namestr_length = match &member[74..78] {
            b"0140" => 140,
            b"0136" => 136,
            _ => {
                return Err(XptError::BadHeaderNumber {
                    field: "descriptor length",
                    offset: 240 + 74,
                })
            }
        };
        self.header(320, DESCRIPTOR_HEADER_PREFIX, "descriptor header record")?;
        let dataset_name = text_field(&self.record(400, "member data record")?[8..16]);
        let dataset_label = text_field(&self.record(480, "second member data record")?[32..72]);
        let namestr_header = self.header(560, NAMESTR_HEADER_PREFIX, "namestr header record")?;
        let variable_count = std::str::from_utf8(&namestr_header[54..58])
            .ok()
            .and_then(|digits| digits.parse::<usize>().ok())
            .ok_or(XptError::BadHeaderNumber {
                field: "variable count",
                offset: 560 + 54,
            })?;
        let namestr_start = 640;
        let namestr_end = namestr_start + variable_count * namestr_length;
        if namestr_end > self.bytes.len() {
            return Err(XptError::Truncated {
                expected: "variable descriptors",
                offset: namestr_start,
                length: self.bytes.len(),
            });
        }
        let variables = read_variables(
            &self.bytes[namestr_start..namestr_end],
            namestr_start,
            namestr_length,
        )?;
        Ok(MemberHeader {
            dataset_name,
            dataset_label,
            variables,
            namestr_end,
        })
    }

    /// Step 6: the observation header, then the observations up to the end of the file (a
    /// second member is refused).
    fn observations(&self, namestr_end: usize) -> Result<&'a [u8], XptError> {
        let obs_header_offset = namestr_end.div_ceil(RECORD) * RECORD;
        self.header(
            obs_header_offset,
            OBS_HEADER_PREFIX,
            "observation header record",
        )?;
        let data_start = obs_header_offset + RECORD;
        if let Some(second) =
            memchr::memmem::find_iter(&self.bytes[data_start..], MEMBER_HEADER_PREFIX)
                .map(|at| data_start + at)
                .find(|offset| (offset - data_start).is_multiple_of(RECORD))
        {
            return Err(XptError::SeveralMembers { offset: second });
        }
        Ok(&self.bytes[data_start..])
    }
}

/// The variables described by `descriptors` (namestrs of `namestr_length` bytes, the first at
/// file offset `start`): names unique, every value within the observation.
fn read_variables(
    descriptors: &[u8],
    start: usize,
    namestr_length: usize,
) -> Result<Vec<Variable>, XptError> {
    let mut variables: Vec<Variable> = Vec::with_capacity(descriptors.len() / namestr_length);
    for (index, namestr) in descriptors.chunks_exact(namestr_length).enumerate() {
        let offset = start + index * namestr_length;
        let variable = parse_namestr(namestr).map_err(|problem| XptError::BadVariable {
            index: index + 1,
            offset,
            problem,
        })?;
        if let Some(first) = variables.iter().position(|v| v.name == variable.name) {
            return Err(XptError::DuplicateName {
                name: variable.name,
                first: first + 1,
                second: index + 1,
            });
        }
        variables.push(variable);
    }
    // The observation length: every value must lie within it.
    let row_length: usize = variables.iter().map(|v| v.length).sum();
    for (index, variable) in variables.iter().enumerate() {
        if variable.position + variable.length > row_length {
            return Err(XptError::BadVariable {
                index: index + 1,
                offset: start + index * namestr_length,
                problem: VariableProblem::OutsideObservation {
                    position: variable.position as i32,
                    length: variable.length as i16,
                    row_length,
                },
            });
        }
    }
    Ok(variables)
}

fn be_i16(bytes: &[u8]) -> i16 {
    i16::from_be_bytes([bytes[0], bytes[1]])
}

fn parse_namestr(namestr: &[u8]) -> Result<Variable, VariableProblem> {
    let type_code = be_i16(&namestr[0..2]);
    let length = be_i16(&namestr[4..6]);
    let numeric = match type_code {
        1 => true,
        2 => false,
        other => return Err(VariableProblem::UnknownType(other)),
    };
    if numeric && !(2..=8).contains(&length) {
        return Err(VariableProblem::NumericLength(length));
    }
    if !numeric && !(1..=200).contains(&length) {
        return Err(VariableProblem::CharacterLength(length));
    }
    let raw_name = &namestr[8..16];
    let name = text_field(raw_name).ok_or(VariableProblem::BadName)?;
    if !name.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(VariableProblem::BadName);
    }
    let label = text_field(&namestr[16..56]);
    let format = text_field(&namestr[56..64]).map(|format_name| {
        let width = be_i16(&namestr[64..66]);
        let decimals = be_i16(&namestr[66..68]);
        let mut format = format_name;
        if width > 0 {
            format.push_str(&width.to_string());
        }
        format.push('.');
        if decimals > 0 {
            format.push_str(&decimals.to_string());
        }
        format
    });
    let position = i32::from_be_bytes([namestr[84], namestr[85], namestr[86], namestr[87]]);
    let position = usize::try_from(position).map_err(|_| VariableProblem::OutsideObservation {
        position,
        length,
        row_length: 0,
    })?;
    Ok(Variable {
        name,
        label,
        format,
        numeric,
        length: length as usize,
        position,
    })
}

/// The number of whole observations in `data`, which ends with blank padding to 80 bytes.
fn observation_count(data: &[u8], row_length: usize) -> Result<usize, XptError> {
    if row_length == 0 {
        return Ok(0);
    }
    let mut count = data.len() / row_length;
    let trailing = &data[count * row_length..];
    if !trailing.iter().all(|&b| b == b' ') {
        return Err(XptError::PartialObservation {
            row_length,
            trailing: trailing.len(),
        });
    }
    // An observation that is entirely blank and starts inside the final 80 bytes is padding
    // (only an all-character dataset can have one; SAS's own readers decide the same way).
    while count > 0 {
        let start = (count - 1) * row_length;
        let row = &data[start..start + row_length];
        if data.len() - start < RECORD && row.iter().all(|&b| b == b' ') {
            count -= 1;
        } else {
            break;
        }
    }
    Ok(count)
}

/// Rows decoded per block: a block of observations stays in cache while every column of the
/// share takes its values from it (column after column over the whole file would fetch each
/// row from memory once per column).
const BLOCK_ROWS: usize = 512;

/// Decodes every variable. The columns are shared out over the available cores; each worker
/// walks the observations in blocks and decodes its columns from each block.
fn decode_columns(
    data: &[u8],
    row_length: usize,
    row_count: usize,
    variables: Vec<Variable>,
) -> Vec<Column> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(variables.len())
        .max(1);
    let column_count = variables.len();
    // Worker w takes variables w, w + workers, …: neighbouring variables have similar widths.
    let mut shares: Vec<Vec<(usize, Variable)>> = (0..workers).map(|_| Vec::new()).collect();
    for (index, variable) in variables.into_iter().enumerate() {
        shares[index % workers].push((index, variable));
    }
    let decode_share = |share: Vec<(usize, Variable)>| {
        let mut decoders: Vec<(usize, Variable, ColumnDecoder)> = share
            .into_iter()
            .map(|(index, variable)| {
                let decoder = ColumnDecoder::new(&variable, row_count);
                (index, variable, decoder)
            })
            .collect();
        for block_start in (0..row_count).step_by(BLOCK_ROWS) {
            let block_end = (block_start + BLOCK_ROWS).min(row_count);
            for (_, variable, decoder) in &mut decoders {
                let (position, length) = (variable.position, variable.length);
                for row in block_start..block_end {
                    let start = row * row_length + position;
                    decoder.push(&data[start..start + length]);
                }
            }
        }
        decoders
            .into_iter()
            .map(|(index, variable, decoder)| {
                let column = Column {
                    name: variable.name,
                    label: variable.label,
                    format: variable.format,
                    data: decoder.finish(),
                };
                (index, column)
            })
            .collect::<Vec<_>>()
    };
    let mut slots: Vec<Option<Column>> = (0..column_count).map(|_| None).collect();
    if workers == 1 || row_count < 10_000 {
        for share in shares {
            for (index, column) in decode_share(share) {
                slots[index] = Some(column);
            }
        }
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = shares
                .into_iter()
                .map(|share| scope.spawn(|| decode_share(share)))
                .collect();
            for handle in handles {
                for (index, column) in handle.join().expect("column decoding does not panic") {
                    slots[index] = Some(column);
                }
            }
        });
    }
    slots
        .into_iter()
        .map(|slot| slot.expect("every column decoded"))
        .collect()
}

/// One column being decoded.
enum ColumnDecoder<'a> {
    Numeric(NumericValues),
    Text {
        values: TextBuilder,
        /// The previous row's raw bytes: sorted ADaM data repeats a value over many rows, and
        /// a field equal to the previous one gets its code without being trimmed or looked up.
        previous: Option<&'a [u8]>,
    },
}

impl<'a> ColumnDecoder<'a> {
    fn new(variable: &Variable, rows: usize) -> Self {
        if variable.numeric {
            Self::Numeric(NumericValues::with_capacity(rows))
        } else {
            Self::Text {
                values: TextBuilder::with_capacity(rows),
                previous: None,
            }
        }
    }

    fn push(&mut self, raw: &'a [u8]) {
        match self {
            Self::Numeric(values) => values.push(ibm_to_numeric(raw)),
            Self::Text { values, previous } => {
                if *previous == Some(raw) {
                    values.repeat_last();
                    return;
                }
                *previous = Some(raw);
                match trimmed_text(raw) {
                    None => values.push_missing(),
                    Some(text) => values.push(&text),
                }
            }
        }
    }

    fn finish(self) -> ColumnData {
        match self {
            Self::Numeric(values) => ColumnData::Numeric(values),
            Self::Text { values, .. } => ColumnData::Character(values.finish()),
        }
    }
}

/// A character field with trailing blanks (and NULs) trimmed; `None` when all blank. Borrowed
/// when it is UTF-8, else decoded as Latin-1 (older SAS sessions write it; it decodes every byte).
fn trimmed_text(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let end = bytes.iter().rposition(|&b| b != b' ' && b != 0)? + 1;
    let bytes = &bytes[..end];
    Some(match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => std::borrow::Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()),
    })
}

/// A character field: trailing blanks trimmed, all-blank as missing. UTF-8 where valid, else
/// Latin-1 (older SAS sessions write it), which decodes every byte.
fn text_field(bytes: &[u8]) -> Option<String> {
    trimmed_text(bytes).map(std::borrow::Cow::into_owned)
}
