//! The check `report_outputs`: the report-ready outputs of a run are what they claim to be.
//! `plot.pdf` parses as a PDF with at least one page and every font it uses embedded (a report
//! must print the same everywhere); `plot.svg` is an XML document whose root is an SVG `svg`
//! element; `statistics.csv` holds exactly the statistics R wrote as JSON — the cells' columns,
//! one row per cell in order, every value the same (numbers compared as the doubles they read
//! back to). Each file must also hash to what the result reports.

use super::{output, sha256, CheckFailure, VerificationInput};

/// Runs the three parts in order; the first failure is the check's reason.
pub(super) fn check_report_outputs(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    for name in ["plot.pdf", "plot.svg", "statistics.csv"] {
        let bytes = output(input, name)?;
        let claimed = input.result.output(name).map(|o| o.sha256);
        if claimed != Some(sha256(bytes)) {
            return Err(CheckFailure(format!(
                "{name} hashes to {}, the result says {claimed:?}",
                sha256(bytes)
            )));
        }
    }
    check_pdf(output(input, "plot.pdf")?).map_err(|e| CheckFailure(format!("plot.pdf {e}")))?;
    check_svg(output(input, "plot.svg")?).map_err(|e| CheckFailure(format!("plot.svg {e}")))?;
    check_statistics_csv(
        output(input, "statistics.csv")?,
        output(input, "statistics.json")?,
    )
    .map_err(|e| CheckFailure(format!("statistics.csv: {e}")))
}

/// A PDF with pages whose fonts are all embedded.
pub fn check_pdf(bytes: &[u8]) -> Result<(), String> {
    let document = lopdf::Document::load_mem(bytes).map_err(|e| format!("does not parse: {e}"))?;
    if document.get_pages().is_empty() {
        return Err("has no page".to_owned());
    }
    let mut descriptors = 0;
    for (id, object) in &document.objects {
        let Ok(dictionary) = object.as_dict() else {
            continue;
        };
        let is_descriptor = dictionary
            .get(b"Type")
            .and_then(|t| t.as_name())
            .is_ok_and(|name| name == b"FontDescriptor");
        if !is_descriptor {
            continue;
        }
        descriptors += 1;
        let embedded = [&b"FontFile"[..], b"FontFile2", b"FontFile3"]
            .iter()
            .any(|key| dictionary.has(key));
        if !embedded {
            let name = dictionary
                .get(b"FontName")
                .and_then(|n| n.as_name())
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_else(|_| format!("object {} {}", id.0, id.1));
            return Err(format!("does not embed the font {name}"));
        }
    }
    if descriptors == 0 {
        return Err("embeds no font (a figure with a title and footnotes has text)".to_owned());
    }
    Ok(())
}

/// An XML document whose root is `<svg>` in the SVG namespace, with a width and a height.
pub fn check_svg(bytes: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("is not UTF-8: {e}"))?;
    let document = roxmltree::Document::parse(text).map_err(|e| format!("is not XML: {e}"))?;
    let root = document.root_element();
    if root.tag_name().name() != "svg"
        || root.tag_name().namespace() != Some("http://www.w3.org/2000/svg")
    {
        return Err(format!(
            "has the root element {:?}, not svg in the SVG namespace",
            root.tag_name()
        ));
    }
    for attribute in ["width", "height"] {
        if root.attribute(attribute).is_none() {
            return Err(format!("has no {attribute} on its svg element"));
        }
    }
    if root.descendants().filter(|n| n.is_element()).count() < 2 {
        return Err("draws nothing".to_owned());
    }
    Ok(())
}

/// `csv` holds exactly `statistics_json`'s cells.
pub fn check_statistics_csv(csv: &[u8], statistics_json: &[u8]) -> Result<(), String> {
    let statistics: serde_json::Value = serde_json::from_slice(statistics_json)
        .map_err(|e| format!("statistics.json does not parse: {e}"))?;
    let cells = statistics["cells"]
        .as_array()
        .ok_or("statistics.json has no cells")?;
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(csv);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| format!("has no header: {e}"))?
        .iter()
        .map(str::to_owned)
        .collect();
    let mut rows = 0;
    for (index, row) in reader.records().enumerate() {
        let line = index + 2;
        let row = row.map_err(|e| format!("row {line}: {e}"))?;
        let cell = cells
            .get(index)
            .and_then(|cell| cell.as_object())
            .ok_or(format!(
                "row {line} has no cell in statistics.json ({} cells)",
                cells.len()
            ))?;
        if cell.len() != header.len() || header.iter().any(|name| !cell.contains_key(name)) {
            return Err(format!(
                "the columns {header:?} are not the cells' fields {:?}",
                cell.keys().collect::<Vec<_>>()
            ));
        }
        for (name, field) in header.iter().zip(row.iter()) {
            if !same_value(&cell[name], field) {
                return Err(format!(
                    "row {line}, column {name}: {field:?}, statistics.json has {}",
                    cell[name]
                ));
            }
        }
        rows += 1;
    }
    if rows != cells.len() {
        return Err(format!(
            "{rows} rows, statistics.json has {} cells",
            cells.len()
        ));
    }
    Ok(())
}

/// Whether a CSV field says what a JSON value says: null is empty, numbers read back to the
/// same double ("Inf"/"-Inf" are strings in both), booleans are `true`/`false`, text is itself.
fn same_value(value: &serde_json::Value, field: &str) -> bool {
    match value {
        serde_json::Value::Null => field.is_empty(),
        serde_json::Value::Bool(b) => field == if *b { "true" } else { "false" },
        serde_json::Value::Number(n) => match (n.as_f64(), field.parse::<f64>()) {
            (Some(expected), Ok(actual)) => expected == actual,
            _ => false,
        },
        serde_json::Value::String(s) => field == s,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_must_hold_every_cell_value_for_value() {
        let json = br#"{"cells":[{"treatment":"A, b","n":3,"mean":0.3333333333333333,"sd":null,"low_n":true,"max":"Inf"}]}"#;
        let good = b"treatment,n,mean,sd,low_n,max\n\"A, b\",3,0.3333333333333333,,true,Inf\n";
        assert_eq!(check_statistics_csv(good, json), Ok(()));
        let changed = b"treatment,n,mean,sd,low_n,max\n\"A, b\",3,0.3333333333333334,,true,Inf\n";
        let error = check_statistics_csv(changed, json).unwrap_err();
        assert!(error.contains("row 2, column mean"), "{error}");
        let missing_row = b"treatment,n,mean,sd,low_n,max\n";
        assert_eq!(
            check_statistics_csv(missing_row, json),
            Err("0 rows, statistics.json has 1 cells".to_owned())
        );
        let other_columns = b"treatment,n\n\"A, b\",3\n";
        assert!(check_statistics_csv(other_columns, json)
            .unwrap_err()
            .contains("are not the cells' fields"));
    }

    #[test]
    fn an_svg_must_be_an_svg_document() {
        let good = br#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="1pt" height="1pt"><g><path d="M0 0"/></g></svg>"#;
        assert_eq!(check_svg(good), Ok(()));
        assert!(check_svg(b"<svg").unwrap_err().starts_with("is not XML"));
        assert!(
            check_svg(br#"<html xmlns="http://www.w3.org/1999/xhtml"/>"#)
                .unwrap_err()
                .contains("not svg")
        );
    }

    #[test]
    fn a_pdf_must_parse() {
        assert!(check_pdf(b"%PDF-1.5\nnot really\n%%EOF\n")
            .unwrap_err()
            .starts_with("does not parse"));
    }
}
