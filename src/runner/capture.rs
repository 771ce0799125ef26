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

/// Reads `stream` to its end, keeping at most `bound` bytes.
pub async fn capture(stream: Option<impl AsyncRead + Unpin>, bound: usize) -> Diagnostics {
    let Some(mut stream) = stream else {
        return Diagnostics::default();
    };
    let half = bound / 2;
    let mut head = Vec::with_capacity(half.min(1 << 16));
    let mut tail: VecDeque<u8> = VecDeque::new();
    let mut total = 0u64;
    let mut buffer = [0u8; 8192];
    loop {
        let read = match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
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
        let captured = capture(Some(data.as_slice()), 100).await;
        assert_eq!(captured.total_bytes, 10_000);
        assert!(captured.truncated);
        assert!(captured
            .text
            .starts_with(std::str::from_utf8(&data[..50]).unwrap()));
        assert!(captured
            .text
            .ends_with(std::str::from_utf8(&data[9_950..]).unwrap()));
        assert!(captured.text.contains("9900 bytes left out"));
        let short = capture(Some(&b"short"[..]), 100).await;
        assert_eq!((short.text.as_str(), short.truncated), ("short", false));
    }
}
