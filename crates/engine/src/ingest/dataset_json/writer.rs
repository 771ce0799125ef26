//! A Dataset-JSON v1.1 writer for tests and benchmarks: writes a table (typically read from
//! SAS XPORT) as the JSON, NDJSON or compressed form, the way a SAS-to-Dataset-JSON converter
//! does — character variables as `string` with their length, numbers with a date, datetime or
//! time format as ISO 8601 text with `targetDataType` `integer`, whole numbers as `integer`,
//! other numbers as `double`, missing values as `null`. adamviz never writes Dataset-JSON for
//! users; this exists so that the reader can be checked against the same data as XPT.

use std::io::Write;

use serde_json::{json, Value};

use super::super::{
    sas_dates::{temporal_kind, to_iso8601, Temporal},
    table::{ColumnData, Table},
};
use super::Framing;

/// The uncompressed forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// One object, `rows` last, one row per line.
    Json,
    /// The metadata on the first line, then one row array per line.
    Ndjson,
}

/// How one column is written.
enum Encoding {
    Text,
    Integer,
    Double,
    Temporal(Temporal),
}

fn encoding(table: &Table, index: usize) -> Encoding {
    let column = &table.columns[index];
    match &column.data {
        ColumnData::Character(_) => Encoding::Text,
        ColumnData::Numeric(values) => {
            let temporal = column.format.as_deref().and_then(temporal_kind);
            if let Some(kind) = temporal {
                // Only when every value has ISO text (a fractional date would not).
                if values
                    .values()
                    .flatten()
                    .all(|v| to_iso8601(kind, v).is_some())
                {
                    return Encoding::Temporal(kind);
                }
            }
            if values
                .values()
                .flatten()
                .all(|v| v.fract() == 0.0 && v.abs() < 9.0e15)
            {
                Encoding::Integer
            } else {
                Encoding::Double
            }
        }
    }
}

fn column_metadata(table: &Table, index: usize, encoding: &Encoding) -> Value {
    let column = &table.columns[index];
    let name = &column.name;
    let mut entry = json!({
        "itemOID": format!("IT.{}.{name}", table.dataset_name.as_deref().unwrap_or("DATA")),
        "name": name,
        "label": column.label.clone().unwrap_or_default(),
    });
    let data_type = match encoding {
        Encoding::Text => "string",
        Encoding::Integer => "integer",
        Encoding::Double => "double",
        Encoding::Temporal(Temporal::Date) => "date",
        Encoding::Temporal(Temporal::Datetime) => "datetime",
        Encoding::Temporal(Temporal::Time) => "time",
    };
    entry["dataType"] = json!(data_type);
    if let Encoding::Temporal(_) = encoding {
        entry["targetDataType"] = json!("integer");
    }
    if let Some(length) = column.declared.length {
        entry["length"] = json!(length);
    }
    if let Some(format) = &column.format {
        entry["displayFormat"] = json!(format);
    }
    entry
}

fn cell(table: &Table, index: usize, encoding: &Encoding, row: usize) -> Value {
    match (&table.columns[index].data, encoding) {
        (ColumnData::Character(values), _) => values.get(row).map_or(Value::Null, |t| json!(t)),
        (ColumnData::Numeric(values), Encoding::Temporal(kind)) => values
            .value(row)
            .and_then(|v| to_iso8601(*kind, v))
            .map_or(Value::Null, Value::String),
        (ColumnData::Numeric(values), Encoding::Integer) => {
            values.value(row).map_or(Value::Null, |v| json!(v as i64))
        }
        (ColumnData::Numeric(values), _) => values.value(row).map_or(Value::Null, |v| json!(v)),
    }
}

/// Writes `table` as Dataset-JSON v1.1 in `form`.
pub fn write(table: &Table, form: Form) -> Vec<u8> {
    let encodings: Vec<Encoding> = (0..table.columns.len())
        .map(|index| encoding(table, index))
        .collect();
    let name = table
        .dataset_name
        .clone()
        .unwrap_or_else(|| "DATA".to_owned());
    let metadata = json!({
        "datasetJSONCreationDateTime": "2026-12-07T00:00:00",
        "datasetJSONVersion": "1.1.0",
        "fileOID": format!("adamviz.tests.{name}"),
        "originator": "adamviz test writer",
        "sourceSystem": {"name": "adamviz", "version": env!("CARGO_PKG_VERSION")},
        "itemGroupOID": format!("IG.{name}"),
        "records": table.row_count,
        "name": name,
        "label": table.dataset_label.clone().unwrap_or_default(),
        "columns": (0..table.columns.len())
            .map(|index| column_metadata(table, index, &encodings[index]))
            .collect::<Vec<_>>(),
    });
    let mut out = Vec::new();
    let row = |row: usize| -> Value {
        Value::Array(
            (0..table.columns.len())
                .map(|index| cell(table, index, &encodings[index], row))
                .collect(),
        )
    };
    match form {
        Form::Ndjson => {
            serde_json::to_writer(&mut out, &metadata).expect("writing to memory");
            out.push(b'\n');
            for index in 0..table.row_count {
                serde_json::to_writer(&mut out, &row(index)).expect("writing to memory");
                out.push(b'\n');
            }
        }
        Form::Json => {
            // The metadata, then "rows" last with one row per line, as converters write it.
            let head = serde_json::to_vec(&metadata).expect("writing to memory");
            out.extend_from_slice(&head[..head.len() - 1]);
            out.extend_from_slice(b",\"rows\":[\n");
            for index in 0..table.row_count {
                if index > 0 {
                    out.extend_from_slice(b",\n");
                }
                serde_json::to_writer(&mut out, &row(index)).expect("writing to memory");
            }
            out.extend_from_slice(b"\n]}\n");
        }
    }
    out
}

/// Compresses an NDJSON form as `.dsjc` with `framing`.
pub fn compress(ndjson: &[u8], framing: Framing) -> Vec<u8> {
    let level = flate2::Compression::best();
    match framing {
        Framing::Zlib => {
            let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), level);
            encoder.write_all(ndjson).expect("writing to memory");
            encoder.finish().expect("writing to memory")
        }
        Framing::Gzip => {
            let mut encoder = flate2::write::GzEncoder::new(Vec::new(), level);
            encoder.write_all(ndjson).expect("writing to memory");
            encoder.finish().expect("writing to memory")
        }
    }
}
