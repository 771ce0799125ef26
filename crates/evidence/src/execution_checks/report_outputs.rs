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

/// A PDF with pages whose fonts are all embedded: every font object but a Type 3 font (drawn by
/// the PDF's own procedures) and a Type 0 font (whose descendant CID fonts are font objects
/// of their own, checked likewise) names a font descriptor with an embedded font file. The
/// parser is given untrusted bytes (an offline bundle): a panic in it is a failed check.
pub fn check_pdf(bytes: &[u8]) -> Result<(), String> {
    std::panic::catch_unwind(|| pdf_fonts_embedded(bytes))
        .unwrap_or_else(|_| Err("does not parse (the PDF parser gave up on it)".to_owned()))
}

fn pdf_fonts_embedded(bytes: &[u8]) -> Result<(), String> {
    let document = lopdf::Document::load_mem(bytes).map_err(|e| format!("does not parse: {e}"))?;
    if document.get_pages().is_empty() {
        return Err("has no page".to_owned());
    }
    let name_of = |dictionary: &lopdf::Dictionary, key: &[u8]| {
        dictionary
            .get(key)
            .and_then(|n| n.as_name())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .ok()
    };
    let mut fonts = 0;
    for (id, object) in &document.objects {
        let Ok(font) = object.as_dict() else {
            continue;
        };
        if name_of(font, b"Type").as_deref() != Some("Font") {
            continue;
        }
        fonts += 1;
        let subtype = name_of(font, b"Subtype").unwrap_or_default();
        if subtype == "Type0" || subtype == "Type3" {
            continue;
        }
        let name =
            name_of(font, b"BaseFont").unwrap_or_else(|| format!("object {} {}", id.0, id.1));
        let descriptor = font
            .get(b"FontDescriptor")
            .and_then(|d| d.as_reference())
            .and_then(|reference| document.get_dictionary(reference))
            .map_err(|_| format!("does not embed the font {name} (it has no font descriptor)"))?;
        let embedded = [&b"FontFile"[..], b"FontFile2", b"FontFile3"]
            .iter()
            .any(|key| descriptor.has(key));
        if !embedded {
            return Err(format!("does not embed the font {name}"));
        }
    }
    if fonts == 0 {
        return Err("has no font (a figure with a title and footnotes has text)".to_owned());
    }
    Ok(())
}

/// An XML document whose root is `<svg>` in the SVG namespace, with a width and a height.
pub fn check_svg(bytes: &[u8]) -> Result<(), String> {
    std::panic::catch_unwind(|| svg_document(bytes))
        .unwrap_or_else(|_| Err("is not XML (the parser gave up on it)".to_owned()))
}

fn svg_document(bytes: &[u8]) -> Result<(), String> {
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

    /// A one-page PDF whose page uses a font: Helvetica by name only, or the same with a
    /// descriptor that embeds a (stand-in) font file.
    fn one_page_pdf(embedded: bool) -> Vec<u8> {
        use lopdf::{dictionary, Document, Object, Stream};
        let mut document = Document::with_version("1.5");
        let pages_id = document.new_object_id();
        let mut font = dictionary! {
            "Type" => "Font",
            "Subtype" => "TrueType",
            "BaseFont" => "Helvetica",
        };
        if embedded {
            let file = document.add_object(Stream::new(dictionary! {}, b"font bytes".to_vec()));
            let descriptor = document.add_object(dictionary! {
                "Type" => "FontDescriptor",
                "FontName" => "Helvetica",
                "FontFile2" => file,
            });
            font.set("FontDescriptor", descriptor);
        }
        let font_id = document.add_object(font);
        let content = document.add_object(Stream::new(
            dictionary! {},
            b"BT /F1 12 Tf 72 720 Td (Footnote) Tj ET".to_vec(),
        ));
        let page = document.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
            "MediaBox" => vec![0.into(), 0.into(), 792.into(), 612.into()],
        });
        document.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages",
                "Kids" => vec![page.into()],
                "Count" => 1,
            }),
        );
        let catalog = document.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        document.trailer.set("Root", catalog);
        let mut bytes = Vec::new();
        document.save_to(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn every_font_of_a_pdf_must_be_embedded() {
        assert_eq!(check_pdf(&one_page_pdf(true)), Ok(()));
        assert_eq!(
            check_pdf(&one_page_pdf(false)),
            Err("does not embed the font Helvetica (it has no font descriptor)".to_owned())
        );
    }

    #[test]
    fn a_pdf_must_parse() {
        assert!(check_pdf(b"%PDF-1.5\nnot really\n%%EOF\n")
            .unwrap_err()
            .starts_with("does not parse"));
    }
}
