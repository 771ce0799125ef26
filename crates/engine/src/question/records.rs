//! The records a spec selects, counted per subject and visit: which rows the parameter, filters,
//! treatment levels and visits keep; the record choice applied on top ("Which record per subject
//! and visit?"); and the analysis that finds the columns telling several records of one subject
//! at one visit apart, with what each way of keeping one would do (`choices`: one option per
//! set of records kept). Confirmation, the snapshot and the draft share these, so they cannot
//! disagree on what is selected.

use std::collections::{BTreeMap, HashMap};

use crate::ingest::table::{ColumnData, Table, TextValues};
use adamviz_model::{
    profile::EXAMPLE_CAP,
    records::{RecordOption, RecordsAnalysis},
    spec::{PlotSpec, RecordsPerSubjectVisit},
};

mod choices;
#[cfg(test)]
mod tests;

use choices::{propose, Selection};

/// The examples quoted in the question.
const QUOTED_EXAMPLES: usize = 3;

fn text<'a>(table: &'a Table, name: &str) -> Option<&'a TextValues> {
    match table.column(name).map(|c| &c.data) {
        Some(ColumnData::Character(values)) => Some(values),
        _ => None,
    }
}

/// Per code of `values` (0 = missing): whether the row is kept when `wanted` is the value
/// (compared blank-trimmed; an empty `wanted` keeps missing and blank cells).
fn codes_matching(values: &TextValues, wanted: &str) -> Vec<bool> {
    let wanted = wanted.trim();
    std::iter::once(wanted.is_empty())
        .chain(values.levels().iter().map(|level| level.trim() == wanted))
        .collect()
}

/// Which rows a record choice keeps.
pub enum RecordChoiceTest<'a> {
    /// Every row (`one` and `every` keep the selection as it is).
    All,
    /// Rows whose column holds the value.
    Where {
        /// The column's values.
        values: &'a TextValues,
        /// Per code, kept or not.
        kept: Vec<bool>,
    },
}

impl RecordChoiceTest<'_> {
    /// Whether `row` is kept.
    pub fn keeps(&self, row: usize) -> bool {
        match self {
            Self::All => true,
            Self::Where { values, kept } => kept[values.code(row) as usize],
        }
    }
}

/// Why a record choice cannot be applied to a table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordChoiceError {
    /// The column is not a text column of the table.
    #[error("records_per_subject_visit: there is no text column {0:?} in the dataset")]
    UnknownColumn(String),
    /// The value does not occur.
    #[error("records_per_subject_visit: {value:?} does not occur in column {column:?}")]
    ValueNotInData {
        /// The column.
        column: String,
        /// The value.
        value: String,
    },
}

/// The row test of `choice` over `table`.
pub fn record_choice_test<'a>(
    choice: &RecordsPerSubjectVisit,
    table: &'a Table,
) -> Result<RecordChoiceTest<'a>, RecordChoiceError> {
    let RecordsPerSubjectVisit::OneWhere { column, value } = choice else {
        return Ok(RecordChoiceTest::All);
    };
    let values =
        text(table, column).ok_or_else(|| RecordChoiceError::UnknownColumn(column.clone()))?;
    let kept = codes_matching(values, value);
    let occurs = values.codes().iter().any(|&code| kept[code as usize]);
    if !occurs {
        return Err(RecordChoiceError::ValueNotInData {
            column: column.clone(),
            value: value.clone(),
        });
    }
    Ok(RecordChoiceTest::Where { values, kept })
}

/// The columns a selection reads, resolved against the table.
pub struct SelectionColumns<'a> {
    codes: &'a TextValues,
    subjects: &'a TextValues,
    treatments: &'a TextValues,
    visits: &'a TextValues,
    filters: Vec<(&'a TextValues, Vec<bool>)>,
    /// Per treatment code: kept or not.
    treatment_kept: Vec<bool>,
    /// Per visit code: the index of its (trimmed) label among the spec's visits.
    visit_index: Vec<Option<u32>>,
    parameter_code: u32,
}

impl<'a> SelectionColumns<'a> {
    /// The columns of `spec` in `table`; `None` when the spec has no parameter or a column is
    /// missing or not text (confirmation reports those one by one).
    pub fn resolve(spec: &PlotSpec, table: &'a Table) -> Option<Self> {
        let parameter = spec.parameter.as_ref()?;
        let codes = text(table, &parameter.column)?;
        let treatments = text(table, &spec.treatment.column)?;
        let visits = text(table, &spec.visit.column)?;
        let filters = spec
            .filters
            .iter()
            .map(|f| {
                let values = text(table, &f.column)?;
                let kept = std::iter::once(false)
                    .chain(
                        values
                            .levels()
                            .iter()
                            .map(|level| f.values.iter().any(|v| **v == **level)),
                    )
                    .collect();
                Some((values, kept))
            })
            .collect::<Option<Vec<_>>>()?;
        let treatment_kept = std::iter::once(false)
            .chain(
                treatments
                    .levels()
                    .iter()
                    .map(|level| spec.treatment.levels.iter().any(|l| **l == **level)),
            )
            .collect();
        let visit_index = std::iter::once(None)
            .chain(visits.levels().iter().map(|level| {
                spec.visit
                    .visits
                    .iter()
                    .position(|v| v == level.trim())
                    .map(|i| i as u32)
            }))
            .collect();
        Some(Self {
            codes,
            subjects: text(table, &spec.subject_column)?,
            treatments,
            visits,
            filters,
            treatment_kept,
            visit_index,
            parameter_code: codes.code_of(&parameter.value).unwrap_or(u32::MAX),
        })
    }

    /// Whether `row` is selected (parameter, filters, treatment level, visit; a record without
    /// a subject is not).
    pub fn selects(&self, row: usize) -> bool {
        self.codes.code(row) == self.parameter_code
            && self.treatment_kept[self.treatments.code(row) as usize]
            && self.visit_index[self.visits.code(row) as usize].is_some()
            && self.subjects.code(row) != 0
            && self
                .filters
                .iter()
                .all(|(values, kept)| kept[values.code(row) as usize])
    }

    /// Every selected row, in table order.
    pub fn rows(&self, row_count: usize) -> Vec<usize> {
        (0..row_count).filter(|&row| self.selects(row)).collect()
    }

    /// The subject × treatment × visit a row belongs to.
    fn key(&self, row: usize) -> (u32, u32, u32) {
        (
            self.subjects.code(row),
            self.treatments.code(row),
            self.visit_index[self.visits.code(row) as usize].unwrap_or(u32::MAX),
        )
    }
}

/// Records per subject × visit among `rows` (a subject × visit is counted within its treatment
/// level, as the cells are).
fn records_per_key(
    columns: &SelectionColumns<'_>,
    rows: &[usize],
) -> HashMap<(u32, u32, u32), u32> {
    let mut counts: HashMap<(u32, u32, u32), u32> = HashMap::new();
    for &row in rows {
        *counts.entry(columns.key(row)).or_default() += 1;
    }
    counts
}

/// Subject × visit combinations with several records among `rows`: how many, and some as
/// "subject / visit: n records".
pub fn several_records(
    spec: &PlotSpec,
    columns: &SelectionColumns<'_>,
    rows: &[usize],
) -> (usize, Vec<String>) {
    let counts = records_per_key(columns, rows);
    let mut several: Vec<(&(u32, u32, u32), &u32)> =
        counts.iter().filter(|(_, n)| **n > 1).collect();
    several.sort();
    let examples = several
        .iter()
        .take(EXAMPLE_CAP)
        .map(|((subject, _, visit), n)| {
            format!(
                "{} / {}: {n} records",
                columns.subjects.level(*subject).unwrap_or_default(),
                spec.visit
                    .visits
                    .get(*visit as usize)
                    .map(String::as_str)
                    .unwrap_or_default()
            )
        })
        .collect();
    (several.len(), examples)
}

fn is_analysis_flag(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() == 7
        && name.starts_with("ANL")
        && name.ends_with("FL")
        && bytes[3].is_ascii_digit()
        && bytes[4].is_ascii_digit()
}

/// What the selection of `spec` holds per subject and visit, the ways to keep one record each,
/// and the proposal (see [`RecordsAnalysis`]).
pub fn analyse_records(spec: &PlotSpec, table: &Table) -> RecordsAnalysis {
    let Some(columns) = SelectionColumns::resolve(spec, table) else {
        let mut unknown = RecordsAnalysis::one_each(0, 0);
        unknown.why = if spec.parameter.is_none() {
            "not known until the parameter is chosen; confirmation checks it then".to_owned()
        } else {
            "not known: a column of the spec is not in the data".to_owned()
        };
        return unknown;
    };
    let rows = columns.rows(table.row_count);
    let counts = records_per_key(&columns, &rows);
    let (with_several, examples) = several_records(spec, &columns, &rows);
    if with_several == 0 {
        return RecordsAnalysis::one_each(counts.len(), rows.len());
    }
    let selection = Selection {
        spec,
        columns: &columns,
        rows: &rows,
        counts: &counts,
    };
    let mut options = selection.grouped_options(table);
    // The options that settle most first; a stable sort, so ties keep the order found (table
    // column order, then values in order of first appearance). The proposal is looked for in
    // this order.
    options.sort_by_key(|o| (o.still_several, o.baseline_lost, o.subject_visits_lost));
    let (proposal, why) = propose(&options);
    // The proposal leads; `every` comes last.
    if let Some(RecordsPerSubjectVisit::OneWhere { column, value }) = &proposal {
        let answer = format!("{column}={value}");
        if let Some(index) = options.iter().position(|o| o.answer == answer) {
            let proposed = options.remove(index);
            options.insert(0, proposed);
        }
    }
    options.push(RecordOption {
        answer: "every".to_owned(),
        description: format!(
            "keep every record ({} records): boxes pool several records of a subject, N counts records as well as subjects, and the plot says so",
            rows.len()
        ),
        aliases: Vec::new(),
        resolves: 0,
        still_several: with_several,
        subject_visits_lost: 0,
        baseline_lost: 0,
    });
    RecordsAnalysis {
        subject_visits: counts.len(),
        with_several,
        records: rows.len(),
        examples: examples.into_iter().take(QUOTED_EXAMPLES).collect(),
        options,
        proposal,
        why,
    }
}

/// Records with a value per visit of the spec (before any record choice): visits a draft
/// should not propose have none.
pub fn values_per_visit(spec: &PlotSpec, table: &Table) -> BTreeMap<String, usize> {
    let mut per_visit = BTreeMap::new();
    let (Some(columns), Some(ColumnData::Numeric(values))) = (
        SelectionColumns::resolve(spec, table),
        table.column(&spec.value_column).map(|c| &c.data),
    ) else {
        return per_visit;
    };
    for row in columns.rows(table.row_count) {
        if values.value(row).is_some() {
            let visit = columns.visit_index[columns.visits.code(row) as usize].unwrap_or_default();
            *per_visit
                .entry(spec.visit.visits[visit as usize].clone())
                .or_default() += 1;
        }
    }
    per_visit
}
