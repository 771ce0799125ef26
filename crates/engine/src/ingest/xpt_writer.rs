//! SAS XPORT v5 writer, the inverse of `xpt`: used to make the synthetic demo dataset and test
//! fixtures in the format ADaM data is submitted in.

use super::{
    table::{ColumnData, Table},
    xpt::numeric_to_ibm,
};

/// Pads (or cuts) `text` to `width` bytes with blanks.
fn field(text: &str, width: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = text.bytes().take(width).collect();
    bytes.resize(width, b' ');
    bytes
}

/// Writes `table` as a one-member XPORT v5 file. Character widths are the longest value (at
/// least 1, at most 200 bytes); numbers are 8-byte IBM floats. Names are cut to 8 bytes and
/// labels to 40, as the format requires.
pub fn write_xpt(table: &Table) -> Vec<u8> {
    let mut out = Vec::new();
    write_headers(&mut out, table);
    let widths: Vec<usize> = table
        .columns
        .iter()
        .map(|column| match &column.data {
            ColumnData::Numeric(_) => 8,
            ColumnData::Character(values) => values
                .levels()
                .iter()
                .map(|l| l.len())
                .max()
                .unwrap_or(1)
                .clamp(1, 200),
        })
        .collect();
    let row_length = write_namestrs(&mut out, table, &widths);
    record(
        &mut out,
        b"HEADER RECORD*******OBS     HEADER RECORD!!!!!!!000000000000000000000000000000  ",
    );
    let mut data = Vec::with_capacity(table.row_count * row_length);
    for row in 0..table.row_count {
        for (column, width) in table.columns.iter().zip(&widths) {
            match &column.data {
                ColumnData::Numeric(cells) => data.extend(numeric_to_ibm(cells.get(row))),
                ColumnData::Character(values) => {
                    data.extend(field(values.get(row).unwrap_or(""), *width))
                }
            }
        }
    }
    data.resize(data.len().div_ceil(80) * 80, b' ');
    out.extend(data);
    out
}

/// Appends `text` blank-padded to one 80-byte record.
fn record(out: &mut Vec<u8>, text: &[u8]) {
    let mut r = text.to_vec();
    r.resize(80, b' ');
    out.extend_from_slice(&r);
}

/// The library header, its two records, the member and descriptor headers, the member's two
/// records (name, label) and the namestr header.
fn write_headers(out: &mut Vec<u8>, table: &Table) {
    const STAMP: &str = "01JAN26:00:00:00";
    record(
        out,
        b"HEADER RECORD*******LIBRARY HEADER RECORD!!!!!!!000000000000000000000000000000  ",
    );
    let mut first = field("SAS", 8);
    first.extend(field("SAS", 8));
    first.extend(field("SASLIB", 8));
    first.extend(field("9.4", 8));
    first.extend(field("adamviz", 8));
    first.extend(field("", 24));
    first.extend(field(STAMP, 16));
    record(out, &first);
    record(out, STAMP.as_bytes());
    record(
        out,
        b"HEADER RECORD*******MEMBER  HEADER RECORD!!!!!!!000000000000000001600000000140  ",
    );
    record(
        out,
        b"HEADER RECORD*******DSCRPTR HEADER RECORD!!!!!!!000000000000000000000000000000  ",
    );
    let mut member = field("SAS", 8);
    member.extend(field(table.dataset_name.as_deref().unwrap_or("DATA"), 8));
    member.extend(field("SASDATA", 8));
    member.extend(field("9.4", 8));
    member.extend(field("adamviz", 8));
    member.extend(field("", 24));
    member.extend(field(STAMP, 16));
    record(out, &member);
    let mut member2 = field(STAMP, 16);
    member2.extend(field("", 16));
    member2.extend(field(table.dataset_label.as_deref().unwrap_or(""), 40));
    record(out, &member2);
    record(
        out,
        format!(
            "HEADER RECORD*******NAMESTR HEADER RECORD!!!!!!!000000{:04}00000000000000000000  ",
            table.columns.len()
        )
        .as_bytes(),
    );
}

/// One 140-byte namestr per column, padded to whole records; returns the observation length.
fn write_namestrs(out: &mut Vec<u8>, table: &Table, widths: &[usize]) -> usize {
    let mut namestrs = Vec::new();
    let mut position = 0usize;
    for (index, (column, width)) in table.columns.iter().zip(widths).enumerate() {
        let numeric = matches!(column.data, ColumnData::Numeric(_));
        let mut n = Vec::with_capacity(140);
        n.extend_from_slice(&(if numeric { 1i16 } else { 2 }).to_be_bytes());
        n.extend_from_slice(&0i16.to_be_bytes());
        n.extend_from_slice(&(*width as i16).to_be_bytes());
        n.extend_from_slice(&((index + 1) as i16).to_be_bytes());
        n.extend(field(&column.name, 8));
        n.extend(field(column.label.as_deref().unwrap_or(""), 40));
        // Format name and width, e.g. DATE9. -> "DATE", 9.
        let (format_name, format_width) = split_format(column.format.as_deref());
        n.extend(field(format_name, 8));
        n.extend_from_slice(&format_width.to_be_bytes());
        n.extend_from_slice(&0i16.to_be_bytes()); // decimals
        n.extend_from_slice(&0i16.to_be_bytes()); // justification
        n.extend_from_slice(&[0, 0]);
        n.extend(field("", 8)); // informat
        n.extend_from_slice(&0i16.to_be_bytes());
        n.extend_from_slice(&0i16.to_be_bytes());
        n.extend_from_slice(&(position as i32).to_be_bytes());
        n.resize(140, 0);
        namestrs.extend(n);
        position += width;
    }
    namestrs.resize(namestrs.len().div_ceil(80) * 80, b' ');
    out.extend(namestrs);
    position
}

fn split_format(format: Option<&str>) -> (&str, i16) {
    let Some(format) = format else {
        return ("", 0);
    };
    let body = format.trim_end_matches('.');
    let digits_at = body
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(body.len());
    let width = body[digits_at..].parse().unwrap_or(0);
    (&body[..digits_at], width)
}
