//! The data classification an uploader declares. adamviz holds only synthetic or de-identified
//! data: anything else is refused at the door, with the reason.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// What kind of data an upload is, as declared by the person uploading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataClassification {
    /// Generated data about no real person.
    Synthetic,
    /// Real trial data from which direct and indirect identifiers have been removed.
    Deidentified,
}

/// A classification other than the two adamviz accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("data classification {given:?} is not accepted: adamviz holds only `synthetic` or `deidentified` data, never data that identifies a person")]
pub struct UnknownClassification {
    /// What was declared (cut to 80 characters).
    pub given: String,
}

impl DataClassification {
    /// The name used on the command line, in forms and in evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Synthetic => "synthetic",
            Self::Deidentified => "deidentified",
        }
    }
}

impl FromStr for DataClassification {
    type Err = UnknownClassification;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "synthetic" => Ok(Self::Synthetic),
            "deidentified" => Ok(Self::Deidentified),
            _ => Err(UnknownClassification {
                given: text.chars().take(80).collect(),
            }),
        }
    }
}

impl fmt::Display for DataClassification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_classifications_parse_and_print() {
        for c in [
            DataClassification::Synthetic,
            DataClassification::Deidentified,
        ] {
            assert_eq!(c.as_str().parse::<DataClassification>(), Ok(c));
        }
    }

    #[test]
    fn anything_else_is_refused_with_the_reason() {
        for bad in ["identified", "Synthetic", "", "phi", "de-identified"] {
            let err = bad.parse::<DataClassification>().unwrap_err();
            assert_eq!(err.given, bad);
            assert!(err
                .to_string()
                .contains("only `synthetic` or `deidentified`"));
        }
    }
}
