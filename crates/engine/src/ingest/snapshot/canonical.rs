//! The snapshot's canonical encoding (RFC 8785 JSON, written in chunks) and its SHA-256,
//! hashed on a second thread while large snapshots are encoded.

use super::*;

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
pub(super) fn push_number(buf: &mut Vec<u8>, value: f64) {
    let (mut whole, mut fraction) = (itoa::Buffer::new(), ryu_js::Buffer::new());
    buf.extend_from_slice(number_text(value, &mut whole, &mut fraction).as_bytes());
}

/// The ECMAScript Number-to-String of a finite double, formatted in one of the two buffers.
fn number_text<'a>(
    value: f64,
    whole: &'a mut itoa::Buffer,
    fraction: &'a mut ryu_js::Buffer,
) -> &'a str {
    if value == 0.0 {
        // Both zeros.
        "0"
    } else if value.abs() < 9_007_199_254_740_992.0 && (value as i64) as f64 == value {
        // A whole number below 2^53 (far below 1e21, where ECMAScript switches to exponent
        // form) is written as its integer digits: the common case, done without float printing.
        whole.format(value as i64)
    } else {
        fraction.format_finite(value)
    }
}

/// A cell's encoding, with the comma before it, is copied as one block of this many bytes and
/// cut to its length: most pieces are short, and a copy of unknown length is a call to
/// `memmove`. Every number fits (ECMAScript's longest form has 25 characters).
const BLOCK: usize = 32;

/// Appends the first `len` bytes of `source`; when `len` is at most [`BLOCK`] and `source`
/// holds at least [`BLOCK`] bytes, as one fixed-size copy followed by a cut.
#[inline]
fn append_piece(buf: &mut Vec<u8>, source: &[u8], len: usize) {
    match source.get(..BLOCK) {
        Some(block) if len <= BLOCK => {
            let kept = buf.len() + len;
            let block: &[u8; BLOCK] = block.try_into().expect("BLOCK bytes");
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

/// One column's text values, each encoded once as `,"…"` (comma, JSON string).
///
/// Values are told apart by allocation: equal values of a snapshot share one `Arc`. Rows are
/// sorted by treatment, visit and subject, so a column's value is usually the one of the row
/// before (treatment, visit) or the one first seen after it (subjects come in the same order
/// in every visit): both are checked before the map, which is then rarely asked.
#[derive(Default)]
struct TextPieces {
    /// The encodings back to back, followed by [`BLOCK`] bytes of padding so that any piece
    /// can be copied as a block.
    encoded: Vec<u8>,
    /// Per distinct value in first-seen order: its allocation and its piece's range.
    seen: Vec<(*const u8, usize, usize)>,
    /// Allocation → index in `seen`.
    index_of: FxHashMap<*const u8, usize>,
    /// The index of the previous row's value.
    last: usize,
}

impl TextPieces {
    /// The range in `encoded` of the piece for `text`.
    #[inline]
    fn piece(&mut self, text: &str) -> (usize, usize) {
        let key = text.as_ptr();
        let is = |index: usize| self.seen.get(index).is_some_and(|(seen, ..)| *seen == key);
        let index = if is(self.last) {
            self.last
        } else if is(self.last + 1) {
            self.last + 1
        } else {
            self.look_up(key, text)
        };
        self.last = index;
        let (_, start, end) = self.seen[index];
        (start, end)
    }

    #[cold]
    fn look_up(&mut self, key: *const u8, text: &str) -> usize {
        *self.index_of.entry(key).or_insert_with(|| {
            // Drop the padding, append, pad again.
            self.encoded
                .truncate(self.encoded.len().saturating_sub(BLOCK));
            let start = self.encoded.len();
            self.encoded.push(b',');
            push_json_string(&mut self.encoded, text);
            let end = self.encoded.len();
            self.encoded.extend_from_slice(&[0; BLOCK]);
            self.seen.push((key, start, end));
            self.seen.len() - 1
        })
    }
}

/// One column's previous number and its encoding `,…`, kept in a fixed block.
struct NumberPiece {
    bits: Option<u64>,
    /// A comma, the number, then padding: [`BLOCK`] bytes from either of the first two.
    block: [u8; BLOCK + 1],
    len: usize,
}

impl NumberPiece {
    /// The block and the length of the piece for `value`.
    #[inline]
    fn piece(&mut self, value: f64) -> (&[u8], usize) {
        let bits = value.to_bits();
        if self.bits != Some(bits) {
            let (mut whole, mut fraction) = (itoa::Buffer::new(), ryu_js::Buffer::new());
            let text = number_text(value, &mut whole, &mut fraction).as_bytes();
            self.block[0] = b',';
            self.block[1..=text.len()].copy_from_slice(text);
            self.len = text.len() + 1;
            self.bits = Some(bits);
        }
        (&self.block, self.len)
    }
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
    // Per column (a row may hold more cells than there are columns; those get state too).
    let width = snapshot.rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut texts: Vec<TextPieces> = (0..width).map(|_| TextPieces::default()).collect();
    let mut numbers: Vec<NumberPiece> = (0..width)
        .map(|_| NumberPiece {
            bits: None,
            block: [0; BLOCK + 1],
            len: 0,
        })
        .collect();
    for (i, row) in snapshot.rows.iter().enumerate() {
        buf.extend_from_slice(if i > 0 { b",[" } else { b"[" });
        for (j, ((value, text), number)) in row.iter().zip(&mut texts).zip(&mut numbers).enumerate()
        {
            // Every piece starts with its comma; the first cell of a row skips it.
            let skip = usize::from(j == 0);
            match value {
                SnapshotValue::Text(value) => {
                    let (start, end) = text.piece(value);
                    append_piece(&mut buf, &text.encoded[start + skip..], end - start - skip);
                }
                SnapshotValue::Number(value) => {
                    let (block, len) = number.piece(*value);
                    append_piece(&mut buf, &block[skip..], len - skip);
                }
                SnapshotValue::Missing => buf.extend_from_slice(&b",null"[skip..]),
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

/// Hands chunks to the hashing thread, and takes back emptied buffers to reuse.
struct PipeSink {
    full: mpsc::SyncSender<Vec<u8>>,
    empty: mpsc::Receiver<Vec<u8>>,
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

/// One snapshot's chunks for the hashing thread, and where its digest goes.
struct HashJob {
    chunks: mpsc::Receiver<Vec<u8>>,
    emptied: mpsc::Sender<Vec<u8>>,
    digest: mpsc::SyncSender<[u8; 32]>,
}

/// The hashing thread, started on first use and kept: starting a thread per snapshot costs
/// a noticeable part of hashing one of a few megabytes. One snapshot at a time uses it;
/// a snapshot hashed meanwhile on another thread is encoded and hashed on that thread.
fn hashing_thread() -> Option<&'static Mutex<mpsc::Sender<HashJob>>> {
    static THREAD: OnceLock<Option<Mutex<mpsc::Sender<HashJob>>>> = OnceLock::new();
    THREAD
        .get_or_init(|| {
            let (jobs, incoming) = mpsc::channel::<HashJob>();
            std::thread::Builder::new()
                .name("snapshot-hash".into())
                .spawn(move || {
                    for job in incoming {
                        let mut hasher = Sha256::new();
                        for mut chunk in job.chunks {
                            hasher.update(&chunk);
                            chunk.clear();
                            // The encoder may have finished; then the buffer is simply dropped.
                            let _ = job.emptied.send(chunk);
                        }
                        // The caller waits for it unless it gave up (then nobody needs it).
                        let _ = job.digest.send(hasher.finalize().into());
                    }
                })
                .ok()
                .map(|_| Mutex::new(jobs))
        })
        .as_ref()
}

/// Below this many rows the snapshot is encoded and hashed on one thread: handing chunks to
/// another costs more than it saves.
const PIPELINE_MIN_ROWS: usize = 4_096;

/// Chunks in flight between the encoder and the hashing thread (1 MiB).
const PIPELINE_DEPTH: usize = 16;

/// The snapshot hash: SHA-256 of the canonical encoding, streamed in chunks (never held whole).
///
/// Encoding costs about as much as SHA-256 itself, so for snapshots of some size the two run
/// as a pipeline: this thread encodes 64 KiB chunks, the hashing thread hashes them.
pub fn snapshot_hash(snapshot: &Snapshot) -> Sha256Digest {
    let single_thread = || {
        let mut hasher = HashWriter(Sha256::new());
        write_canonical(snapshot, &mut hasher).expect("hashing never fails");
        Sha256Digest::from_bytes(hasher.0.finalize().into())
    };
    if snapshot.rows.len() < PIPELINE_MIN_ROWS {
        return single_thread();
    }
    let Some(jobs) = hashing_thread().and_then(|jobs| jobs.try_lock().ok()) else {
        return single_thread();
    };
    let (full, chunks) = mpsc::sync_channel(PIPELINE_DEPTH);
    let (emptied, empty) = mpsc::channel();
    let (digest_tx, digest) = mpsc::sync_channel(1);
    let job = HashJob {
        chunks,
        emptied,
        digest: digest_tx,
    };
    if jobs.send(job).is_err() {
        drop(jobs);
        return single_thread();
    }
    let mut sink = PipeSink { full, empty };
    let encoded = encode_canonical(snapshot, &mut sink);
    // Closing the channel ends the job.
    drop(sink);
    match (encoded, digest.recv()) {
        (Ok(()), Ok(bytes)) => Sha256Digest::from_bytes(bytes),
        // The hashing thread is gone (it cannot panic while hashing, but be safe): redo here.
        _ => {
            drop(jobs);
            single_thread()
        }
    }
}
