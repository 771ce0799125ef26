//! Confirming a draft spec against the dataset it names: every check that needs the data
//! (columns exist and have the right type, levels and visits occur, the filters leave records,
//! the unit agrees), with every failure reported, not just the first. A spec that passes is
//! frozen as `confirmed`.

use std::collections::HashSet;

use crate::ingest::{
    profile::unit_from_label,
    records::{
        record_choice_test, several_records, RecordChoiceError, RecordChoiceTest, SelectionColumns,
    },
    table::{ColumnData, Table, TextValues},
};
use adamviz_model::{
    digest::Sha256Digest,
    spec::{ParameterChoice, PlotSpec, RecordsPerSubjectVisit, SpecState, VisitOrderSource},
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
    /// A question without a proposal has not been answered.
    #[error("{question}: not answered yet ({why})")]
    Unanswered {
        /// The question id.
        question: &'static str,
        /// What the answer decides.
        why: &'static str,
    },
    /// The record choice does not fit the data.
    #[error(transparent)]
    RecordChoice(#[from] RecordChoiceError),
    /// Every record left has a missing value.
    #[error("{value_column} is missing in every one of the {records} records left for {parameter}: there is nothing to plot (a text result? choose a parameter with numbers)")]
    NoValueToPlot {
        /// The value column.
        value_column: String,
        /// The parameter.
        parameter: String,
        /// Records left.
        records: usize,
    },
    /// Several records per subject and visit under a spec that keeps one.
    #[error("records_per_subject_visit: {combinations} subject × visit combinations still have several records, e.g. {}; choose which record to keep (COLUMN=VALUE) or every", examples.join(", "))]
    SeveralRecordsPerSubjectVisit {
        /// How many.
        combinations: usize,
        /// Some of them.
        examples: Vec<String>,
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
    let parameter = check_parameter(draft, table, &mut errors);
    let record_test = check_record_choice(draft, table, &mut errors);
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
        }
    }
    check_treatment_and_visits(draft, table, &mut errors);
    check_value_and_settings(draft, table, &mut errors);
    // Records left, and the units they carry, once every column is known to be usable.
    if let (Some(columns), Some(chosen), Some((record_test, choice))) = (
        SelectionColumns::resolve(draft, table),
        parameter,
        &record_test,
    ) {
        let rows: Vec<usize> = columns
            .rows(table.row_count)
            .into_iter()
            .filter(|&row| record_test.keeps(row))
            .collect();
        check_rows(draft, table, chosen, &rows, &mut errors);
        if choice.requires_one() {
            let (combinations, examples) = several_records(draft, &columns, &rows);
            if combinations > 0 {
                errors.push(SpecError::SeveralRecordsPerSubjectVisit {
                    combinations,
                    examples: examples.into_iter().take(3).collect(),
                });
            }
        }
        if let Some(unit) = &draft.unit {
            check_unit(table, unit, chosen, &rows, &mut errors);
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut confirmed = draft.clone();
    confirmed.state = SpecState::Confirmed;
    Ok(confirmed)
}

/// The chosen parameter, if it is answered and its column is text holding its code.
fn check_parameter<'a>(
    draft: &'a PlotSpec,
    table: &Table,
    errors: &mut Vec<SpecError>,
) -> Option<&'a ParameterChoice> {
    let Some(chosen) = &draft.parameter else {
        errors.push(SpecError::Unanswered {
            question: "parameter",
            why: "which parameter is plotted",
        });
        return None;
    };
    let codes = text(table, "parameter", &chosen.column, errors)?;
    if codes.code_of(&chosen.value).is_none() {
        errors.push(SpecError::ValueNotInData {
            role: "parameter",
            column: chosen.column.clone(),
            value: chosen.value.clone(),
        });
    }
    Some(chosen)
}

/// The record choice and its test, if it is answered and its column is usable.
fn check_record_choice<'a, 't>(
    draft: &'a PlotSpec,
    table: &'t Table,
    errors: &mut Vec<SpecError>,
) -> Option<(RecordChoiceTest<'t>, &'a RecordsPerSubjectVisit)> {
    let Some(choice) = &draft.records_per_subject_visit else {
        errors.push(SpecError::Unanswered {
            question: "records_per_subject_visit",
            why: "which record per subject and visit is plotted",
        });
        return None;
    };
    match record_choice_test(choice, table) {
        Ok(test) => Some((test, choice)),
        Err(error) => {
            errors.push(error.into());
            None
        }
    }
}

/// The treatment and visit columns, their levels and visits (checked only against a usable
/// column: an unknown column is one error), and the visit order column.
fn check_treatment_and_visits(draft: &PlotSpec, table: &Table, errors: &mut Vec<SpecError>) {
    let treatment = &draft.treatment;
    if let Some(values) = text(table, "treatment_variable", &treatment.column, errors) {
        let present: HashSet<&str> = values.levels().iter().map(|l| &**l).collect();
        check_list(
            "treatment_levels",
            &treatment.column,
            &treatment.levels,
            &present,
            errors,
        );
    }
    let visit = &draft.visit;
    if let Some(values) = text(table, "visit_variable", &visit.column, errors) {
        let present: HashSet<&str> = values.levels().iter().map(|l| l.trim()).collect();
        check_list("visits", &visit.column, &visit.visits, &present, errors);
    }
    if let VisitOrderSource::Column { column } = &visit.order_source {
        numeric(table, "visit order", column, errors);
    }
}

/// The value column (numeric), the subject column (text), the title and the threshold.
fn check_value_and_settings(draft: &PlotSpec, table: &Table, errors: &mut Vec<SpecError>) {
    numeric(table, "value_variable", &draft.value_column, errors);
    text(table, "subject", &draft.subject_column, errors);
    if draft.title.trim().is_empty() {
        errors.push(SpecError::EmptyTitle);
    }
    if draft.low_n.threshold == 0 {
        errors.push(SpecError::ZeroThreshold);
    }
}

/// Column `column` exists and is numeric.
fn numeric(table: &Table, role: &'static str, column: &str, errors: &mut Vec<SpecError>) {
    match table.column(column).map(|c| &c.data) {
        None => errors.push(SpecError::UnknownColumn {
            role,
            column: column.to_owned(),
        }),
        Some(ColumnData::Character(_)) => errors.push(SpecError::WrongColumnType {
            role,
            column: column.to_owned(),
            expected: "numeric",
            found: "character",
        }),
        Some(ColumnData::Numeric(_)) => {}
    }
}

/// The selected `rows`: some are left, and some hold a value.
fn check_rows(
    draft: &PlotSpec,
    table: &Table,
    chosen: &ParameterChoice,
    rows: &[usize],
    errors: &mut Vec<SpecError>,
) {
    if rows.is_empty() && errors.is_empty() {
        errors.push(SpecError::NoRecordLeft);
    }
    if let Some(ColumnData::Numeric(values)) = table.column(&draft.value_column).map(|c| &c.data) {
        if !rows.is_empty() && rows.iter().all(|&row| values.value(row).is_none()) {
            errors.push(SpecError::NoValueToPlot {
                value_column: draft.value_column.clone(),
                parameter: chosen.value.clone(),
                records: rows.len(),
            });
        }
    }
}

/// The unit the selected `rows` carry (from a unit column, else the parameter's label) is
/// `unit`.
fn check_unit(
    table: &Table,
    unit: &str,
    chosen: &ParameterChoice,
    rows: &[usize],
    errors: &mut Vec<SpecError>,
) {
    let text_column = |name: &str| match table.column(name).map(|c| &c.data) {
        Some(ColumnData::Character(values)) => Some(values),
        _ => None,
    };
    let unit_column = ["AVALU", "LBSTRESU", "PARAMU"]
        .iter()
        .find_map(|name| text_column(name));
    let labels = text_column("PARAM");
    let mut found: Vec<&str> = rows
        .iter()
        .filter_map(|&row| match unit_column {
            Some(units) => units.get(row),
            None => labels.and_then(|l| l.get(row)).and_then(unit_from_label),
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    if !found.is_empty() && found != [unit] {
        errors.push(SpecError::UnitContradictsData {
            given: unit.to_owned(),
            parameter: chosen.value.clone(),
            found: found.join(", "),
        });
    }
}
