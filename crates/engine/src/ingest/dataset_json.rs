//! CDISC Dataset-JSON v1.1 reader, in its three forms: JSON (one object, the metadata then
//! `rows`), NDJSON (the metadata object on the first line, then one row array per line) and
//! compressed NDJSON (`.dsjc`). The standard and the R `datasetjson` package write `.dsjc` as a
//! zlib stream (RFC 1950); some writers (the TypeScript `js-stream-dataset-json`) use gzip
//! framing instead, so both are read, recognised by their header bytes.
//!
//! Rows stream through serde_json straight into the table's columns (never a JSON tree), each
//! value checked against its column's `dataType`: `string`/`URI` text; `integer`, `float`,
//! `double`, `decimal` (a string of digits) and `boolean` numbers; `date`/`datetime`/`time`
//! ISO 8601 text, kept as the SAS number when `targetDataType` is `integer` (as a SAS dataset
//! holds it) and as text otherwise. A value that does not fit, a row of the wrong width or a
//! `records` that is not the row count is a [`DatasetJsonError`] naming the row, line and column.

use std::io::{BufRead, Read};

use serde::{
    de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor},
    Deserialize,
};

use super::{
    sas_dates::Temporal,
    table::{Column, DeclaredColumn, SourceFormat, Table},
    xpt::TableBudget,
};

mod cells;
mod error;
pub mod writer;

use cells::{NumberKind, RowProblem, RowSeed, RowTarget, Sink};
pub use error::DatasetJsonError;

/// The longest NDJSON line (one row, or the metadata) a read accepts.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// How compressed Dataset-JSON is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// zlib (RFC 1950), as the standard writes `.dsjc`.
    Zlib,
    /// gzip (RFC 1952).
    Gzip,
}

impl Framing {
    fn name(self) -> &'static str {
        match self {
            Self::Zlib => "zlib",
            Self::Gzip => "gzip",
        }
    }
}

/// True when `bytes` begin (after a byte-order mark and blanks) with `{`: a Dataset-JSON
/// object, whose JSON and NDJSON forms both open that way.
pub fn looks_like_dataset_json(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// The framing of compressed content, from its header: zlib's two header bytes (deflate, a
/// window of at most 32 KiB, a check that divides by 31) or gzip's magic.
pub fn compressed_framing(bytes: &[u8]) -> Option<Framing> {
    match bytes {
        [0x1f, 0x8b, ..] => Some(Framing::Gzip),
        [cmf, flg, ..]
            if cmf & 0x0f == 8
                && cmf >> 4 <= 7
                && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0 =>
        {
            Some(Framing::Zlib)
        }
        _ => None,
    }
}

/// True when the first bytes of the `framing` stream in `bytes` decompress to a JSON object.
pub fn opens_a_json_object(bytes: &[u8], framing: Framing) -> bool {
    let mut head = [0u8; 64];
    let read = match framing {
        Framing::Zlib => flate2::read::ZlibDecoder::new(bytes).read(&mut head),
        Framing::Gzip => flate2::read::MultiGzDecoder::new(bytes).read(&mut head),
    };
    read.is_ok_and(|n| looks_like_dataset_json(&head[..n]))
}

/// Reads an uncompressed Dataset-JSON file (JSON or NDJSON form, told apart by the content).
pub fn read_dataset_json(bytes: &[u8], budget: TableBudget) -> Result<Table, DatasetJsonError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if is_ndjson(bytes) {
        read_ndjson(bytes, budget, None)
    } else {
        read_json(bytes, budget)
    }
}

/// Reads compressed Dataset-NDJSON (`.dsjc`), decompressing as it goes; at most `expanded_limit`
/// bytes are decompressed.
pub fn read_dsjc(
    bytes: &[u8],
    framing: Framing,
    budget: TableBudget,
    expanded_limit: u64,
) -> Result<Table, DatasetJsonError> {
    let decoder: Box<dyn Read + '_> = match framing {
        Framing::Zlib => Box::new(flate2::read::ZlibDecoder::new(bytes)),
        Framing::Gzip => Box::new(flate2::read::MultiGzDecoder::new(bytes)),
    };
    let mut reader = std::io::BufReader::with_capacity(1 << 16, decoder.take(expanded_limit + 1));
    match reader.fill_buf() {
        Ok(head) if looks_like_dataset_json(head) => {}
        Ok(_) => {
            return Err(DatasetJsonError::NotNdjson {
                framing: framing.name(),
            })
        }
        Err(error) => {
            return Err(DatasetJsonError::Decompress {
                framing: framing.name(),
                line: 1,
                message: error.to_string(),
            })
        }
    }
    let table = read_ndjson(&mut reader, budget, Some(framing))?;
    if reader.into_inner().limit() == 0 {
        return Err(DatasetJsonError::Expanded {
            limit: expanded_limit,
        });
    }
    Ok(table)
}

/// NDJSON when the first line is a whole JSON object and something follows it (a pretty-printed
/// JSON file's first line is `{`; a compact one is a single line).
fn is_ndjson(bytes: &[u8]) -> bool {
    let Some(end) = memchr::memchr(b'\n', bytes) else {
        return false;
    };
    let rest_is_blank = bytes[end..].iter().all(u8::is_ascii_whitespace);
    !rest_is_blank && serde_json::from_slice::<IgnoredAny>(&bytes[..end]).is_ok()
}

/// The top-level attributes other than `columns` and `rows`.
#[derive(Debug, Default, Deserialize)]
struct Metadata {
    #[serde(rename = "datasetJSONVersion")]
    version: Option<String>,
    #[serde(rename = "datasetJSONCreationDateTime")]
    created: Option<String>,
    #[serde(rename = "itemGroupOID")]
    item_group_oid: Option<String>,
    records: Option<u64>,
    name: Option<String>,
    label: Option<String>,
    /// Present only in the v1.0 layout.
    #[serde(rename = "clinicalData")]
    clinical_data: Option<IgnoredAny>,
    #[serde(rename = "referenceData")]
    reference_data: Option<IgnoredAny>,
}

/// One entry of `columns`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ColumnDef {
    #[serde(rename = "itemOID")]
    #[allow(dead_code)] // required by the standard; read so that its absence is an error
    item_oid: String,
    name: String,
    label: Option<String>,
    data_type: String,
    target_data_type: Option<String>,
    length: Option<u64>,
    display_format: Option<String>,
}

/// The NDJSON form's first line: the metadata with its columns.
#[derive(Debug, Deserialize)]
struct NdjsonHeader {
    #[serde(flatten)]
    metadata: Metadata,
    columns: Option<Vec<ColumnDef>>,
}

/// The table being built, with what is known so far.
struct Builder {
    columns: Vec<ColumnDef>,
    sinks: Vec<Sink>,
    rows: u64,
    declared_records: Option<u64>,
    budget: TableBudget,
    /// The first problem found inside a serde callback (the serde error only says "stop").
    problem: Option<DatasetJsonError>,
}

impl Builder {
    fn new(
        columns: Vec<ColumnDef>,
        declared_records: Option<u64>,
        budget: TableBudget,
    ) -> Result<Self, DatasetJsonError> {
        if columns.is_empty() {
            return Err(DatasetJsonError::NoColumns);
        }
        let mut seen = std::collections::HashSet::new();
        for (index, column) in columns.iter().enumerate() {
            if !seen.insert(column.name.as_str()) {
                return Err(DatasetJsonError::DuplicateColumn {
                    index: index + 1,
                    name: column.name.clone(),
                });
            }
        }
        let kinds = columns
            .iter()
            .map(number_kind)
            .collect::<Result<Vec<_>, _>>()?;
        let builder = Self {
            sinks: Vec::new(),
            rows: 0,
            declared_records,
            budget,
            problem: None,
            columns,
        };
        let reserve = match declared_records {
            Some(records) => {
                builder.check_budget(records)?;
                records as usize
            }
            None => 0,
        };
        Ok(Self {
            sinks: kinds
                .into_iter()
                .map(|kind| Sink::new(kind, reserve))
                .collect(),
            ..builder
        })
    }

    fn check_budget(&self, rows: u64) -> Result<(), DatasetJsonError> {
        let needed_bytes = rows
            .saturating_mul(self.columns.len() as u64)
            .saturating_mul(8);
        if needed_bytes > self.budget.bytes {
            return Err(DatasetJsonError::TableTooLarge {
                rows,
                columns: self.columns.len(),
                needed_bytes,
                budget_bytes: self.budget.bytes,
            });
        }
        Ok(())
    }

    /// Called before each row: a row beyond `records`, or beyond the budget, stops the read
    /// before it is stored.
    fn next_row(&mut self) -> Result<(), DatasetJsonError> {
        if let Some(declared) = self.declared_records {
            if self.rows >= declared {
                return Err(DatasetJsonError::RecordsMismatch {
                    declared,
                    found: self.rows + 1,
                });
            }
        } else {
            // `records` not seen yet (it may follow the rows): the budget row by row.
            self.check_budget(self.rows + 1)?;
        }
        Ok(())
    }

    /// Reads one row from `deserializer`; `line` is where the row is (for the NDJSON form) or
    /// where it ended (for the JSON form, filled in by the caller).
    fn row<'de, D: de::Deserializer<'de>>(
        &mut self,
        deserializer: D,
        line: usize,
    ) -> Result<(), D::Error> {
        if let Err(problem) = self.next_row() {
            self.problem = Some(problem);
            return Err(de::Error::custom("stopped"));
        }
        let mut target = RowTarget {
            sinks: &mut self.sinks,
            problem: None,
        };
        let outcome = RowSeed(&mut target).deserialize(deserializer);
        self.rows += 1;
        if let Some(problem) = target.problem {
            self.problem = Some(self.row_problem(problem, line));
        }
        outcome
    }

    fn row_problem(&self, problem: RowProblem, line: usize) -> DatasetJsonError {
        let row = self.rows as usize;
        match problem {
            RowProblem::Width { found } => DatasetJsonError::RowWidth {
                row,
                line,
                expected: self.columns.len(),
                found,
            },
            RowProblem::Cell { column, found } => {
                let def = &self.columns[column];
                DatasetJsonError::CellType {
                    row,
                    line,
                    column: def.name.clone(),
                    data_type: def.data_type.clone(),
                    target_data_type: def.target_data_type.clone(),
                    found,
                }
            }
        }
    }

    fn finish(self, metadata: Metadata) -> Result<Table, DatasetJsonError> {
        check_metadata(&metadata)?;
        let declared = metadata.records.expect("checked");
        if declared != self.rows {
            return Err(DatasetJsonError::RecordsMismatch {
                declared,
                found: self.rows,
            });
        }
        let columns = self
            .columns
            .into_iter()
            .zip(self.sinks)
            .map(|(def, sink)| Column {
                name: def.name,
                label: def.label.filter(|label| !label.is_empty()),
                format: def.display_format.filter(|format| !format.is_empty()),
                declared: DeclaredColumn {
                    length: def.length.map(|length| length as usize),
                    data_type: Some(def.data_type),
                },
                data: sink.finish(),
            })
            .collect();
        Ok(Table {
            source_format: SourceFormat::DatasetJson,
            dataset_name: metadata.name.filter(|name| !name.is_empty()),
            dataset_label: metadata.label.filter(|label| !label.is_empty()),
            columns,
            row_count: self.rows as usize,
        })
    }
}

/// What a column's `dataType` and `targetDataType` make of its values (`None`: text).
fn number_kind(column: &ColumnDef) -> Result<Option<NumberKind>, DatasetJsonError> {
    let unknown = |attribute, value: &str| DatasetJsonError::UnknownDataType {
        column: column.name.clone(),
        attribute,
        value: value.to_owned(),
    };
    let target = column.target_data_type.as_deref();
    if let Some(other) = target.filter(|t| !matches!(*t, "integer" | "decimal")) {
        return Err(unknown("targetDataType", other));
    }
    let temporal = |kind| match target {
        Some("integer") => Ok(Some(NumberKind::Temporal(kind))),
        None => Ok(None),
        Some(other) => Err(unknown("targetDataType", other)),
    };
    match column.data_type.as_str() {
        "string" | "URI" => match target {
            None => Ok(None),
            Some("decimal") => Ok(Some(NumberKind::Decimal)),
            Some(other) => Err(unknown("targetDataType", other)),
        },
        "integer" => Ok(Some(NumberKind::Integer)),
        "float" | "double" => Ok(Some(NumberKind::Float)),
        "decimal" => Ok(Some(NumberKind::Decimal)),
        "boolean" => Ok(Some(NumberKind::Boolean)),
        "date" => temporal(Temporal::Date),
        "datetime" => temporal(Temporal::Datetime),
        "time" => temporal(Temporal::Time),
        other => Err(unknown("dataType", other)),
    }
}

/// The version and the required attributes.
fn check_metadata(metadata: &Metadata) -> Result<(), DatasetJsonError> {
    if metadata.clinical_data.is_some() || metadata.reference_data.is_some() {
        return Err(DatasetJsonError::Version {
            found: metadata.version.clone().unwrap_or_else(|| "1.0".to_owned()),
        });
    }
    let Some(version) = &metadata.version else {
        return Err(DatasetJsonError::MissingAttribute {
            attribute: "datasetJSONVersion",
        });
    };
    if !(version == "1.1" || version.starts_with("1.1.")) {
        return Err(DatasetJsonError::Version {
            found: version.clone(),
        });
    }
    let required: [(&'static str, bool); 5] = [
        ("datasetJSONCreationDateTime", metadata.created.is_some()),
        ("itemGroupOID", metadata.item_group_oid.is_some()),
        ("records", metadata.records.is_some()),
        ("name", metadata.name.is_some()),
        ("label", metadata.label.is_some()),
    ];
    match required.iter().find(|(_, present)| !present) {
        Some((attribute, _)) => Err(DatasetJsonError::MissingAttribute { attribute }),
        None => Ok(()),
    }
}

/// The JSON form: the top-level object is walked key by key; `rows` streams into the builder.
fn read_json(bytes: &[u8], budget: TableBudget) -> Result<Table, DatasetJsonError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let mut document = Document {
        budget,
        metadata: serde_json::Map::new(),
        builder: None,
        problem: None,
    };
    let parsed = (&mut document)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    if let Err(error) = parsed {
        let row_problem = document.builder.as_mut().and_then(|b| b.problem.take());
        return Err(match (document.problem.take(), row_problem) {
            (Some(problem), _) => problem,
            (None, Some(mut problem)) => {
                // serde_json knows where it stopped: the row's line.
                if let DatasetJsonError::RowWidth { line, .. }
                | DatasetJsonError::CellType { line, .. } = &mut problem
                {
                    *line = error.line();
                }
                problem
            }
            (None, None) => DatasetJsonError::syntax(&error, 0),
        });
    }
    let metadata: Metadata = serde_json::from_value(serde_json::Value::Object(document.metadata))
        .map_err(|error| DatasetJsonError::Metadata {
        message: error.to_string(),
    })?;
    match document.builder {
        Some(builder) => builder.finish(metadata),
        None => {
            check_metadata(&metadata)?;
            Err(DatasetJsonError::MissingAttribute {
                attribute: "columns",
            })
        }
    }
}

/// The JSON form's top-level object as it is walked.
struct Document {
    budget: TableBudget,
    /// Attributes other than `columns` and `rows` (small).
    metadata: serde_json::Map<String, serde_json::Value>,
    builder: Option<Builder>,
    problem: Option<DatasetJsonError>,
}

impl<'de> DeserializeSeed<'de> for &mut Document {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Document {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Dataset-JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "columns" => {
                    let columns: Vec<ColumnDef> = map.next_value()?;
                    let records = self.metadata.get("records").and_then(|r| r.as_u64());
                    match Builder::new(columns, records, self.budget) {
                        Ok(builder) => self.builder = Some(builder),
                        Err(problem) => {
                            self.problem = Some(problem);
                            return Err(de::Error::custom("stopped"));
                        }
                    }
                }
                "rows" => {
                    let Some(builder) = self.builder.as_mut() else {
                        self.problem = Some(DatasetJsonError::RowsBeforeColumns);
                        return Err(de::Error::custom("stopped"));
                    };
                    map.next_value_seed(Rows { builder })?;
                }
                _ => {
                    let value: serde_json::Value = map.next_value()?;
                    self.metadata.insert(key, value);
                }
            }
        }
        Ok(())
    }
}

/// The JSON form's `rows` array.
struct Rows<'a> {
    builder: &'a mut Builder,
}

impl<'de> DeserializeSeed<'de> for Rows<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while seq
            .next_element_seed(RowInJson {
                builder: &mut *self.builder,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// One row of the JSON form (its line is filled in from serde_json's error if it fails).
struct RowInJson<'a> {
    builder: &'a mut Builder,
}

impl<'de> DeserializeSeed<'de> for RowInJson<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.builder.row(deserializer, 0)
    }
}

/// The NDJSON form (plain, or decompressed as it is read): the first line is the metadata, each
/// further line one row.
fn read_ndjson<R: BufRead>(
    mut reader: R,
    budget: TableBudget,
    compressed: Option<Framing>,
) -> Result<Table, DatasetJsonError> {
    let mut line = Vec::new();
    let mut line_number = 0usize;
    let mut next_line =
        |line: &mut Vec<u8>, line_number: &mut usize| -> Result<bool, DatasetJsonError> {
            line.clear();
            *line_number += 1;
            let read = (&mut reader)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', line)
                .map_err(|error| match compressed {
                    Some(framing) => DatasetJsonError::Decompress {
                        framing: framing.name(),
                        line: *line_number,
                        message: error.to_string(),
                    },
                    None => DatasetJsonError::Syntax {
                        line: *line_number,
                        column: 1,
                        message: error.to_string(),
                    },
                })?;
            if line.len() > MAX_LINE_BYTES {
                return Err(DatasetJsonError::LineTooLong {
                    line: *line_number,
                    limit: MAX_LINE_BYTES,
                });
            }
            Ok(read > 0)
        };
    if !next_line(&mut line, &mut line_number)? {
        return Err(DatasetJsonError::MissingAttribute {
            attribute: "datasetJSONVersion",
        });
    }
    let header: NdjsonHeader = serde_json::from_slice(strip_bom(&line))
        .map_err(|error| DatasetJsonError::syntax(&error, 0))?;
    check_metadata(&header.metadata)?;
    let Some(columns) = header.columns else {
        return Err(DatasetJsonError::MissingAttribute {
            attribute: "columns",
        });
    };
    let mut builder = Builder::new(columns, header.metadata.records, budget)?;
    while next_line(&mut line, &mut line_number)? {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut deserializer = serde_json::Deserializer::from_slice(&line);
        let parsed = builder
            .row(&mut deserializer, line_number)
            .and_then(|()| deserializer.end());
        if let Err(error) = parsed {
            return Err(builder
                .problem
                .take()
                .unwrap_or_else(|| DatasetJsonError::syntax(&error, line_number - 1)));
        }
    }
    builder.finish(header.metadata)
}

fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}
