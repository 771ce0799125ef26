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

/// The values of one column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// Numbers (SAS numeric, or a CSV column whose every non-empty cell is a finite number).
    Numeric(Vec<NumericCell>),
    /// Text; `None` is missing (an empty CSV cell, or an all-blank SAS value).
    Character(Vec<Option<String>>),
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
    /// The values.
    pub data: ColumnData,
}

/// Which reader produced a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// Comma-separated values, UTF-8.
    Csv,
    /// SAS XPORT version 5.
    Xpt,
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
}
