//! The ways to keep one record per subject and visit, as a statistician reads them: every
//! `COLUMN=VALUE` that tells the records of one subject at one visit apart is worked out, then
//! answers that keep exactly the same records become one option, labelled by the most telling
//! of them (a named value before a blank; DTYPE, then a time point or position, then an
//! analysis flag, then any other column) with the others as its aliases. An answer that settles
//! no subject × visit, or keeps records at a single visit only, is not offered: confirmation
//! would refuse the first, and the second chooses a visit, not a record.

use std::collections::HashMap;

use super::{codes_matching, is_analysis_flag, records_per_key, SelectionColumns};
use crate::ingest::table::{ColumnData, Table, TextValues};
use adamviz_model::{
    records::{record_choice_in_words, RecordOption},
    spec::{PlotSpec, RecordsPerSubjectVisit},
};

/// A column is offered as telling records apart only if it has at most this many distinct
/// values among the duplicated records (a time stamp or a sequence number is not a choice).
const MAX_VALUES_PER_COLUMN: usize = 12;

/// The selection being analysed: its rows and how many records each subject × visit has.
pub(super) struct Selection<'a> {
    pub(super) spec: &'a PlotSpec,
    pub(super) columns: &'a SelectionColumns<'a>,
    pub(super) rows: &'a [usize],
    pub(super) counts: &'a HashMap<(u32, u32, u32), u32>,
}

/// One `COLUMN=VALUE` answer and what it does, before answers keeping the same records are
/// grouped.
struct Candidate {
    column: String,
    value: String,
    /// Which of the selection's rows it keeps, one bit per row.
    kept: Vec<u64>,
    /// The visits it keeps a record at.
    visits_kept: usize,
    option: RecordOption,
}

impl Candidate {
    fn answer(&self) -> String {
        format!("{}={}", self.column, self.value)
    }

    /// Most telling first: a named value before a blank one, then by column (see
    /// [`column_rank`]).
    fn telling_rank(&self) -> (bool, u8) {
        (self.value.is_empty(), column_rank(&self.column))
    }
}

/// How telling a column is as the name of a record choice: DTYPE (a derived record says what
/// it is), then a time point or position, then an analysis flag, then any other column.
fn column_rank(column: &str) -> u8 {
    let position_like =
        ["ATPT", "ATPTN"].contains(&column) || column.ends_with("TPT") || column.ends_with("POS");
    match column {
        "DTYPE" => 0,
        _ if position_like => 1,
        _ if is_analysis_flag(column) => 2,
        _ => 3,
    }
}

impl Selection<'_> {
    /// The options, one per distinct set of records kept, in the order they were found (table
    /// column order, then values in order of first appearance); `every` is not among them.
    pub(super) fn grouped_options(&self, table: &Table) -> Vec<RecordOption> {
        let visits_in_selection = self.visits_kept(self.counts.keys());
        let candidates: Vec<Candidate> = self
            .candidates(table)
            .into_iter()
            .filter(|c| c.option.resolves > 0)
            .filter(|c| visits_in_selection < 2 || c.visits_kept >= 2)
            .collect();
        let mut groups: Vec<Vec<Candidate>> = Vec::new();
        let mut group_of_set: HashMap<Vec<u64>, usize> = HashMap::new();
        for candidate in candidates {
            match group_of_set.get(&candidate.kept) {
                Some(&group) => groups[group].push(candidate),
                None => {
                    group_of_set.insert(candidate.kept.clone(), groups.len());
                    groups.push(vec![candidate]);
                }
            }
        }
        groups.into_iter().map(one_option).collect()
    }

    /// Every answer found before grouping and pruning, one radio button each as the question
    /// used to list them: what the grouping is measured against.
    #[cfg(test)]
    pub(super) fn ungrouped_answers(&self, table: &Table) -> Vec<String> {
        self.candidates(table)
            .iter()
            .map(Candidate::answer)
            .collect()
    }

    /// Every `COLUMN=VALUE` of a text column whose value varies among the records of one
    /// subject at one visit (the spec's own columns aside).
    fn candidates(&self, table: &Table) -> Vec<Candidate> {
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
        let mut candidates = Vec::new();
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
            // One candidate per value; blank levels and missing are one "blank" candidate.
            let mut seen_values: Vec<String> = Vec::new();
            for code in distinct {
                let value = values.level(code).unwrap_or_default().trim().to_owned();
                if seen_values.contains(&value) {
                    continue;
                }
                candidates.push(self.candidate(&column.name, values, &value));
                seen_values.push(value);
            }
        }
        candidates
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

    /// Distinct visits among subject × treatment × visit keys.
    fn visits_kept<'k>(&self, keys: impl Iterator<Item = &'k (u32, u32, u32)>) -> usize {
        let mut visits: Vec<u32> = keys.map(|key| key.2).collect();
        visits.sort_unstable();
        visits.dedup();
        visits.len()
    }

    /// What keeping only the records where `column` is `value` would do.
    fn candidate(&self, column: &str, values: &TextValues, value: &str) -> Candidate {
        let kept_codes = codes_matching(values, value);
        let mut kept = vec![0u64; self.rows.len().div_ceil(64)];
        let mut kept_rows = Vec::new();
        for (index, &row) in self.rows.iter().enumerate() {
            if kept_codes[values.code(row) as usize] {
                kept[index / 64] |= 1 << (index % 64);
                kept_rows.push(row);
            }
        }
        let after = records_per_key(self.columns, &kept_rows);
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
            aliases: Vec::new(),
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
        option.description = describe_option(&option.answer, kept_rows.len(), &option);
        Candidate {
            column: column.to_owned(),
            value: value.to_owned(),
            kept,
            visits_kept: self.visits_kept(after.keys()),
            option,
        }
    }
}

/// One option for answers that keep the same records: the most telling one answers (ties in
/// the order found), the others are its aliases, most telling first.
fn one_option(mut same_records: Vec<Candidate>) -> RecordOption {
    // A stable sort: equally telling answers stay in table column order.
    same_records.sort_by_key(Candidate::telling_rank);
    let mut members = same_records.into_iter();
    let mut option = members.next().expect("a group has a member").option;
    option.aliases = members.map(|m| m.answer()).collect();
    option
}

/// The proposed record choice among `options` and why: an option an analysis flag = Y keeps
/// the records of that settles it, else one DTYPE = AVERAGE keeps the records of, else none.
/// The proposal is always an option's own answer, so the form shows it chosen.
pub(super) fn propose(options: &[RecordOption]) -> (Option<RecordsPerSubjectVisit>, String) {
    let answered_by = |option: &RecordOption, test: &dyn Fn(&str, &str) -> bool| {
        std::iter::once(&option.answer)
            .chain(&option.aliases)
            .find(|answer| matches!(answer.split_once('='), Some((c, v)) if test(c, v)))
            .cloned()
    };
    let settling = |test: &dyn Fn(&str, &str) -> bool| {
        options
            .iter()
            .filter(|o| o.settles_it())
            .find_map(|o| answered_by(o, test).map(|named| (o, named)))
    };
    let flag = settling(&|column, value| is_analysis_flag(column) && value == "Y");
    let average = settling(&|column, value| column == "DTYPE" && value == "AVERAGE");
    let (chosen, why) = match (flag, average) {
        (Some((option, flag)), _) if option.answer == flag => (
            option,
            format!("Proposed: {flag}, an analysis flag that leaves one record per subject and visit without dropping baseline."),
        ),
        (Some((option, flag)), _) => (
            option,
            format!(
                "Proposed: {}, which keeps the same records as the analysis flag {}: one record per subject and visit without dropping baseline.",
                option.answer,
                record_choice_in_words(&flag)
            ),
        ),
        (None, Some((option, _))) => (
            option,
            format!("Proposed: {}, the derived average, which leaves one record per subject and visit without dropping baseline (no analysis flag does).", option.answer),
        ),
        (None, None) => {
            return (
                None,
                "Nothing is proposed: no analysis flag (ANLxxFL = Y) and no DTYPE = AVERAGE leaves one record per subject and visit without dropping baseline; choose one.".to_owned(),
            )
        }
    };
    let (column, value) = chosen.answer.split_once('=').unwrap_or_default();
    let proposal = RecordsPerSubjectVisit::OneWhere {
        column: column.to_owned(),
        value: value.to_owned(),
    };
    (Some(proposal), why)
}

/// "ATPT = STANDING 1 MIN: keeps 255 records; 3 subject × visits still have several; 2 lose
/// every record (1 baseline)".
fn describe_option(answer: &str, kept: usize, option: &RecordOption) -> String {
    let mut text = format!("{}: keeps {kept} records", record_choice_in_words(answer));
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
