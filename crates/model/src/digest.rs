//! `Sha256Digest`: a SHA-256 value as 64 lowercase hex digits, the form every hash in adamviz
//! (content hashes, spec hashes, snapshot hashes) is stored and shown in.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// A SHA-256 digest. Parsing accepts exactly 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Sha256Digest([u8; 32]);

/// Why a string is not a [`Sha256Digest`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a SHA-256 digest (64 lowercase hex digits)")]
pub struct DigestParseError {
    /// The rejected text (cut to 80 characters).
    pub text: String,
}

impl Sha256Digest {
    /// Wraps raw digest bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64-digit lowercase hex form.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl FromStr for Sha256Digest {
    type Err = DigestParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lowercase_hex = text.len() == 64
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let mut out = [0u8; 32];
        if !lowercase_hex || hex::decode_to_slice(text, &mut out).is_err() {
            return Err(DigestParseError {
                text: text.chars().take(80).collect(),
            });
        }
        Ok(Self(out))
    }
}

impl TryFrom<String> for Sha256Digest {
    type Error = DigestParseError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl From<Sha256Digest> for String {
    fn from(digest: Sha256Digest) -> Self {
        digest.to_hex()
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256Digest({})", self.to_hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let text = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let digest: Sha256Digest = text.parse().unwrap();
        assert_eq!(digest.to_string(), text);
        assert_eq!(
            serde_json::to_string(&digest).unwrap(),
            format!("\"{text}\"")
        );
    }

    #[test]
    fn uppercase_short_and_non_hex_are_refused() {
        for bad in [
            "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
            "e3b0",
            "g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ] {
            assert!(bad.parse::<Sha256Digest>().is_err(), "{bad}");
        }
    }
}
