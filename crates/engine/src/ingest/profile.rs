//! Profiling a table: column facts, candidate roles, per-parameter units and reviewer warnings
//! (see `adamviz_model::profile` for the shapes). Pure: a table in, a profile out.

//!
//! Text columns are dictionary-encoded (see `table::TextValues`), so the per-row work here counts
//! small integer codes; strings are looked at once per distinct value.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap, FxHashSet};

mod treatment_order;
mod tuples;
mod warnings;

use treatment_order::treatment_levels;
use tuples::TupleSet;
use warnings::{baseline_flag_warnings, duplicate_record_warnings, low_n_warnings, visit_warnings};

use super::{
    sas_dates::{temporal_kind, to_iso8601, Temporal},
    table::{Column, ColumnData, NumericValues, Table, TextValues},
};
use adamviz_model::{
    digest::Sha256Digest,
    profile::{
        CandidateRoles, ColumnKind, ColumnProfile, DatasetProfile, ParameterProfile,
        ProfileWarning, UnitSource, VisitCandidate, VisitLevel, VisitsOf, DISTINCT_CAP,
        EXAMPLE_CAP,
    },
};

const SUBJECT: [&str; 2] = ["USUBJID", "SUBJID"];
const TREATMENT: [&str; 8] = [
    "TRTA", "TRTP", "TRT01A", "TRT01P", "ACTARM", "ARM", "TRT02A", "TRT02P",
];
const VISIT: [(&str, &str); 3] = [
    ("AVISIT", "AVISITN"),
    ("VISIT", "VISITNUM"),
    ("ATPT", "ATPTN"),
];
const VALUE: [&str; 4] = ["AVAL", "CHG", "PCHG", "BASE"];
const UNIT: [&str; 3] = ["AVALU", "LBSTRESU", "PARAMU"];
const POPULATION_FLAGS: [&str; 12] = [
    "SAFFL", "ITTFL", "EFFFL", "FASFL", "PPROTFL", "RANDFL", "ENRLFL", "COMPLFL", "COMP8FL",
    "COMP16FL", "COMP24FL", "PKFL",
];
const BASELINE_FLAG: &str = "ABLFL";

/// Text of a numeric value as shown to people: ISO 8601 for SAS dates, else shortest form.
fn show_number(value: f64, temporal: Option<Temporal>) -> String {
    temporal
        .and_then(|kind| to_iso8601(kind, value))
        .unwrap_or_else(|| format!("{value}"))
}

fn profile_column(column: &Column) -> ColumnProfile {
    let temporal = column.format.as_deref().and_then(temporal_kind);
    let mut examples = Vec::new();
    let (kind, missing, distinct, capped, min, max) = match &column.data {
        ColumnData::Character(values) => {
            let levels = values.levels();
            examples.extend(levels.iter().take(EXAMPLE_CAP).map(|l| l.to_string()));
            let missing = values.codes().iter().filter(|&&code| code == 0).count();
            (
                ColumnKind::Character,
                missing,
                levels.len().min(DISTINCT_CAP),
                levels.len() > DISTINCT_CAP,
                None,
                None,
            )
        }
        ColumnData::Numeric(cells) => {
            let mut seen: FxHashSet<u64> = FxHashSet::default();
            let mut capped = false;
            let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
            let mut missing = 0;
            // Values seen lately, by a hash of their bits: sorted data repeats values row
            // after row or cycles through a few (visits, days), and a hit here, which is a
            // value already in `seen`, spares the set lookup. Never a key: all ones is a NaN.
            let mut recent = [u64::MAX; 256];
            for value in cells.values() {
                let Some(value) = value else {
                    missing += 1;
                    continue;
                };
                min = min.min(value);
                max = max.max(value);
                // +0.0 and -0.0 are one value.
                let key = if value == 0.0 { 0 } else { value.to_bits() };
                let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize;
                if capped || recent[slot] == key {
                    continue;
                }
                recent[slot] = key;
                if seen.len() >= DISTINCT_CAP && !seen.contains(&key) {
                    capped = true;
                    continue;
                }
                if seen.insert(key) && examples.len() < EXAMPLE_CAP {
                    examples.push(show_number(value, temporal));
                }
            }
            let present = missing < cells.len();
            (
                ColumnKind::Numeric,
                missing,
                seen.len(),
                capped,
                present.then_some(min),
                present.then_some(max),
            )
        }
    };
    ColumnProfile {
        name: column.name.clone(),
        label: column.label.clone(),
        kind,
        format: column.format.clone(),
        length: column.declared.length,
        data_type: column.declared.data_type.clone(),
        temporal: temporal.map(|t| {
            match t {
                Temporal::Date => "date",
                Temporal::Datetime => "datetime",
                Temporal::Time => "time",
            }
            .to_owned()
        }),
        missing,
        distinct,
        distinct_capped: capped,
        min,
        max,
        examples,
    }
}

fn text_column<'a>(table: &'a Table, name: &str) -> Option<&'a TextValues> {
    match &table.column(name)?.data {
        ColumnData::Character(values) => Some(values),
        ColumnData::Numeric(_) => None,
    }
}

fn numeric_column<'a>(table: &'a Table, name: &str) -> Option<&'a NumericValues> {
    match &table.column(name)?.data {
        ColumnData::Numeric(cells) => Some(cells),
        ColumnData::Character(_) => None,
    }
}

fn candidate_roles(table: &Table) -> CandidateRoles {
    let present_text = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .filter(|name| text_column(table, name).is_some())
            .map(|name| (*name).to_owned())
            .collect()
    };
    let flags: Vec<&str> = table
        .columns
        .iter()
        .filter(|c| c.name.ends_with("FL") && matches!(c.data, ColumnData::Character(_)))
        .map(|c| c.name.as_str())
        .collect();
    CandidateRoles {
        subject: present_text(&SUBJECT),
        treatment: present_text(&TREATMENT),
        visit: VISIT
            .iter()
            .filter(|(label, _)| text_column(table, label).is_some())
            .map(|(label, order)| VisitCandidate {
                label: (*label).to_owned(),
                order: numeric_column(table, order).map(|_| (*order).to_owned()),
            })
            .collect(),
        parameter_code: present_text(&["PARAMCD"]),
        parameter_label: present_text(&["PARAM"]),
        value: VALUE
            .iter()
            .filter(|name| numeric_column(table, name).is_some())
            .map(|name| (*name).to_owned())
            .collect(),
        unit: present_text(&UNIT),
        population_flags: flags
            .iter()
            .filter(|f| POPULATION_FLAGS.contains(f))
            .map(|f| (*f).to_owned())
            .collect(),
        record_flags: flags
            .iter()
            .filter(|f| !POPULATION_FLAGS.contains(f))
            .map(|f| (*f).to_owned())
            .collect(),
    }
}

/// The trailing "(unit)" of a parameter label, e.g. `U/L` of "Alanine Aminotransferase (U/L)".
pub fn unit_from_label(label: &str) -> Option<&str> {
    let inner = label.trim_end().strip_suffix(')')?;
    let open = inner.rfind('(')?;
    let unit = inner[open + 1..].trim();
    (!unit.is_empty()).then_some(unit)
}

/// Profiles `table`, whose raw bytes hash to `content_hash`; `low_n_threshold` decides which
/// treatment × visit cells are reported as low N.
pub fn profile_table(
    table: &Table,
    content_hash: Sha256Digest,
    low_n_threshold: usize,
) -> DatasetProfile {
    // Column facts on a second thread while the roles and warnings are worked out here; this
    // thread then helps with the columns left. Each thread takes the next column not yet taken.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let take_columns = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(column) = table.columns.get(index) else {
                return done;
            };
            done.push((index, profile_column(column)));
        }
    };
    std::thread::scope(|scope| {
        let helper = scope.spawn(take_columns);
        let mut profile = profile_roles_and_warnings(table, content_hash, low_n_threshold);
        let mut columns = take_columns();
        columns.extend(helper.join().expect("column profiling does not panic"));
        columns.sort_by_key(|(index, _)| *index);
        profile.columns = columns.into_iter().map(|(_, column)| column).collect();
        profile
    })
}

/// Everything but the column facts.
fn profile_roles_and_warnings(
    table: &Table,
    content_hash: Sha256Digest,
    low_n_threshold: usize,
) -> DatasetProfile {
    let roles = candidate_roles(table);
    let mut warnings = Vec::new();
    let parameters = parameter_profiles(table, &roles, &mut warnings);
    visit_warnings(table, &roles, &mut warnings);
    duplicate_record_warnings(table, &roles, &mut warnings);
    baseline_flag_warnings(table, &roles, &mut warnings);
    low_n_warnings(table, &roles, low_n_threshold, &mut warnings);
    let derived: Vec<String> = parameters
        .iter()
        .filter(|p| p.derived_looking)
        .map(|p| p.code.clone())
        .collect();
    if !derived.is_empty() {
        warnings.push(ProfileWarning::DerivedLookingParameters { codes: derived });
    }
    if table.source_format == super::table::SourceFormat::XptV8 {
        warnings.push(ProfileWarning::XportVersion8);
    }
    DatasetProfile {
        content_hash,
        source_format: table.source_format.as_str().to_owned(),
        dataset_name: table.dataset_name.clone(),
        dataset_label: table.dataset_label.clone(),
        row_count: table.row_count,
        columns: Vec::new(),
        treatment_levels: roles
            .treatment
            .iter()
            .filter_map(|column| treatment_levels(table, column))
            .collect(),
        visit_levels: roles
            .visit
            .iter()
            .filter_map(|visit| visit_levels(table, visit))
            .collect(),
        roles,
        parameters,
        warnings,
    }
}

/// Numeric order with missing values last: how levels and visits are ordered everywhere.
pub fn order_missing_last(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

/// Keeps the smallest non-missing order value seen.
fn keep_smallest(current: &mut Option<f64>, order: Option<f64>) {
    if let Some(order) = order {
        *current = Some(current.map_or(order, |c| c.min(order)));
    }
}

/// A text column's values with surrounding blanks trimmed: several codes can share one trimmed
/// label ("Week 2" and "Week 2 "), so visits are grouped by these.
struct TrimmedLabels<'a> {
    /// Distinct trimmed labels, in order of first appearance.
    labels: Vec<&'a str>,
    /// For each code (0 = missing), its label's index in `labels`; `u32::MAX` for missing.
    group_of_code: Vec<u32>,
}

impl<'a> TrimmedLabels<'a> {
    fn new(values: &'a TextValues) -> Self {
        let mut index: FxHashMap<&str, u32> = FxHashMap::default();
        let mut labels = Vec::new();
        let mut group_of_code = vec![u32::MAX];
        for level in values.levels() {
            let trimmed = level.trim();
            let group = *index.entry(trimmed).or_insert_with(|| {
                labels.push(trimmed);
                labels.len() as u32 - 1
            });
            group_of_code.push(group);
        }
        Self {
            labels,
            group_of_code,
        }
    }

    /// The group of `code`, `None` for missing.
    fn group(&self, code: u32) -> Option<u32> {
        let group = self.group_of_code[code as usize];
        (group != u32::MAX).then_some(group)
    }
}

/// Visits (blank-trimmed) with their smallest order value, in order; unordered ones last. With no
/// order column, in order of first appearance.
fn visit_levels(table: &Table, visit: &VisitCandidate) -> Option<VisitsOf> {
    let labels = text_column(table, &visit.label)?;
    let orders = visit
        .order
        .as_deref()
        .and_then(|o| numeric_column(table, o));
    let trimmed = TrimmedLabels::new(labels);
    let mut by_group: Vec<(Option<f64>, usize)> = vec![(None, 0); trimmed.labels.len()];
    for (row, &code) in labels.codes().iter().enumerate() {
        let Some(group) = trimmed.group(code) else {
            continue;
        };
        let entry = &mut by_group[group as usize];
        entry.1 += 1;
        keep_smallest(&mut entry.0, orders.and_then(|o| o.value(row)));
    }
    let mut visits: Vec<VisitLevel> = trimmed
        .labels
        .iter()
        .zip(by_group)
        .map(|(label, (order, records))| VisitLevel {
            label: (*label).to_owned(),
            order,
            records,
        })
        .collect();
    // Without an order column the visits stay in order of first appearance ("Week 12" would
    // sort before "Week 2" by label).
    if orders.is_some() {
        visits.sort_by(|a, b| order_missing_last(a.order, b.order).then(a.label.cmp(&b.label)));
    }
    Some(VisitsOf {
        column: visit.label.clone(),
        order_column: orders.and(visit.order.clone()),
        visits,
    })
}

fn parameter_profiles(
    table: &Table,
    roles: &CandidateRoles,
    warnings: &mut Vec<ProfileWarning>,
) -> Vec<ParameterProfile> {
    let Some(codes) = roles
        .parameter_code
        .first()
        .and_then(|c| text_column(table, c))
    else {
        return Vec::new();
    };
    let labels = roles
        .parameter_label
        .first()
        .and_then(|c| text_column(table, c));
    let units = roles.unit.first().and_then(|c| text_column(table, c));
    // Pairs first (cheap integer work per row), strings once per distinct pair.
    let mut records: Vec<usize> = vec![0; codes.levels().len() + 1];
    let levels_of = |column: Option<&TextValues>| column.map_or(0, |c| c.levels().len()) + 1;
    let mut label_pairs = TupleSet::new([levels_of(Some(codes)), levels_of(labels)]);
    let mut unit_pairs = TupleSet::new([levels_of(Some(codes)), levels_of(units)]);
    for (row, &code) in codes.codes().iter().enumerate() {
        if code == 0 {
            continue;
        }
        records[code as usize] += 1;
        if let Some(labels) = labels {
            label_pairs.insert([code, labels.code(row)]);
        }
        if let Some(units) = units {
            unit_pairs.insert([code, units.code(row)]);
        }
    }
    // Non-missing values of each value column per code: a parameter whose AVAL is empty
    // (a text result such as an ECG interpretation) cannot be plotted from AVAL.
    let value_counts: Vec<(&str, Vec<usize>)> = roles
        .value
        .iter()
        .filter_map(|name| Some((name.as_str(), numeric_column(table, name)?)))
        .map(|(name, values)| {
            let mut counts = vec![0; codes.levels().len() + 1];
            for (&code, value) in codes.codes().iter().zip(values.values()) {
                counts[code as usize] += usize::from(value.is_some());
            }
            (name, counts)
        })
        .collect();
    let mut by_code: BTreeMap<&str, ParameterFacts> = BTreeMap::new();
    for (index, level) in codes.levels().iter().enumerate() {
        let acc = by_code.entry(level).or_default();
        acc.records = records[index + 1];
        for (name, counts) in &value_counts {
            *acc.values.entry(name).or_default() += counts[index + 1];
        }
    }
    for [code, label] in label_pairs.iter() {
        if let (Some(code), Some(label)) = (codes.level(code), labels.and_then(|l| l.level(label)))
        {
            by_code.entry(code).or_default().labels.insert(label);
        }
    }
    for [code, unit] in unit_pairs.iter() {
        if let (Some(code), Some(unit)) = (codes.level(code), units.and_then(|u| u.level(unit))) {
            by_code.entry(code).or_default().column_units.insert(unit);
        }
    }
    by_code
        .into_iter()
        .map(|(code, facts)| facts.profile(code, warnings))
        .collect()
}

/// What the rows say about one parameter code.
#[derive(Default)]
struct ParameterFacts<'a> {
    records: usize,
    labels: BTreeSet<&'a str>,
    column_units: BTreeSet<&'a str>,
    /// Non-missing values per value column.
    values: BTreeMap<&'a str, usize>,
}

impl ParameterFacts<'_> {
    /// The profile of parameter `code`; a warning when its records carry several units.
    fn profile(self, code: &str, warnings: &mut Vec<ProfileWarning>) -> ParameterProfile {
        let (units, unit_source) = self.units();
        if units.len() > 1 {
            warnings.push(ProfileWarning::MixedUnits {
                parameter: code.to_owned(),
                units: units.clone(),
            });
        }
        ParameterProfile {
            code: code.to_owned(),
            labels: self.labels.iter().map(|l| (*l).to_owned()).collect(),
            records: self.records,
            units,
            unit_source,
            derived_looking: code.starts_with('_'),
            values: self
                .values
                .iter()
                .map(|(name, count)| ((*name).to_owned(), *count))
                .collect(),
        }
    }

    /// The units: from the unit column, else from the labels' "(unit)".
    fn units(&self) -> (Vec<String>, Option<UnitSource>) {
        if !self.column_units.is_empty() {
            return (
                self.column_units.iter().map(|u| (*u).to_owned()).collect(),
                Some(UnitSource::Column),
            );
        }
        let from_labels: BTreeSet<&str> = self
            .labels
            .iter()
            .filter_map(|l| unit_from_label(l))
            .collect();
        let source = (!from_labels.is_empty()).then_some(UnitSource::ParameterLabel);
        (from_labels.into_iter().map(str::to_owned).collect(), source)
    }
}

#[cfg(test)]
mod tests {
    use super::{tuples::TupleCounts, *};

    /// Before: the four-dimension key of (parameter, treatment, visit, subject) was packed into
    /// 64 bits; with some 70,000 levels in each dimension the index overflowed (a panic in a
    /// debug build, colliding tuples and wrong subject counts in a release build).
    #[test]
    fn seventy_thousand_distinct_combinations_give_correct_warnings() {
        let n = 70_000;
        let mut text = String::from("USUBJID,TRTA,AVISIT,AVISITN,PARAMCD,PARAM,AVAL\n");
        for i in 0..n {
            text.push_str(&format!("S{i},T{i},V{i},{i},P{i},Parameter {i},{i}\n"));
        }
        // One subject × visit × parameter with a second record.
        text.push_str("S7,T7,V7,7,P7,Parameter 7,8\n");
        let table = crate::ingest::csv::read_csv(text.as_bytes()).unwrap();
        let profile = profile_table(&table, Sha256Digest::from_bytes([1; 32]), 3);
        let several: Vec<_> = profile
            .warnings
            .iter()
            .filter_map(|w| match w {
                ProfileWarning::SeveralRecordsPerSubjectVisit {
                    parameter,
                    combinations,
                    examples,
                } => Some((parameter.as_str(), *combinations, examples.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            several,
            vec![("P7", 1, vec!["S7 / V7 (2 records)".to_owned()])]
        );
        let low: Vec<(&str, usize, &[String])> = profile
            .warnings
            .iter()
            .filter_map(|w| match w {
                ProfileWarning::LowNCells {
                    parameter,
                    cells,
                    examples,
                    ..
                } => Some((parameter.as_str(), *cells, examples.as_slice())),
                _ => None,
            })
            .collect();
        assert_eq!(low.len(), n, "one low-N warning per parameter");
        for (parameter, cells, examples) in low {
            let i = &parameter[1..];
            assert_eq!(cells, 1, "{parameter}");
            // Each cell has exactly its one subject (the duplicate record counts once).
            assert_eq!(examples, [format!("T{i} / V{i}: 1")], "{parameter}");
        }
    }

    /// The visit-order and low-N warnings, in their order, worked out by hand: a label with
    /// two orders, orders shared by two labels (a negative one first), and low-N cells listed
    /// by parameter, then treatment and visit (a cell at the threshold is not low).
    #[test]
    fn visit_order_and_low_n_warnings_come_in_their_order() {
        let text = "USUBJID,TRTA,AVISIT,AVISITN,PARAMCD,PARAM,AVAL
S1,A,Week 2,2,ALT,Alanine (U/L),1
S2,A,Week 2,3,ALT,Alanine (U/L),1
S1,A,Week 4,4,ALT,Alanine (U/L),1
S2,B,Wk 4,4,ALT,Alanine (U/L),1
S3,B,Baseline,10,ALT,Alanine (U/L),1
S4,B,Day 10,10,ALT,Alanine (U/L),1
S5,A,Screening,-1,ALT,Alanine (U/L),1
S6,A,Scr,-1,ALT,Alanine (U/L),1
S1,A,Week 2,2,AST,Aspartate (U/L),1
S1,C,Week 2,2,CRP,C-reactive (mg/L),1
S2,C,Week 2,2,CRP,C-reactive (mg/L),1
S3,C,Week 2,2,CRP,C-reactive (mg/L),1
";
        let table = crate::ingest::csv::read_csv(text.as_bytes()).unwrap();
        let profile = profile_table(&table, Sha256Digest::from_bytes([1; 32]), 3);
        let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let expected = vec![
            ProfileWarning::VisitLabelWithSeveralOrders {
                column: "AVISIT".into(),
                label: "Week 2".into(),
                orders: vec![2.0, 3.0],
            },
            ProfileWarning::OrderWithSeveralVisitLabels {
                order_column: "AVISITN".into(),
                order: -1.0,
                labels: strings(&["Scr", "Screening"]),
            },
            ProfileWarning::OrderWithSeveralVisitLabels {
                order_column: "AVISITN".into(),
                order: 4.0,
                labels: strings(&["Week 4", "Wk 4"]),
            },
            ProfileWarning::OrderWithSeveralVisitLabels {
                order_column: "AVISITN".into(),
                order: 10.0,
                labels: strings(&["Baseline", "Day 10"]),
            },
            ProfileWarning::LowNCells {
                parameter: "ALT".into(),
                threshold: 3,
                cells: 7,
                examples: strings(&[
                    "A / Scr: 1",
                    "A / Screening: 1",
                    "A / Week 2: 2",
                    "A / Week 4: 1",
                    "B / Baseline: 1",
                    "B / Day 10: 1",
                    "B / Wk 4: 1",
                ]),
            },
            ProfileWarning::LowNCells {
                parameter: "AST".into(),
                threshold: 3,
                cells: 1,
                examples: strings(&["A / Week 2: 1"]),
            },
        ];
        let found: Vec<ProfileWarning> = profile
            .warnings
            .into_iter()
            .filter(|w| {
                matches!(
                    w,
                    ProfileWarning::VisitLabelWithSeveralOrders { .. }
                        | ProfileWarning::OrderWithSeveralVisitLabels { .. }
                        | ProfileWarning::LowNCells { .. }
                )
            })
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn tuple_sets_and_counts_agree_dense_or_sparse() {
        let tuples = [[1, 2, 0], [0, 0, 0], [4, 9, 2], [1, 2, 0], [3, 0, 1]];
        // The same tuples through a small (dense) and a huge (sparse) code space.
        for dims in [[5, 10, 3], [5_000_000, 10, 3_000_000]] {
            let mut set = TupleSet::new(dims);
            let mut counts = TupleCounts::new(dims);
            for tuple in tuples {
                set.insert(tuple);
                counts.add(tuple);
            }
            let mut seen: Vec<[u32; 3]> = set.iter().collect();
            seen.sort_unstable();
            assert_eq!(
                seen,
                [[0, 0, 0], [1, 2, 0], [3, 0, 1], [4, 9, 2]],
                "{dims:?}"
            );
            let mut counted: Vec<([u32; 3], usize)> = counts.iter().collect();
            counted.sort_unstable();
            assert_eq!(
                counted,
                [
                    ([0, 0, 0], 1),
                    ([1, 2, 0], 2),
                    ([3, 0, 1], 1),
                    ([4, 9, 2], 1)
                ],
                "{dims:?}"
            );
        }
    }

    #[test]
    fn units_come_from_the_trailing_parenthesis_of_the_label() {
        assert_eq!(
            unit_from_label("Alanine Aminotransferase (U/L)"),
            Some("U/L")
        );
        assert_eq!(unit_from_label("Albumin (g/L) "), Some("g/L"));
        assert_eq!(unit_from_label("pH"), None);
        assert_eq!(unit_from_label("Odd ()"), None);
    }
}
