//! Reading uploads (ssr only): format detection from content, the CSV, SAS XPORT and CDISC
//! Dataset-JSON readers, and the table they produce. Storing the raw bytes is `crate::store::objects`.

pub mod csv;
pub mod dataset_json;
// The question → spec modules (crate::question) under the paths the code has always used.
pub use crate::question::{confirm, draft, records};
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
    /// A Dataset-JSON problem (boxed: its errors carry the values they name).
    #[error(transparent)]
    DatasetJson(Box<dataset_json::DatasetJsonError>),
    /// A recognisable file type that is not a dataset format adamviz reads.
    #[error("the upload is a {kind} file; adamviz reads CSV, SAS XPORT (.xpt) and CDISC Dataset-JSON v1.1 (.json, .ndjson, .dsjc)")]
    UnsupportedFormat {
        /// What the content looks like.
        kind: &'static str,
    },
}

impl From<dataset_json::DatasetJsonError> for ReadError {
    fn from(error: dataset_json::DatasetJsonError) -> Self {
        Self::DatasetJson(Box::new(error))
    }
}

/// The format an upload's content shows, whatever its name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetectedFormat {
    /// Starts with an XPORT header record.
    Xpt,
    /// A JSON object: Dataset-JSON, JSON or NDJSON form.
    DatasetJson,
    /// A zlib or gzip stream of Dataset-NDJSON (`.dsjc`).
    CompressedDatasetJson(dataset_json::Framing),
    /// Anything else that is not a known binary format: read as CSV.
    Csv,
}

/// Recognises the format from the first bytes.
pub fn detect_format(bytes: &[u8]) -> Result<DetectedFormat, ReadError> {
    const SIGNATURES: [(&[u8], &str); 5] = [
        (b"PK\x03\x04", "ZIP (or XLSX)"),
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
    if dataset_json::looks_like_dataset_json(bytes) {
        return Ok(DetectedFormat::DatasetJson);
    }
    match dataset_json::compressed_framing(bytes) {
        // gzip's magic is not text: read it as .dsjc (an error names it if it is something else).
        Some(framing @ dataset_json::Framing::Gzip) => {
            return Ok(DetectedFormat::CompressedDatasetJson(framing))
        }
        // A zlib header is two bytes a CSV header could start with ("H,"): only when the stream
        // really opens a JSON object.
        Some(framing @ dataset_json::Framing::Zlib)
            if dataset_json::opens_a_json_object(bytes, framing) =>
        {
            return Ok(DetectedFormat::CompressedDatasetJson(framing))
        }
        _ => {}
    }
    if let Some((_, kind)) = SIGNATURES
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
    {
        return Err(ReadError::UnsupportedFormat { kind });
    }
    Ok(DetectedFormat::Csv)
}

/// A file's bytes, memory-mapped: the readers only look at the bytes, and mapping the page
/// cache avoids both copying the file and zeroing fresh memory to copy it into.
pub struct MappedFile(Option<memmap2::Mmap>);

impl MappedFile {
    /// Maps `path` read-only.
    pub fn open(path: &std::path::Path) -> Result<Self, FileReadError> {
        let io = |source| FileReadError::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // An empty file cannot be mapped (and has no bytes to map).
        if file.metadata().map_err(io)?.len() == 0 {
            return Ok(Self(None));
        }
        // SAFETY: the mapping is read-only. adamviz never changes a stored object in place (the
        // object store writes a new file and renames it), so the bytes cannot change under the
        // readers; a file that someone else truncates meanwhile raises SIGBUS, which ends the
        // process as reading a vanished disk would.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Ok(Self(Some(map)))
    }
}

impl std::ops::Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }
}

/// Reads the dataset stored at `path` (an uploaded object, or a file named on the command line)
/// within the default [`ReadLimits`].
pub fn read_dataset_file(path: &std::path::Path) -> Result<Table, FileReadError> {
    read_dataset_file_with(path, ReadLimits::default())
}

/// [`read_dataset_file`] within `limits`. The file is read through a read-only mapping, never
/// copied whole into memory.
pub fn read_dataset_file_with(
    path: &std::path::Path,
    limits: ReadLimits,
) -> Result<Table, FileReadError> {
    Ok(read_dataset_with(&MappedFile::open(path)?, limits)?)
}

/// The limits a read works within that can be set. The CSV reader's limits are fixed
/// ([`csv::MAX_COLUMNS`], [`csv::MAX_RECORD_BYTES`], [`csv::MAX_CELL_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadLimits {
    /// The bytes an XPORT or Dataset-JSON table may take (rows × columns × 8); `None`, the
    /// default, is 8× the file or 4 GiB, whichever is less ([`xpt::TableBudget::for_file`]),
    /// and 64× the file (at most 4 GiB) for compressed Dataset-JSON.
    pub xpt_table_bytes: Option<u64>,
}

impl ReadLimits {
    /// The budget of an XPORT table read from a file of `file_len` bytes.
    pub fn xpt_budget(&self, file_len: usize) -> xpt::TableBudget {
        match self.xpt_table_bytes {
            Some(bytes) => xpt::TableBudget { bytes },
            None => xpt::TableBudget::for_file(file_len),
        }
    }
}

/// Why a dataset file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FileReadError {
    /// Opening or mapping the file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The content is not a dataset adamviz reads.
    #[error(transparent)]
    Content(#[from] ReadError),
}

/// Detects the format and reads the dataset within the default [`ReadLimits`] (an XPORT table
/// within 8× the file or 4 GiB, whichever is less).
pub fn read_dataset(bytes: &[u8]) -> Result<Table, ReadError> {
    read_dataset_with(bytes, ReadLimits::default())
}

/// [`read_dataset`] within `limits`.
pub fn read_dataset_with(bytes: &[u8], limits: ReadLimits) -> Result<Table, ReadError> {
    if let DetectedFormat::CompressedDatasetJson(framing) = detect_format(bytes)? {
        let budget = xpt::TableBudget {
            bytes: limits
                .xpt_table_bytes
                .unwrap_or_else(|| (bytes.len() as u64).saturating_mul(64).min(4 << 30)),
        };
        // JSON text compresses well, but not 1000-fold: more is a decompression bomb.
        let expanded_limit = (bytes.len() as u64)
            .saturating_mul(1000)
            .clamp(64 << 20, 16 << 30);
        return Ok(dataset_json::read_dsjc(
            bytes,
            framing,
            budget,
            expanded_limit,
        )?);
    }
    read_dataset_within(bytes, limits.xpt_budget(bytes.len()))
}

/// [`read_dataset`] with the memory an XPORT table may take set by the caller.
pub fn read_dataset_within(bytes: &[u8], budget: xpt::TableBudget) -> Result<Table, ReadError> {
    match detect_format(bytes)? {
        DetectedFormat::Xpt => Ok(xpt::read_xpt_within(bytes, budget)?),
        DetectedFormat::DatasetJson => Ok(dataset_json::read_dataset_json(bytes, budget)?),
        DetectedFormat::CompressedDatasetJson(framing) => {
            let expanded_limit = (budget.bytes.saturating_mul(4)).max(64 << 20);
            Ok(dataset_json::read_dsjc(
                bytes,
                framing,
                budget,
                expanded_limit,
            )?)
        }
        DetectedFormat::Csv => Ok(csv::read_csv(bytes)?),
    }
}
