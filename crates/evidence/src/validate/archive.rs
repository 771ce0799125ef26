//! The bundle's archive, read within fixed caps. A bundle comes from anyone, so nothing it
//! declares is trusted to be small: the entry count (from the end of central directory record,
//! before the central directory is parsed) and the total inflated size (from the central
//! directory) are checked before a single byte is inflated, each entry is inflated once as a
//! stream with its actual bytes capped at what it declared, and only the entries the checks
//! parse (manifest, envelope, records, schemas, script, snapshot, statistics) are kept in
//! memory; the others are hashed as they stream past.

use std::{
    collections::BTreeMap,
    io::{Read, Seek, SeekFrom},
};

use sha2::{Digest, Sha256};

/// Most entries a bundle may have (a real one has a few dozen: records, schemas, artifacts).
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes all entries may inflate to together, as declared (2 GiB; a real bundle of a large
/// study is tens of megabytes).
pub const MAX_TOTAL_BYTES: u64 = 2 << 30;
/// Most bytes one entry may inflate to (1 GiB).
pub const MAX_ENTRY_BYTES: u64 = 1 << 30;
/// Largest compression ratio accepted for one entry (a zip bomb's is far higher).
pub const MAX_RATIO: u64 = 1000;

/// Why an archive is refused before any check runs.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The bytes cannot be read.
    #[error("cannot read the bundle: {0}")]
    Io(#[source] std::io::Error),
    /// Not a zip archive (or a broken one).
    #[error("not a zip archive: {0}")]
    NotZip(#[source] zip::result::ZipError),
    /// More entries than [`MAX_ENTRIES`].
    #[error("the archive has {count} entries, more than the cap of {MAX_ENTRIES}: refused before inflating anything")]
    TooManyEntries {
        /// The entries its central directory lists.
        count: usize,
    },
    /// The declared sizes add up to more than [`MAX_TOTAL_BYTES`].
    #[error("the archive's entries declare {total} bytes inflated in all, more than the cap of {MAX_TOTAL_BYTES} bytes (2 GiB): refused before inflating anything")]
    TooLarge {
        /// Their sum (saturating).
        total: u64,
    },
    /// One entry is unsafe, over its caps, or does not read back as declared.
    #[error("entry {name:?}: {reason}")]
    Entry {
        /// The entry's name as the archive spells it.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// One entry: its digest and size as read, and its bytes when a check parses it.
pub(crate) struct Entry {
    /// SHA-256 (hex) of the inflated bytes.
    pub sha256: String,
    /// Inflated size.
    pub size: u64,
    /// The bytes, for the entries the checks parse.
    pub bytes: Option<Vec<u8>>,
}

/// The archive's entries, by name.
pub(crate) struct Archive {
    /// Every entry.
    pub files: BTreeMap<String, Entry>,
}

impl Archive {
    /// The bytes of `name`, when it is present and kept.
    pub fn bytes(&self, name: &str) -> Option<&[u8]> {
        self.files.get(name).and_then(|e| e.bytes.as_deref())
    }
}

/// The entries whose bytes a check reads; everything else is only hashed.
fn kept(name: &str) -> bool {
    matches!(
        name,
        "manifest.json"
            | "manifest.dsse.json"
            | "artifacts/script.R"
            | "artifacts/snapshot.csv"
            | "artifacts/statistics.json"
            | "artifacts/statistics.csv"
            | "artifacts/plot.pdf"
            | "artifacts/plot.svg"
    ) || name.starts_with("records/")
        || name.starts_with("schemas/")
}

fn unsafe_name(name: &str) -> bool {
    name.starts_with('/')
        || name.contains('\\')
        || name.split('/').any(|part| part == ".." || part.is_empty())
}

/// SHA-256 (hex) of everything `reader` holds, read from its start as one stream.
pub(crate) fn sha256_of<R: Read + Seek>(reader: &mut R) -> Result<String, ArchiveError> {
    reader.seek(SeekFrom::Start(0)).map_err(ArchiveError::Io)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let n = reader.read(&mut buffer).map_err(ArchiveError::Io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?).into())
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// The entry count the end of central directory record declares (its zip64 form when it has
/// one), read from the archive's tail: the zip reader parses as many central directory entries
/// as this says, so it is capped before that parse. `None` when there is no such record (the
/// zip reader then refuses the archive itself).
fn declared_entries<R: Read + Seek>(reader: &mut R) -> Result<Option<u64>, ArchiveError> {
    const END: [u8; 4] = *b"PK\x05\x06";
    const LOCATOR: [u8; 4] = *b"PK\x06\x07";
    const END64: [u8; 4] = *b"PK\x06\x06";
    let io = ArchiveError::Io;
    let length = reader.seek(SeekFrom::End(0)).map_err(io)?;
    // The record is 22 bytes and a comment of at most 65,535; a zip64 locator (20) before it.
    let start = length.saturating_sub(22 + 65_535 + 20);
    reader.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut tail = Vec::new();
    reader.read_to_end(&mut tail).map_err(io)?;
    let Some(end) = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&at| tail[at..at + 4] == END)
    else {
        return Ok(None);
    };
    let count = u16_at(&tail, end + 10).unwrap_or(0);
    let locator = end
        .checked_sub(20)
        .filter(|&at| tail[at..at + 4] == LOCATOR);
    let Some(locator) = locator else {
        return Ok(Some(count));
    };
    // Zip64: the record the locator points at holds the real count.
    let Some(offset) = u64_at(&tail, locator + 8) else {
        return Ok(Some(count));
    };
    let mut record = [0u8; 56];
    reader.seek(SeekFrom::Start(offset)).map_err(io)?;
    if reader.read_exact(&mut record).is_err() || record[..4] != END64 {
        return Ok(Some(count));
    }
    Ok(Some(count.max(u64_at(&record, 32).unwrap_or(0))))
}

/// Reads the archive: caps from the central directory first, then each entry once.
pub(crate) fn read_archive<R: Read + Seek>(reader: &mut R) -> Result<Archive, ArchiveError> {
    // 1. What the archive declares, before anything is parsed or inflated: the entry count
    // (from the end of central directory record), then each entry's size and ratio and their
    // total (from the central directory).
    if let Some(count) = declared_entries(reader)? {
        if count > MAX_ENTRIES as u64 {
            return Err(ArchiveError::TooManyEntries {
                count: usize::try_from(count).unwrap_or(usize::MAX),
            });
        }
    }
    reader.seek(SeekFrom::Start(0)).map_err(ArchiveError::Io)?;
    let mut archive = zip::ZipArchive::new(reader).map_err(ArchiveError::NotZip)?;
    if archive.len() > MAX_ENTRIES {
        return Err(ArchiveError::TooManyEntries {
            count: archive.len(),
        });
    }
    check_declared_sizes(&mut archive)?;
    // 2. Each entry inflated once, as a stream; its actual bytes capped at what it declared
    // (a declared size can lie), its CRC checked by the reader at the end.
    let mut files = BTreeMap::new();
    let mut buffer = vec![0u8; 64 << 10];
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|e| ArchiveError::Entry {
            name: format!("#{index}"),
            reason: e.to_string(),
        })?;
        let name = entry.name().to_owned();
        let failed = |reason: String| ArchiveError::Entry {
            name: name.clone(),
            reason,
        };
        let entry = inflate(&mut entry, &name, &mut buffer).map_err(|e| failed(e.to_string()))?;
        if files.insert(name.clone(), entry).is_some() {
            return Err(failed("appears twice".to_owned()));
        }
    }
    Ok(Archive { files })
}

/// Each entry's declared size and ratio within the caps, names safe, and their total within
/// its cap: read from the central directory, nothing inflated.
fn check_declared_sizes<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
) -> Result<(), ArchiveError> {
    let mut total: u64 = 0;
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|e| ArchiveError::Entry {
                name: format!("#{index}"),
                reason: e.to_string(),
            })?;
        let name = entry.name().to_owned();
        let refuse = |reason: String| ArchiveError::Entry {
            name: name.clone(),
            reason,
        };
        if unsafe_name(&name) {
            return Err(refuse(
                "an unsafe path (absolute, .. or empty part): refused".to_owned(),
            ));
        }
        let (size, packed) = (entry.size(), entry.compressed_size().max(1));
        if size > MAX_ENTRY_BYTES || size / packed > MAX_RATIO {
            return Err(refuse(format!(
                "declares {size} bytes from {packed} (caps: {MAX_ENTRY_BYTES} bytes per entry, ratio {MAX_RATIO}): refused before inflating"
            )));
        }
        total = total.saturating_add(size);
    }
    if total > MAX_TOTAL_BYTES {
        return Err(ArchiveError::TooLarge { total });
    }
    Ok(())
}

/// Why an entry's bytes are refused as they are inflated.
#[derive(Debug, thiserror::Error)]
enum EntryRefusal {
    /// Inflating failed (a bad stream, a CRC that does not match).
    #[error("{0}")]
    Read(std::io::Error),
    /// More bytes than the entry declares.
    #[error("inflates to more than the {declared} bytes it declares: refused")]
    Larger {
        /// What it declares.
        declared: u64,
    },
    /// Fewer bytes than it declares.
    #[error("holds {read} bytes, declares {declared}")]
    Shorter {
        /// What it holds.
        read: u64,
        /// What it declares.
        declared: u64,
    },
}

/// Inflates `entry` (named `name`) as a stream through `buffer`, hashing it and keeping its
/// bytes when the validator reads them; never more than one byte beyond what it declares.
/// `Err`: why the entry is refused.
fn inflate(
    entry: &mut zip::read::ZipFile<'_, impl Read>,
    name: &str,
    buffer: &mut [u8],
) -> Result<Entry, EntryRefusal> {
    let size = entry.size();
    let mut hasher = Sha256::new();
    let mut bytes = kept(name).then(|| Vec::with_capacity(size.min(1 << 20) as usize));
    let mut limited = entry.take(size + 1);
    let mut read: u64 = 0;
    loop {
        let n = limited.read(buffer).map_err(EntryRefusal::Read)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        hasher.update(&buffer[..n]);
        if let Some(bytes) = bytes.as_mut() {
            bytes.extend_from_slice(&buffer[..n]);
        }
    }
    if read > size {
        return Err(EntryRefusal::Larger { declared: size });
    }
    if read != size {
        return Err(EntryRefusal::Shorter {
            read,
            declared: size,
        });
    }
    Ok(Entry {
        sha256: hex::encode(hasher.finalize()),
        size,
        bytes,
    })
}
