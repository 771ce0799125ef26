//! Receiving a stream into a temporary file while it is hashed: the bytes are written on the
//! calling thread and hashed on a second one, a chunk behind, so an upload costs the longer of
//! the two rather than their sum (SHA-256 of 22 MB takes about as long as reading and writing
//! it). A stream larger than its limit is refused, keeping nothing, as soon as a chunk takes it
//! past the limit (so having read at most one chunk, 256 KiB, more).

use std::{
    io::{self, Read, Write},
    path::PathBuf,
    sync::mpsc,
};

use sha2::{Digest, Sha256};

use super::{io_error, ObjectStoreError};
use adamviz_model::digest::Sha256Digest;

/// Bytes read and written at a time; the hashing thread is at most [`CHUNKS_IN_FLIGHT`] of these
/// behind.
const CHUNK_BYTES: usize = 256 << 10;

/// Chunks written but not yet hashed, at most: an upload holds about a megabyte of buffers
/// whatever its size.
const CHUNKS_IN_FLIGHT: usize = 3;

/// A stream received whole into a temporary file (not yet synced).
pub(super) struct Received {
    /// The file, deleted when dropped unless kept.
    pub tmp: tempfile::NamedTempFile,
    /// The SHA-256 of its bytes.
    pub digest: Sha256Digest,
    /// Its size in bytes.
    pub size: u64,
}

/// Streams `input` into `tmp`, hashing it on a second thread, and refuses it once it exceeds
/// `limit` bytes (checked a chunk at a time; dropping `tmp` deletes the partial file).
pub(super) fn receive(
    mut tmp: tempfile::NamedTempFile,
    mut input: impl Read,
    limit: u64,
) -> Result<Received, ObjectStoreError> {
    // Chunks go to the hasher once written and come back to be filled again.
    // A chunk is a buffer of CHUNK_BYTES and how many of them hold the stream's bytes.
    let (to_hasher, hasher_inbox) = mpsc::sync_channel::<(Vec<u8>, usize)>(CHUNKS_IN_FLIGHT);
    let (to_reader, emptied) = mpsc::sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT + 1);
    std::thread::scope(|scope| {
        let hasher = scope.spawn(move || {
            let mut hasher = Sha256::new();
            for (chunk, filled) in hasher_inbox {
                hasher.update(&chunk[..filled]);
                // The reader may have stopped (an error): the chunk is then simply dropped.
                let _ = to_reader.try_send(chunk);
            }
            Sha256Digest::from_bytes(hasher.finalize().into())
        });
        let mut size: u64 = 0;
        let mut chunks_made = 0;
        let written = loop {
            let mut chunk = match emptied.try_recv() {
                Ok(chunk) => chunk,
                Err(_) if chunks_made < CHUNKS_IN_FLIGHT + 1 => {
                    chunks_made += 1;
                    vec![0; CHUNK_BYTES]
                }
                // Every chunk is with the hasher: wait for one back.
                Err(_) => emptied
                    .recv()
                    .expect("the hasher runs until its inbox closes"),
            };
            let filled = match fill(&mut chunk, &mut input) {
                Ok(0) => break Ok(()),
                Ok(filled) => filled,
                Err(source) => {
                    break Err(ObjectStoreError::Io {
                        path: PathBuf::from("<upload stream>"),
                        source,
                    })
                }
            };
            size += filled as u64;
            if size > limit {
                break Err(ObjectStoreError::TooLarge { limit });
            }
            if let Err(error) = tmp.write_all(&chunk[..filled]) {
                break Err(io_error(tmp.path())(error));
            }
            to_hasher
                .send((chunk, filled))
                .expect("the hasher runs until its inbox closes");
        };
        // Closing the inbox ends the hasher.
        drop(to_hasher);
        let digest = hasher.join().expect("hashing does not panic");
        written.map(|()| Received { tmp, digest, size })
    })
}

/// Fills `chunk` from `input` as far as it goes, and says how far: 0 at the stream's end.
fn fill(chunk: &mut [u8], input: &mut impl Read) -> io::Result<usize> {
    let mut filled = 0;
    while filled < chunk.len() {
        match input.read(&mut chunk[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> (tempfile::TempDir, tempfile::NamedTempFile) {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::NamedTempFile::new_in(dir.path()).unwrap();
        (dir, tmp)
    }

    /// A reader that hands out at most `step` bytes per call (as a network stream does).
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// Sizes around the chunk size, more chunks than are in flight, and a stream that arrives a
    /// few bytes at a time: the file holds exactly the bytes and the digest is theirs.
    #[test]
    fn the_file_and_digest_are_the_streams_whatever_its_size_and_pace() {
        for size in [
            0,
            1,
            CHUNK_BYTES - 1,
            CHUNK_BYTES,
            CHUNK_BYTES + 1,
            (CHUNKS_IN_FLIGHT + 3) * CHUNK_BYTES + 17,
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
            for step in [usize::MAX, 4093] {
                let (_dir, tmp) = temp();
                let received = receive(
                    tmp,
                    Trickle {
                        bytes: &bytes,
                        step,
                    },
                    u64::MAX,
                )
                .unwrap();
                assert_eq!(received.size, size as u64);
                assert_eq!(
                    received.digest,
                    Sha256Digest::from_bytes(Sha256::digest(&bytes).into()),
                    "size {size}, step {step}"
                );
                assert_eq!(std::fs::read(received.tmp.path()).unwrap(), bytes);
            }
        }
    }

    /// One byte over the limit is refused, and the partial file is gone.
    #[test]
    fn a_stream_over_its_limit_is_refused_and_leaves_nothing() {
        let bytes = vec![7u8; 3 * CHUNK_BYTES];
        let (dir, tmp) = temp();
        let limit = bytes.len() as u64 - 1;
        let error = receive(tmp, bytes.as_slice(), limit).err().unwrap();
        assert!(matches!(error, ObjectStoreError::TooLarge { limit: l } if l == limit));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let (_dir, tmp) = temp();
        assert!(receive(tmp, bytes.as_slice(), bytes.len() as u64).is_ok());
    }

    /// A read interrupted by a signal is tried again: the bytes are all there.
    #[test]
    fn an_interrupted_read_is_retried() {
        struct InterruptedEveryOther<'a> {
            bytes: &'a [u8],
            interrupt: bool,
        }
        impl Read for InterruptedEveryOther<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.interrupt = !self.interrupt;
                if self.interrupt {
                    return Err(io::ErrorKind::Interrupted.into());
                }
                let n = 1000.min(buf.len()).min(self.bytes.len());
                buf[..n].copy_from_slice(&self.bytes[..n]);
                self.bytes = &self.bytes[n..];
                Ok(n)
            }
        }
        let bytes: Vec<u8> = (0..CHUNK_BYTES + 4321).map(|i| (i % 7) as u8).collect();
        let (_dir, tmp) = temp();
        let input = InterruptedEveryOther {
            bytes: &bytes,
            interrupt: false,
        };
        let received = receive(tmp, input, u64::MAX).unwrap();
        assert_eq!(std::fs::read(received.tmp.path()).unwrap(), bytes);
        assert_eq!(
            received.digest,
            Sha256Digest::from_bytes(Sha256::digest(&bytes).into())
        );
    }

    /// A stream that fails part way is an error naming the stream, and nothing is kept.
    #[test]
    fn a_failing_stream_is_an_error_and_leaves_nothing() {
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("connection reset"));
                }
                let n = self.0.min(buf.len());
                buf[..n].fill(1);
                self.0 -= n;
                Ok(n)
            }
        }
        let (dir, tmp) = temp();
        let error = receive(tmp, Failing(2 * CHUNK_BYTES + 5), u64::MAX)
            .err()
            .unwrap();
        assert!(
            matches!(&error, ObjectStoreError::Io { path, .. } if path == &PathBuf::from("<upload stream>")),
            "{error:?}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
