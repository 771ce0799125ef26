//! The panel order proposed for a treatment column's levels, and the rule that chose it: the
//! column's own order variable (TRTA → TRTAN); else a related order variable (TRT01AN, TRT01PN,
//! ARMN, ACTARMN, TRTxxAN/PN) whose text twin carries the same labels row by row and whose numbers
//! map one to one onto the levels; else placebo or control first and doses ascending when the
//! labels carry doses; else the order of first appearance.

use super::{keep_smallest, numeric_column, order_missing_last, text_column};
use crate::ingest::table::{NumericValues, Table, TextValues};
use adamviz_model::profile::LevelsOf;

mod doses;

use doses::placebo_and_doses;

/// Related order variables, tried in this order after the column's own (`TRTxxAN`/`TRTxxPN` of
/// other periods come between these and the arms').
const RELATED_ORDER_VARIABLES: [&str; 4] = ["TRTAN", "TRTPN", "TRT01AN", "TRT01PN"];
const ARM_ORDER_VARIABLES: [&str; 2] = ["ARMN", "ACTARMN"];

/// The levels of treatment column `column` in the proposed order, with the rule in words.
pub(super) fn treatment_levels(table: &Table, column: &str) -> Option<LevelsOf> {
    let values = text_column(table, column)?;
    let own = format!("{column}N");
    if let Some(order) = numeric_column(table, &own) {
        let levels = ordered_by_own_variable(values, order);
        return Some(LevelsOf {
            column: column.to_owned(),
            order_why: format!("levels ordered by {own}"),
            order_column: Some(own),
            levels,
        });
    }
    if let Some((related, numbers)) = related_order(table, column, values) {
        let mut levels: Vec<(&str, f64)> = labels(values).into_iter().zip(numbers).collect();
        levels.sort_by(|a, b| a.1.total_cmp(&b.1));
        return Some(LevelsOf {
            column: column.to_owned(),
            order_why: format!(
                "levels ordered by {related}, which matches {column}'s labels one to one (there is no {own})"
            ),
            order_column: Some(related),
            levels: levels.into_iter().map(|(l, _)| l.to_owned()).collect(),
        });
    }
    let first_appearance = labels(values);
    let (levels, order_why) = match placebo_and_doses(&first_appearance) {
        Some(order) => (
            order.levels,
            format!(
                "levels with {}: there is no {own} and no related order variable",
                order.steps
            ),
        ),
        None => (
            first_appearance,
            format!(
                "levels in order of first appearance: no order variable ({own} or a related one) and no placebo or doses in the labels"
            ),
        ),
    };
    Some(LevelsOf {
        column: column.to_owned(),
        order_column: None,
        levels: levels.into_iter().map(str::to_owned).collect(),
        order_why,
    })
}

/// The levels in order of first appearance.
fn labels(values: &TextValues) -> Vec<&str> {
    values.levels().iter().map(|level| &**level).collect()
}

/// Levels by the smallest value of their own order variable, unordered ones last (ties by
/// label, so the order never depends on the row order).
fn ordered_by_own_variable(values: &TextValues, order: &NumericValues) -> Vec<String> {
    let mut smallest: Vec<Option<f64>> = vec![None; values.levels().len() + 1];
    for (row, &code) in values.codes().iter().enumerate() {
        keep_smallest(&mut smallest[code as usize], order.value(row));
    }
    let mut levels: Vec<(&str, Option<f64>)> = labels(values)
        .into_iter()
        .zip(smallest[1..].iter().copied())
        .collect();
    levels.sort_by(|a, b| order_missing_last(a.1, b.1).then(a.0.cmp(b.0)));
    levels.into_iter().map(|(l, _)| l.to_owned()).collect()
}

/// The first related order variable that orders `column`'s levels: its name and each level's
/// number (in [`labels`] order).
fn related_order(table: &Table, column: &str, values: &TextValues) -> Option<(String, Vec<f64>)> {
    let own = format!("{column}N");
    let period_variables = table
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .filter(|name| is_period_treatment_order(name));
    RELATED_ORDER_VARIABLES
        .into_iter()
        .chain(period_variables)
        .chain(ARM_ORDER_VARIABLES)
        .filter(|name| *name != own)
        .find_map(|name| {
            let numbers = numeric_column(table, name)?;
            // The twin carries the labels the numbers order: TRT01AN orders TRT01A.
            let twin = text_column(table, name.strip_suffix('N')?)?;
            let matches = same_labels_row_by_row(values, twin);
            matches
                .then(|| one_number_per_level(values, numbers))
                .flatten()
                .map(|numbers| (name.to_owned(), numbers))
        })
}

/// `TRTxxAN` or `TRTxxPN`: the actual or planned treatment order of period `xx`.
fn is_period_treatment_order(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() == 7
        && name.starts_with("TRT")
        && bytes[3].is_ascii_digit()
        && bytes[4].is_ascii_digit()
        && matches!(bytes[5], b'A' | b'P')
        && bytes[6] == b'N'
}

/// Whether every row with both labels has the same label (blank-trimmed) in both columns.
fn same_labels_row_by_row(values: &TextValues, twin: &TextValues) -> bool {
    let mut checked: rustc_hash::FxHashSet<(u32, u32)> = Default::default();
    values
        .codes()
        .iter()
        .zip(twin.codes())
        .filter(|(&code, &twin_code)| code != 0 && twin_code != 0)
        .all(|(&code, &twin_code)| {
            !checked.insert((code, twin_code))
                || values.level(code).map(str::trim) == twin.level(twin_code).map(str::trim)
        })
}

/// Each level's number when the numbers map one to one onto the levels: every level has exactly
/// one number over its rows, and no two levels share one.
fn one_number_per_level(values: &TextValues, numbers: &NumericValues) -> Option<Vec<f64>> {
    let mut number_of: Vec<Option<f64>> = vec![None; values.levels().len() + 1];
    for (row, &code) in values.codes().iter().enumerate() {
        let (true, Some(number)) = (code != 0, numbers.value(row)) else {
            continue;
        };
        match number_of[code as usize] {
            None => number_of[code as usize] = Some(number),
            Some(seen) if seen == number => {}
            Some(_) => return None,
        }
    }
    let per_level: Vec<f64> = number_of[1..].iter().copied().collect::<Option<_>>()?;
    let mut distinct = per_level.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    (distinct.len() == per_level.len()).then_some(per_level)
}

#[cfg(test)]
mod tests;
