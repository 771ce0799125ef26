//! The inputs of a retained result read back: the snapshot from its CSV with the column classes
//! its `revision_context` record names, and the run request that replays or reproduces it.

use super::*;

/// Why a retained result's inputs cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetainedInputError {
    /// The context record lists no snapshot columns.
    #[error("the context names no snapshot columns")]
    NoColumns,
    /// A column's role is none of the snapshot's.
    #[error("unknown snapshot column role {0:?}")]
    UnknownRole(Option<String>),
    /// A column's class is neither character nor numeric.
    #[error("unknown column class {0:?}")]
    UnknownClass(Option<String>),
    /// The CSV is not UTF-8.
    #[error("snapshot.csv is not UTF-8")]
    NotUtf8,
    /// The CSV stops inside a line or a quoted field.
    #[error("snapshot.csv does not end with a complete line")]
    Incomplete,
    /// The header is not the context's columns.
    #[error("snapshot.csv's header {header:?} is not the context's columns {names:?}")]
    Header {
        /// The CSV's header.
        header: Vec<String>,
        /// The context's column names.
        names: Vec<String>,
    },
    /// A line with another number of fields.
    #[error("snapshot.csv line {line}: {fields} fields, {columns} columns")]
    Width {
        /// The line (1 is the header).
        line: usize,
        /// Its fields.
        fields: usize,
        /// The columns.
        columns: usize,
    },
    /// A bare field of a numeric column that is not a number.
    #[error("snapshot.csv line {line}: {text:?} is not a number")]
    NotANumber {
        /// The line.
        line: usize,
        /// The field.
        text: String,
    },
    /// A quoted field in a numeric column, or a bare one in a character column.
    #[error("snapshot.csv line {line}: {text:?} does not fit column {column} ({class})")]
    DoesNotFit {
        /// The line.
        line: usize,
        /// The field.
        text: String,
        /// The column.
        column: String,
        /// Its class.
        class: &'static str,
    },
    /// The request names a script or snapshot hash that is not SHA-256.
    #[error("the request's {0} is not a hash")]
    NotAHash(&'static str),
}

/// The snapshot columns a `revision_context` record's `snapshot.columns` names.
pub(super) fn snapshot_columns(
    columns: &serde_json::Value,
) -> Result<Vec<SnapshotColumn>, RetainedInputError> {
    let columns = columns.as_array().ok_or(RetainedInputError::NoColumns)?;
    let text = |value: &serde_json::Value| value.as_str().map(str::to_owned);
    columns
        .iter()
        .map(|column| {
            let role = match column["role"].as_str() {
                Some("subject") => "subject",
                Some("treatment") => "treatment",
                Some("visit") => "visit",
                Some("visit_order") => "visit_order",
                Some("value") => "value",
                _ => return Err(RetainedInputError::UnknownRole(text(&column["role"]))),
            };
            let class = match column["class"].as_str() {
                Some("character") => ColumnClass::Character,
                Some("numeric") => ColumnClass::Numeric,
                _ => return Err(RetainedInputError::UnknownClass(text(&column["class"]))),
            };
            Ok(SnapshotColumn {
                name: column["name"].as_str().unwrap_or_default().to_owned(),
                class,
                role,
            })
        })
        .collect()
}

/// One CSV field: whether it was quoted, and its text.
type Field = (bool, String);

/// Reads snapshot.csv as `write_csv` writes it: a quoted header, text quoted, numbers bare, a
/// missing value as an empty bare field.
pub(super) fn read_snapshot_csv(
    bytes: &[u8],
    columns: Vec<SnapshotColumn>,
) -> Result<Snapshot, RetainedInputError> {
    let text = std::str::from_utf8(bytes).map_err(|_| RetainedInputError::NotUtf8)?;
    let mut lines = csv_lines(text)?.into_iter();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    if header != names {
        return Err(RetainedInputError::Header { header, names });
    }
    let rows = lines
        .enumerate()
        .map(|(index, fields)| typed_row(index + 2, fields, &columns))
        .collect::<Result<_, _>>()?;
    Ok(Snapshot { columns, rows })
}

/// Splits `text` into lines of fields (RFC 4180 quoting; every line ends with `\n`).
fn csv_lines(text: &str) -> Result<Vec<Vec<Field>>, RetainedInputError> {
    let mut rows: Vec<Vec<Field>> = Vec::new();
    let mut row = Vec::new();
    let (mut field, mut quoted, mut in_quotes) = (String::new(), false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => in_quotes = false,
                other => field.push(other),
            }
            continue;
        }
        match c {
            '"' => {
                in_quotes = true;
                quoted = true;
            }
            ',' => row.push((std::mem::take(&mut quoted), std::mem::take(&mut field))),
            '\n' => {
                row.push((std::mem::take(&mut quoted), std::mem::take(&mut field)));
                rows.push(std::mem::take(&mut row));
            }
            other => field.push(other),
        }
    }
    if in_quotes || !field.is_empty() || !row.is_empty() {
        return Err(RetainedInputError::Incomplete);
    }
    Ok(rows)
}

/// The values of CSV line `line` for `columns`.
fn typed_row(
    line: usize,
    fields: Vec<Field>,
    columns: &[SnapshotColumn],
) -> Result<Vec<SnapshotValue>, RetainedInputError> {
    if fields.len() != columns.len() {
        return Err(RetainedInputError::Width {
            line,
            fields: fields.len(),
            columns: columns.len(),
        });
    }
    fields
        .into_iter()
        .zip(columns)
        .map(|((quoted, text), column)| match (quoted, column.class) {
            (true, ColumnClass::Character) => Ok(SnapshotValue::Text(text.into())),
            (false, _) if text.is_empty() => Ok(SnapshotValue::Missing),
            (false, ColumnClass::Numeric) => match text.parse::<f64>() {
                Ok(number) => Ok(SnapshotValue::Number(number)),
                Err(_) => Err(RetainedInputError::NotANumber { line, text }),
            },
            _ => Err(RetainedInputError::DoesNotFit {
                line,
                text,
                column: column.name.clone(),
                class: column.class.as_str(),
            }),
        })
        .collect()
}

/// The run request of a retained result: the script's bytes and the snapshot read from its
/// CSV with the column classes its `revision_context` record names, checked against the hashes
/// its `execution_request` record names (the runner re-hashes both). Used by the bundle's
/// replay and by the reproduction of a stored revision.
pub fn run_request_from(
    request: &serde_json::Value,
    context: &serde_json::Value,
    script: Vec<u8>,
    snapshot_csv: &[u8],
) -> Result<adamviz_engine::runner::RunRequest, RetainedInputError> {
    let columns = snapshot_columns(&context["snapshot"]["columns"])?;
    let snapshot = read_snapshot_csv(snapshot_csv, columns)?;
    let hash = |field: &'static str| {
        Sha256Digest::try_from(request[field].as_str().unwrap_or_default().to_owned())
            .map_err(|_| RetainedInputError::NotAHash(field))
    };
    Ok(adamviz_engine::runner::RunRequest {
        script,
        expected_script_hash: hash("script_hash")?,
        snapshot: std::sync::Arc::new(snapshot),
        expected_snapshot_hash: hash("snapshot_hash")?,
        image: serde_json::from_value(request["image"].clone()).unwrap_or_default(),
        report: serde_json::from_value(request["report"].clone()).ok(),
    })
}
