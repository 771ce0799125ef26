//! SAS XPORT writer (version 5, and version 8 with long names and labels), the inverse of
//! `xpt`: used to make the synthetic demo dataset and test fixtures in the format ADaM data is
//! submitted in.

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

/// Writes `table` as a one-member XPORT v5 file. Character widths are the declared length or
/// the longest value, whichever is more (at least 1, at most 200 bytes); numbers are 8-byte IBM floats. Names are cut to 8 bytes and
/// labels to 40, as the format requires.
pub fn write_xpt(table: &Table) -> Vec<u8> {
    write_version(table, 5)
}

/// Writes `table` as a one-member XPORT version 8 file, as SAS's `%loc2xpt` does: names up to
/// 32 bytes, labels longer than 40 characters in a `LABELV8` section, character widths up to
/// 32,767 bytes.
pub fn write_xpt_v8(table: &Table) -> Vec<u8> {
    write_version(table, 8)
}

fn write_version(table: &Table, version: u8) -> Vec<u8> {
    let v8 = version == 8;
    let mut out = Vec::new();
    write_headers(&mut out, table, v8);
    let widths: Vec<usize> = table
        .columns
        .iter()
        .map(|column| match &column.data {
            ColumnData::Numeric(_) => 8,
            // The declared length when the table has one (and every value fits it).
            ColumnData::Character(values) => values
                .levels()
                .iter()
                .map(|l| l.len())
                .chain(column.declared.length)
                .max()
                .unwrap_or(1)
                .clamp(1, if v8 { 32767 } else { 200 }),
        })
        .collect();
    let row_length = write_namestrs(&mut out, table, &widths, v8);
    if v8 {
        write_long_labels(&mut out, table);
        record(
            &mut out,
            format!(
                "HEADER RECORD*******OBSV8   HEADER RECORD!!!!!!!{:>15}",
                table.row_count
            )
            .as_bytes(),
        );
    } else {
        record(
            &mut out,
            b"HEADER RECORD*******OBS     HEADER RECORD!!!!!!!000000000000000000000000000000  ",
        );
    }
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
fn write_headers(out: &mut Vec<u8>, table: &Table, v8: bool) {
    const STAMP: &str = "01JAN26:00:00:00";
    let name = |v5: &'static str, v8_name: &'static str| if v8 { v8_name } else { v5 };
    record(
        out,
        format!(
            "HEADER RECORD*******{:<8}HEADER RECORD!!!!!!!000000000000000000000000000000  ",
            name("LIBRARY", "LIBV8")
        )
        .as_bytes(),
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
        format!(
            "HEADER RECORD*******{:<8}HEADER RECORD!!!!!!!000000000000000001600000000140  ",
            name("MEMBER", "MEMBV8")
        )
        .as_bytes(),
    );
    record(
        out,
        format!(
            "HEADER RECORD*******{:<8}HEADER RECORD!!!!!!!000000000000000000000000000000  ",
            name("DSCRPTR", "DSCPTV8")
        )
        .as_bytes(),
    );
    let mut member = field("SAS", 8);
    let dataset_name = table.dataset_name.as_deref().unwrap_or("DATA");
    if v8 {
        member.extend(field(dataset_name, 32));
        member.extend(field("SASDATA", 8));
        member.extend(field("9.4", 8));
        member.extend(field("adamviz", 8));
    } else {
        member.extend(field(dataset_name, 8));
        member.extend(field("SASDATA", 8));
        member.extend(field("9.4", 8));
        member.extend(field("adamviz", 8));
        member.extend(field("", 24));
    }
    member.extend(field(STAMP, 16));
    record(out, &member);
    let mut member2 = field(STAMP, 16);
    member2.extend(field("", 16));
    member2.extend(field(table.dataset_label.as_deref().unwrap_or(""), 40));
    record(out, &member2);
    record(
        out,
        if v8 {
            // As SAS writes it: four zeros, then the count in six digits.
            format!(
                "HEADER RECORD*******NAMSTV8 HEADER RECORD!!!!!!!0000{:06}00000000000000000000  ",
                table.columns.len()
            )
        } else {
            format!(
                "HEADER RECORD*******NAMESTR HEADER RECORD!!!!!!!000000{:04}00000000000000000000  ",
                table.columns.len()
            )
        }
        .as_bytes(),
    );
}

/// One 140-byte namestr per column, padded to whole records; returns the observation length.
fn write_namestrs(out: &mut Vec<u8>, table: &Table, widths: &[usize], v8: bool) -> usize {
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
        if v8 {
            // The full name, then the label's length (a longer label follows in LABELV8).
            n.extend(field(&column.name, 32));
            let label_length = column.label.as_deref().map_or(0, str::len);
            n.extend_from_slice(&(label_length as i16).to_be_bytes());
        }
        n.resize(140, 0);
        namestrs.extend(n);
        position += width;
    }
    namestrs.resize(namestrs.len().div_ceil(80) * 80, b' ');
    out.extend(namestrs);
    position
}

/// Version 8: the `LABELV8` section giving every label longer than 40 characters in full.
fn write_long_labels(out: &mut Vec<u8>, table: &Table) {
    let long: Vec<(usize, &str, &str)> = table
        .columns
        .iter()
        .enumerate()
        .filter_map(|(index, column)| {
            let label = column.label.as_deref()?;
            (label.len() > 40).then_some((index + 1, column.name.as_str(), label))
        })
        .collect();
    if long.is_empty() {
        return;
    }
    record(
        out,
        format!(
            "HEADER RECORD*******LABELV8 HEADER RECORD!!!!!!!{}",
            long.len()
        )
        .as_bytes(),
    );
    let mut entries = Vec::new();
    for (number, name, label) in long {
        entries.extend_from_slice(&(number as i16).to_be_bytes());
        entries.extend_from_slice(&(name.len() as i16).to_be_bytes());
        entries.extend_from_slice(&(label.len() as i16).to_be_bytes());
        entries.extend_from_slice(name.as_bytes());
        entries.extend_from_slice(label.as_bytes());
    }
    entries.resize(entries.len().div_ceil(80) * 80, b' ');
    out.extend(entries);
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
