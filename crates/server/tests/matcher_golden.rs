//! Golden parameter choices on generated data shaped like real ECG, vital-signs and lab sets,
//! where several parameters' labels share words (QT, QTcF and QTcB; systolic and diastolic at
//! three positions; hemoglobin and hemoglobin A1C; glucose in blood and urine; creatinine and
//! its clearance): every word of the question counts, a code is one word among them, a tie is
//! an open question naming the parameters, and the explanation names the words that decided.

use std::{path::PathBuf, sync::OnceLock};

use adamviz_engine::ingest::{
    confirm::{confirm_spec, SpecError},
    draft::{draft_spec, Draft},
    profile::profile_table,
    read_dataset,
    table::Table,
};
use adamviz_model::{digest::Sha256Digest, profile::DatasetProfile};
use sha2::{Digest, Sha256};

/// A generated study: its table, the hash of its bytes and its profile.
struct Study {
    table: Table,
    hash: Sha256Digest,
    profile: DatasetProfile,
}

/// An ADaM BDS-like CSV: three arms of four subjects, three visits, one record per subject,
/// visit and parameter (or one per position in ATPT when `positions` are given), with AVAL,
/// BASE and CHG. `parameters` are PARAMCD, PARAM and unit as real studies write them.
fn study(parameters: &[(&str, &str, &str)], positions: &[&str]) -> Study {
    let arms = ["Placebo", "Drug Low Dose", "Drug High Dose"];
    let visits = ["Baseline", "Week 4", "Week 8"];
    let mut header = "STUDYID,USUBJID,SAFFL,TRTA,TRTAN,PARAMCD,PARAM,AVISIT,AVISITN".to_owned();
    if !positions.is_empty() {
        header.push_str(",ATPT,ATPTN");
    }
    header.push_str(",AVAL,BASE,CHG,AVALU,ABLFL");
    let mut lines = vec![header];
    let quote = |text: &str| format!("\"{}\"", text.replace('"', "\"\""));
    let at_positions: Vec<Option<(usize, &str)>> = if positions.is_empty() {
        vec![None]
    } else {
        positions.iter().copied().enumerate().map(Some).collect()
    };
    for (arm_number, arm) in arms.iter().enumerate() {
        for subject in 0..4 {
            let subject_id = format!("01-70{arm_number}-{:04}", 1001 + arm_number * 4 + subject);
            for (p, (code, label, unit)) in parameters.iter().enumerate() {
                for position in &at_positions {
                    // Deterministic values that differ by parameter, subject, arm and visit.
                    let base = 50.0 + 10.0 * p as f64 + subject as f64 + arm_number as f64;
                    for (v, visit) in visits.iter().enumerate() {
                        let value = base + 1.5 * v as f64 * (arm_number as f64 - 1.0);
                        let mut cells = vec![
                            "STUDY01".to_owned(),
                            subject_id.clone(),
                            "Y".to_owned(),
                            quote(arm),
                            arm_number.to_string(),
                            (*code).to_owned(),
                            quote(label),
                            quote(visit),
                            (v * 4).to_string(),
                        ];
                        if let Some((n, name)) = position {
                            cells.extend([quote(name), (n + 1).to_string()]);
                        }
                        cells.extend([
                            format!("{value:.1}"),
                            format!("{base:.1}"),
                            format!("{:.1}", value - base),
                            quote(unit),
                            if v == 0 { "Y" } else { "" }.to_owned(),
                        ]);
                        lines.push(cells.join(","));
                    }
                }
            }
        }
    }
    let bytes = (lines.join("\n") + "\n").into_bytes();
    let hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
    let table = read_dataset(&bytes).expect("the generated CSV reads");
    let profile = profile_table(&table, hash, 3);
    Study {
        table,
        hash,
        profile,
    }
}

fn ecg() -> &'static Study {
    static STUDY: OnceLock<Study> = OnceLock::new();
    STUDY.get_or_init(|| {
        study(
            &[
                ("QT", "QT Interval (msec)", "msec"),
                ("QTCF", "QTcF Interval, Fridericia (msec)", "msec"),
                ("QTCB", "QTcB Interval, Bazett (msec)", "msec"),
                ("HR", "Heart Rate (beats/min)", "beats/min"),
                ("RR", "RR Interval (msec)", "msec"),
                ("PR", "PR Interval (msec)", "msec"),
                ("QRS", "QRS Duration (msec)", "msec"),
            ],
            &[],
        )
    })
}

/// Vital signs with the position in the parameter: one parameter per position.
fn vitals_by_position() -> &'static Study {
    static STUDY: OnceLock<Study> = OnceLock::new();
    STUDY.get_or_init(|| {
        study(
            &[
                (
                    "SYSBPST",
                    "Systolic Blood Pressure, Standing (mmHg)",
                    "mmHg",
                ),
                ("SYSBPSI", "Systolic Blood Pressure, Sitting (mmHg)", "mmHg"),
                ("SYSBPSU", "Systolic Blood Pressure, Supine (mmHg)", "mmHg"),
                (
                    "DIABPST",
                    "Diastolic Blood Pressure, Standing (mmHg)",
                    "mmHg",
                ),
                (
                    "DIABPSI",
                    "Diastolic Blood Pressure, Sitting (mmHg)",
                    "mmHg",
                ),
                ("DIABPSU", "Diastolic Blood Pressure, Supine (mmHg)", "mmHg"),
                ("PULSE", "Pulse Rate (beats/min)", "beats/min"),
                ("TEMP", "Temperature (C)", "C"),
                ("WEIGHT", "Weight (kg)", "kg"),
                ("BMI", "Body Mass Index (kg/m2)", "kg/m2"),
            ],
            &[],
        )
    })
}

/// Vital signs with the position in another column (ATPT), as the CDISC pilot's ADVS has it.
fn vitals_with_atpt() -> &'static Study {
    static STUDY: OnceLock<Study> = OnceLock::new();
    STUDY.get_or_init(|| {
        study(
            &[
                ("SYSBP", "Systolic Blood Pressure (mmHg)", "mmHg"),
                ("DIABP", "Diastolic Blood Pressure (mmHg)", "mmHg"),
                ("PULSE", "Pulse Rate (beats/min)", "beats/min"),
                ("TEMP", "Temperature (C)", "C"),
                ("WEIGHT", "Weight (kg)", "kg"),
            ],
            &["STANDING", "SITTING", "SUPINE"],
        )
    })
}

fn labs() -> &'static Study {
    static STUDY: OnceLock<Study> = OnceLock::new();
    STUDY.get_or_init(|| {
        study(
            &[
                ("HGB", "Hemoglobin (g/dL)", "g/dL"),
                ("HBA1C", "Hemoglobin A1C (%)", "%"),
                ("GLUC", "Glucose (mg/dL)", "mg/dL"),
                ("GLUCU", "Glucose, Urine (mg/dL)", "mg/dL"),
                ("ALT", "Alanine Aminotransferase (U/L)", "U/L"),
                ("AST", "Aspartate Aminotransferase (U/L)", "U/L"),
                ("CREAT", "Creatinine (mg/dL)", "mg/dL"),
                ("CRCL", "Creatinine Clearance (mL/min)", "mL/min"),
            ],
            &[],
        )
    })
}

/// The CDISC pilot's ADLBC: every measured parameter has a derived-looking twin (`_ALT`,
/// "Alanine Aminotransferase (U/L) change from previous visit, relative to normal range").
fn pilot() -> &'static Study {
    static STUDY: OnceLock<Study> = OnceLock::new();
    STUDY.get_or_init(|| {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("../shared/data/adlbc.xpt");
        let bytes = std::fs::read(path).expect("the public test data ../shared/data/adlbc.xpt");
        let hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
        let table = read_dataset(&bytes).unwrap();
        let profile = profile_table(&table, hash, 5);
        Study {
            table,
            hash,
            profile,
        }
    })
}

/// What the matcher must make of a question.
enum Expected {
    /// This parameter, named by these words of the question.
    Chosen(&'static str, &'static [&'static str]),
    /// No proposal: these parameters (any order) are named equally well.
    Tie(&'static [&'static str]),
}

use Expected::{Chosen, Tie};

fn draft(study: &Study, question: &str) -> Draft {
    draft_spec(question, &study.profile, &study.table).unwrap()
}

/// Checks every case of `study` and returns the golden text of their parameter notes.
fn check(study: &Study, cases: &[(&str, Expected)]) -> String {
    let mut golden = String::new();
    for (question, expected) in cases {
        let draft = draft(study, question);
        let note = draft
            .matches
            .iter()
            .find(|n| n.field == "parameter")
            .unwrap();
        let parameter_open = draft.open_questions.iter().any(|q| q == "parameter");
        match expected {
            Chosen(code, words) => {
                let chosen = draft.spec.parameter.as_ref().map(|p| p.value.as_str());
                assert_eq!(chosen, Some(*code), "{question}: {}", note.why);
                assert_eq!(note.words, *words, "{question}");
                assert!(!parameter_open, "{question}");
                // Every word that named it is in the explanation.
                for word in *words {
                    assert!(
                        note.why.contains(&format!("{word:?}")),
                        "{question}: {}",
                        note.why
                    );
                }
            }
            Tie(codes) => {
                assert_eq!(draft.spec.parameter, None, "{question}: {}", note.why);
                assert!(parameter_open, "{question}");
                assert_eq!(note.chosen, "no proposal");
                let tied = note
                    .why
                    .strip_prefix("the question names ")
                    .and_then(|rest| rest.split(" equally well").next())
                    .unwrap_or_else(|| panic!("{question}: {}", note.why));
                let mut tied: Vec<&str> = tied.split(", ").collect();
                tied.sort_unstable();
                let mut expected_codes = codes.to_vec();
                expected_codes.sort_unstable();
                assert_eq!(tied, expected_codes, "{question}: {}", note.why);
                // The open question itself names them too.
                let question_why = &draft
                    .questions
                    .iter()
                    .find(|q| q.id == "parameter")
                    .unwrap()
                    .why;
                for code in *codes {
                    assert!(question_why.contains(code), "{question}: {question_why}");
                }
            }
        }
        golden.push_str(&format!(
            "{question}\n  chosen: {}\n  words: {}\n  why: {}\n\n",
            note.chosen,
            note.words.join(", "),
            note.why
        ));
    }
    golden
}

#[test]
fn ecg_corrections_and_intervals() {
    let golden = check(
        ecg(),
        &[
            (
                "QTc Fridericia change from baseline by visit",
                Chosen("QTCF", &["qtc", "fridericia"]),
            ),
            ("Bazett by visit", Chosen("QTCB", &["bazett"])),
            ("Bazett's QTc over time", Chosen("QTCB", &["bazett", "qtc"])),
            ("QTcF by visit and arm", Chosen("QTCF", &["qtcf"])),
            // The label "QT Interval" says exactly this: the uncorrected QT, as a
            // statistician reads it; QTcF and QTcB have "qt" only as the start of a word.
            ("QT interval by visit", Chosen("QT", &["qt", "interval"])),
            (
                "Fridericia-corrected QT interval",
                Chosen("QTCF", &["fridericia", "qt", "interval"]),
            ),
            ("QTc by visit", Tie(&["QTCB", "QTCF"])),
            ("heart rate by visit", Chosen("HR", &["heart", "rate"])),
            ("RR interval over time", Chosen("RR", &["rr", "interval"])),
            ("PR interval by visit", Chosen("PR", &["pr", "interval"])),
            ("QRS duration", Chosen("QRS", &["qrs", "duration"])),
            ("interval by visit", Tie(&["QT", "RR", "PR"])),
        ],
    );
    insta::assert_snapshot!("ecg", golden);
    // The change from baseline is plotted, and the proposal confirms.
    let qtcf = draft(ecg(), "QTc Fridericia change from baseline by visit");
    assert_eq!(qtcf.spec.value_column, "CHG");
    let why = &qtcf
        .matches
        .iter()
        .find(|n| n.field == "parameter")
        .unwrap()
        .why;
    assert!(
        why.ends_with("\"fridericia\" decided: QTCB matches only \"qtc\""),
        "{why}"
    );
    confirm_spec(&qtcf.spec, &ecg().table, ecg().hash).unwrap();
}

#[test]
fn vital_signs_with_the_position_in_the_label() {
    let golden = check(
        vitals_by_position(),
        &[
            (
                "standing systolic blood pressure by visit",
                Chosen("SYSBPST", &["standing", "systolic", "blood", "pressure"]),
            ),
            (
                "diastolic blood pressure supine",
                Chosen("DIABPSU", &["diastolic", "blood", "pressure", "supine"]),
            ),
            (
                "systolic blood pressure by visit",
                Tie(&["SYSBPST", "SYSBPSI", "SYSBPSU"]),
            ),
            ("sitting blood pressure", Tie(&["SYSBPSI", "DIABPSI"])),
            ("pulse by visit", Chosen("PULSE", &["pulse"])),
            ("temperature over time", Chosen("TEMP", &["temperature"])),
            ("body weight by visit", Chosen("WEIGHT", &["weight"])),
            ("BMI by visit", Chosen("BMI", &["bmi"])),
        ],
    );
    insta::assert_snapshot!("vitals_by_position", golden);
}

#[test]
fn vital_signs_with_the_position_in_atpt() {
    let golden = check(
        vitals_with_atpt(),
        &[
            ("blood pressure by visit", Tie(&["SYSBP", "DIABP"])),
            // The position is a record of the parameter here, not a parameter: the record
            // question settles it.
            (
                "standing systolic blood pressure",
                Chosen("SYSBP", &["systolic", "blood", "pressure"]),
            ),
            ("SBP by visit", Chosen("SYSBP", &["sbp"])),
            ("weight change from baseline", Chosen("WEIGHT", &["weight"])),
        ],
    );
    insta::assert_snapshot!("vitals_with_atpt", golden);

    // A tie stays open until answered: confirming refuses it by name, and the open question
    // names both parameters with their labels.
    let data = vitals_with_atpt();
    let tie = draft(data, "blood pressure by visit");
    let question = tie.questions.iter().find(|q| q.id == "parameter").unwrap();
    assert_eq!(question.proposed, None);
    assert!(
        question.why.starts_with(
            "The question names DIABP (Diastolic Blood Pressure (mmHg)) and SYSBP (Systolic Blood Pressure (mmHg)) equally well"
        ) || question.why.starts_with(
            "The question names SYSBP (Systolic Blood Pressure (mmHg)) and DIABP (Diastolic Blood Pressure (mmHg)) equally well"
        ),
        "{}",
        question.why
    );
    let errors = confirm_spec(&tie.spec, &data.table, data.hash).unwrap_err();
    assert!(
        errors.iter().any(|e| matches!(
            e,
            SpecError::Unanswered {
                question: "parameter",
                ..
            }
        )),
        "{errors:?}"
    );
}

#[test]
fn labs_whose_labels_share_words() {
    let golden = check(
        labs(),
        &[
            (
                "Hemoglobin A1C by visit",
                Chosen("HBA1C", &["hemoglobin", "a1c"]),
            ),
            ("hemoglobin by visit", Chosen("HGB", &["hemoglobin"])),
            ("HbA1c change from baseline", Chosen("HBA1C", &["hba1c"])),
            (
                "urine glucose by visit",
                Chosen("GLUCU", &["urine", "glucose"]),
            ),
            ("glucose by visit", Chosen("GLUC", &["glucose"])),
            (
                "creatinine clearance over time",
                Chosen("CRCL", &["creatinine", "clearance"]),
            ),
            ("creatinine by visit", Chosen("CREAT", &["creatinine"])),
            ("ALT over time by arm", Chosen("ALT", &["alt"])),
            ("SGOT by visit", Chosen("AST", &["sgot"])),
            ("aminotransferase by visit", Tie(&["ALT", "AST"])),
            // A code and another parameter's label word, one each: neither is silently picked.
            ("HGB A1C", Tie(&["HGB", "HBA1C"])),
        ],
    );
    insta::assert_snapshot!("labs", golden);
    // The explanations name the words that decided.
    let why = |question: &str| {
        draft(labs(), question)
            .matches
            .into_iter()
            .find(|n| n.field == "parameter")
            .unwrap()
            .why
    };
    assert_eq!(
        why("Hemoglobin A1C by visit"),
        "the words \"hemoglobin\", \"a1c\" are in its label \"Hemoglobin A1C (%)\"; \"a1c\" decided: HGB matches only \"hemoglobin\""
    );
    assert_eq!(
        why("hemoglobin by visit"),
        "the word \"hemoglobin\" is in its label \"Hemoglobin (g/dL)\"; HBA1C matches as many words (\"hemoglobin\"), but its label also says \"a1c\", which the question does not"
    );
    assert_eq!(
        why("urine glucose by visit"),
        "the words \"urine\", \"glucose\" are in its label \"Glucose, Urine (mg/dL)\"; \"urine\" decided: GLUC matches only \"glucose\""
    );
}

#[test]
fn the_pilot_questions_keep_their_parameters() {
    let golden = check(
        pilot(),
        &[
            ("ALT over time by arm", Chosen("ALT", &["alt"])),
            ("AST over time by arm", Chosen("AST", &["ast"])),
            ("SGPT over time by arm", Chosen("ALT", &["sgpt"])),
            ("albumin week 12 vs baseline", Chosen("ALB", &["albumin"])),
            (
                "change from baseline in creatinine",
                Chosen("CREAT", &["creatinine"]),
            ),
            (
                "creatine kinase by visit",
                Chosen("CK", &["creatine", "kinase"]),
            ),
            (
                "blood urea nitrogen by visit",
                Chosen("BUN", &["blood", "urea", "nitrogen"]),
            ),
            ("potassium over time", Chosen("K", &["potassium"])),
        ],
    );
    insta::assert_snapshot!("pilot", golden);
}
