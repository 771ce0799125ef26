//! Profiling a table: column facts, candidate roles, per-parameter units and reviewer warnings
//! (see `crate::domain::profile` for the shapes). Pure: a table in, a profile out.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{
    sas_dates::{temporal_kind, to_iso8601, Temporal},
    table::{Column, ColumnData, NumericCell, Table},
};
use crate::domain::{
    digest::Sha256Digest,
    profile::{
        CandidateRoles, ColumnKind, ColumnProfile, DatasetProfile, LevelsOf, ParameterProfile,
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
            let mut seen: HashSet<&str> = HashSet::new();
            let mut capped = false;
            for value in values.iter().flatten() {
                if seen.len() >= DISTINCT_CAP && !seen.contains(value.as_str()) {
                    capped = true;
                    continue;
                }
                if seen.insert(value) && examples.len() < EXAMPLE_CAP {
                    examples.push(value.clone());
                }
            }
            let missing = values.iter().filter(|v| v.is_none()).count();
            (
                ColumnKind::Character,
                missing,
                seen.len(),
                capped,
                None,
                None,
            )
        }
        ColumnData::Numeric(cells) => {
            let mut seen: HashSet<u64> = HashSet::new();
            let mut capped = false;
            let (mut min, mut max) = (None::<f64>, None::<f64>);
            let mut missing = 0;
            for cell in cells {
                let Some(value) = cell.value() else {
                    missing += 1;
                    continue;
                };
                min = Some(min.map_or(value, |m| m.min(value)));
                max = Some(max.map_or(value, |m| m.max(value)));
                // +0.0 and -0.0 are one value.
                let key = if value == 0.0 { 0 } else { value.to_bits() };
                if seen.len() >= DISTINCT_CAP && !seen.contains(&key) {
                    capped = true;
                    continue;
                }
                if seen.insert(key) && examples.len() < EXAMPLE_CAP {
                    examples.push(show_number(value, temporal));
                }
            }
            (ColumnKind::Numeric, missing, seen.len(), capped, min, max)
        }
    };
    ColumnProfile {
        name: column.name.clone(),
        label: column.label.clone(),
        kind,
        format: column.format.clone(),
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

fn text_column<'a>(table: &'a Table, name: &str) -> Option<&'a [Option<String>]> {
    match &table.column(name)?.data {
        ColumnData::Character(values) => Some(values),
        ColumnData::Numeric(_) => None,
    }
}

fn numeric_column<'a>(table: &'a Table, name: &str) -> Option<&'a [NumericCell]> {
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
    DatasetProfile {
        content_hash,
        source_format: match table.source_format {
            super::table::SourceFormat::Csv => "csv",
            super::table::SourceFormat::Xpt => "xpt",
        }
        .to_owned(),
        dataset_name: table.dataset_name.clone(),
        dataset_label: table.dataset_label.clone(),
        row_count: table.row_count,
        columns: table.columns.iter().map(profile_column).collect(),
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

/// Treatment levels ordered by the `…N` companion column (TRTA → TRTAN), else alphabetically.
fn treatment_levels(table: &Table, column: &str) -> Option<LevelsOf> {
    let values = text_column(table, column)?;
    let order_name = format!("{column}N");
    let order = numeric_column(table, &order_name);
    let mut first_order: BTreeMap<&str, Option<f64>> = BTreeMap::new();
    for (row, value) in values.iter().enumerate() {
        let Some(value) = value else { continue };
        let rank = order.and_then(|o| o[row].value());
        let entry = first_order.entry(value).or_insert(rank);
        if let (Some(current), Some(rank)) = (*entry, rank) {
            *entry = Some(current.min(rank));
        }
    }
    let mut levels: Vec<(&str, Option<f64>)> = first_order.into_iter().collect();
    if order.is_some() {
        levels.sort_by(|a, b| order_missing_last(a.1, b.1).then(a.0.cmp(b.0)));
    }
    Some(LevelsOf {
        column: column.to_owned(),
        order_column: order.map(|_| order_name),
        levels: levels.into_iter().map(|(l, _)| l.to_owned()).collect(),
    })
}

/// Visits (blank-trimmed) with their smallest order value, in order; unordered ones last.
fn visit_levels(table: &Table, visit: &VisitCandidate) -> Option<VisitsOf> {
    let labels = text_column(table, &visit.label)?;
    let orders = visit
        .order
        .as_deref()
        .and_then(|o| numeric_column(table, o));
    let mut by_label: BTreeMap<&str, (Option<f64>, usize)> = BTreeMap::new();
    for (row, label) in labels.iter().enumerate() {
        let Some(label) = label else { continue };
        let order = orders.and_then(|o| o[row].value());
        let entry = by_label.entry(label.trim()).or_insert((order, 0));
        entry.1 += 1;
        if let (Some(current), Some(order)) = (entry.0, order) {
            entry.0 = Some(current.min(order));
        } else if entry.0.is_none() {
            entry.0 = order;
        }
    }
    let mut visits: Vec<VisitLevel> = by_label
        .into_iter()
        .map(|(label, (order, records))| VisitLevel {
            label: label.to_owned(),
            order,
            records,
        })
        .collect();
    visits.sort_by(|a, b| order_missing_last(a.order, b.order).then(a.label.cmp(&b.label)));
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
    #[derive(Default)]
    struct Acc<'a> {
        records: usize,
        labels: BTreeSet<&'a str>,
        column_units: BTreeSet<&'a str>,
    }
    let mut by_code: BTreeMap<&str, Acc> = BTreeMap::new();
    for (row, code) in codes.iter().enumerate() {
        let Some(code) = code else { continue };
        let acc = by_code.entry(code).or_default();
        acc.records += 1;
        if let Some(label) = labels.and_then(|l| l[row].as_deref()) {
            acc.labels.insert(label);
        }
        if let Some(unit) = units.and_then(|u| u[row].as_deref()) {
            acc.column_units.insert(unit);
        }
    }
    by_code
        .into_iter()
        .map(|(code, acc)| {
            let (units, unit_source) = if !acc.column_units.is_empty() {
                (
                    acc.column_units.iter().map(|u| (*u).to_owned()).collect(),
                    Some(UnitSource::Column),
                )
            } else {
                let from_labels: BTreeSet<&str> = acc
                    .labels
                    .iter()
                    .filter_map(|l| unit_from_label(l))
                    .collect();
                let source = (!from_labels.is_empty()).then_some(UnitSource::ParameterLabel);
                (
                    from_labels
                        .into_iter()
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                    source,
                )
            };
            if units.len() > 1 {
                warnings.push(ProfileWarning::MixedUnits {
                    parameter: code.to_owned(),
                    units: units.clone(),
                });
            }
            ParameterProfile {
                code: code.to_owned(),
                labels: acc.labels.iter().map(|l| (*l).to_owned()).collect(),
                records: acc.records,
                units,
                unit_source,
                derived_looking: code.starts_with('_'),
            }
        })
        .collect()
}

fn visit_warnings(table: &Table, roles: &CandidateRoles, warnings: &mut Vec<ProfileWarning>) {
    for visit in &roles.visit {
        let Some(labels) = text_column(table, &visit.label) else {
            continue;
        };
        let padded: Vec<&String> = labels
            .iter()
            .flatten()
            .filter(|l| l.trim() != l.as_str())
            .collect();
        if !padded.is_empty() {
            let examples: BTreeSet<String> = padded.iter().map(|l| format!("{l:?}")).collect();
            warnings.push(ProfileWarning::PaddedVisitLabels {
                column: visit.label.clone(),
                records: padded.len(),
                examples: examples.into_iter().take(EXAMPLE_CAP).collect(),
            });
        }
        let Some(order_name) = &visit.order else {
            continue;
        };
        let Some(orders) = numeric_column(table, order_name) else {
            continue;
        };
        let mut without_order = 0;
        let mut without_order_labels = BTreeSet::new();
        let mut orders_by_label: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
        let mut labels_by_order: BTreeMap<u64, BTreeSet<&str>> = BTreeMap::new();
        for (label, order) in labels.iter().zip(orders) {
            let Some(label) = label else { continue };
            match order.value() {
                None => {
                    without_order += 1;
                    without_order_labels.insert(label.trim());
                }
                Some(order) => {
                    orders_by_label
                        .entry(label.trim())
                        .or_default()
                        .insert(order.to_bits());
                    labels_by_order
                        .entry(order.to_bits())
                        .or_default()
                        .insert(label.trim());
                }
            }
        }
        if without_order > 0 {
            warnings.push(ProfileWarning::VisitsWithoutOrder {
                column: visit.label.clone(),
                order_column: order_name.clone(),
                records: without_order,
                examples: without_order_labels
                    .into_iter()
                    .take(EXAMPLE_CAP)
                    .map(str::to_owned)
                    .collect(),
            });
        }
        for (label, orders) in orders_by_label {
            if orders.len() > 1 {
                let mut orders: Vec<f64> = orders.into_iter().map(f64::from_bits).collect();
                orders.sort_by(f64::total_cmp);
                warnings.push(ProfileWarning::VisitLabelWithSeveralOrders {
                    column: visit.label.clone(),
                    label: label.to_owned(),
                    orders,
                });
            }
        }
        let mut several: Vec<(f64, BTreeSet<&str>)> = labels_by_order
            .into_iter()
            .filter(|(_, labels)| labels.len() > 1)
            .map(|(order, labels)| (f64::from_bits(order), labels))
            .collect();
        several.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (order, labels) in several {
            warnings.push(ProfileWarning::OrderWithSeveralVisitLabels {
                order_column: order_name.clone(),
                order,
                labels: labels.into_iter().map(str::to_owned).collect(),
            });
        }
    }
}

/// The text columns that key a record: parameter code, subject, visit label.
struct RecordKeys<'a> {
    codes: &'a [Option<String>],
    subjects: &'a [Option<String>],
    visits: &'a [Option<String>],
}

fn record_keys<'a>(table: &'a Table, roles: &CandidateRoles) -> Option<RecordKeys<'a>> {
    Some(RecordKeys {
        codes: text_column(table, roles.parameter_code.first()?)?,
        subjects: text_column(table, roles.subject.first()?)?,
        visits: text_column(table, &roles.visit.first()?.label)?,
    })
}

fn duplicate_record_warnings(
    table: &Table,
    roles: &CandidateRoles,
    warnings: &mut Vec<ProfileWarning>,
) {
    let Some(RecordKeys {
        codes,
        subjects,
        visits,
    }) = record_keys(table, roles)
    else {
        return;
    };
    let mut counts: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for row in 0..table.row_count {
        if let (Some(code), Some(subject), Some(visit)) =
            (&codes[row], &subjects[row], &visits[row])
        {
            *counts.entry((code, subject, visit.trim())).or_default() += 1;
        }
    }
    let mut by_parameter: BTreeMap<&str, Vec<(&str, &str, usize)>> = BTreeMap::new();
    for ((code, subject, visit), n) in counts {
        if n > 1 {
            by_parameter
                .entry(code)
                .or_default()
                .push((subject, visit, n));
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

fn baseline_flag_warnings(
    table: &Table,
    roles: &CandidateRoles,
    warnings: &mut Vec<ProfileWarning>,
) {
    let Some(baseline) = text_column(table, BASELINE_FLAG) else {
        return;
    };
    let baseline_rows: Vec<usize> = (0..table.row_count)
        .filter(|&row| baseline[row].as_deref() == Some("Y"))
        .collect();
    if baseline_rows.is_empty() {
        return;
    }
    for flag in roles.record_flags.iter().filter(|f| *f != BASELINE_FLAG) {
        let Some(values) = text_column(table, flag) else {
            continue;
        };
        if baseline_rows
            .iter()
            .all(|&row| values[row].as_deref() != Some("Y"))
        {
            warnings.push(ProfileWarning::FlagRemovesBaseline {
                flag: flag.clone(),
                baseline_flag: BASELINE_FLAG.to_owned(),
                baseline_records: baseline_rows.len(),
            });
        }
    }
}

fn low_n_warnings(
    table: &Table,
    roles: &CandidateRoles,
    threshold: usize,
    warnings: &mut Vec<ProfileWarning>,
) {
    let Some(RecordKeys {
        codes,
        subjects,
        visits,
    }) = record_keys(table, roles)
    else {
        return;
    };
    let Some(treatments) = roles.treatment.first().and_then(|t| text_column(table, t)) else {
        return;
    };
    let Some(values) = roles.value.first().and_then(|v| numeric_column(table, v)) else {
        return;
    };
    let mut cells: BTreeMap<&str, BTreeMap<(&str, &str), HashSet<&str>>> = BTreeMap::new();
    for row in 0..table.row_count {
        if values[row].value().is_none() {
            continue;
        }
        if let (Some(code), Some(subject), Some(visit), Some(treatment)) =
            (&codes[row], &subjects[row], &visits[row], &treatments[row])
        {
            cells
                .entry(code)
                .or_default()
                .entry((treatment, visit.trim()))
                .or_default()
                .insert(subject);
        }
    }
    for (parameter, by_cell) in cells {
        let low: Vec<String> = by_cell
            .iter()
            .filter(|(_, subjects)| subjects.len() < threshold)
            .map(|((treatment, visit), subjects)| {
                format!("{treatment} / {visit}: {}", subjects.len())
            })
            .collect();
        if !low.is_empty() {
            warnings.push(ProfileWarning::LowNCells {
                parameter: parameter.to_owned(),
                threshold,
                cells: low.len(),
                examples: low.into_iter().take(EXAMPLE_CAP).collect(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
