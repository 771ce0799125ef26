//! "Which record per subject and visit?" on generated data shaped like real vital signs and ECG:
//! positions per visit (ATPT, VSPOS), derived averages (DTYPE = AVERAGE) that leave DOMAIN,
//! VISIT and the time point blank, analysis flags, replicates, time stamps. The answers that
//! keep the same records are one option, so a handful are offered where a score were listed.

use std::collections::HashMap;

use super::*;
use crate::ingest::{csv::read_csv, profile::profile_table, snapshot::take_snapshot};
use crate::question::{confirm::confirm_spec, draft::draft_spec};
use adamviz_model::{digest::Sha256Digest, profile::DatasetProfile, records::RecordOption};

/// A CSV built row by row: cells by column name, blank where a row names none.
struct Csv {
    header: Vec<&'static str>,
    lines: Vec<String>,
}

impl Csv {
    fn new(header: &[&'static str]) -> Self {
        Self {
            header: header.to_vec(),
            lines: vec![header.join(",")],
        }
    }

    fn row(&mut self, cells: &[(&str, String)]) {
        let by_name: HashMap<&str, &str> = cells.iter().map(|(n, v)| (*n, v.as_str())).collect();
        assert!(by_name.keys().all(|name| self.header.contains(name)));
        let line: Vec<&str> = self
            .header
            .iter()
            .map(|name| by_name.get(name).copied().unwrap_or(""))
            .collect();
        self.lines.push(line.join(","));
    }

    fn table(&self) -> Table {
        read_csv(format!("{}\n", self.lines.join("\n")).as_bytes()).unwrap()
    }
}

fn cell(name: &'static str, value: impl ToString) -> (&'static str, String) {
    (name, value.to_string())
}

const ARMS: [(&str, u32); 3] = [
    ("Placebo", 0),
    ("Xanomeline Low Dose", 54),
    ("Xanomeline High Dose", 81),
];

/// Vital signs as an ADVS holds them: 30 subjects, SYSBP and DIABP at four visits, each read
/// lying, standing 1 minute and standing 3 minutes (ATPT, with the body position in VSPOS), a
/// second standing-3-minute reading for one visit of every subject, and the derived average
/// (DTYPE = AVERAGE, flagged ANL02FL, with DOMAIN, VISIT, ATPT and VSPOS blank); ANL01FL flags
/// the scheduled records; an unscheduled visit for every fifth subject.
fn vital_signs() -> Table {
    let mut csv = Csv::new(&[
        "STUDYID", "DOMAIN", "USUBJID", "SAFFL", "TRTA", "TRTAN", "PARAMCD", "PARAM", "VISIT",
        "VISITNUM", "AVISIT", "AVISITN", "ATPT", "ATPTN", "VSPOS", "DTYPE", "AVAL", "AVALU",
        "ABLFL", "ANL01FL", "ANL02FL", "VSDTC",
    ]);
    let visits = [
        ("BASELINE", 3, "Baseline", 0),
        ("WEEK 2", 4, "Week 2", 2),
        ("WEEK 4", 5, "Week 4", 4),
        ("WEEK 8", 7, "Week 8", 8),
    ];
    let positions = [
        ("AFTER LYING DOWN FOR 5 MINUTES", 815, "SUPINE"),
        ("AFTER STANDING FOR 1 MINUTE", 816, "STANDING"),
        ("AFTER STANDING FOR 3 MINUTES", 817, "STANDING"),
    ];
    let parameters = [
        ("SYSBP", "Systolic Blood Pressure (mmHg)", 125),
        ("DIABP", "Diastolic Blood Pressure (mmHg)", 78),
    ];
    for subject in 1..=30u32 {
        let (arm, arm_order) = ARMS[(subject as usize - 1) / 10];
        let common = [
            cell("STUDYID", "CDISCPILOT01"),
            cell("USUBJID", format!("01-701-{:04}", 1000 + subject)),
            cell("SAFFL", "Y"),
            cell("TRTA", arm),
            cell("TRTAN", arm_order),
            cell("AVALU", "mmHg"),
        ];
        for (code, label, typical) in parameters {
            let parameter = [cell("PARAMCD", code), cell("PARAM", label)];
            for (v, (visit, visit_number, avisit, avisit_order)) in visits.into_iter().enumerate() {
                let at_visit = [
                    cell("AVISIT", avisit),
                    cell("AVISITN", avisit_order),
                    cell("ANL01FL", "Y"),
                ];
                let collected = |minute: usize, value: u32| {
                    [
                        cell("DOMAIN", "VS"),
                        cell("VISIT", visit),
                        cell("VISITNUM", visit_number),
                        cell("AVAL", value),
                        cell(
                            "VSDTC",
                            format!("2014-{:02}-{:02}T08:{minute:02}", v + 1, subject % 28 + 1),
                        ),
                    ]
                };
                for (p, (time_point, time_point_order, position)) in
                    positions.into_iter().enumerate()
                {
                    let readings = if p == 2 && (subject as usize + v).is_multiple_of(4) {
                        2
                    } else {
                        1
                    };
                    for reading in 0..readings {
                        let mut cells = common.to_vec();
                        cells.extend(parameter.clone());
                        cells.extend(at_visit.clone());
                        cells.extend(collected(p * 5 + reading, typical + subject % 7 + p as u32));
                        cells.extend([
                            cell("ATPT", time_point),
                            cell("ATPTN", time_point_order),
                            cell("VSPOS", position),
                        ]);
                        csv.row(&cells);
                    }
                }
                let mut average = common.to_vec();
                average.extend(parameter.clone());
                average.extend(at_visit);
                average.extend([
                    cell("DTYPE", "AVERAGE"),
                    cell("AVAL", typical + subject % 7 + 1),
                    cell("ABLFL", if v == 0 { "Y" } else { "" }),
                    cell("ANL02FL", "Y"),
                ]);
                csv.row(&average);
            }
            if subject.is_multiple_of(5) {
                let mut unscheduled = common.to_vec();
                unscheduled.extend(parameter);
                unscheduled.extend([
                    cell("DOMAIN", "VS"),
                    cell("VISIT", "UNSCHEDULED 1.01"),
                    cell("VISITNUM", "1.01"),
                    cell("AVISIT", "Unscheduled 1.01"),
                    cell("ATPT", positions[0].0),
                    cell("ATPTN", positions[0].1),
                    cell("VSPOS", positions[0].2),
                    cell("AVAL", typical),
                ]);
                csv.row(&unscheduled);
            }
        }
    }
    csv.table()
}

/// ECG as an ADEG holds them: 24 subjects, QTcF and heart rate in triplicate at four visits
/// (ATPT "TRIPLICATE n" with ATPTN, EGTPT "PRE-DOSE"), one subject's week-8 ECG with two
/// readings only, and the derived average (DTYPE = AVERAGE when `with_dtype`, PARAMTYP =
/// DERIVED, flagged ANL02FL; DOMAIN, VISIT, ATPT and EGTPT blank). No TRTAN: TRT01A and
/// TRT01AN are there, and the arms appear highest dose first.
fn ecg(with_dtype: bool) -> Table {
    let mut header = vec![
        "STUDYID", "DOMAIN", "USUBJID", "SAFFL", "TRTA", "TRT01A", "TRT01AN", "PARAMCD", "PARAM",
        "PARAMTYP", "VISIT", "AVISIT", "ATPT", "ATPTN", "EGTPT",
    ];
    if with_dtype {
        header.push("DTYPE");
    }
    header.extend(["AVAL", "AVALU", "ANL01FL", "ANL02FL", "EGDTC"]);
    let mut csv = Csv::new(&header);
    let visits = ["BASELINE", "WEEK 2", "WEEK 8", "WEEK 16"];
    let parameters = [
        (
            "QTCF",
            "QTcF - Fridericia's Correction Formula (msec)",
            "msec",
            410,
        ),
        ("EGHRMN", "ECG Mean Heart Rate (beats/min)", "beats/min", 72),
    ];
    for subject in 1..=24u32 {
        // Highest dose first in the file, so first appearance would put it first.
        let (arm, arm_order) = ARMS[2 - (subject as usize - 1) / 8];
        let common = [
            cell("STUDYID", "CDISCPILOT01"),
            cell("USUBJID", format!("01-702-{:04}", 1000 + subject)),
            cell("SAFFL", "Y"),
            cell("TRTA", arm),
            cell("TRT01A", arm),
            cell("TRT01AN", arm_order),
            cell("ANL01FL", "Y"),
        ];
        for (code, label, unit, typical) in parameters {
            let parameter = [
                cell("PARAMCD", code),
                cell("PARAM", label),
                cell("AVALU", unit),
            ];
            for (v, visit) in visits.into_iter().enumerate() {
                let avisit = if v == 0 {
                    "Baseline".to_owned()
                } else {
                    visit.replace("WEEK", "Week")
                };
                let readings = if subject == 7 && v == 2 { 2 } else { 3 };
                for reading in 1..=readings {
                    let mut cells = common.to_vec();
                    cells.extend(parameter.clone());
                    cells.extend([
                        cell("DOMAIN", "EG"),
                        cell("VISIT", visit),
                        cell("AVISIT", &avisit),
                        cell("ATPT", format!("TRIPLICATE {reading}")),
                        cell("ATPTN", reading),
                        cell("EGTPT", "PRE-DOSE"),
                        cell("AVAL", typical + subject % 9 + reading),
                        cell(
                            "EGDTC",
                            format!("2014-{:02}-{:02}T07:{:02}", v + 1, subject, reading * 2),
                        ),
                    ]);
                    csv.row(&cells);
                }
                let mut average = common.to_vec();
                average.extend(parameter.clone());
                average.extend([
                    cell("AVISIT", &avisit),
                    cell("PARAMTYP", "DERIVED"),
                    cell("AVAL", typical + subject % 9 + 2),
                    cell("ANL02FL", "Y"),
                ]);
                if with_dtype {
                    average.push(cell("DTYPE", "AVERAGE"));
                }
                csv.row(&average);
            }
        }
    }
    csv.table()
}

struct Drafted {
    table: Table,
    profile: DatasetProfile,
    draft: crate::question::draft::Draft,
}

const HASH: [u8; 32] = [7; 32];

fn drafted(table: Table, question: &str) -> Drafted {
    let profile = profile_table(&table, Sha256Digest::from_bytes(HASH), 3);
    let draft = draft_spec(question, &profile, &table).unwrap();
    Drafted {
        table,
        profile,
        draft,
    }
}

/// The record question's options of the draft.
fn options(drafted: &Drafted) -> Vec<RecordOption> {
    analyse_records(&drafted.draft.spec, &drafted.table).options
}

/// The answers the question listed before they were grouped: one per value of every column
/// telling records apart, then `every`.
fn ungrouped_answers(drafted: &Drafted) -> Vec<String> {
    let spec = &drafted.draft.spec;
    let columns = SelectionColumns::resolve(spec, &drafted.table).unwrap();
    let rows = columns.rows(drafted.table.row_count);
    let counts = records_per_key(&columns, &rows);
    let selection = Selection {
        spec,
        columns: &columns,
        rows: &rows,
        counts: &counts,
    };
    let mut answers = selection.ungrouped_answers(&drafted.table);
    answers.push("every".to_owned());
    answers
}

fn answers_and_aliases(options: &[RecordOption]) -> Vec<(&str, Vec<&str>)> {
    options
        .iter()
        .map(|o| {
            (
                o.answer.as_str(),
                o.aliases.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

/// Records per subject × visit (subject, treatment, visit columns) of a confirmed answer, and
/// the rows kept.
fn confirmed_rows(
    drafted: &Drafted,
    answer: &str,
) -> Vec<Vec<crate::ingest::snapshot::SnapshotValue>> {
    let mut spec = drafted.draft.spec.clone();
    crate::question::answer::apply_text_answer(
        &mut spec,
        &drafted.profile,
        "records_per_subject_visit",
        answer,
    )
    .unwrap();
    let confirmed = confirm_spec(&spec, &drafted.table, Sha256Digest::from_bytes(HASH))
        .unwrap_or_else(|errors| panic!("{answer}: {errors:?}"));
    take_snapshot(&confirmed, &drafted.table).unwrap().rows
}

#[test]
fn vital_signs_offer_one_option_per_set_of_records_with_the_aliases_under_it() {
    let vs = drafted(
        vital_signs(),
        "systolic blood pressure by visit and treatment",
    );
    let before = ungrouped_answers(&vs);
    let after = options(&vs);
    // Before: every value of DOMAIN, VISIT, ATPT, VSPOS, DTYPE, ABLFL and ANL02FL its own radio
    // button, 20 and `every` (the time stamps are too many to be a choice).
    assert_eq!(before.len(), 21, "{before:?}");
    assert!(before.contains(&"VISIT=WEEK 2".to_owned()) && before.contains(&"DOMAIN=".to_owned()));
    assert_eq!(
        answers_and_aliases(&after),
        [
            (
                "DTYPE=AVERAGE",
                vec!["ANL02FL=Y", "ATPT=", "VSPOS=", "DOMAIN=", "VISIT="]
            ),
            ("ATPT=AFTER LYING DOWN FOR 5 MINUTES", vec!["VSPOS=SUPINE"]),
            ("ATPT=AFTER STANDING FOR 1 MINUTE", vec![]),
            ("ATPT=AFTER STANDING FOR 3 MINUTES", vec![]),
            ("every", vec![]),
        ]
    );
    let average = &after[0];
    assert_eq!(
        average.aliases_in_words().as_deref(),
        Some("also: ANL02FL = Y, ATPT blank, VSPOS blank, DOMAIN blank, VISIT blank")
    );
    assert_eq!(
        average.description,
        "DTYPE = AVERAGE: keeps 120 records, one per subject and visit"
    );
    // The repeated standing reading leaves one visit of each subject with two records.
    assert_eq!((after[3].resolves, after[3].still_several), (90, 30));
    // The proposal is the first option, named by DTYPE; the flag is why.
    assert_eq!(
        vs.draft.spec.records_per_subject_visit,
        Some(RecordsPerSubjectVisit::OneWhere {
            column: "DTYPE".into(),
            value: "AVERAGE".into()
        })
    );
    let why = &analyse_records(&vs.draft.spec, &vs.table).why;
    assert_eq!(why, "Proposed: DTYPE=AVERAGE, which keeps the same records as the analysis flag ANL02FL = Y: one record per subject and visit without dropping baseline.");
    // An alias answered instead keeps the very same records, and the option stands for it.
    assert_eq!(
        confirmed_rows(&vs, "DOMAIN="),
        confirmed_rows(&vs, "DTYPE=AVERAGE")
    );
    assert!(average.stands_for("VISIT=") && !average.stands_for("DTYPE="));
}

#[test]
fn ecg_triplicates_offer_the_average_and_each_reading() {
    let eg = drafted(ecg(true), "QTcF by visit and treatment");
    assert_eq!(eg.draft.spec.parameter.as_ref().unwrap().value, "QTCF");
    let before = ungrouped_answers(&eg);
    let after = options(&eg);
    // Before: every value of DOMAIN, PARAMTYP, VISIT, ATPT, EGTPT, DTYPE and ANL02FL, and
    // `every`.
    assert_eq!(before.len(), 20, "{before:?}");
    assert_eq!(
        answers_and_aliases(&after),
        [
            (
                "DTYPE=AVERAGE",
                vec![
                    "ANL02FL=Y",
                    "PARAMTYP=DERIVED",
                    "ATPT=",
                    "EGTPT=",
                    "DOMAIN=",
                    "VISIT="
                ]
            ),
            ("ATPT=TRIPLICATE 1", vec![]),
            ("ATPT=TRIPLICATE 2", vec![]),
            ("ATPT=TRIPLICATE 3", vec![]),
            ("every", vec![]),
        ]
    );
    // The ECG with two readings has no third: that option loses one subject × visit.
    assert_eq!(after[3].subject_visits_lost, 1);
    assert_eq!(
        eg.draft.spec.records_per_subject_visit,
        Some(RecordsPerSubjectVisit::OneWhere {
            column: "DTYPE".into(),
            value: "AVERAGE".into()
        })
    );
    assert!(
        eg.draft.open_questions.is_empty(),
        "{:?}",
        eg.draft.open_questions
    );
}

#[test]
fn without_dtype_the_analysis_flag_names_the_average_and_is_proposed() {
    let eg = drafted(ecg(false), "QTcF by visit and treatment");
    let after = options(&eg);
    assert_eq!(
        answers_and_aliases(&after)[0],
        (
            "ANL02FL=Y",
            vec!["PARAMTYP=DERIVED", "ATPT=", "EGTPT=", "DOMAIN=", "VISIT="]
        )
    );
    assert_eq!(after.len(), 5);
    let analysis = analyse_records(&eg.draft.spec, &eg.table);
    assert_eq!(analysis.why, "Proposed: ANL02FL=Y, an analysis flag that leaves one record per subject and visit without dropping baseline.");
}

#[test]
fn the_ecg_draft_orders_its_arms_by_a_related_order_variable() {
    let eg = drafted(ecg(true), "QTcF by visit and treatment");
    assert_eq!(
        eg.draft.spec.treatment.levels,
        ["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"]
    );
    let note = eg
        .draft
        .matches
        .iter()
        .find(|n| n.field == "treatment_variable")
        .unwrap();
    assert_eq!(
        note.why,
        "TRTA: levels ordered by TRT01AN, which matches TRTA's labels one to one (there is no TRTAN)"
    );
    let question = eg
        .draft
        .questions
        .iter()
        .find(|q| q.id == "treatment_levels")
        .unwrap();
    assert!(
        question.why.ends_with("Proposed: levels ordered by TRT01AN, which matches TRTA's labels one to one (there is no TRTAN)."),
        "{}",
        question.why
    );
}
