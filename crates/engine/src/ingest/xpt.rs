//! SAS XPORT reader, version 5 (the transport format ADaM datasets are submitted in) and
//! version 8 (long names and labels).
//!
//! The file is a sequence of 80-byte records: a library header, one member (dataset) header with
//! one 140-byte (136 on VAX) "namestr" per variable, then the observations packed back to back
//! and padded with blanks to a multiple of 80. Numbers are IBM System/360 hexadecimal floating
//! point, big endian, 2 to 8 bytes; a missing number is a marker byte (`.`, `_`, `A`–`Z`)
//! followed by zeros. See SAS's technical note TS-140 for the layout.
//!
//! The reader is strict: anything it does not understand is an [`XptError`] naming the byte
//! offset, never a guess. It reads exactly one member: ADaM files hold one dataset each.
//!
//! Version 8 (SAS's "Record Layout of a SAS Version 8 or 9 Data Set in SAS Transport Format")
//! differs in its header names (`LIBV8`, `MEMBV8`, `DSCPTV8`, `NAMSTV8`, `OBSV8`), a 32-byte
//! dataset name, a 32-byte variable name inside each namestr (bytes 88–120, with the label's
//! length at 120–122), character variables up to 32,767 bytes, and labels longer than 40
//! characters in `LABELV8` (or `LABELV9`, which adds long format names) records between the
//! namestrs and the observation header.

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
const LIBRARY_HEADER_V8: &[u8] =
    b"HEADER RECORD*******LIBV8   HEADER RECORD!!!!!!!000000000000000000000000000000  ";

/// The header records' names in one version of the format.
struct Layout {
    version: u8,
    member: &'static [u8],
    descriptor: &'static [u8],
    namestr: &'static [u8],
    observations: &'static [u8],
}

const V5: Layout = Layout {
    version: 5,
    member: b"HEADER RECORD*******MEMBER  HEADER RECORD!!!!!!!",
    descriptor: b"HEADER RECORD*******DSCRPTR HEADER RECORD!!!!!!!",
    namestr: b"HEADER RECORD*******NAMESTR HEADER RECORD!!!!!!!",
    observations: b"HEADER RECORD*******OBS     HEADER RECORD!!!!!!!",
};

const V8: Layout = Layout {
    version: 8,
    member: b"HEADER RECORD*******MEMBV8  HEADER RECORD!!!!!!!",
    descriptor: b"HEADER RECORD*******DSCPTV8 HEADER RECORD!!!!!!!",
    namestr: b"HEADER RECORD*******NAMSTV8 HEADER RECORD!!!!!!!",
    observations: b"HEADER RECORD*******OBSV8   HEADER RECORD!!!!!!!",
};

const LABELV8_PREFIX: &[u8] = b"HEADER RECORD*******LABELV8 HEADER RECORD!!!!!!!";
const LABELV9_PREFIX: &[u8] = b"HEADER RECORD*******LABELV9 HEADER RECORD!!!!!!!";

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
    let data = file.observations(member.descriptors_end)?;
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
        source_format: match file.layout.version {
            8 => SourceFormat::XptV8,
            _ => SourceFormat::Xpt,
        },
        dataset_name: member.dataset_name,
        dataset_label: member.dataset_label,
        columns,
        row_count,
    })
}

/// An XPORT file whose library header and record framing have been checked.
struct XptFile<'a> {
    bytes: &'a [u8],
    layout: &'static Layout,
}

/// The member header of the file's one dataset.
struct MemberHeader {
    dataset_name: Option<String>,
    dataset_label: Option<String>,
    variables: Vec<Variable>,
    /// Where the last namestr (or v8 label record) ends: the observation header follows at the
    /// next record.
    descriptors_end: usize,
}

impl<'a> XptFile<'a> {
    /// Steps 1–2: the library header identifies the format and its version, and the whole
    /// file is 80-byte records (a cut file almost always breaks this).
    fn check(bytes: &'a [u8]) -> Result<Self, XptError> {
        let layout = match bytes.get(..RECORD) {
            Some(LIBRARY_HEADER) => &V5,
            Some(LIBRARY_HEADER_V8) => &V8,
            _ => return Err(XptError::NotXport),
        };
        if !bytes.len().is_multiple_of(RECORD) {
            return Err(XptError::NotWholeRecords {
                length: bytes.len(),
            });
        }
        Ok(Self { bytes, layout })
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
        let layout = self.layout;
        let member = self.header(240, layout.member, "member header record")?;
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
        self.header(320, layout.descriptor, "descriptor header record")?;
        let name_field = if layout.version == 8 { 8..40 } else { 8..16 };
        let dataset_name = text_field(&self.record(400, "member data record")?[name_field]);
        let dataset_label = text_field(&self.record(480, "second member data record")?[32..72]);
        let namestr_header = self.header(560, layout.namestr, "namestr header record")?;
        // Version 5 writes the count in four digits at 54, SAS's version 8 in six at 52; the
        // digits before are zeros in both.
        let variable_count =
            header_number(namestr_header, 52..58).ok_or(XptError::BadHeaderNumber {
                field: "variable count",
                offset: 560 + 52,
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
        let mut variables = read_variables(
            &self.bytes[namestr_start..namestr_end],
            namestr_start,
            namestr_length,
            layout.version,
        )?;
        let descriptors_end = if layout.version == 8 {
            self.long_labels(namestr_end, &mut variables)?
        } else {
            namestr_end
        };
        Ok(MemberHeader {
            dataset_name,
            dataset_label,
            variables,
            descriptors_end,
        })
    }

    /// Version 8: the `LABELV8` / `LABELV9` records after the namestrs, if any, give labels
    /// longer than 40 characters; returns where they end.
    fn long_labels(
        &self,
        namestr_end: usize,
        variables: &mut [Variable],
    ) -> Result<usize, XptError> {
        let header_offset = namestr_end.div_ceil(RECORD) * RECORD;
        let header = self.record(header_offset, "observation header record")?;
        let with_formats = if header.starts_with(LABELV8_PREFIX) {
            false
        } else if header.starts_with(LABELV9_PREFIX) {
            true
        } else {
            return Ok(namestr_end);
        };
        let corrupt = |at: usize| XptError::BadHeaderNumber {
            field: "long label record",
            offset: at,
        };
        // SAS writes the count left-justified after the header's name, padded with blanks.
        let count = header_number(header, 48..80).ok_or(corrupt(header_offset + 48))?;
        let mut at = header_offset + RECORD;
        let short = |at: usize| -> Result<usize, XptError> {
            let bytes = self.bytes.get(at..at + 2).ok_or(XptError::Truncated {
                expected: "long label record",
                offset: at,
                length: self.bytes.len(),
            })?;
            usize::try_from(be_i16(bytes)).map_err(|_| corrupt(at))
        };
        for _ in 0..count {
            let fields = if with_formats { 5 } else { 3 };
            let lengths: Vec<usize> = (0..fields)
                .map(|i| short(at + 2 * i))
                .collect::<Result<_, _>>()?;
            let (number, name_length, label_length) = (lengths[0], lengths[1], lengths[2]);
            let texts: usize = lengths[1..].iter().sum();
            let start = at + 2 * fields;
            let entry = self
                .bytes
                .get(start..start + texts)
                .ok_or(XptError::Truncated {
                    expected: "long label record",
                    offset: start,
                    length: self.bytes.len(),
                })?;
            let label = &entry[name_length..name_length + label_length];
            let variable = number
                .checked_sub(1)
                .and_then(|index| variables.get_mut(index))
                .ok_or(corrupt(at))?;
            variable.label = text_field(label);
            // LABELV9 also spells out a format whose name is longer than 8 (with its width);
            // a shorter one is in the namestr already.
            if with_formats && lengths[3] > 8 {
                let format_start = name_length + label_length;
                variable.format = text_field(&entry[format_start..format_start + lengths[3]]);
            }
            at = start + texts;
        }
        Ok(at)
    }

    /// Step 6: the observation header, then the observations up to the end of the file (a
    /// second member is refused).
    fn observations(&self, namestr_end: usize) -> Result<&'a [u8], XptError> {
        let obs_header_offset = namestr_end.div_ceil(RECORD) * RECORD;
        self.header(
            obs_header_offset,
            self.layout.observations,
            "observation header record",
        )?;
        let data_start = obs_header_offset + RECORD;
        if let Some(second) =
            memchr::memmem::find_iter(&self.bytes[data_start..], self.layout.member)
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
    version: u8,
) -> Result<Vec<Variable>, XptError> {
    let mut variables: Vec<Variable> = Vec::with_capacity(descriptors.len() / namestr_length);
    for (index, namestr) in descriptors.chunks_exact(namestr_length).enumerate() {
        let offset = start + index * namestr_length;
        let variable =
            parse_namestr(namestr, version).map_err(|problem| XptError::BadVariable {
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

/// A decimal number in a header record's digits (blanks around it allowed).
fn header_number(record: &[u8], digits: std::ops::Range<usize>) -> Option<usize> {
    std::str::from_utf8(&record[digits])
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn parse_namestr(namestr: &[u8], version: u8) -> Result<Variable, VariableProblem> {
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
    let longest_text = if version == 8 { i16::MAX } else { 200 };
    if !numeric && !(1..=longest_text).contains(&length) {
        return Err(VariableProblem::CharacterLength(length));
    }
    // Version 8 keeps the full name (up to 32 bytes) at 88; the 8-byte one is its truncation.
    let raw_name = match version {
        8 if namestr.len() >= 120 && namestr[88..120].iter().any(|&b| b != b' ' && b != 0) => {
            &namestr[88..120]
        }
        _ => &namestr[8..16],
    };
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
                    // A character variable's length is declared; a number's is its storage.
                    declared: super::table::DeclaredColumn {
                        length: (!variable.numeric).then_some(variable.length),
                        data_type: None,
                    },
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
