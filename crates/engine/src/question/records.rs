//! The records a spec selects, counted per subject and visit: which rows the parameter, filters,
//! treatment levels and visits keep; the record choice applied on top ("Which record per subject
//! and visit?"); and the analysis that finds the columns telling several records of one subject
//! at one visit apart, with what each way of keeping one would do. Confirmation, the snapshot
//! and the draft share these, so they cannot disagree on what is selected.

use std::collections::{BTreeMap, HashMap};

use crate::domain::{
    profile::EXAMPLE_CAP,
    records::{RecordOption, RecordsAnalysis},
    spec::{PlotSpec, RecordsPerSubjectVisit},
};
use crate::ingest::table::{ColumnData, Table, TextValues};

/// A column is offered as telling records apart only if it has at most this many distinct
/// values among the duplicated records (a time stamp or a sequence number is not a choice).
const MAX_VALUES_PER_COLUMN: usize = 12;

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
    let mut options = selection.options(table);
    // Analysis flags first, then the options that settle most.
    options.sort_by_key(|o| {
        (
            !is_analysis_flag(o.answer.split('=').next().unwrap_or_default()),
            o.still_several,
            o.baseline_lost,
            o.subject_visits_lost,
        )
    });
    options.push(RecordOption {
        answer: "every".to_owned(),
        description: format!(
            "keep every record ({} records): boxes pool several records of a subject, N counts records as well as subjects, and the plot says so",
            rows.len()
        ),
        resolves: 0,
        still_several: with_several,
        subject_visits_lost: 0,
        baseline_lost: 0,
    });
    let (proposal, why) = propose(&options);
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

/// The selection being analysed: its rows and how many records each subject × visit has.
struct Selection<'a> {
    spec: &'a PlotSpec,
    columns: &'a SelectionColumns<'a>,
    rows: &'a [usize],
    counts: &'a HashMap<(u32, u32, u32), u32>,
}

impl Selection<'_> {
    /// One option per value of every text column that tells the records of one subject at one
    /// visit apart (the spec's own columns aside).
    fn options(&self, table: &Table) -> Vec<RecordOption> {
        let spec = self.spec;
        let role_columns: Vec<&str> = [
            spec.subject_column.as_str(),
            spec.treatment.column.as_str(),
            spec.visit.column.as_str(),
        ]
        .into_iter()
        .chain(spec.parameter.as_ref().map(|p| p.column.as_str()))
        .chain(spec.filters.iter().map(|f| f.column.as_str()))
        .collect();
        let duplicated_rows: Vec<usize> = self
            .rows
            .iter()
            .copied()
            .filter(|&row| self.counts[&self.columns.key(row)] > 1)
            .collect();
        let mut options = Vec::new();
        for column in &table.columns {
            let ColumnData::Character(values) = &column.data else {
                continue;
            };
            if role_columns.contains(&column.name.as_str()) || column.name == "PARAM" {
                continue;
            }
            let Some(distinct) = self.telling_apart(values, &duplicated_rows) else {
                continue;
            };
            // One option per value; blank levels and missing are one "blank" option.
            let mut seen_values: Vec<String> = Vec::new();
            for code in distinct {
                let value = values.level(code).unwrap_or_default().trim().to_owned();
                if seen_values.contains(&value) {
                    continue;
                }
                options.push(self.option(&column.name, values, &value));
                seen_values.push(value);
            }
        }
        options
    }

    /// The codes the column takes among the duplicated records (first appearance first), when
    /// its value varies within one subject × visit and it has few enough values to be a choice.
    fn telling_apart(&self, values: &TextValues, duplicated_rows: &[usize]) -> Option<Vec<u32>> {
        let mut distinct: Vec<u32> = Vec::new();
        let mut first_code: HashMap<(u32, u32, u32), u32> = HashMap::new();
        let mut varies = false;
        for &row in duplicated_rows {
            let code = values.code(row);
            if !distinct.contains(&code) {
                distinct.push(code);
            }
            let first = *first_code.entry(self.columns.key(row)).or_insert(code);
            varies |= first != code;
            if distinct.len() > MAX_VALUES_PER_COLUMN {
                return None;
            }
        }
        varies.then_some(distinct)
    }

    /// What keeping only the records where `column` is `value` would do.
    fn option(&self, column: &str, values: &TextValues, value: &str) -> RecordOption {
        let kept = codes_matching(values, value);
        let after = records_per_key(
            self.columns,
            &self
                .rows
                .iter()
                .copied()
                .filter(|&row| kept[values.code(row) as usize])
                .collect::<Vec<_>>(),
        );
        let is_baseline = |visit: u32| {
            self.spec
                .visit
                .visits
                .get(visit as usize)
                .is_some_and(|v| v.eq_ignore_ascii_case("baseline"))
        };
        let mut option = RecordOption {
            answer: format!("{column}={value}"),
            description: String::new(),
            resolves: 0,
            still_several: 0,
            subject_visits_lost: 0,
            baseline_lost: 0,
        };
        for (key, before) in self.counts {
            match after.get(key).copied().unwrap_or(0) {
                0 => {
                    option.subject_visits_lost += 1;
                    option.baseline_lost += usize::from(is_baseline(key.2));
                }
                1 => option.resolves += usize::from(*before > 1),
                _ => option.still_several += 1,
            }
        }
        let kept_records: usize = after.values().map(|n| *n as usize).sum();
        option.description = describe_option(column, value, kept_records, &option);
        option
    }
}

/// The proposed record choice among `options` and why: an analysis flag = Y that settles it,
/// else DTYPE = AVERAGE, else none.
fn propose(options: &[RecordOption]) -> (Option<RecordsPerSubjectVisit>, String) {
    let settling_with = |column_test: fn(&str) -> bool, wanted: &str| {
        options.iter().find(|o| {
            o.settles_it()
                && matches!(o.answer.split_once('='), Some((c, v)) if column_test(c) && v == wanted)
        })
    };
    let (proposal, why) = if let Some(flag) = settling_with(is_analysis_flag, "Y") {
        (
            Some(flag.answer.clone()),
            format!("Proposed: {}, an analysis flag that leaves one record per subject and visit without dropping baseline.", flag.answer),
        )
    } else if let Some(average) = settling_with(|c| c == "DTYPE", "AVERAGE") {
        (
            Some(average.answer.clone()),
            format!("Proposed: {}, the derived average, which leaves one record per subject and visit without dropping baseline (no analysis flag does).", average.answer),
        )
    } else {
        (
            None,
            "Nothing is proposed: no analysis flag (ANLxxFL = Y) and no DTYPE = AVERAGE leaves one record per subject and visit without dropping baseline; choose one.".to_owned(),
        )
    };
    let proposal = proposal.map(|answer| {
        let (column, value) = answer.split_once('=').unwrap_or_default();
        RecordsPerSubjectVisit::OneWhere {
            column: column.to_owned(),
            value: value.to_owned(),
        }
    });
    (proposal, why)
}

/// "ATPT = STANDING 1 MIN: keeps 255 records; 3 subject × visits still have several; 2 lose
/// every record (1 baseline)".
fn describe_option(column: &str, value: &str, kept: usize, option: &RecordOption) -> String {
    let shown = if value.is_empty() {
        format!("{column} blank")
    } else {
        format!("{column} = {value}")
    };
    let mut text = format!("{shown}: keeps {kept} records");
    if option.still_several == 0 {
        text.push_str(", one per subject and visit");
    } else {
        text.push_str(&format!(
            "; {} subject × visits still have several",
            option.still_several
        ));
    }
    if option.subject_visits_lost > 0 {
        text.push_str(&format!(
            "; {} subject × visits lose every record",
            option.subject_visits_lost
        ));
        if option.baseline_lost > 0 {
            text.push_str(&format!(" ({} at baseline)", option.baseline_lost));
        }
    }
    text
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
