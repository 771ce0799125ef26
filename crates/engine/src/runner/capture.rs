//! Bounded capture of a child's stdout or stderr: the first and the last halves of the bound
//! are kept (an R error is at the end, its context at the start), the rest is counted.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};

/// Captured text of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagnostics {
    /// The kept text (invalid UTF-8 replaced); when truncated, the head and the tail joined by
    /// a line saying how many bytes were left out.
    pub text: String,
    /// Bytes the stream carried in all.
    pub total_bytes: u64,
    /// Whether bytes were left out.
    pub truncated: bool,
}

/// Reads `stream` to its end, or until `stop` turns true (a process that escaped the run may
/// hold the pipe open), keeping at most `bound` bytes.
pub async fn capture(
    stream: Option<impl AsyncRead + Unpin>,
    bound: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Diagnostics {
    let Some(mut stream) = stream else {
        return Diagnostics::default();
    };
    let mut stopped = false;
    let half = bound / 2;
    let mut head = Vec::with_capacity(half.min(1 << 16));
    let mut tail: VecDeque<u8> = VecDeque::new();
    let mut total = 0u64;
    let mut buffer = [0u8; 8192];
    loop {
        let read = tokio::select! {
            read = stream.read(&mut buffer) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            _ = stop.wait_for(|stop| *stop) => {
                stopped = true;
                break;
            }
        };
        total += read as u64;
        let mut chunk = &buffer[..read];
        if head.len() < half {
            let take = (half - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        tail.extend(chunk);
        while tail.len() > bound - half {
            tail.pop_front();
        }
    }
    let kept = head.len() + tail.len();
    let truncated = total > kept as u64;
    let mut text = String::from_utf8_lossy(&head).into_owned();
    if truncated {
        text.push_str(&format!("\n[… {} bytes left out …]\n", total - kept as u64));
    }
    text.push_str(&String::from_utf8_lossy(tail.make_contiguous()));
    if stopped {
        text.push_str("\n[… capture stopped: the stream was still open after the run ended …]\n");
    }
    Diagnostics {
        text,
        total_bytes: total,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_head_and_tail_within_the_bound() {
        let data: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let (_stop, never) = tokio::sync::watch::channel(false);
        let captured = capture(Some(data.as_slice()), 100, never.clone()).await;
        assert_eq!(captured.total_bytes, 10_000);
        assert!(captured.truncated);
        assert!(captured
            .text
            .starts_with(std::str::from_utf8(&data[..50]).unwrap()));
        assert!(captured
            .text
            .ends_with(std::str::from_utf8(&data[9_950..]).unwrap()));
        assert!(captured.text.contains("9900 bytes left out"));
        let short = capture(Some(&b"short"[..]), 100, never).await;
        assert_eq!((short.text.as_str(), short.truncated), ("short", false));
    }

    /// A descendant of R that escaped with the pipe open must not hold the capture (and so the
    /// run) open: the stream below never ends, the stop signal ends the capture.
    #[tokio::test]
    async fn capture_ends_at_the_stop_signal_when_the_pipe_stays_open() {
        let (mut writer, reader) = tokio::io::duplex(1024);
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"before the end\n")
            .await
            .unwrap();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let capturing = tokio::spawn(capture(Some(reader), 1000, stopped));
        tokio::task::yield_now().await;
        stop.send(true).unwrap();
        let captured = tokio::time::timeout(std::time::Duration::from_secs(10), capturing)
            .await
            .expect("the capture ends at the stop signal although the writer is still open")
            .unwrap();
        assert!(
            captured.text.starts_with("before the end\n"),
            "{:?}",
            captured.text
        );
        assert!(captured.text.contains("capture stopped"));
        drop(writer);
    }
}
