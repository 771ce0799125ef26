//! Reading uploads (ssr only): format detection from content, the CSV and SAS XPORT v5 readers,
//! and the table they produce. Storing the raw bytes is `crate::store::objects`.

pub mod confirm;
pub mod csv;
pub mod demo;
pub mod profile;
pub mod sas_dates;
pub mod snapshot;
pub mod table;
pub mod xpt;
pub mod xpt_writer;

use table::Table;

/// Why an upload could not be read as a dataset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// A CSV problem.
    #[error(transparent)]
    Csv(#[from] csv::CsvError),
    /// A SAS XPORT problem.
    #[error(transparent)]
    Xpt(#[from] xpt::XptError),
    /// A recognisable file type that is not a dataset format adamviz reads.
    #[error("the upload is a {kind} file; adamviz reads CSV and SAS XPORT v5 (.xpt)")]
    UnsupportedFormat {
        /// What the content looks like.
        kind: &'static str,
    },
}

/// The format an upload's content shows, whatever its name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetectedFormat {
    /// Starts with an XPORT header record.
    Xpt,
    /// Anything else that is not a known binary format: read as CSV.
    Csv,
}

/// Recognises the format from the first bytes.
pub fn detect_format(bytes: &[u8]) -> Result<DetectedFormat, ReadError> {
    const SIGNATURES: [(&[u8], &str); 6] = [
        (b"PK\x03\x04", "ZIP (or XLSX)"),
        (b"\x1f\x8b", "gzip"),
        (b"%PDF", "PDF"),
        (b"\xd0\xcf\x11\xe0", "Microsoft Office (XLS)"),
        (
            b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xc2\xea\x81\x60",
            "SAS7BDAT",
        ),
        (b"\x89PNG", "PNG"),
    ];
    if bytes.starts_with(b"HEADER RECORD*******LIB") {
        return Ok(DetectedFormat::Xpt);
    }
    if let Some((_, kind)) = SIGNATURES
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
    {
        return Err(ReadError::UnsupportedFormat { kind });
    }
    Ok(DetectedFormat::Csv)
}

/// Detects the format and reads the dataset.
pub fn read_dataset(bytes: &[u8]) -> Result<Table, ReadError> {
    match detect_format(bytes)? {
        DetectedFormat::Xpt => Ok(xpt::read_xpt(bytes)?),
        DetectedFormat::Csv => Ok(csv::read_csv(bytes)?),
    }
}
