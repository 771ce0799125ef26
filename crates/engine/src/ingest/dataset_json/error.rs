//! Why a Dataset-JSON file could not be read, naming the row, line and column where it stopped.

/// Why a CDISC Dataset-JSON file could not be read. Rows are counted from 1 in file order; lines
/// are the file's lines (for the compressed form, lines of the decompressed NDJSON).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatasetJsonError {
    /// The JSON itself is broken (or a value has the wrong JSON type for its attribute).
    #[error("Dataset-JSON is not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column (byte).
        column: usize,
        /// What serde_json found.
        message: String,
    },
    /// The top-level metadata is not what Dataset-JSON v1.1 writes.
    #[error("Dataset-JSON metadata: {message}")]
    Metadata {
        /// What is wrong, naming the attribute.
        message: String,
    },
    /// A required top-level attribute is absent.
    #[error("Dataset-JSON metadata lacks the required attribute \"{attribute}\"")]
    MissingAttribute {
        /// The attribute's name as the standard spells it.
        attribute: &'static str,
    },
    /// A file of another Dataset-JSON version.
    #[error("Dataset-JSON version {found} is not read: adamviz reads version 1.1 (export the dataset as Dataset-JSON v1.1)")]
    Version {
        /// `datasetJSONVersion` as written, or `1.0` when the v1.0 layout (`clinicalData`) is seen.
        found: String,
    },
    /// The JSON form has its rows before its columns: they cannot be typed while streaming.
    #[error("Dataset-JSON \"rows\" come before \"columns\": v1.1 writes the metadata first, so that a reader can stream the rows")]
    RowsBeforeColumns,
    /// `columns` is empty.
    #[error("Dataset-JSON \"columns\" is empty: a dataset needs at least one column")]
    NoColumns,
    /// Two columns with one name.
    #[error("Dataset-JSON column {index} repeats the name {name}")]
    DuplicateColumn {
        /// 1-based position in `columns`.
        index: usize,
        /// The name.
        name: String,
    },
    /// A `dataType` (or `targetDataType`) the standard does not define.
    #[error(
        "Dataset-JSON column {column} has {attribute} \"{value}\", which v1.1 does not define"
    )]
    UnknownDataType {
        /// The column.
        column: String,
        /// `dataType` or `targetDataType`.
        attribute: &'static str,
        /// As written.
        value: String,
    },
    /// A row with more or fewer values than there are columns.
    #[error("Dataset-JSON row {row} (line {line}) has {found} values, but \"columns\" declares {expected}")]
    RowWidth {
        /// 1-based row.
        row: usize,
        /// Line of the file where the row ends.
        line: usize,
        /// Number of columns.
        expected: usize,
        /// Values in the row (at least `expected + 1` when too many).
        found: usize,
    },
    /// A value that does not fit its column's `dataType`.
    #[error("Dataset-JSON row {row} (line {line}), column {column}: dataType \"{data_type}\"{} but the value is {found}", target_data_type.as_ref().map(|t| format!(" (targetDataType \"{t}\")")).unwrap_or_default())]
    CellType {
        /// 1-based row.
        row: usize,
        /// Line of the file where the value is.
        line: usize,
        /// Column name.
        column: String,
        /// The column's `dataType`.
        data_type: String,
        /// The column's `targetDataType`, when it has one.
        target_data_type: Option<String>,
        /// The value as written (text quoted, cut at 40 characters).
        found: String,
    },
    /// `records` is not the number of rows.
    #[error("Dataset-JSON \"records\" says {declared}, but the file has {found} rows")]
    RecordsMismatch {
        /// `records` as written.
        declared: u64,
        /// Rows read (when more than declared: the read stopped at the first extra row).
        found: u64,
    },
    /// The table would need more memory than the read may use.
    #[error("Dataset-JSON with {rows} records of {columns} columns needs about {needed_bytes} bytes, more than the {budget_bytes} bytes a read may use")]
    TableTooLarge {
        /// Records (declared, or read so far).
        rows: u64,
        /// Columns.
        columns: usize,
        /// rows × columns × 8.
        needed_bytes: u64,
        /// The budget.
        budget_bytes: u64,
    },
    /// One NDJSON line is longer than any row may be.
    #[error("Dataset-JSON line {line} is longer than {limit} bytes")]
    LineTooLong {
        /// 1-based line.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// The compressed form could not be decompressed.
    #[error("compressed Dataset-JSON (.dsjc, {framing}) cannot be decompressed near line {line}: {message}")]
    Decompress {
        /// `zlib` or `gzip`.
        framing: &'static str,
        /// Line being read.
        line: usize,
        /// What the decoder said.
        message: String,
    },
    /// The compressed form holds more than a read may decompress.
    #[error("compressed Dataset-JSON (.dsjc) expands to more than {limit} bytes, more than a read may decompress")]
    Expanded {
        /// The decompressed-byte limit.
        limit: u64,
    },
    /// Compressed content that is not Dataset-NDJSON.
    #[error("the {framing} stream does not hold Dataset-NDJSON (its first byte is not '{{'); adamviz reads compressed Dataset-JSON (.dsjc), not other compressed files")]
    NotNdjson {
        /// `zlib` or `gzip`.
        framing: &'static str,
    },
}

impl DatasetJsonError {
    /// A serde_json error at a line of the file (`line_offset` lines before the parsed text).
    pub(super) fn syntax(error: &serde_json::Error, line_offset: usize) -> Self {
        Self::Syntax {
            line: error.line() + line_offset,
            column: error.column(),
            message: strip_position(&error.to_string()),
        }
    }
}

/// serde_json appends " at line L column C" to its messages; the error says it separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}
