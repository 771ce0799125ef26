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

use std::{
    collections::HashMap,
    io::Write,
    sync::{mpsc, Arc, Mutex, OnceLock},
};

use rustc_hash::FxHashMap;

use sha2::{Digest, Sha256};

use super::{
    profile::order_missing_last,
    table::{ColumnData, NumericValues, Table, TextValues},
};
use adamviz_model::{
    digest::Sha256Digest,
    spec::{PlotSpec, SpecState, VisitOrderSource},
};

mod canonical;

use canonical::push_number;
pub use canonical::{snapshot_hash, write_canonical};

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
    /// Text. Equal values of a snapshot share one allocation (a treatment level is stored
    /// once, not once per row), which also lets the encoder reuse a value's encoding.
    Text(Arc<str>),
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
    /// A confirmed spec cannot leave a choice open.
    #[error(transparent)]
    OpenChoice(#[from] adamviz_model::spec::OpenChoice),
    /// The record choice does not fit the table.
    #[error(transparent)]
    RecordChoice(#[from] super::records::RecordChoiceError),
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
    let parameter = spec.parameter_choice()?;
    let record_test = super::records::record_choice_test(spec.records_choice()?, table)?;
    let codes = text_of(table, &parameter.column, "parameter")?;
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
    let (level_rank, visit_rank) = (ranks(&spec.treatment.levels), ranks(&spec.visit.visits));
    let mut selected: Vec<Selected> = Vec::new();
    for row in 0..table.row_count {
        if codes.get(row) != Some(parameter.value.as_str()) || !record_test.keeps(row) {
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

    let columns = snapshot_columns(spec, order.map(|(name, _)| name));
    let rows = snapshot_rows(spec, &selected, order.is_some().then_some(&order_value));
    Ok(Snapshot { columns, rows })
}

/// A selected record: its panel and axis positions, its subject, its value and its row.
struct Selected<'a> {
    treatment: usize,
    visit: usize,
    subject: &'a str,
    value: Option<f64>,
    row: usize,
}

/// The snapshot's rows for the `selected` records in their order, with the visit order when
/// there is an order column (`order_value`); every text shared rather than copied per row.
fn snapshot_rows(
    spec: &PlotSpec,
    selected: &[Selected<'_>],
    order_value: Option<&dyn Fn(usize) -> Option<f64>>,
) -> Vec<Vec<SnapshotValue>> {
    let number = |value: Option<f64>| value.map_or(SnapshotValue::Missing, SnapshotValue::Number);
    let shared = |values: &[String]| -> Vec<Arc<str>> {
        values.iter().map(|v| Arc::from(v.as_str())).collect()
    };
    let (treatment_levels, visit_labels) =
        (shared(&spec.treatment.levels), shared(&spec.visit.visits));
    let mut subject_ids: HashMap<&str, Arc<str>> = HashMap::new();
    selected
        .iter()
        .map(|s| {
            let subject = subject_ids
                .entry(s.subject)
                .or_insert_with(|| Arc::from(s.subject))
                .clone();
            let mut row = vec![
                SnapshotValue::Text(subject),
                SnapshotValue::Text(treatment_levels[s.treatment].clone()),
                SnapshotValue::Text(visit_labels[s.visit].clone()),
            ];
            if let Some(order_value) = order_value {
                row.push(number(order_value(s.row)));
            }
            row.push(number(s.value));
            row
        })
        .collect()
}

/// Each item's position in `items` (panel order, axis order).
fn ranks(items: &[String]) -> HashMap<&str, usize> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| (item.as_str(), i))
        .collect()
}

/// The snapshot's columns: subject, treatment, visit, the visit order (`order`, when the visits
/// are ordered by a column) and the value.
fn snapshot_columns(spec: &PlotSpec, order: Option<&String>) -> Vec<SnapshotColumn> {
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
    if let Some(name) = order {
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
    columns
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
                SnapshotValue::Number(number) => {
                    let mut text = Vec::new();
                    push_number(&mut text, *number);
                    out.write_all(&text)?;
                }
                SnapshotValue::Missing => {}
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}
