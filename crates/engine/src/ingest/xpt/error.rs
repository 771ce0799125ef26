//! Why an XPORT file could not be read, with the byte offset where the reader stopped.

/// Why an XPORT file could not be read. Offsets are byte offsets from the start of the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XptError {
    /// The table would need more memory than the read may use; nothing was allocated.
    #[error("the SAS XPORT data set has {rows} observations of {variables} variables: its table needs about {needed_bytes} bytes, more than the {budget_bytes} bytes a read may use (8× the file or 4 GiB, whichever is less, unless configured otherwise)")]
    TableTooLarge {
        /// Observations, from the file's length and the observation length.
        rows: usize,
        /// Variables, from the member header.
        variables: usize,
        /// rows × variables × 8.
        needed_bytes: u64,
        /// The budget.
        budget_bytes: u64,
    },
    /// The first record is not an XPORT library header (version 5 or 8).
    #[error("not a SAS XPORT file: the first 80 bytes are not the library header record of version 5 or 8")]
    NotXport,
    /// The file length is not a whole number of 80-byte records.
    #[error(
        "SAS XPORT file is truncated or corrupt: its length {length} bytes is not a multiple of 80"
    )]
    NotWholeRecords {
        /// File length in bytes.
        length: usize,
    },
    /// The file ends before a record that must be there.
    #[error("SAS XPORT file is truncated: the {expected} is missing at byte {offset} (file length {length})")]
    Truncated {
        /// What was expected.
        expected: &'static str,
        /// Where it was expected.
        offset: usize,
        /// File length in bytes.
        length: usize,
    },
    /// A header record is not the one the layout requires at this place.
    #[error("SAS XPORT file is corrupt: expected the {expected} at byte {offset}")]
    UnexpectedRecord {
        /// What was expected.
        expected: &'static str,
        /// Where.
        offset: usize,
    },
    /// A number field in a header record is not a decimal number in range.
    #[error("SAS XPORT file is corrupt: the {field} at byte {offset} is not a valid number")]
    BadHeaderNumber {
        /// Which field.
        field: &'static str,
        /// Where.
        offset: usize,
    },
    /// A variable descriptor (namestr) is inconsistent.
    #[error(
        "SAS XPORT file is corrupt: variable {index} (descriptor at byte {offset}): {problem}"
    )]
    BadVariable {
        /// 1-based variable number.
        index: usize,
        /// Where its descriptor starts.
        offset: usize,
        /// What is wrong.
        problem: VariableProblem,
    },
    /// Two variables have the same name.
    #[error("SAS XPORT file has two variables named {name:?} (variables {first} and {second})")]
    DuplicateName {
        /// The name.
        name: String,
        /// 1-based number of the first.
        first: usize,
        /// 1-based number of the second.
        second: usize,
    },
    /// The file holds more than one dataset.
    #[error("SAS XPORT file holds a second dataset (member header at byte {offset}); upload one dataset per file")]
    SeveralMembers {
        /// Where the second member starts.
        offset: usize,
    },
    /// The bytes after the last whole observation are not blank padding.
    #[error("SAS XPORT file is truncated or corrupt: {trailing} bytes after the last whole {row_length}-byte observation are not blank padding")]
    PartialObservation {
        /// Length of one observation.
        row_length: usize,
        /// Bytes left over.
        trailing: usize,
    },
}

/// What is wrong with a variable descriptor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariableProblem {
    /// Type code other than 1 (numeric) or 2 (character).
    #[error("type code {0} is neither 1 (numeric) nor 2 (character)")]
    UnknownType(i16),
    /// Numeric length outside 2–8.
    #[error("numeric length {0} is outside 2..=8")]
    NumericLength(i16),
    /// Character length outside 1–200 (version 5) or 1–32767 (version 8).
    #[error("character length {0} is outside 1..=200 (1..=32767 in version 8)")]
    CharacterLength(i16),
    /// The name is blank or not printable ASCII.
    #[error("the name is blank or not printable ASCII")]
    BadName,
    /// The value lies outside the observation.
    #[error(
        "position {position} + length {length} lies outside the {row_length}-byte observation"
    )]
    OutsideObservation {
        /// Offset within the observation.
        position: i32,
        /// Length.
        length: i16,
        /// Length of one observation.
        row_length: usize,
    },
}
