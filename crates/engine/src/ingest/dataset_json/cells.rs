//! One column's values as they stream in: each JSON value checked against the column's
//! `dataType` (and `targetDataType`) and appended to the table's column, and the serde seeds
//! that feed a row's values to their columns without building a JSON tree.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, SeqAccess, Visitor};

use super::super::{
    sas_dates::{from_iso8601, Temporal},
    table::{ColumnData, NumericCell, NumericValues, SasMissing, TextBuilder},
};

/// What a numeric column's JSON values are, per its `dataType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumberKind {
    /// `integer`: JSON integers (a number with a zero fraction is accepted).
    Integer,
    /// `float` / `double`: JSON numbers.
    Float,
    /// `decimal`: decimal numbers written as JSON strings (to keep their digits); JSON numbers
    /// are accepted too.
    Decimal,
    /// `boolean`: `true` / `false`, kept as 1 / 0.
    Boolean,
    /// `date`, `datetime` or `time` with `targetDataType` `integer`: ISO 8601 text, kept as the
    /// SAS number (days or seconds since 1960-01-01, seconds since midnight).
    Temporal(Temporal),
}

/// A column being filled.
pub(super) enum Sink {
    /// Text: `string`, `URI`, and dates or times that stay text (no `targetDataType`).
    Text(TextBuilder),
    /// Numbers.
    Number(NumberKind, NumericValues),
}

/// One JSON value of a row.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cell<'a> {
    Null,
    Bool(bool),
    Signed(i64),
    Unsigned(u64),
    Float(f64),
    Text(&'a str),
}

impl fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Bool(value) => write!(f, "{value}"),
            Self::Signed(value) => write!(f, "{value}"),
            Self::Unsigned(value) => write!(f, "{value}"),
            Self::Float(value) => write!(f, "{value}"),
            Self::Text(text) => {
                let cut: String = text.chars().take(40).collect();
                let more = if cut.len() < text.len() { "…" } else { "" };
                write!(f, "\"{cut}{more}\"")
            }
        }
    }
}

impl Sink {
    /// An empty column of `kind` (`None`: text) with room for `rows` values.
    pub(super) fn new(kind: Option<NumberKind>, rows: usize) -> Self {
        match kind {
            None => Self::Text(TextBuilder::with_capacity(rows)),
            Some(kind) => Self::Number(kind, NumericValues::with_capacity(rows)),
        }
    }

    /// Appends `cell`; `false` (nothing appended) when it does not fit the column's type.
    pub(super) fn push(&mut self, cell: Cell<'_>) -> bool {
        let missing = NumericCell::Missing(SasMissing::Dot);
        match self {
            Self::Text(values) => match cell {
                Cell::Null => values.push_missing(),
                // Trailing blanks do not count, as in SAS (and the XPORT reader): all-blank is
                // missing.
                Cell::Text(text) => match text.trim_end_matches(' ') {
                    "" => values.push_missing(),
                    kept => values.push(kept),
                },
                _ => return false,
            },
            Self::Number(kind, values) => {
                let number = match (cell, *kind) {
                    (Cell::Null, _) => Some(missing),
                    (
                        Cell::Signed(n),
                        NumberKind::Integer | NumberKind::Float | NumberKind::Decimal,
                    ) => Some(NumericCell::Value(n as f64)),
                    (
                        Cell::Unsigned(n),
                        NumberKind::Integer | NumberKind::Float | NumberKind::Decimal,
                    ) => Some(NumericCell::Value(n as f64)),
                    (Cell::Float(x), NumberKind::Float | NumberKind::Decimal) => {
                        Some(NumericCell::Value(x))
                    }
                    (Cell::Float(x), NumberKind::Integer) => {
                        (x.fract() == 0.0).then_some(NumericCell::Value(x))
                    }
                    (Cell::Text(text), NumberKind::Decimal) => {
                        decimal(text).map(NumericCell::Value)
                    }
                    (Cell::Bool(b), NumberKind::Boolean) => {
                        Some(NumericCell::Value(if b { 1.0 } else { 0.0 }))
                    }
                    (Cell::Text(text), NumberKind::Temporal(temporal)) => {
                        from_iso8601(temporal, text).map(NumericCell::Value)
                    }
                    _ => None,
                };
                match number {
                    Some(number) => values.push(number),
                    None => return false,
                }
            }
        }
        true
    }

    /// The finished column.
    pub(super) fn finish(self) -> ColumnData {
        match self {
            Self::Text(values) => ColumnData::Character(values.finish()),
            Self::Number(_, values) => ColumnData::Numeric(values),
        }
    }
}

/// A decimal number as Dataset-JSON writes one in a string: an optional sign, digits with an
/// optional point, an optional exponent. `NaN`, `inf` and hexadecimal are not decimals.
fn decimal(text: &str) -> Option<f64> {
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    let has_digit = text.bytes().any(|b| b.is_ascii_digit());
    if !plain || !has_digit {
        return None;
    }
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Where a row's values go, and what went wrong with the row if anything did.
pub(super) struct RowTarget<'a> {
    /// One sink per column, in `columns` order.
    pub sinks: &'a mut [Sink],
    /// The first problem: a value that does not fit (column index, value as written) or the
    /// number of values when the row has the wrong width.
    pub problem: Option<RowProblem>,
}

/// What was wrong with one row.
#[derive(Debug)]
pub(super) enum RowProblem {
    /// The value at `column` does not fit its type.
    Cell { column: usize, found: String },
    /// The row has `found` values (at least that many, when too long).
    Width { found: usize },
}

/// Deserializes one row (a JSON array) into the sinks.
pub(super) struct RowSeed<'t, 'a>(pub &'t mut RowTarget<'a>);

impl<'de> DeserializeSeed<'de> for RowSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a row: an array with one value per column")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let target = self.0;
        let width = target.sinks.len();
        for column in 0..width {
            let sink = &mut target.sinks[column];
            match seq.next_element_seed(CellSeed(sink))? {
                None => {
                    target.problem = Some(RowProblem::Width { found: column });
                    return Err(de::Error::custom("row too short"));
                }
                Some(Ok(())) => {}
                Some(Err(found)) => {
                    target.problem = Some(RowProblem::Cell { column, found });
                    return Err(de::Error::custom("value does not fit its dataType"));
                }
            }
        }
        if seq.next_element::<IgnoredAny>()?.is_some() {
            target.problem = Some(RowProblem::Width { found: width + 1 });
            return Err(de::Error::custom("row too long"));
        }
        Ok(())
    }
}

/// Deserializes one value into a sink: `Ok(())` when appended, `Err(value as written)` when it
/// does not fit (the caller names the row and column).
struct CellSeed<'s>(&'s mut Sink);

impl<'de> DeserializeSeed<'de> for CellSeed<'_> {
    type Value = Result<(), String>;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl CellSeed<'_> {
    fn take(self, cell: Cell<'_>) -> Result<(), String> {
        if self.0.push(cell) {
            Ok(())
        } else {
            Err(cell.to_string())
        }
    }
}

impl<'de> Visitor<'de> for CellSeed<'_> {
    type Value = Result<(), String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value: null, a number, a string or a boolean")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.take(Cell::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.take(Cell::Null))
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
        Ok(self.take(Cell::Bool(value)))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        Ok(self.take(Cell::Signed(value)))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Ok(self.take(Cell::Unsigned(value)))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        Ok(self.take(Cell::Float(value)))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(self.take(Cell::Text(value)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Ok(Err("an array".to_owned()))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Ok(Err("an object".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_plain_numbers_only() {
        assert_eq!(decimal("12.50"), Some(12.5));
        assert_eq!(decimal("-1e3"), Some(-1000.0));
        assert_eq!(decimal("NaN"), None);
        assert_eq!(decimal("inf"), None);
        assert_eq!(decimal("0x10"), None);
        assert_eq!(decimal("."), None);
        assert_eq!(decimal(""), None);
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused_and_nothing_is_appended() {
        let mut integers = Sink::new(Some(NumberKind::Integer), 4);
        assert!(integers.push(Cell::Signed(3)));
        assert!(integers.push(Cell::Float(4.0)));
        assert!(!integers.push(Cell::Float(4.5)));
        assert!(!integers.push(Cell::Text("4")));
        assert!(integers.push(Cell::Null));
        let ColumnData::Numeric(values) = integers.finish() else {
            panic!("numeric")
        };
        assert_eq!(
            values.values().collect::<Vec<_>>(),
            [Some(3.0), Some(4.0), None]
        );

        let mut text = Sink::new(None, 2);
        assert!(!text.push(Cell::Signed(1)));
        assert!(text.push(Cell::Text("  ")));
        assert!(text.push(Cell::Text("A  ")));
        let ColumnData::Character(values) = text.finish() else {
            panic!("text")
        };
        assert_eq!(values.iter().collect::<Vec<_>>(), [None, Some("A")]);
    }
}
