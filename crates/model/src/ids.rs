//! Identifiers of revisions and attempts as their own types, so that one is never passed where
//! the other (or any string) is expected: `rev-` or `att-` and 32 lowercase hex digits, checked
//! when parsed (also when deserialized). No `Deref` to `str`: [`RevisionId::as_str`] says so.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why a text is not an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a {kind} id: `{prefix}` and 32 lowercase hex digits")]
pub struct IdError {
    /// What was offered.
    pub text: String,
    /// `revision` or `attempt`.
    pub kind: &'static str,
    /// The prefix it needs.
    pub prefix: &'static str,
}

fn check(text: &str, kind: &'static str, prefix: &'static str) -> Result<(), IdError> {
    let valid = text.strip_prefix(prefix).is_some_and(|hex| {
        hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if valid {
        Ok(())
    } else {
        Err(IdError {
            text: text.to_owned(),
            kind,
            prefix,
        })
    }
}

/// A revision: `rev-` and 32 hex digits (128 random bits).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RevisionId(String);

impl RevisionId {
    /// The id made of 16 random bytes (the caller reads them from the system's source).
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        Self(format!("rev-{}", hex::encode(bytes)))
    }

    /// Parses `rev-…`.
    pub fn parse(text: &str) -> Result<Self, IdError> {
        check(text, "revision", "rev-")?;
        Ok(Self(text.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A figure set (one figure per parameter, confirmed together): `set-` and 32 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FigureSetId(String);

impl FigureSetId {
    /// The id made of 16 random bytes (the caller reads them from the system's source).
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        Self(format!("set-{}", hex::encode(bytes)))
    }

    /// Parses `set-…`.
    pub fn parse(text: &str) -> Result<Self, IdError> {
        check(text, "figure set", "set-")?;
        Ok(Self(text.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An attempt: `att-` and 32 hex digits, derived from its revision and the client's
/// idempotency key, so that the same key always names the same attempt.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AttemptId(String);

impl AttemptId {
    /// The attempt `idempotency_key` names for `revision`.
    pub fn for_key(revision: &RevisionId, idempotency_key: &str) -> Self {
        let digest = Sha256::digest(format!("{}\0{idempotency_key}", revision.0).as_bytes());
        Self(format!("att-{}", hex::encode(&digest[..16])))
    }

    /// Parses `att-…`.
    pub fn parse(text: &str) -> Result<Self, IdError> {
        check(text, "attempt", "att-")?;
        Ok(Self(text.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

macro_rules! text_conversions {
    ($type:ty) => {
        impl TryFrom<String> for $type {
            type Error = IdError;
            fn try_from(text: String) -> Result<Self, IdError> {
                Self::parse(&text)
            }
        }

        impl From<$type> for String {
            fn from(id: $type) -> String {
                id.0
            }
        }

        impl std::str::FromStr for $type {
            type Err = IdError;
            fn from_str(text: &str) -> Result<Self, IdError> {
                Self::parse(text)
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_conversions!(RevisionId);
text_conversions!(AttemptId);
text_conversions!(FigureSetId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_only_their_own_shape() {
        let revision = RevisionId::from_random_bytes([0xab; 16]);
        assert_eq!(revision.as_str(), format!("rev-{}", "ab".repeat(16)));
        assert_eq!(RevisionId::parse(revision.as_str()), Ok(revision.clone()));
        let attempt = AttemptId::for_key(&revision, "key");
        assert_eq!(AttemptId::parse(attempt.as_str()), Ok(attempt.clone()));
        assert_eq!(attempt, AttemptId::for_key(&revision, "key"));
        assert_ne!(attempt, AttemptId::for_key(&revision, "other"));
        for bad in [
            "",
            "rev-",
            "rev-ABCDEF0123456789abcdef0123456789",
            "att-0123",
            "rev-0123456789abcdef0123456789abcdeg",
        ] {
            assert!(RevisionId::parse(bad).is_err(), "{bad}");
        }
        assert!(RevisionId::parse(attempt.as_str()).is_err());
        assert!(AttemptId::parse(revision.as_str()).is_err());
        let set = FigureSetId::from_random_bytes([0xcd; 16]);
        assert_eq!(FigureSetId::parse(set.as_str()), Ok(set.clone()));
        assert!(FigureSetId::parse(revision.as_str()).is_err());
        assert!(RevisionId::parse(set.as_str()).is_err());
        let json = serde_json::to_string(&revision).unwrap();
        assert_eq!(serde_json::from_str::<RevisionId>(&json).unwrap(), revision);
        assert!(serde_json::from_str::<RevisionId>("\"rev-1\"").is_err());
    }
}
