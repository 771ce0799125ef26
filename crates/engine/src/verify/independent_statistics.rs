//! The `independent_statistics` check's two halves: adamviz's own statistics per cell, computed
//! from the snapshot (the records R was given) in the spec's order, and their comparison with
//! the `cells` of the statistics JSON R wrote, field by field.

use std::collections::HashMap;

use crate::ingest::snapshot::{Snapshot, SnapshotValue};
use adamviz_model::{
    spec::PlotSpec,
    statistics::{agree_at_scale, cell_statistics, CellStatistics},
};

/// Relative tolerance for comparing adamviz's numbers with R's.
pub const RELATIVE_TOLERANCE: f64 = 1e-9;

/// Why the statistics cannot be computed from a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndependentStatisticsError {
    /// The snapshot lacks a column the spec needs.
    #[error("the snapshot has no {role} column")]
    MissingRole {
        /// The role.
        role: &'static str,
    },
}

/// One record of a cell: its value (missing: `None`) and its subject.
pub type CellRecord = (Option<f64>, String);

fn text_of(value: &SnapshotValue) -> Option<String> {
    match value {
        SnapshotValue::Text(text) => Some(text.to_string()),
        SnapshotValue::Number(number) => Some(number.to_string()),
        SnapshotValue::Missing => None,
    }
}

/// The position of the snapshot's column with `role`.
fn column_of(snapshot: &Snapshot, role: &'static str) -> Result<usize, IndependentStatisticsError> {
    snapshot
        .columns
        .iter()
        .position(|c| c.role == role)
        .ok_or(IndependentStatisticsError::MissingRole { role })
}

/// The records of every treatment × visit cell of `snapshot` (value and subject), keyed by
/// treatment level and visit label.
pub fn records_by_cell(
    snapshot: &Snapshot,
) -> Result<HashMap<(String, String), Vec<CellRecord>>, IndependentStatisticsError> {
    let position = |role| column_of(snapshot, role);
    let (subject, treatment, visit, value) = (
        position("subject")?,
        position("treatment")?,
        position("visit")?,
        position("value")?,
    );
    let mut by_cell: HashMap<(String, String), Vec<CellRecord>> = HashMap::new();
    for row in &snapshot.rows {
        let (Some(level), Some(visit_label)) = (text_of(&row[treatment]), text_of(&row[visit]))
        else {
            continue;
        };
        let number = match &row[value] {
            SnapshotValue::Number(number) => Some(*number),
            _ => None,
        };
        let subject_id = text_of(&row[subject]).unwrap_or_default();
        by_cell
            .entry((level, visit_label))
            .or_default()
            .push((number, subject_id));
    }
    Ok(by_cell)
}

/// The statistics of every treatment × visit cell of `spec`, treatments in spec order and
/// visits in spec order within each.
pub fn compute_cell_statistics(
    spec: &PlotSpec,
    snapshot: &Snapshot,
) -> Result<Vec<CellStatistics>, IndependentStatisticsError> {
    let by_cell = records_by_cell(snapshot)?;
    let mut cells = Vec::new();
    for level in &spec.treatment.levels {
        for visit_label in &spec.visit.visits {
            let records: Vec<(Option<f64>, &str)> = by_cell
                .get(&(level.clone(), visit_label.clone()))
                .map(|records| records.iter().map(|(v, s)| (*v, s.as_str())).collect())
                .unwrap_or_default();
            cells.push(cell_statistics(
                level,
                visit_label,
                &records,
                spec.low_n.threshold,
            ));
        }
    }
    Ok(cells)
}

/// The subject × treatment × visit combinations with more than one record in `snapshot`, as
/// "subject / visit: n records", in snapshot order.
pub fn several_records_per_subject_visit(
    snapshot: &Snapshot,
) -> Result<Vec<String>, IndependentStatisticsError> {
    let position = |role| column_of(snapshot, role);
    let (subject, treatment, visit) = (
        position("subject")?,
        position("treatment")?,
        position("visit")?,
    );
    type SubjectTreatmentVisit = (Option<String>, Option<String>, Option<String>);
    let mut counts: Vec<(SubjectTreatmentVisit, usize)> = Vec::new();
    let mut index: HashMap<SubjectTreatmentVisit, usize> = HashMap::new();
    for row in &snapshot.rows {
        let key = (
            text_of(&row[subject]),
            text_of(&row[treatment]),
            text_of(&row[visit]),
        );
        match index.get(&key) {
            Some(&at) => counts[at].1 += 1,
            None => {
                index.insert(key.clone(), counts.len());
                counts.push((key, 1));
            }
        }
    }
    Ok(counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|((subject, _, visit), n)| {
            format!(
                "{} / {}: {n} records",
                subject.unwrap_or_default(),
                visit.unwrap_or_default()
            )
        })
        .collect())
}

/// A number of R's statistics JSON: a JSON number, or `"Inf"` / `"-Inf"` (JSON has no
/// infinities).
fn reported_number(value: &serde_json::Value) -> Option<f64> {
    match value {
        serde_json::Value::String(text) if text == "Inf" => Some(f64::INFINITY),
        serde_json::Value::String(text) if text == "-Inf" => Some(f64::NEG_INFINITY),
        other => other.as_f64(),
    }
}

/// Every difference between `ours` and R's `cells` (the statistics JSON's array), as
/// `cell i (treatment, visit): field ours vs R's`; empty when they agree.
pub fn compare_with_r(ours: &[CellStatistics], r_cells: &serde_json::Value) -> Vec<String> {
    let Some(theirs) = r_cells.as_array() else {
        return vec!["R's statistics have no cells array".to_owned()];
    };
    let mut differences = Vec::new();
    if theirs.len() != ours.len() {
        differences.push(format!(
            "R reported {} cells, adamviz computes {}",
            theirs.len(),
            ours.len()
        ));
    }
    for (index, (mine, r)) in ours.iter().zip(theirs).enumerate() {
        let at = format!("cell {index} ({}, {})", mine.treatment, mine.visit);
        let text = |field: &str| r.get(field).and_then(|v| v.as_str()).map(str::to_owned);
        for (field, expected) in [("treatment", &mine.treatment), ("visit", &mine.visit)] {
            if text(field).as_ref() != Some(expected) {
                differences.push(format!(
                    "{at}: {field} {expected:?} vs R's {:?}",
                    r.get(field)
                ));
            }
        }
        for (field, expected) in [
            ("n", mine.n),
            ("n_subjects", mine.n_subjects),
            ("n_missing", mine.n_missing),
        ] {
            if r.get(field).and_then(|v| v.as_u64()) != Some(expected as u64) {
                differences.push(format!(
                    "{at}: {field} {expected} vs R's {:?}",
                    r.get(field)
                ));
            }
        }
        if r.get("low_n").and_then(|v| v.as_bool()) != Some(mine.low_n) {
            differences.push(format!(
                "{at}: low_n {} vs R's {:?}",
                mine.low_n,
                r.get("low_n")
            ));
        }
        for (field, expected) in [
            ("mean", mine.mean),
            ("sd", mine.sd),
            ("median", mine.median),
            ("q1", mine.q1),
            ("q3", mine.q3),
            ("min", mine.min),
            ("max", mine.max),
        ] {
            let reported = r.get(field).and_then(reported_number);
            let shape_ok = r
                .get(field)
                .is_some_and(|v| v.is_null() || reported_number(v).is_some());
            // Relative to the cell's largest magnitude too: a mean near zero of large values
            // carries their rounding (see `agree_at_scale`).
            let scale = mine
                .min
                .unwrap_or(0.0)
                .abs()
                .max(mine.max.unwrap_or(0.0).abs());
            if !shape_ok || !agree_at_scale(expected, reported, RELATIVE_TOLERANCE, scale) {
                differences.push(format!(
                    "{at}: {field} {expected:?} vs R's {:?}",
                    r.get(field)
                ));
            }
        }
    }
    differences
}
