//! The snapshot: the records a confirmed spec selects, projected onto the plotted columns, in a
//! canonical order with explicit column classes; its canonical encoding and hash; and its CSV
//! form, which R reads back to the same values.
//!
//! ## Canonical encoding (`snapshot-v1`)
//! The snapshot is the RFC 8785 (JCS) canonical JSON of
//! `{"columns":[{"class":C,"name":N,"role":R},…],"rows":[[v,…],…],"version":"snapshot-v1"}`:
//! - columns in role order `subject, treatment, visit, visit_order (if the spec orders visits by
//!   a column), value`, whatever the upload's column order; `class` is `character` or `numeric`;
//! - rows sorted by treatment level (spec order), visit (spec order), subject (UTF-8 bytes),
//!   value (numeric order, missing last), whatever the upload's row order;
//! - strings as UTF-8 with JSON escapes; visit labels blank-trimmed; numbers in ECMAScript
//!   shortest round-trip form (`-0` as `0`); a missing value as `null`.
//!
//! The snapshot hash is the SHA-256 of those bytes. [`snapshot_hash`] streams them into the
//! hasher without building the document; a test checks it against `serde_jcs`.

use std::{collections::HashMap, io::Write};

use sha2::{Digest, Sha256};

use super::{
    profile::order_missing_last,
    table::{ColumnData, NumericValues, Table, TextValues},
};
use crate::domain::{
    digest::Sha256Digest,
    spec::{PlotSpec, SpecState, VisitOrderSource},
};

/// Version tag inside the canonical encoding.
pub const SNAPSHOT_VERSION: &str = "snapshot-v1";

/// A snapshot column's class, as R's `colClasses` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnClass {
    /// Text.
    Character,
    /// Double.
    Numeric,
}

impl ColumnClass {
    /// `character` or `numeric`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Character => "character",
            Self::Numeric => "numeric",
        }
    }
}

/// One snapshot column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotColumn {
    /// Name in the upload.
    pub name: String,
    /// Class.
    pub class: ColumnClass,
    /// Role: subject, treatment, visit, visit_order or value.
    pub role: &'static str,
}

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapshotValue {
    /// Text.
    Text(String),
    /// A finite number.
    Number(f64),
    /// Missing.
    Missing,
}

/// The selected records.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Columns, in role order.
    pub columns: Vec<SnapshotColumn>,
    /// Rows, in canonical order.
    pub rows: Vec<Vec<SnapshotValue>>,
}

/// Why a snapshot could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// Snapshots are taken of confirmed specs only.
    #[error("the spec is a draft; confirm it first (adamviz spec confirm)")]
    NotConfirmed,
    /// The spec no longer fits the table (it was confirmed against other data).
    #[error("column {column:?} ({role}) is missing or has the wrong type; confirm the spec against this dataset")]
    ColumnMismatch {
        /// The column.
        column: String,
        /// Its role.
        role: &'static str,
    },
}

fn text_of<'a>(
    table: &'a Table,
    column: &str,
    role: &'static str,
) -> Result<&'a TextValues, SnapshotError> {
    match table.column(column).map(|c| &c.data) {
        Some(ColumnData::Character(values)) => Ok(values),
        _ => Err(SnapshotError::ColumnMismatch {
            column: column.to_owned(),
            role,
        }),
    }
}

fn numbers_of<'a>(
    table: &'a Table,
    column: &str,
    role: &'static str,
) -> Result<&'a NumericValues, SnapshotError> {
    match table.column(column).map(|c| &c.data) {
        Some(ColumnData::Numeric(values)) => Ok(values),
        _ => Err(SnapshotError::ColumnMismatch {
            column: column.to_owned(),
            role,
        }),
    }
}

/// Selects and orders the records of a confirmed `spec` (see the module documentation).
pub fn take_snapshot(spec: &PlotSpec, table: &Table) -> Result<Snapshot, SnapshotError> {
    if spec.state != SpecState::Confirmed {
        return Err(SnapshotError::NotConfirmed);
    }
    let codes = text_of(table, &spec.parameter.column, "parameter")?;
    let subjects = text_of(table, &spec.subject_column, "subject")?;
    let treatments = text_of(table, &spec.treatment.column, "treatment")?;
    let visits = text_of(table, &spec.visit.column, "visit")?;
    let values = numbers_of(table, &spec.value_column, "value")?;
    let order = match &spec.visit.order_source {
        VisitOrderSource::Column { column } => {
            Some((column, numbers_of(table, column, "visit_order")?))
        }
        VisitOrderSource::AsListed => None,
    };
    let filters = spec
        .filters
        .iter()
        .map(|f| Ok((text_of(table, &f.column, "filter")?, &f.values)))
        .collect::<Result<Vec<_>, SnapshotError>>()?;
    let level_rank: HashMap<&str, usize> = spec
        .treatment
        .levels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let visit_rank: HashMap<&str, usize> = spec
        .visit
        .visits
        .iter()
        .enumerate()
        .map(|(i, v)| (v.as_str(), i))
        .collect();

    struct Selected<'a> {
        treatment: usize,
        visit: usize,
        subject: &'a str,
        value: Option<f64>,
        row: usize,
    }
    let mut selected: Vec<Selected> = Vec::new();
    for row in 0..table.row_count {
        if codes.get(row) != Some(spec.parameter.value.as_str()) {
            continue;
        }
        if !filters.iter().all(|(column, allowed)| {
            column
                .get(row)
                .is_some_and(|v| allowed.iter().any(|a| a == v))
        }) {
            continue;
        }
        let (Some(treatment), Some(visit), Some(subject)) = (
            treatments.get(row).and_then(|t| level_rank.get(t)),
            visits.get(row).and_then(|v| visit_rank.get(v.trim())),
            subjects.get(row),
        ) else {
            continue;
        };
        selected.push(Selected {
            treatment: *treatment,
            visit: *visit,
            subject,
            value: values.value(row),
            row,
        });
    }
    let order_value = |row: usize| order.and_then(|(_, o)| o.value(row));
    selected.sort_by(|a, b| {
        a.treatment
            .cmp(&b.treatment)
            .then(a.visit.cmp(&b.visit))
            .then(a.subject.as_bytes().cmp(b.subject.as_bytes()))
            .then(order_missing_last(a.value, b.value))
            .then_with(|| order_missing_last(order_value(a.row), order_value(b.row)))
    });

    let mut columns = vec![
        SnapshotColumn {
            name: spec.subject_column.clone(),
            class: ColumnClass::Character,
            role: "subject",
        },
        SnapshotColumn {
            name: spec.treatment.column.clone(),
            class: ColumnClass::Character,
            role: "treatment",
        },
        SnapshotColumn {
            name: spec.visit.column.clone(),
            class: ColumnClass::Character,
            role: "visit",
        },
    ];
    if let Some((name, _)) = order {
        columns.push(SnapshotColumn {
            name: name.clone(),
            class: ColumnClass::Numeric,
            role: "visit_order",
        });
    }
    columns.push(SnapshotColumn {
        name: spec.value_column.clone(),
        class: ColumnClass::Numeric,
        role: "value",
    });
    let number = |value: Option<f64>| value.map_or(SnapshotValue::Missing, SnapshotValue::Number);
    let rows = selected
        .iter()
        .map(|s| {
            let mut row = vec![
                SnapshotValue::Text(s.subject.to_owned()),
                SnapshotValue::Text(spec.treatment.levels[s.treatment].clone()),
                SnapshotValue::Text(spec.visit.visits[s.visit].clone()),
            ];
            if order.is_some() {
                row.push(number(order_value(s.row)));
            }
            row.push(number(s.value));
            row
        })
        .collect();
    Ok(Snapshot { columns, rows })
}

/// Writes a JSON string with the escapes RFC 8785 prescribes.
fn write_json_string(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    out.write_all(b"\"")?;
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            0x00..=0x1f => None,
            _ => continue,
        };
        out.write_all(&bytes[start..i])?;
        match escape {
            Some(e) => out.write_all(e)?,
            None => write!(out, "\\u{b:04x}")?,
        }
        start = i + 1;
    }
    out.write_all(&bytes[start..])?;
    out.write_all(b"\"")
}

/// ECMAScript Number-to-String of a finite double, as RFC 8785 requires.
fn write_number(out: &mut impl Write, value: f64) -> std::io::Result<()> {
    if value == 0.0 {
        return out.write_all(b"0");
    }
    let mut buffer = ryu_js::Buffer::new();
    out.write_all(buffer.format_finite(value).as_bytes())
}

/// Writes the canonical encoding of `snapshot` (see the module documentation).
pub fn write_canonical(snapshot: &Snapshot, out: &mut impl Write) -> std::io::Result<()> {
    out.write_all(b"{\"columns\":[")?;
    for (i, column) in snapshot.columns.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"{\"class\":")?;
        write_json_string(out, column.class.as_str())?;
        out.write_all(b",\"name\":")?;
        write_json_string(out, &column.name)?;
        out.write_all(b",\"role\":")?;
        write_json_string(out, column.role)?;
        out.write_all(b"}")?;
    }
    out.write_all(b"],\"rows\":[")?;
    for (i, row) in snapshot.rows.iter().enumerate() {
        out.write_all(if i > 0 { b",[" } else { b"[" })?;
        for (j, value) in row.iter().enumerate() {
            if j > 0 {
                out.write_all(b",")?;
            }
            match value {
                SnapshotValue::Text(text) => write_json_string(out, text)?,
                SnapshotValue::Number(number) => write_number(out, *number)?,
                SnapshotValue::Missing => out.write_all(b"null")?,
            }
        }
        out.write_all(b"]")?;
    }
    out.write_all(b"],\"version\":")?;
    write_json_string(out, SNAPSHOT_VERSION)?;
    out.write_all(b"}")
}

/// A `Write` that feeds SHA-256.
struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The snapshot hash: SHA-256 of the canonical encoding, streamed.
pub fn snapshot_hash(snapshot: &Snapshot) -> Sha256Digest {
    let mut hasher = std::io::BufWriter::with_capacity(64 * 1024, HashWriter(Sha256::new()));
    write_canonical(snapshot, &mut hasher).expect("hashing never fails");
    let HashWriter(sha) = hasher
        .into_inner()
        .map_err(|_| ())
        .expect("hashing never fails");
    Sha256Digest::from_bytes(sha.finalize().into())
}

/// Writes the snapshot as CSV for R: a header of column names, every text value quoted (`"`
/// doubled), numbers in shortest round-trip form, a missing value as an empty unquoted field.
/// Read it with `read.csv(f, colClasses = <classes>, na.strings = "", check.names = FALSE,
/// encoding = "UTF-8")`.
pub fn write_csv(snapshot: &Snapshot, out: &mut impl Write) -> std::io::Result<()> {
    let quoted = |out: &mut dyn Write, text: &str| -> std::io::Result<()> {
        out.write_all(b"\"")?;
        out.write_all(text.replace('"', "\"\"").as_bytes())?;
        out.write_all(b"\"")
    };
    for (i, column) in snapshot.columns.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        quoted(out, &column.name)?;
    }
    out.write_all(b"\n")?;
    for row in &snapshot.rows {
        for (i, value) in row.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            match value {
                SnapshotValue::Text(text) => quoted(out, text)?,
                SnapshotValue::Number(number) => write_number(out, *number)?,
                SnapshotValue::Missing => {}
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}
