//! The in-memory dataset every reader produces: named, labelled, typed columns of equal length.
//! Readers (`csv`, `xpt`) build it; profiling and snapshots read it.

use std::fmt;

/// One of SAS's 28 numeric missing values: `.`, `._` and `.A` … `.Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SasMissing {
    /// `.`, the ordinary missing value (also what an empty CSV cell becomes).
    Dot,
    /// `._`
    Underscore,
    /// `.A` … `.Z`; the byte is an ASCII capital letter.
    Letter(u8),
}

impl SasMissing {
    /// Decodes the marker byte SAS stores in the first byte of a missing numeric.
    pub fn from_marker(byte: u8) -> Option<Self> {
        match byte {
            b'.' => Some(Self::Dot),
            b'_' => Some(Self::Underscore),
            b'A'..=b'Z' => Some(Self::Letter(byte)),
            _ => None,
        }
    }
}

impl fmt::Display for SasMissing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dot => f.write_str("."),
            Self::Underscore => f.write_str("._"),
            Self::Letter(letter) => write!(f, ".{}", char::from(*letter)),
        }
    }
}

/// A numeric cell: a finite double or one of the SAS missing values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumericCell {
    /// A finite value.
    Value(f64),
    /// A missing value, with the kind SAS recorded.
    Missing(SasMissing),
}

impl NumericCell {
    /// The value, if not missing.
    pub fn value(self) -> Option<f64> {
        match self {
            Self::Value(value) => Some(value),
            Self::Missing(_) => None,
        }
    }
}

/// The numbers of a numeric column, eight bytes each: a missing value is stored as a NaN whose
/// low byte is the SAS marker (as SAS itself does), so readers never produce a real NaN.
#[derive(Debug, Clone, Default)]
pub struct NumericValues(Vec<f64>);

/// High bits of the NaN that carries a missing-value marker.
const MISSING_NAN: u64 = 0x7FF8_0000_0000_0000;

impl NumericValues {
    /// An empty column with room for `rows` values.
    pub fn with_capacity(rows: usize) -> Self {
        Self(Vec::with_capacity(rows))
    }

    /// Appends a cell.
    pub fn push(&mut self, cell: NumericCell) {
        self.0.push(match cell {
            NumericCell::Value(value) => value,
            NumericCell::Missing(missing) => {
                let marker = match missing {
                    SasMissing::Dot => b'.',
                    SasMissing::Underscore => b'_',
                    SasMissing::Letter(letter) => letter,
                };
                f64::from_bits(MISSING_NAN | u64::from(marker))
            }
        });
    }

    /// Makes room for `additional` more values.
    pub fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
    }

    /// Appends the cells of `rest`.
    pub fn append(&mut self, rest: NumericValues) {
        self.0.extend_from_slice(&rest.0);
    }

    /// The cell of `row`.
    pub fn get(&self, row: usize) -> NumericCell {
        decode_numeric(self.0[row])
    }

    /// The value of `row`, `None` when missing.
    pub fn value(&self, row: usize) -> Option<f64> {
        let value = self.0[row];
        (!value.is_nan()).then_some(value)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The cells in row order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = NumericCell> + '_ {
        self.0.iter().map(|&raw| decode_numeric(raw))
    }

    /// The values in row order, `None` when missing.
    pub fn values(&self) -> impl ExactSizeIterator<Item = Option<f64>> + '_ {
        self.0.iter().map(|&raw| (!raw.is_nan()).then_some(raw))
    }
}

fn decode_numeric(raw: f64) -> NumericCell {
    if raw.is_nan() {
        let marker = (raw.to_bits() & 0xFF) as u8;
        NumericCell::Missing(SasMissing::from_marker(marker).unwrap_or(SasMissing::Dot))
    } else {
        NumericCell::Value(raw)
    }
}

impl PartialEq for NumericValues {
    /// Cell by cell, so two missing values compare by their SAS kind.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl FromIterator<NumericCell> for NumericValues {
    fn from_iter<I: IntoIterator<Item = NumericCell>>(cells: I) -> Self {
        let mut values = Self::default();
        cells.into_iter().for_each(|cell| values.push(cell));
        values
    }
}

impl From<Vec<NumericCell>> for NumericValues {
    fn from(cells: Vec<NumericCell>) -> Self {
        cells.into_iter().collect()
    }
}

/// The values of a text column, dictionary-encoded: each distinct value is stored once (in order
/// of first appearance) and each row holds a four-byte code. ADaM text columns repeat a few values
/// over many rows, so this is small, and profiling can count codes instead of strings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextValues {
    /// Distinct values, in order of first appearance.
    levels: Vec<Box<str>>,
    /// Per row: 0 for missing, else 1 + the index into `levels`.
    codes: Vec<u32>,
}

impl TextValues {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The value of `row`, `None` when missing.
    pub fn get(&self, row: usize) -> Option<&str> {
        self.level(self.codes[row])
    }

    /// The code of `row`: 0 for missing, else 1 + its index in [`Self::levels`].
    pub fn code(&self, row: usize) -> u32 {
        self.codes[row]
    }

    /// Every row's code (see [`Self::code`]).
    pub fn codes(&self) -> &[u32] {
        &self.codes
    }

    /// The value a code stands for.
    pub fn level(&self, code: u32) -> Option<&str> {
        code.checked_sub(1)
            .map(|index| &*self.levels[index as usize])
    }

    /// The distinct non-missing values, in order of first appearance; code `i + 1` is `levels()[i]`.
    pub fn levels(&self) -> &[Box<str>] {
        &self.levels
    }

    /// The code of `value`, if it occurs.
    pub fn code_of(&self, value: &str) -> Option<u32> {
        self.levels
            .iter()
            .position(|level| &**level == value)
            .map(|index| index as u32 + 1)
    }

    /// The values in row order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&str>> + '_ {
        self.codes.iter().map(|&code| self.level(code))
    }
}

/// Byte equality for the short values of a dataset without a call to `memcmp`: two
/// overlapping loads for 4 to 32 bytes, three byte compares below 4.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (17..=32).contains(&n) {
        let block = |s: &[u8], at: usize| {
            u128::from_ne_bytes(s[at..at + 16].try_into().expect("sixteen bytes"))
        };
        return block(a, 0) == block(b, 0) && block(a, n - 16) == block(b, n - 16);
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], at: usize| {
            u64::from_ne_bytes(s[at..at + 8].try_into().expect("eight bytes"))
        };
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    if (4..8).contains(&n) {
        let word =
            |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().expect("four bytes"));
        return word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4);
    }
    if n < 4 {
        // First, middle and last byte: every byte of a value of up to three ("Y", "63",
        // "<65", the commonest values of an ADaM dataset).
        return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
    }
    a == b
}

/// The hash a value is indexed by.
fn hash_of(bytes: &[u8]) -> u64 {
    use std::hash::BuildHasher as _;
    rustc_hash::FxBuildHasher.hash_one(bytes)
}

/// The entry of `index` (over `levels`) for the value `bytes`, whose hash is `hash`.
fn entry<'a>(
    index: &'a mut hashbrown::HashTable<IndexedLevel>,
    levels: &[Box<str>],
    hash: u64,
    bytes: &[u8],
) -> hashbrown::hash_table::Entry<'a, IndexedLevel> {
    index.entry(
        hash,
        |entry| entry.hash == hash && same_bytes(levels[entry.code as usize - 1].as_bytes(), bytes),
        |entry| entry.hash,
    )
}

/// Adds `level` (whose hash is `hash`) as the next level, in the index's vacant `slot`, and
/// returns its code.
fn add_level(
    levels: &mut Vec<Box<str>>,
    slot: hashbrown::hash_table::VacantEntry<'_, IndexedLevel>,
    hash: u64,
    level: Box<str>,
) -> u32 {
    levels.push(level);
    let code = u32::try_from(levels.len()).expect("under 2^32 levels");
    slot.insert(IndexedLevel { hash, code });
    code
}

/// An entry of [`TextBuilder`]'s index.
#[derive(Debug, Clone, Copy)]
struct IndexedLevel {
    hash: u64,
    code: u32,
}

/// Builds a [`TextValues`] one cell at a time, looking each value up once.
#[derive(Debug, Default)]
pub struct TextBuilder {
    values: TextValues,
    /// The code of each value seen with the value's hash, found by that hash and compared with
    /// the level it names (so each distinct value is stored once, in `values.levels`). The hash
    /// is kept so that growing the index never reads the levels again: with millions of
    /// distinct values, hashing each level anew at every doubling cost as much as the lookups.
    index: hashbrown::HashTable<IndexedLevel>,
    /// The previous row's code: sorted ADaM data repeats values row after row, and comparing
    /// with the last one is cheaper than hashing.
    last: u32,
    /// The code of the previous cell, missing included (for [`Self::repeat_last`]).
    last_pushed: u32,
    /// Per code, the code that followed it the last time: ADaM data repeats sequences (the
    /// parameters of each visit come in the same order), so this guess is checked before
    /// hashing. Index 0 is for "no previous value"; empty until a first guess is recorded.
    successor: Vec<u32>,
}

impl TextBuilder {
    /// An empty builder with room for `rows` cells.
    pub fn with_capacity(rows: usize) -> Self {
        Self {
            values: TextValues {
                levels: Vec::new(),
                codes: Vec::with_capacity(rows),
            },
            ..Self::default()
        }
    }

    /// Makes room for `additional` more cells.
    pub fn reserve(&mut self, additional: usize) {
        self.values.codes.reserve(additional);
    }

    /// Appends a missing cell.
    pub fn push_missing(&mut self) {
        self.values.codes.push(0);
        self.last_pushed = 0;
    }

    /// Appends the same cell as the previous one (missing if there is none).
    pub fn repeat_last(&mut self) {
        self.values.codes.push(self.last_pushed);
    }

    /// Appends `value` (not missing, even if empty).
    pub fn push(&mut self, value: &str) {
        self.push_utf8(value.as_bytes()).expect("a str is UTF-8");
    }

    /// Appends the text in `bytes`, checking that it is UTF-8 only the first time a value is seen.
    pub fn push_utf8(&mut self, bytes: &[u8]) -> Result<(), std::str::Utf8Error> {
        // Sorted data repeats values row after row: the previous value is checked first.
        let level = |code: u32| self.values.levels[code as usize - 1].as_bytes();
        let code = if self.last != 0 && same_bytes(level(self.last), bytes) {
            self.last
        } else {
            let guess = self.successor.get(self.last as usize).copied().unwrap_or(0);
            if guess != 0 && same_bytes(level(guess), bytes) {
                guess
            } else {
                let code = self.code_of(bytes)?;
                self.follow(code);
                code
            }
        };
        self.last = code;
        self.last_pushed = code;
        self.values.codes.push(code);
        Ok(())
    }

    /// Records that `code` followed the previous value.
    #[cold]
    fn follow(&mut self, code: u32) {
        let at = self.last as usize;
        if self.successor.len() <= at {
            self.successor.resize(self.values.levels.len() + 1, 0);
        }
        self.successor[at] = code;
    }

    /// The code of the value in `bytes`, adding it (checked to be UTF-8) if it is new. One probe
    /// of the index finds the value or the slot for it.
    fn code_of(&mut self, bytes: &[u8]) -> Result<u32, std::str::Utf8Error> {
        let hash = hash_of(bytes);
        match entry(&mut self.index, &self.values.levels, hash, bytes) {
            hashbrown::hash_table::Entry::Occupied(entry) => Ok(entry.get().code),
            hashbrown::hash_table::Entry::Vacant(slot) => Ok(add_level(
                &mut self.values.levels,
                slot,
                hash,
                std::str::from_utf8(bytes)?.into(),
            )),
        }
    }

    /// Appends `value`, or a missing cell for `None`.
    pub fn push_option(&mut self, value: Option<&str>) {
        match value {
            Some(value) => self.push(value),
            None => self.push_missing(),
        }
    }

    /// Appends the cells of `rest` (built separately, e.g. from the second half of a file): the
    /// result equals pushing those cells one by one. Its values are looked up by the hashes it
    /// already holds, and each value new here is moved over, not copied (with a million distinct
    /// values in a half of a file, hashing and copying them again cost a good part of reading
    /// them).
    pub fn append(&mut self, rest: TextBuilder) {
        let mut hashes = vec![0; rest.values.levels.len()];
        for entry in rest.index.iter() {
            hashes[entry.code as usize - 1] = entry.hash;
        }
        self.index.reserve(hashes.len(), |entry| entry.hash);
        let rest = rest.values;
        let codes: Vec<u32> = std::iter::once(0)
            .chain(
                rest.levels
                    .into_iter()
                    .zip(hashes)
                    .map(|(level, hash)| self.intern_owned(level, hash)),
            )
            .collect();
        self.values
            .codes
            .extend(rest.codes.iter().map(|&code| codes[code as usize]));
        self.last_pushed = self.values.codes.last().copied().unwrap_or(0);
    }

    /// The code of `level` (whose hash is `hash`), moving it in if new.
    fn intern_owned(&mut self, level: Box<str>, hash: u64) -> u32 {
        match entry(&mut self.index, &self.values.levels, hash, level.as_bytes()) {
            hashbrown::hash_table::Entry::Occupied(entry) => entry.get().code,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                add_level(&mut self.values.levels, slot, hash, level)
            }
        }
    }

    /// Number of cells so far.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True before the first cell.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The finished column.
    pub fn finish(self) -> TextValues {
        self.values
    }

    /// The distinct values so far, in order of first appearance.
    pub fn levels(&self) -> &[Box<str>] {
        self.values.levels()
    }
}

impl<S: AsRef<str>> FromIterator<Option<S>> for TextValues {
    fn from_iter<I: IntoIterator<Item = Option<S>>>(cells: I) -> Self {
        let mut builder = TextBuilder::default();
        for cell in cells {
            builder.push_option(cell.as_ref().map(AsRef::as_ref));
        }
        builder.finish()
    }
}

impl From<Vec<Option<String>>> for TextValues {
    fn from(cells: Vec<Option<String>>) -> Self {
        cells.into_iter().collect()
    }
}

/// The values of one column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// Numbers (SAS numeric, or a CSV column whose every non-empty cell is a finite number).
    Numeric(NumericValues),
    /// Text; missing is an empty CSV cell, or an all-blank SAS value.
    Character(TextValues),
}

impl ColumnData {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Self::Numeric(cells) => cells.len(),
            Self::Character(cells) => cells.len(),
        }
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A column with its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column (variable) name, as in the file.
    pub name: String,
    /// SAS label, if the format carries one.
    pub label: Option<String>,
    /// SAS display format name and width, e.g. `DATE9.`; `None` when there is none.
    pub format: Option<String>,
    /// What the file declares about the column beyond its label and format.
    pub declared: DeclaredColumn,
    /// The values.
    pub data: ColumnData,
}

/// What a file's metadata declares about a column (empty for CSV, which declares nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredColumn {
    /// The declared length: a SAS character variable's bytes, or Dataset-JSON's `length`.
    pub length: Option<usize>,
    /// Dataset-JSON's `dataType` (`string`, `integer`, `decimal`, `float`, `double`,
    /// `boolean`, `date`, `datetime`, `time`, `URI`); `None` for the other formats.
    pub data_type: Option<String>,
}

/// Which reader produced a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// Comma-separated values, UTF-8.
    Csv,
    /// SAS XPORT version 5.
    Xpt,
    /// SAS XPORT version 8 (long names and labels).
    XptV8,
    /// CDISC Dataset-JSON v1.1 (JSON, NDJSON or compressed NDJSON).
    DatasetJson,
}

impl SourceFormat {
    /// The name the profile and the evidence record: `csv`, `xpt` or `dataset_json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Xpt | Self::XptV8 => "xpt",
            Self::DatasetJson => "dataset_json",
        }
    }
}

/// A dataset: columns of equal length, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The format the table was read from.
    pub source_format: SourceFormat,
    /// Dataset (member) name, for XPT.
    pub dataset_name: Option<String>,
    /// Dataset label, for XPT.
    pub dataset_label: Option<String>,
    /// The columns, in file order; all have `row_count` values.
    pub columns: Vec<Column>,
    /// Number of records.
    pub row_count: usize,
}

impl Table {
    /// The column called `name` (exact match).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|column| column.name == name)
    }

    /// The same format and dataset name and label, with no columns or rows.
    pub fn clone_metadata(&self) -> Self {
        Self {
            source_format: self.source_format,
            dataset_name: self.dataset_name.clone(),
            dataset_label: self.dataset_label.clone(),
            columns: Vec::new(),
            row_count: 0,
        }
    }
}

#[cfg(test)]
mod same_bytes_tests {
    use super::same_bytes;

    #[test]
    fn agrees_with_slice_equality_at_every_length() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(same_bytes(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_bytes(&a, &b), "{n} {at}");
            }
            assert!(!same_bytes(&a, &[a.as_slice(), b"x"].concat()));
        }
    }
}

#[cfg(test)]
mod text_builder_tests {
    use proptest::prelude::*;

    use super::TextBuilder;

    proptest! {
        /// Whatever the order of values (repeats, recurring sequences, new values, missing
        /// cells), each cell's code names its own value, and the levels are the distinct values
        /// in order of first appearance.
        #[test]
        fn codes_name_the_values_pushed(
            cells in proptest::collection::vec(
                proptest::option::of(prop_oneof![
                    Just("A".to_owned()),
                    Just("B".to_owned()),
                    Just("a longer value of twenty-nine".to_owned()),
                    "[a-c]{0,3}",
                ]),
                0..200,
            ),
            repeated in any::<bool>(),
        ) {
            // Repeated: the cells come three times over, as the parameters of each visit do.
            let cells: Vec<Option<String>> = if repeated {
                cells.iter().cycle().take(cells.len() * 3).cloned().collect()
            } else {
                cells
            };
            let mut builder = TextBuilder::default();
            for cell in &cells {
                match cell {
                    Some(value) => builder.push(value),
                    None => builder.push_missing(),
                }
            }
            let values = builder.finish();
            let mut distinct: Vec<&str> = Vec::new();
            for cell in cells.iter().flatten() {
                if !distinct.contains(&cell.as_str()) {
                    distinct.push(cell);
                }
            }
            prop_assert_eq!(values.levels().iter().map(|l| &**l).collect::<Vec<_>>(), distinct);
            for (row, cell) in cells.iter().enumerate() {
                prop_assert_eq!(values.get(row), cell.as_deref());
            }
        }
    }
}
