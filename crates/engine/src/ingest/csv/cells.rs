//! One column's cells while a chunk of a CSV file is read: interned text, the default, or the
//! numbers themselves for a column whose first records are many distinct numbers (measurements,
//! days, sequence numbers), which are then parsed once each instead of being interned. Such a
//! column that meets a cell that is not a finite number reports it, and the reader reads its
//! chunk again with that column as text, so the result is always the one interning would give.

use super::{number_shape, NumberShape};
use crate::ingest::table::{NumericCell, NumericValues, SasMissing, TextBuilder, TextValues};

/// Distinct values among a chunk's first records from which a column of numbers only is read
/// as numbers (a quarter of the sampled records).
pub(super) const NUMBERS_FROM_DISTINCT: usize = 64;

/// A column's cells so far.
#[derive(Debug)]
pub(super) enum ColumnCells {
    /// Interned text (typed when the file has been read).
    Text(TextBuilder),
    /// Numbers, empty cells missing.
    Numbers(NumericValues),
}

/// Why a cell could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PushError {
    /// A text cell is not UTF-8.
    NotUtf8,
    /// A number column met a cell that is not a finite number.
    NotANumber,
}

impl Default for ColumnCells {
    fn default() -> Self {
        Self::Text(TextBuilder::default())
    }
}

/// The cells of `values` as numbers, if every distinct value is a finite number.
pub(super) fn numbers_of(values: &TextValues) -> Option<NumericValues> {
    let mut numbers = Vec::with_capacity(values.levels().len() + 1);
    numbers.push(NumericCell::Missing(SasMissing::Dot));
    for level in values.levels() {
        match number_shape(level.as_bytes()) {
            NumberShape::Finite(value) => numbers.push(NumericCell::Value(value)),
            _ => return None,
        }
    }
    let mut cells = NumericValues::with_capacity(values.len());
    for &code in values.codes() {
        cells.push(numbers[code as usize]);
    }
    Some(cells)
}

impl ColumnCells {
    /// Appends a non-empty field.
    pub fn push(&mut self, field: &[u8]) -> Result<(), PushError> {
        match self {
            Self::Text(builder) => builder.push_utf8(field).map_err(|_| PushError::NotUtf8),
            Self::Numbers(numbers) => match number_shape(field) {
                NumberShape::Finite(value) => {
                    numbers.push(NumericCell::Value(value));
                    Ok(())
                }
                _ => Err(PushError::NotANumber),
            },
        }
    }

    /// Appends an empty (missing) cell.
    pub fn push_missing(&mut self) {
        match self {
            Self::Text(builder) => builder.push_missing(),
            Self::Numbers(numbers) => numbers.push(NumericCell::Missing(SasMissing::Dot)),
        }
    }

    /// Switches a text column to numbers when its distinct values so far are at least
    /// [`NUMBERS_FROM_DISTINCT`] and all finite numbers.
    pub fn consider_numbers(&mut self) {
        let Self::Text(builder) = self else {
            return;
        };
        let levels = builder.levels();
        if levels.len() < NUMBERS_FROM_DISTINCT
            || !levels
                .iter()
                .all(|level| matches!(number_shape(level.as_bytes()), NumberShape::Finite(_)))
        {
            return;
        }
        let values = std::mem::take(builder).finish();
        if let Some(numbers) = numbers_of(&values) {
            *self = Self::Numbers(numbers);
        }
    }

    /// Switches a text column to numbers when every value so far is a finite number (however
    /// few they are).
    pub fn numbers_if_all_numbers(&mut self) {
        let Self::Text(builder) = self else {
            return;
        };
        if builder.levels().is_empty()
            || !builder
                .levels()
                .iter()
                .all(|level| matches!(number_shape(level.as_bytes()), NumberShape::Finite(_)))
        {
            return;
        }
        if let Some(numbers) = numbers_of(&std::mem::take(builder).finish()) {
            *self = Self::Numbers(numbers);
        }
    }

    /// Makes room for `additional` more cells.
    pub fn reserve(&mut self, additional: usize) {
        match self {
            Self::Text(builder) => builder.reserve(additional),
            Self::Numbers(numbers) => numbers.reserve(additional),
        }
    }

    /// Number of cells so far.
    pub fn len(&self) -> usize {
        match self {
            Self::Text(builder) => builder.len(),
            Self::Numbers(numbers) => numbers.len(),
        }
    }
}
