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

use std::{collections::HashMap, io::Write, sync::Arc};

use rustc_hash::FxHashMap;

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
    let shared = |values: &[String]| -> Vec<Arc<str>> {
        values.iter().map(|v| Arc::from(v.as_str())).collect()
    };
    let (treatment_levels, visit_labels) =
        (shared(&spec.treatment.levels), shared(&spec.visit.visits));
    let mut subject_ids: HashMap<&str, Arc<str>> = HashMap::new();
    let rows = selected
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
            if order.is_some() {
                row.push(number(order_value(s.row)));
            }
            row.push(number(s.value));
            row
        })
        .collect();
    Ok(Snapshot { columns, rows })
}

/// Appends a JSON string with the escapes RFC 8785 prescribes.
fn push_json_string(buf: &mut Vec<u8>, text: &str) {
    buf.push(b'"');
    let bytes = text.as_bytes();
    // A fold rather than `any`: without an early exit the check runs on whole vectors of bytes.
    let needs_escape = bytes.iter().fold(false, |found, &b| {
        found | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if !needs_escape {
        // The common case: nothing to escape.
        buf.extend_from_slice(bytes);
    } else {
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0x00..=0x1f => b"",
                _ => continue,
            };
            buf.extend_from_slice(&bytes[start..i]);
            if escape.is_empty() {
                buf.extend_from_slice(format!("\\u{b:04x}").as_bytes());
            } else {
                buf.extend_from_slice(escape);
            }
            start = i + 1;
        }
        buf.extend_from_slice(&bytes[start..]);
    }
    buf.push(b'"');
}

/// Appends the ECMAScript Number-to-String of a finite double, as RFC 8785 requires.
fn push_number(buf: &mut Vec<u8>, value: f64) {
    if value == 0.0 {
        // Both zeros.
        buf.push(b'0');
    } else if value.abs() < 9_007_199_254_740_992.0 && (value as i64) as f64 == value {
        // A whole number below 2^53 (far below 1e21, where ECMAScript switches to exponent
        // form) is written as its integer digits: the common case, done without float printing.
        buf.extend_from_slice(itoa::Buffer::new().format(value as i64).as_bytes());
    } else {
        buf.extend_from_slice(ryu_js::Buffer::new().format_finite(value).as_bytes());
    }
}

/// Encoded pieces up to this long are copied as one fixed-size block.
const SHORT: usize = 24;

/// Appends the first `len` bytes of `source`; when `len` is at most [`SHORT`] and `source`
/// holds at least [`SHORT`] bytes, as one fixed-size copy followed by a cut.
#[inline]
fn append_piece(buf: &mut Vec<u8>, source: &[u8], len: usize) {
    match source.get(..SHORT) {
        Some(block) if len <= SHORT => {
            let kept = buf.len() + len;
            let block: &[u8; SHORT] = block.try_into().expect("SHORT bytes");
            buf.extend_from_slice(block);
            buf.truncate(kept);
        }
        _ => buf.extend_from_slice(&source[..len]),
    }
}

/// Pieces are gathered in a buffer and handed on in writes of about this size.
const CHUNK: usize = 64 * 1024;

/// Where the encoder hands full buffers.
trait ChunkSink {
    /// Takes the bytes of `chunk`, leaving it empty (or replacing it with an empty buffer).
    fn take(&mut self, chunk: &mut Vec<u8>) -> std::io::Result<()>;
}

/// Hands chunks to a `Write`.
struct WriteSink<'a, W: Write>(&'a mut W);

impl<W: Write> ChunkSink for WriteSink<'_, W> {
    fn take(&mut self, chunk: &mut Vec<u8>) -> std::io::Result<()> {
        self.0.write_all(chunk)?;
        chunk.clear();
        Ok(())
    }
}

/// Writes the canonical encoding of `snapshot` (see the module documentation).
pub fn write_canonical(snapshot: &Snapshot, out: &mut impl Write) -> std::io::Result<()> {
    encode_canonical(snapshot, &mut WriteSink(out))
}

fn encode_canonical(snapshot: &Snapshot, out: &mut impl ChunkSink) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + 1024);
    buf.extend_from_slice(b"{\"columns\":[");
    for (i, column) in snapshot.columns.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"class\":");
        push_json_string(&mut buf, column.class.as_str());
        buf.extend_from_slice(b",\"name\":");
        push_json_string(&mut buf, &column.name);
        buf.extend_from_slice(b",\"role\":");
        push_json_string(&mut buf, column.role);
        buf.push(b'}');
    }
    buf.extend_from_slice(b"],\"rows\":[");
    // Each distinct text value (by allocation: equal values of a snapshot share one) is encoded
    // once into `encoded`; its cells copy that encoding.
    let mut encoded: Vec<u8> = Vec::new();
    let mut encoding_of: FxHashMap<*const u8, (usize, usize)> = FxHashMap::default();
    // Rows are sorted by treatment and visit, so a column's value is usually the one of the
    // row before: remembering it per column saves most of the map look-ups.
    let mut previous: Vec<(*const u8, usize, usize)> =
        vec![(std::ptr::null(), 0, 0); snapshot.columns.len()];
    // The encoding of each column's previous number, kept in a fixed block so that it is
    // copied with one fixed-size move (most numbers are short, and a copy of unknown length
    // is a call to `memmove`).
    let mut previous_number: Vec<(u64, [u8; SHORT], usize)> =
        vec![(u64::MAX, [0; SHORT], 0); snapshot.columns.len()];
    for (i, row) in snapshot.rows.iter().enumerate() {
        buf.extend_from_slice(if i > 0 { b",[" } else { b"[" });
        for (j, value) in row.iter().enumerate() {
            if j > 0 {
                buf.push(b',');
            }
            match value {
                SnapshotValue::Text(text) => {
                    let key = text.as_ptr();
                    let last = previous.get_mut(j);
                    let (start, end) = match last {
                        Some(&mut (ptr, start, end)) if ptr == key => (start, end),
                        _ => {
                            let (start, end) = *encoding_of.entry(key).or_insert_with(|| {
                                // Drop the padding, append, pad again.
                                encoded.truncate(encoded.len().saturating_sub(SHORT));
                                let start = encoded.len();
                                push_json_string(&mut encoded, text);
                                let end = encoded.len();
                                encoded.extend_from_slice(&[0; SHORT]);
                                (start, end)
                            });
                            if let Some(last) = previous.get_mut(j) {
                                *last = (key, start, end);
                            }
                            (start, end)
                        }
                    };
                    // `encoded` ends in SHORT bytes of padding, so a short piece can be copied
                    // as a fixed block and the excess cut off.
                    append_piece(&mut buf, &encoded[start..], end - start);
                }
                SnapshotValue::Number(number) => {
                    let bits = number.to_bits();
                    match previous_number.get_mut(j) {
                        Some((last, block, len)) => {
                            if *last != bits {
                                let mut piece = Vec::with_capacity(SHORT);
                                push_number(&mut piece, *number);
                                *len = piece.len();
                                if piece.len() <= SHORT {
                                    block[..piece.len()].copy_from_slice(&piece);
                                    *last = bits;
                                } else {
                                    // Too long to keep: written directly, not remembered.
                                    buf.extend_from_slice(&piece);
                                    *last = u64::MAX;
                                    continue;
                                }
                            }
                            append_piece(&mut buf, &block[..], *len);
                        }
                        None => push_number(&mut buf, *number),
                    }
                }
                SnapshotValue::Missing => buf.extend_from_slice(b"null"),
            }
        }
        buf.push(b']');
        if buf.len() >= CHUNK {
            out.take(&mut buf)?;
        }
    }
    buf.extend_from_slice(b"],\"version\":");
    push_json_string(&mut buf, SNAPSHOT_VERSION);
    buf.push(b'}');
    out.take(&mut buf)
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

/// Hands chunks to a hashing thread, and takes back emptied buffers to reuse.
struct PipeSink {
    full: std::sync::mpsc::SyncSender<Vec<u8>>,
    empty: std::sync::mpsc::Receiver<Vec<u8>>,
}

impl ChunkSink for PipeSink {
    fn take(&mut self, chunk: &mut Vec<u8>) -> std::io::Result<()> {
        let spare = self
            .empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK + 1024));
        let full = std::mem::replace(chunk, spare);
        self.full
            .send(full)
            .map_err(|_| std::io::Error::other("the hashing thread stopped"))
    }
}

/// Below this many rows the snapshot is encoded and hashed on one thread: starting a second
/// costs more than it saves.
const PIPELINE_MIN_ROWS: usize = 4_096;

/// The snapshot hash: SHA-256 of the canonical encoding, streamed in chunks (never held whole).
///
/// Encoding costs about as much as SHA-256 itself, so for snapshots of some size the two run
/// as a pipeline on two threads: this one encodes 64 KiB chunks, a scoped thread hashes them.
pub fn snapshot_hash(snapshot: &Snapshot) -> Sha256Digest {
    if snapshot.rows.len() < PIPELINE_MIN_ROWS {
        let mut hasher = HashWriter(Sha256::new());
        write_canonical(snapshot, &mut hasher).expect("hashing never fails");
        return Sha256Digest::from_bytes(hasher.0.finalize().into());
    }
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let hasher = scope.spawn(move || {
            let mut hasher = Sha256::new();
            for mut chunk in full_rx {
                hasher.update(&chunk);
                chunk.clear();
                // The encoder may have finished; then the buffer is simply dropped.
                let _ = empty_tx.send(chunk);
            }
            hasher.finalize()
        });
        let mut sink = PipeSink {
            full: full_tx,
            empty: empty_rx,
        };
        encode_canonical(snapshot, &mut sink).expect("the hashing thread runs to the end");
        drop(sink);
        Sha256Digest::from_bytes(hasher.join().expect("hashing never panics").into())
    })
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
