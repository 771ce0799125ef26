//! A later data cut of an ADaM laboratory dataset, as a study's next delivery looks: some
//! subjects who had a Week 24 visit and no Week 26 one now have Week 26 records (their Week 24
//! records carried to Week 26: every parameter, two weeks later), and one value is corrected
//! (the first ALT record at Week 12, its AVAL tripled). The same dataset name, other bytes.
//! Shared by `examples/new_data_cut.rs` (the browser tests) and `tests/data_cuts.rs`.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use adamviz_engine::ingest::{
    read_dataset,
    table::{Column, ColumnData, NumericCell, NumericValues, Table, TextValues},
    xpt_writer::write_xpt,
};
use anyhow::{bail, Context};

/// What the cut changed: the subjects given a Week 26 (with their arm) and the value changed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CutSummary {
    /// Records in the new cut.
    pub records: usize,
    /// (USUBJID, TRTA) of each subject given Week 26 records.
    pub added_subjects: Vec<(String, String)>,
    /// (USUBJID, TRTA, PARAMCD, AVISIT, old AVAL, new AVAL) of the value changed.
    pub changed: (String, String, String, String, f64, f64),
}

fn text<'a>(table: &'a Table, name: &str) -> anyhow::Result<&'a TextValues> {
    match table.column(name).map(|c| &c.data) {
        Some(ColumnData::Character(values)) => Ok(values),
        _ => bail!("the dataset has no character column {name}"),
    }
}

fn number<'a>(table: &'a Table, name: &str) -> anyhow::Result<&'a NumericValues> {
    match table.column(name).map(|c| &c.data) {
        Some(ColumnData::Numeric(values)) => Ok(values),
        _ => bail!("the dataset has no numeric column {name}"),
    }
}

/// A value a new or changed row takes in one column.
enum Cell {
    Text(&'static str),
    Number(f64),
}

/// The later cut of the dataset `bytes` with `wanted` subjects given a Week 26: its XPT bytes and
/// what changed.
pub fn new_cut(bytes: &[u8], wanted: usize) -> anyhow::Result<(Vec<u8>, CutSummary)> {
    let table = read_dataset(bytes)?;
    let (subject, arm, visit) = (
        text(&table, "USUBJID")?,
        text(&table, "TRTA")?,
        text(&table, "AVISIT")?,
    );
    let (parameter, value) = (text(&table, "PARAMCD")?, number(&table, "AVAL")?);
    let (mut at_24, mut at_26) = (BTreeMap::<String, Vec<usize>>::new(), BTreeSet::new());
    for row in 0..table.row_count {
        let who = subject.get(row).unwrap_or_default().trim().to_owned();
        match visit.get(row).map(str::trim) {
            Some("Week 24") => at_24.entry(who).or_default().push(row),
            Some("Week 26") => {
                at_26.insert(who);
            }
            _ => {}
        }
    }
    // One subject per arm in turn, so that each arm's Week 26 cells change.
    let mut by_arm: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for who in at_24.keys().filter(|who| !at_26.contains(*who)) {
        let row = at_24[who][0];
        by_arm
            .entry(arm.get(row).unwrap_or_default().trim().to_owned())
            .or_default()
            .push(who.clone());
    }
    let mut chosen = Vec::new();
    for round in 0.. {
        let before = chosen.len();
        for subjects in by_arm.values() {
            if chosen.len() < wanted {
                if let Some(who) = subjects.get(round) {
                    chosen.push(who.clone());
                }
            }
        }
        if chosen.len() == wanted || chosen.len() == before {
            break;
        }
    }
    let changed_row = (0..table.row_count)
        .find(|&row| {
            parameter.get(row).map(str::trim) == Some("ALT")
                && visit.get(row).map(str::trim) == Some("Week 12")
                && value.value(row).is_some()
        })
        .context("no ALT value at Week 12 to change")?;
    let old_value = value.value(changed_row).unwrap_or_default();

    // Every row as it was (one value changed), then the added rows.
    let mut rows: Vec<(usize, Vec<(&str, Cell)>)> = (0..table.row_count)
        .map(|row| {
            let overrides = if row == changed_row {
                vec![("AVAL", Cell::Number(old_value * 3.0))]
            } else {
                Vec::new()
            };
            (row, overrides)
        })
        .collect();
    let shifted = |name: &str, row: usize| -> Option<f64> {
        number(&table, name)
            .ok()
            .and_then(|v| v.value(row))
            .map(|v| v + 14.0)
    };
    for who in &chosen {
        for &row in &at_24[who] {
            let mut overrides = vec![
                ("AVISIT", Cell::Text("Week 26")),
                ("AVISITN", Cell::Number(26.0)),
                ("VISIT", Cell::Text("WEEK 26")),
                ("VISITNUM", Cell::Number(13.0)),
            ];
            for day in ["ADY", "ADT"] {
                if let Some(later) = shifted(day, row) {
                    overrides.push((day, Cell::Number(later)));
                }
            }
            rows.push((row, overrides));
        }
    }
    let columns = table
        .columns
        .iter()
        .map(|column| rebuilt(column, &rows))
        .collect();
    let cut = Table {
        columns,
        row_count: rows.len(),
        ..table.clone_metadata()
    };
    let summary = CutSummary {
        records: cut.row_count,
        added_subjects: chosen
            .iter()
            .map(|who| {
                (
                    who.clone(),
                    arm.get(at_24[who][0]).unwrap_or_default().trim().to_owned(),
                )
            })
            .collect(),
        changed: (
            subject
                .get(changed_row)
                .unwrap_or_default()
                .trim()
                .to_owned(),
            arm.get(changed_row).unwrap_or_default().trim().to_owned(),
            "ALT".to_owned(),
            "Week 12".to_owned(),
            old_value,
            old_value * 3.0,
        ),
    };
    Ok((write_xpt(&cut), summary))
}

/// `column` with the values of `rows` (source row, overrides), in order.
fn rebuilt(column: &Column, rows: &[(usize, Vec<(&str, Cell)>)]) -> Column {
    fn own<'a>(column: &Column, overrides: &'a [(&str, Cell)]) -> Option<&'a Cell> {
        overrides
            .iter()
            .find(|(name, _)| *name == column.name)
            .map(|(_, cell)| cell)
    }
    let data = match &column.data {
        ColumnData::Numeric(values) => ColumnData::Numeric(
            rows.iter()
                .map(|(row, overrides)| match own(column, overrides) {
                    Some(Cell::Number(v)) => NumericCell::Value(*v),
                    _ => values.get(*row),
                })
                .collect(),
        ),
        ColumnData::Character(values) => ColumnData::Character(
            rows.iter()
                .map(|(row, overrides)| match own(column, overrides) {
                    Some(Cell::Text(t)) => Some(*t),
                    _ => values.get(*row),
                })
                .collect(),
        ),
    };
    Column {
        data,
        ..column.clone()
    }
}
