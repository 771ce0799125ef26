//! Confirming a draft spec against the dataset it names: every check that needs the data
//! (columns exist and have the right type, levels and visits occur, the filters leave records,
//! the unit agrees), with every failure reported, not just the first. A spec that passes is
//! frozen as `confirmed`.

use std::collections::HashSet;

use super::{
    profile::unit_from_label,
    table::{ColumnData, Table, TextValues},
};
use crate::domain::{
    digest::Sha256Digest,
    spec::{PlotSpec, SpecState, VisitOrderSource},
};

/// One reason a spec cannot be confirmed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The spec names another dataset.
    #[error("the spec is for dataset {spec}, but this file hashes to {data}")]
    OtherDataset {
        /// The spec's content hash.
        spec: Sha256Digest,
        /// The file's.
        data: Sha256Digest,
    },
    /// A column the spec names is not in the data.
    #[error("{role}: there is no column {column:?} in the dataset")]
    UnknownColumn {
        /// What the column is for.
        role: &'static str,
        /// The name given.
        column: String,
    },
    /// A column has the wrong type for its role.
    #[error("{role}: column {column:?} is {found}, but must be {expected}")]
    WrongColumnType {
        /// What the column is for.
        role: &'static str,
        /// The column.
        column: String,
        /// What it must be.
        expected: &'static str,
        /// What it is.
        found: &'static str,
    },
    /// A value the spec names does not occur in its column.
    #[error("{role}: {value:?} does not occur in column {column:?}")]
    ValueNotInData {
        /// What the value is for.
        role: &'static str,
        /// The column.
        column: String,
        /// The value.
        value: String,
    },
    /// A list names the same item twice.
    #[error("{role}: {value:?} is listed twice")]
    Duplicate {
        /// Which list.
        role: &'static str,
        /// The item.
        value: String,
    },
    /// A list that must not be empty is.
    #[error("{role}: at least one is needed")]
    Empty {
        /// Which list.
        role: &'static str,
    },
    /// After every filter no record is left.
    #[error(
        "the parameter, filters, treatment levels and visits together leave no record to plot"
    )]
    NoRecordLeft,
    /// The unit disagrees with the data's.
    #[error("unit {given:?} contradicts the data, which records {parameter} in {found}")]
    UnitContradictsData {
        /// The unit in the spec.
        given: String,
        /// The parameter.
        parameter: String,
        /// The data's unit(s).
        found: String,
    },
    /// The title is blank.
    #[error("title: the title cannot be empty")]
    EmptyTitle,
    /// The low-N threshold is 0.
    #[error("low_n_threshold: must be at least 1")]
    ZeroThreshold,
}

fn text<'a>(
    table: &'a Table,
    role: &'static str,
    column: &str,
    errors: &mut Vec<SpecError>,
) -> Option<&'a TextValues> {
    match table.column(column).map(|c| &c.data) {
        None => {
            errors.push(SpecError::UnknownColumn {
                role,
                column: column.to_owned(),
            });
            None
        }
        Some(ColumnData::Character(values)) => Some(values),
        Some(ColumnData::Numeric(_)) => {
            errors.push(SpecError::WrongColumnType {
                role,
                column: column.to_owned(),
                expected: "character",
                found: "numeric",
            });
            None
        }
    }
}

fn check_list(
    role: &'static str,
    column: &str,
    items: &[String],
    present: &HashSet<&str>,
    errors: &mut Vec<SpecError>,
) {
    if items.is_empty() {
        errors.push(SpecError::Empty { role });
    }
    let mut seen = HashSet::new();
    for item in items {
        if !seen.insert(item.as_str()) {
            errors.push(SpecError::Duplicate {
                role,
                value: item.clone(),
            });
        }
        if !present.contains(item.as_str()) {
            errors.push(SpecError::ValueNotInData {
                role,
                column: column.to_owned(),
                value: item.clone(),
            });
        }
    }
}

/// Checks `draft` against `table` (whose raw bytes hash to `content_hash`) and returns it
/// confirmed, or every reason it cannot be.
pub fn confirm_spec(
    draft: &PlotSpec,
    table: &Table,
    content_hash: Sha256Digest,
) -> Result<PlotSpec, Vec<SpecError>> {
    let mut errors = Vec::new();
    if draft.dataset_content_hash != content_hash {
        errors.push(SpecError::OtherDataset {
            spec: draft.dataset_content_hash,
            data: content_hash,
        });
    }
    let parameter = text(table, "parameter", &draft.parameter.column, &mut errors);
    if let Some(codes) = parameter {
        if codes.code_of(&draft.parameter.value).is_none() {
            errors.push(SpecError::ValueNotInData {
                role: "parameter",
                column: draft.parameter.column.clone(),
                value: draft.parameter.value.clone(),
            });
        }
    }
    let mut filters = Vec::new();
    for filter in &draft.filters {
        if let Some(values) = text(table, "filters", &filter.column, &mut errors) {
            let present: HashSet<&str> = values.levels().iter().map(|l| &**l).collect();
            check_list(
                "filters",
                &filter.column,
                &filter.values,
                &present,
                &mut errors,
            );
            filters.push((
                values,
                filter
                    .values
                    .iter()
                    .map(String::as_str)
                    .collect::<HashSet<_>>(),
            ));
        }
    }
    let treatment = text(
        table,
        "treatment_variable",
        &draft.treatment.column,
        &mut errors,
    );
    let present: Option<HashSet<&str>> =
        treatment.map(|t| t.levels().iter().map(|l| &**l).collect());
    // Levels and visits are checked only against a usable column: an unknown column is one error.
    if let Some(present) = &present {
        check_list(
            "treatment_levels",
            &draft.treatment.column,
            &draft.treatment.levels,
            present,
            &mut errors,
        );
    }
    let visits = text(table, "visit_variable", &draft.visit.column, &mut errors);
    let present: Option<HashSet<&str>> =
        visits.map(|v| v.levels().iter().map(|l| l.trim()).collect());
    if let Some(present) = &present {
        check_list(
            "visits",
            &draft.visit.column,
            &draft.visit.visits,
            present,
            &mut errors,
        );
    }
    if let VisitOrderSource::Column { column } = &draft.visit.order_source {
        match table.column(column).map(|c| &c.data) {
            None => errors.push(SpecError::UnknownColumn {
                role: "visit order",
                column: column.clone(),
            }),
            Some(ColumnData::Character(_)) => errors.push(SpecError::WrongColumnType {
                role: "visit order",
                column: column.clone(),
                expected: "numeric",
                found: "character",
            }),
            Some(ColumnData::Numeric(_)) => {}
        }
    }
    match table.column(&draft.value_column).map(|c| &c.data) {
        None => errors.push(SpecError::UnknownColumn {
            role: "value_variable",
            column: draft.value_column.clone(),
        }),
        Some(ColumnData::Character(_)) => errors.push(SpecError::WrongColumnType {
            role: "value_variable",
            column: draft.value_column.clone(),
            expected: "numeric",
            found: "character",
        }),
        Some(ColumnData::Numeric(_)) => {}
    }
    text(table, "subject", &draft.subject_column, &mut errors);
    if draft.title.trim().is_empty() {
        errors.push(SpecError::EmptyTitle);
    }
    if draft.low_n.threshold == 0 {
        errors.push(SpecError::ZeroThreshold);
    }

    // Records left, and the units they carry, once every column is known to be usable.
    if let (Some(codes), Some(treatments), Some(visit_labels)) = (parameter, treatment, visits) {
        let levels: HashSet<&str> = draft.treatment.levels.iter().map(String::as_str).collect();
        let kept_visits: HashSet<&str> = draft.visit.visits.iter().map(String::as_str).collect();
        let kept = |row: usize| {
            codes.get(row) == Some(draft.parameter.value.as_str())
                && treatments.get(row).is_some_and(|t| levels.contains(t))
                && visit_labels
                    .get(row)
                    .is_some_and(|v| kept_visits.contains(v.trim()))
                && filters
                    .iter()
                    .all(|(values, allowed)| values.get(row).is_some_and(|v| allowed.contains(v)))
        };
        let rows: Vec<usize> = (0..table.row_count).filter(|&row| kept(row)).collect();
        if rows.is_empty() && errors.is_empty() {
            errors.push(SpecError::NoRecordLeft);
        }
        if let Some(unit) = &draft.unit {
            let unit_column = ["AVALU", "LBSTRESU", "PARAMU"].iter().find_map(|name| {
                match table.column(name).map(|c| &c.data) {
                    Some(ColumnData::Character(values)) => Some(values),
                    _ => None,
                }
            });
            let labels = match table.column("PARAM").map(|c| &c.data) {
                Some(ColumnData::Character(values)) => Some(values),
                _ => None,
            };
            let mut found: Vec<&str> = rows
                .iter()
                .filter_map(|&row| match unit_column {
                    Some(units) => units.get(row),
                    None => labels.and_then(|l| l.get(row)).and_then(unit_from_label),
                })
                .collect();
            found.sort_unstable();
            found.dedup();
            if !found.is_empty() && found != [unit.as_str()] {
                errors.push(SpecError::UnitContradictsData {
                    given: unit.clone(),
                    parameter: draft.parameter.value.clone(),
                    found: found.join(", "),
                });
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut confirmed = draft.clone();
    confirmed.state = SpecState::Confirmed;
    Ok(confirmed)
}
