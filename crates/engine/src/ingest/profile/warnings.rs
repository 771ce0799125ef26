//! The profile's reviewer warnings about visits, records and cells: padded visit labels and
//! visits without an order number, several records per subject and visit, a flag filter that
//! would drop baseline, and treatment × visit cells under the low-N threshold.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet;

use super::{
    numeric_column, text_column,
    tuples::{TupleCounts, TupleSet},
    TrimmedLabels, BASELINE_FLAG,
};
use crate::ingest::table::{NumericValues, Table, TextValues};
use adamviz_model::profile::{CandidateRoles, ProfileWarning, EXAMPLE_CAP};

/// The visit columns' warnings: padded labels, visits without an order number, and labels and
/// order numbers that do not pair one to one.
pub(super) fn visit_warnings(
    table: &Table,
    roles: &CandidateRoles,
    warnings: &mut Vec<ProfileWarning>,
) {
    for visit in &roles.visit {
        let Some(labels) = text_column(table, &visit.label) else {
            continue;
        };
        padded_labels(&visit.label, labels, warnings);
        let Some(order_name) = &visit.order else {
            continue;
        };
        let Some(orders) = numeric_column(table, order_name) else {
            continue;
        };
        let trimmed = TrimmedLabels::new(labels);
        let label_order_pairs =
            visits_without_order(&visit.label, order_name, labels, orders, &trimmed, warnings);
        ambiguous_orders(
            &visit.label,
            order_name,
            &label_order_pairs,
            &trimmed,
            warnings,
        );
    }
}

/// Visit labels with leading or trailing blanks.
fn padded_labels(column: &str, labels: &TextValues, warnings: &mut Vec<ProfileWarning>) {
    let padded_codes: Vec<bool> = std::iter::once(false)
        .chain(labels.levels().iter().map(|l| l.trim() != &**l))
        .collect();
    let padded_records = labels
        .codes()
        .iter()
        .filter(|&&code| padded_codes[code as usize])
        .count();
    if padded_records > 0 {
        let examples: BTreeSet<String> = labels
            .levels()
            .iter()
            .filter(|l| l.trim() != &***l)
            .map(|l| format!("{l:?}"))
            .collect();
        warnings.push(ProfileWarning::PaddedVisitLabels {
            column: column.to_owned(),
            records: padded_records,
            examples: examples.into_iter().take(EXAMPLE_CAP).collect(),
        });
    }
}

/// Records whose visit has no order number (a warning), and the distinct (label group, order)
/// pairs of the others.
fn visits_without_order(
    column: &str,
    order_name: &str,
    labels: &TextValues,
    orders: &NumericValues,
    trimmed: &TrimmedLabels<'_>,
    warnings: &mut Vec<ProfileWarning>,
) -> FxHashSet<(u32, u64)> {
    let mut without_order = 0;
    let mut without_order_groups: FxHashSet<u32> = FxHashSet::default();
    let mut label_order_pairs: FxHashSet<(u32, u64)> = FxHashSet::default();
    let mut previous_pair = None;
    for (row, &code) in labels.codes().iter().enumerate() {
        let Some(group) = trimmed.group(code) else {
            continue;
        };
        match orders.value(row) {
            None => {
                without_order += 1;
                without_order_groups.insert(group);
            }
            Some(order) => {
                let pair = (group, order.to_bits());
                if previous_pair != Some(pair) {
                    label_order_pairs.insert(pair);
                    previous_pair = Some(pair);
                }
            }
        }
    }
    if without_order > 0 {
        let examples: BTreeSet<&str> = without_order_groups
            .iter()
            .map(|&g| trimmed.labels[g as usize])
            .collect();
        warnings.push(ProfileWarning::VisitsWithoutOrder {
            column: column.to_owned(),
            order_column: order_name.to_owned(),
            records: without_order,
            examples: examples
                .into_iter()
                .take(EXAMPLE_CAP)
                .map(str::to_owned)
                .collect(),
        });
    }
    label_order_pairs
}

/// A label with several orders and an order with several labels, from the distinct pairs.
fn ambiguous_orders(
    column: &str,
    order_name: &str,
    label_order_pairs: &FxHashSet<(u32, u64)>,
    trimmed: &TrimmedLabels<'_>,
    warnings: &mut Vec<ProfileWarning>,
) {
    // A label with several orders and an order with several labels, found by sorting the
    // distinct (label, order) pairs two ways rather than keeping a set per label and per
    // order (with tens of thousands of visits those sets were most of the profile's time).
    let mut pairs: Vec<(&str, u64)> = label_order_pairs
        .iter()
        .map(|&(group, order)| (trimmed.labels[group as usize], order))
        .collect();
    pairs.sort_unstable();
    for run in pairs
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|run| run.len() > 1)
    {
        let mut orders: Vec<f64> = run
            .iter()
            .map(|&(_, order)| f64::from_bits(order))
            .collect();
        orders.sort_by(f64::total_cmp);
        warnings.push(ProfileWarning::VisitLabelWithSeveralOrders {
            column: column.to_owned(),
            label: run[0].0.to_owned(),
            orders,
        });
    }
    pairs.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
    let mut several: Vec<(f64, &[(&str, u64)])> = pairs
        .chunk_by(|a, b| a.1 == b.1)
        .filter(|run| run.len() > 1)
        .map(|run| (f64::from_bits(run[0].1), run))
        .collect();
    several.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (order, labels) in several {
        warnings.push(ProfileWarning::OrderWithSeveralVisitLabels {
            order_column: order_name.to_owned(),
            order,
            labels: labels.iter().map(|&(label, _)| label.to_owned()).collect(),
        });
    }
}

/// The text columns that key a record: parameter code, subject, visit label (trimmed).
struct RecordKeys<'a> {
    codes: &'a TextValues,
    subjects: &'a TextValues,
    visits: &'a TextValues,
    visit_groups: TrimmedLabels<'a>,
}

impl RecordKeys<'_> {
    /// Parameter code, subject code and visit group of `row`, when none is missing.
    fn of(&self, row: usize) -> Option<(u32, u32, u32)> {
        let (code, subject) = (self.codes.code(row), self.subjects.code(row));
        let visit = self.visit_groups.group(self.visits.code(row))?;
        (code != 0 && subject != 0).then_some((code, subject, visit))
    }

    /// Sizes of the code spaces of (parameter, subject, visit group).
    fn dims(&self) -> [usize; 3] {
        [
            self.codes.levels().len() + 1,
            self.subjects.levels().len() + 1,
            self.visit_groups.labels.len(),
        ]
    }

    fn code(&self, code: u32) -> &str {
        self.codes.level(code).unwrap_or_default()
    }

    fn subject(&self, subject: u32) -> &str {
        self.subjects.level(subject).unwrap_or_default()
    }

    fn visit(&self, group: u32) -> &str {
        self.visit_groups.labels[group as usize]
    }
}

fn record_keys<'a>(table: &'a Table, roles: &CandidateRoles) -> Option<RecordKeys<'a>> {
    let visits = text_column(table, &roles.visit.first()?.label)?;
    Some(RecordKeys {
        codes: text_column(table, roles.parameter_code.first()?)?,
        subjects: text_column(table, roles.subject.first()?)?,
        visits,
        visit_groups: TrimmedLabels::new(visits),
    })
}

pub(super) fn duplicate_record_warnings(
    table: &Table,
    roles: &CandidateRoles,
    warnings: &mut Vec<ProfileWarning>,
) {
    let Some(keys) = record_keys(table, roles) else {
        return;
    };
    let mut counts = TupleCounts::new(keys.dims());
    for row in 0..table.row_count {
        if let Some((code, subject, visit)) = keys.of(row) {
            counts.add([code, subject, visit]);
        }
    }
    let mut by_parameter: BTreeMap<&str, Vec<(&str, &str, usize)>> = BTreeMap::new();
    for ([code, subject, visit], n) in counts.iter() {
        if n > 1 {
            by_parameter.entry(keys.code(code)).or_default().push((
                keys.subject(subject),
                keys.visit(visit),
                n,
            ));
        }
    }
    for (parameter, mut combos) in by_parameter {
        combos.sort_unstable();
        warnings.push(ProfileWarning::SeveralRecordsPerSubjectVisit {
            parameter: parameter.to_owned(),
            combinations: combos.len(),
            examples: combos
                .iter()
                .take(EXAMPLE_CAP)
                .map(|(s, v, n)| format!("{s} / {v} ({n} records)"))
                .collect(),
        });
    }
}

pub(super) fn baseline_flag_warnings(
    table: &Table,
    roles: &CandidateRoles,
    warnings: &mut Vec<ProfileWarning>,
) {
    let Some(baseline) = text_column(table, BASELINE_FLAG) else {
        return;
    };
    let Some(yes) = baseline.code_of("Y") else {
        return;
    };
    let baseline_rows: Vec<usize> = (0..table.row_count)
        .filter(|&row| baseline.code(row) == yes)
        .collect();
    for flag in roles.record_flags.iter().filter(|f| *f != BASELINE_FLAG) {
        let Some(values) = text_column(table, flag) else {
            continue;
        };
        let flag_yes = values.code_of("Y");
        if baseline_rows
            .iter()
            .all(|&row| Some(values.code(row)) != flag_yes)
        {
            warnings.push(ProfileWarning::FlagRemovesBaseline {
                flag: flag.clone(),
                baseline_flag: BASELINE_FLAG.to_owned(),
                baseline_records: baseline_rows.len(),
            });
        }
    }
}

pub(super) fn low_n_warnings(
    table: &Table,
    roles: &CandidateRoles,
    threshold: usize,
    warnings: &mut Vec<ProfileWarning>,
) {
    let Some(keys) = record_keys(table, roles) else {
        return;
    };
    let Some(treatments) = roles.treatment.first().and_then(|t| text_column(table, t)) else {
        return;
    };
    let Some(values) = roles.value.first().and_then(|v| numeric_column(table, v)) else {
        return;
    };
    // Distinct (parameter, treatment, visit, subject) first, then subjects per cell.
    let [code_levels, subject_levels, visit_groups] = keys.dims();
    let treatment_levels = treatments.levels().len() + 1;
    let mut present = TupleSet::new([code_levels, treatment_levels, visit_groups, subject_levels]);
    for row in 0..table.row_count {
        if values.value(row).is_none() {
            continue;
        }
        let treatment = treatments.code(row);
        if let (Some((code, subject, visit)), true) = (keys.of(row), treatment != 0) {
            present.insert([code, treatment, visit, subject]);
        }
    }
    let mut subjects_per_cell = TupleCounts::new([code_levels, treatment_levels, visit_groups]);
    for [code, treatment, visit, _] in present.iter() {
        subjects_per_cell.add([code, treatment, visit]);
    }
    // The cells in (parameter, treatment, visit) order, one sort rather than a map per
    // parameter; the examples are the first low cells of each parameter.
    let mut cells: Vec<(&str, &str, &str, usize)> = subjects_per_cell
        .iter()
        .map(|([code, treatment, visit], n)| {
            (
                keys.code(code),
                treatments.level(treatment).unwrap_or_default(),
                keys.visit(visit),
                n,
            )
        })
        .collect();
    cells.sort_unstable();
    for by_cell in cells.chunk_by(|a, b| a.0 == b.0) {
        let mut low = by_cell
            .iter()
            .filter(|&&(_, _, _, subjects)| subjects < threshold)
            .peekable();
        if low.peek().is_none() {
            continue;
        }
        let examples = low
            .clone()
            .take(EXAMPLE_CAP)
            .map(|(_, treatment, visit, subjects)| format!("{treatment} / {visit}: {subjects}"))
            .collect();
        warnings.push(ProfileWarning::LowNCells {
            parameter: by_cell[0].0.to_owned(),
            threshold,
            cells: low.count(),
            examples,
        });
    }
}
