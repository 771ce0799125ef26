//! Drafts on ADaM shaped like other studies' vital signs and ECG (several records per subject
//! and visit, their own words, text-valued parameters, no order variables) and on the pilot:
//! golden drafts (questions, proposals, explanations), the record question's answers as
//! confirmation sees them, and the property that accepting every proposal either confirms or
//! leaves exactly the questions the draft lists as open.

#[path = "support/study_shapes.rs"]
mod study_shapes;

use std::{path::PathBuf, sync::OnceLock};

use adamviz_engine::ingest::{
    confirm::{confirm_spec, SpecError},
    draft::{draft_spec, Draft},
    profile::profile_table,
    read_dataset,
    snapshot::{take_snapshot, SnapshotValue},
    table::Table,
};
use adamviz_engine::question::answer::apply_text_answer;
use adamviz_model::{
    confirmation::AllowedAnswers, digest::Sha256Digest, spec::RecordsPerSubjectVisit,
};
use proptest::prelude::*;
use sha2::{Digest, Sha256};
use study_shapes::{csv, ecg, vital_signs, Shape};

struct Dataset {
    table: Table,
    hash: Sha256Digest,
    profile: adamviz_model::profile::DatasetProfile,
}

fn dataset_of(bytes: &[u8]) -> Dataset {
    let hash = Sha256Digest::from_bytes(Sha256::digest(bytes).into());
    let table = read_dataset(bytes).unwrap();
    let profile = profile_table(&table, hash, 5);
    Dataset {
        table,
        hash,
        profile,
    }
}

fn vitals() -> &'static Dataset {
    static DATA: OnceLock<Dataset> = OnceLock::new();
    DATA.get_or_init(|| dataset_of(&csv(&vital_signs())))
}

fn ecgs() -> &'static Dataset {
    static DATA: OnceLock<Dataset> = OnceLock::new();
    DATA.get_or_init(|| dataset_of(&csv(&ecg())))
}

fn pilot() -> &'static Dataset {
    static DATA: OnceLock<Dataset> = OnceLock::new();
    DATA.get_or_init(|| {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("../shared/data/adlbc.xpt");
        dataset_of(&std::fs::read(path).expect("the public test data ../shared/data/adlbc.xpt"))
    })
}

fn draft(data: &Dataset, question: &str) -> Draft {
    draft_spec(question, &data.profile, &data.table).unwrap()
}

fn note<'a>(draft: &'a Draft, field: &str) -> &'a adamviz_model::matcher::MatchNote {
    draft.matches.iter().find(|n| n.field == field).unwrap()
}

fn proposed(draft: &Draft, id: &str) -> Option<String> {
    draft
        .questions
        .iter()
        .find(|q| q.id == id)
        .unwrap_or_else(|| panic!("no question {id}"))
        .proposed
        .clone()
}

/// The draft as a reviewer reads it: spec, explanations and questions, pretty JSON.
fn golden(draft: &Draft) -> String {
    serde_json::to_string_pretty(draft).unwrap()
}

/// Subject × visit combinations and records of a snapshot.
fn subject_visits_and_records(
    snapshot: &adamviz_engine::ingest::snapshot::Snapshot,
) -> (usize, usize) {
    let mut keys: Vec<(&SnapshotValue, &SnapshotValue, &SnapshotValue)> = snapshot
        .rows
        .iter()
        .map(|row| (&row[0], &row[1], &row[2]))
        .collect();
    let records = keys.len();
    keys.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    keys.dedup();
    (keys.len(), records)
}

#[test]
fn systolic_blood_pressure_asks_which_record_and_proposes_the_average() {
    let data = vitals();
    let draft = draft(data, "systolic blood pressure by visit and treatment");
    assert_eq!(draft.spec.parameter.as_ref().unwrap().value, "SYSBP");
    assert_eq!(
        note(&draft, "parameter").words,
        ["systolic", "blood", "pressure"]
    );
    assert_eq!(
        draft.spec.records_per_subject_visit,
        Some(RecordsPerSubjectVisit::OneWhere {
            column: "DTYPE".into(),
            value: "AVERAGE".into()
        })
    );
    assert_eq!(
        proposed(&draft, "records_per_subject_visit").as_deref(),
        Some("DTYPE=AVERAGE")
    );
    let question = draft
        .questions
        .iter()
        .find(|q| q.id == "records_per_subject_visit")
        .unwrap();
    let AllowedAnswers::RecordChoice { options } = &question.allowed else {
        panic!("{:?}", question.allowed)
    };
    let answers: Vec<&str> = options.iter().map(|o| o.answer.as_str()).collect();
    for expected in [
        "ATPT=AFTER LYING DOWN FOR 5 MINUTES",
        "ATPT=AFTER STANDING FOR 1 MINUTE",
        "ATPT=AFTER STANDING FOR 3 MINUTES",
        "DTYPE=AVERAGE",
        "every",
    ] {
        assert!(answers.contains(&expected), "{answers:?}");
    }
    // 84 subjects × 5 visits, each with 3 positions and an average.
    assert!(
        question.why.starts_with("420 of 420 subject × visit"),
        "{}",
        question.why
    );
    let average = options
        .iter()
        .find(|o| o.answer == "DTYPE=AVERAGE")
        .unwrap();
    assert_eq!(
        (
            average.resolves,
            average.still_several,
            average.subject_visits_lost
        ),
        (420, 0, 0)
    );
    assert!(
        draft.open_questions.is_empty(),
        "{:?}",
        draft.open_questions
    );
    // The unscheduled repeats are not proposed as visits.
    assert_eq!(
        draft.spec.visit.visits,
        ["Baseline", "Week 2", "Week 4", "Week 8", "Week 12"]
    );
    insta::assert_snapshot!("vital_signs_systolic", golden(&draft));

    // Accepted as proposed: one record per subject × visit, so N counts subjects.
    let confirmed = confirm_spec(&draft.spec, &data.table, data.hash).unwrap();
    let snapshot = take_snapshot(&confirmed, &data.table).unwrap();
    assert_eq!(subject_visits_and_records(&snapshot), (420, 420));
}

#[test]
fn the_record_question_is_enforced_by_confirmation() {
    let data = vitals();
    let base = draft(data, "systolic blood pressure by visit and treatment").spec;
    let confirm_with = |answer: &str| {
        let mut spec = base.clone();
        apply_text_answer(
            &mut spec,
            &data.profile,
            "records_per_subject_visit",
            answer,
        )
        .unwrap();
        confirm_spec(&spec, &data.table, data.hash)
    };
    // "one" is not true of this selection: refused, with examples.
    let errors = confirm_with("one").unwrap_err();
    assert!(
        matches!(
            errors.as_slice(),
            [SpecError::SeveralRecordsPerSubjectVisit {
                combinations: 420,
                ..
            }]
        ),
        "{errors:?}"
    );
    assert!(
        errors[0]
            .to_string()
            .contains("01-700-1001 / Baseline: 4 records"),
        "{}",
        errors[0]
    );
    // A position settles it too; the blank ATPT is the average record.
    for answer in ["ATPT=AFTER STANDING FOR 1 MINUTE", "ATPT="] {
        let spec = confirm_with(answer).unwrap();
        let snapshot = take_snapshot(&spec, &data.table).unwrap();
        assert_eq!(
            subject_visits_and_records(&snapshot),
            (420, 420),
            "{answer}"
        );
    }
    // Every record: confirmed, and the snapshot holds all four per subject × visit.
    let every = confirm_with("every").unwrap();
    let snapshot = take_snapshot(&every, &data.table).unwrap();
    assert_eq!(subject_visits_and_records(&snapshot), (420, 1680));
    // A value that does not occur is named.
    let errors = confirm_with("DTYPE=MEDIAN").unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        "records_per_subject_visit: \"MEDIAN\" does not occur in column \"DTYPE\""
    );
    // The answer is part of the spec hash.
    assert_ne!(
        confirm_with("DTYPE=AVERAGE").unwrap().spec_hash().unwrap(),
        every.spec_hash().unwrap()
    );
}

#[test]
fn qtcf_fridericia_and_bazett_find_their_ecg_parameters() {
    let data = ecgs();
    let qtcf = draft(data, "QTcF by visit and arm");
    assert_eq!(qtcf.spec.parameter.as_ref().unwrap().value, "QTCFR");
    assert_eq!(note(&qtcf, "parameter").words, ["qtcf"]);
    // The triplicates and their average: the average is flagged ANL02FL, and that flag is why
    // it is proposed, under its most telling name (the same records).
    assert_eq!(
        proposed(&qtcf, "records_per_subject_visit").as_deref(),
        Some("DTYPE=AVERAGE")
    );
    let AllowedAnswers::RecordChoice { options } = &qtcf
        .questions
        .iter()
        .find(|q| q.id == "records_per_subject_visit")
        .unwrap()
        .allowed
    else {
        panic!()
    };
    assert_eq!(options[0].answer, "DTYPE=AVERAGE");
    assert!(options[0].stands_for("ANL02FL=Y"), "{:?}", options[0]);
    // No AVISITN and no TRTAN: visits in first appearance, arms placebo first and doses
    // ascending, and the notes say so.
    assert_eq!(
        qtcf.spec.visit.visits,
        ["Baseline", "Week 2", "Week 8", "Week 16"]
    );
    assert!(note(&qtcf, "visits")
        .why
        .contains("order of first appearance"));
    assert_eq!(
        note(&qtcf, "treatment_variable").why,
        "TRTA: levels with Placebo first, then doses ascending (Low, High): there is no TRTAN and no related order variable"
    );
    assert!(qtcf.open_questions.is_empty());
    insta::assert_snapshot!("ecg_qtcf", golden(&qtcf));

    let fridericia = draft(data, "Fridericia by visit");
    assert_eq!(fridericia.spec.parameter.as_ref().unwrap().value, "QTCFR");
    assert_eq!(note(&fridericia, "parameter").words, ["fridericia"]);
    let bazett = draft(data, "Bazett's QTc over time");
    assert_eq!(bazett.spec.parameter.as_ref().unwrap().value, "QTCBR");
    let heart_rate = draft(data, "heart rate by visit");
    assert_eq!(heart_rate.spec.parameter.as_ref().unwrap().value, "EGHRMN");
    for answer in [&qtcf, &fridericia, &bazett, &heart_rate] {
        confirm_spec(&answer.spec, &data.table, data.hash).unwrap();
    }
}

#[test]
fn a_text_valued_or_unnamed_parameter_is_never_a_silent_default() {
    let data = ecgs();
    let interpretation = draft(data, "ECG interpretation by visit");
    assert_eq!(interpretation.spec.parameter, None);
    assert_eq!(interpretation.open_questions, ["parameter"]);
    let why = &note(&interpretation, "parameter").why;
    assert!(
        why.contains("EGINTP") && why.contains("no numbers in AVAL"),
        "{why}"
    );
    let question = interpretation
        .questions
        .iter()
        .find(|q| q.id == "parameter")
        .unwrap();
    let AllowedAnswers::OneOf { choices } = &question.allowed else {
        panic!()
    };
    assert!(!choices.contains(&"EGINTP".to_owned()), "{choices:?}");
    assert_eq!(question.unavailable[0].choice, "EGINTP");
    insta::assert_snapshot!("ecg_interpretation", golden(&interpretation));

    // Confirming refuses until it is answered, and says which question is open.
    let errors = confirm_spec(&interpretation.spec, &data.table, data.hash).unwrap_err();
    assert!(
        matches!(
            errors.as_slice(),
            [SpecError::Unanswered {
                question: "parameter",
                ..
            }]
        ),
        "{errors:?}"
    );
    // Answering it gives a spec that confirms once the record question is answered too.
    let mut spec = interpretation.spec.clone();
    apply_text_answer(&mut spec, &data.profile, "parameter", "QTCFR").unwrap();
    assert_eq!(spec.unit.as_deref(), Some("ms"));
    assert!(
        spec.title.starts_with("QTcF - Fridericia"),
        "{}",
        spec.title
    );
    apply_text_answer(
        &mut spec,
        &data.profile,
        "records_per_subject_visit",
        "ANL02FL=Y",
    )
    .unwrap();
    confirm_spec(&spec, &data.table, data.hash).unwrap();
    // The text parameter itself is refused with the reason, not "no record to plot".
    apply_text_answer(&mut spec, &data.profile, "parameter", "EGINTP").unwrap();
    apply_text_answer(&mut spec, &data.profile, "records_per_subject_visit", "one").unwrap();
    let errors = confirm_spec(&spec, &data.table, data.hash).unwrap_err();
    assert!(
        matches!(errors.as_slice(), [SpecError::NoValueToPlot { .. }]),
        "{errors:?}"
    );

    let nothing = draft(data, "something else entirely");
    assert_eq!(nothing.open_questions, ["parameter"]);
    assert!(note(&nothing, "parameter")
        .why
        .starts_with("no word of the question matched"));
    let ambiguous = draft(vitals(), "blood pressure by visit");
    assert_eq!(ambiguous.open_questions, ["parameter"]);
    assert!(
        note(&ambiguous, "parameter").why.contains("DIABP, SYSBP")
            || note(&ambiguous, "parameter").why.contains("SYSBP, DIABP"),
        "{}",
        note(&ambiguous, "parameter").why
    );
}

#[test]
fn synonyms_find_only_parameters_present() {
    let sbp = draft(vitals(), "SBP by visit");
    assert_eq!(sbp.spec.parameter.as_ref().unwrap().value, "SYSBP");
    assert!(note(&sbp, "parameter").why.contains("synonym"));
    assert_eq!(
        draft(vitals(), "heart rate by visit")
            .spec
            .parameter
            .unwrap()
            .value,
        "PULSE"
    );
    let pilot_sgpt = draft(pilot(), "SGPT over time by arm");
    assert_eq!(pilot_sgpt.spec.parameter.unwrap().value, "ALT");
    // No haemoglobin in the ECG data: no proposal rather than another parameter.
    assert_eq!(draft(ecgs(), "haemoglobin by visit").spec.parameter, None);
}

#[test]
fn the_pilot_alt_draft_is_unchanged_in_substance() {
    let data = pilot();
    let draft = draft(data, "ALT over time by arm");
    assert_eq!(draft.spec.parameter.as_ref().unwrap().value, "ALT");
    // ANL01FL already leaves one record per subject and visit: no record question.
    assert_eq!(
        draft.spec.records_per_subject_visit,
        Some(RecordsPerSubjectVisit::One)
    );
    assert!(!draft
        .questions
        .iter()
        .any(|q| q.id == "records_per_subject_visit"));
    assert!(note(&draft, "treatment_variable")
        .why
        .contains("ordered by TRTAN"));
    insta::assert_snapshot!("pilot_alt", golden(&draft));
    confirm_spec(&draft.spec, &data.table, data.hash).unwrap();
}

/// The shapes a property test draws from.
fn shapes() -> impl Strategy<Value = Shape> {
    (
        0usize..4,
        1usize..4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
        (2usize..6, any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                positions,
                replicates,
                average,
                flag,
                unscheduled,
                retests,
                text,
                order_variables,
                seed,
                (subjects, reverse_arms, safety_flag),
            )| Shape {
                subjects_per_arm: subjects,
                arms: vec!["Placebo", "Drug A", "Drug B"],
                parameters: vec![
                    ("SYSBP", "Systolic Blood Pressure (mmHg)", "mmHg"),
                    (
                        "QTCFR",
                        "QTcF - Fridericia's Correction Formula Rederived (ms)",
                        "ms",
                    ),
                    ("WEIGHT", "Weight (kg)", "kg"),
                ],
                visits: vec!["Baseline", "Week 2", "Week 4", "Week 12"],
                time_points: ["LYING", "STANDING 1 MIN", "STANDING 3 MIN"][..positions].to_vec(),
                replicates,
                average,
                flag_on_average: flag.then_some("ANL03FL"),
                unscheduled,
                retests,
                text_parameter: text.then_some(("EGINTP", "ECG Interpretation")),
                order_variables,
                safety_flag,
                reverse_arms,
                seed,
            },
        )
}

const QUESTIONS: [&str; 6] = [
    "systolic blood pressure by visit and treatment",
    "QTcF over time by arm",
    "change from baseline in weight",
    "ECG interpretation by visit",
    "blood pressure",
    "what happened",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Accepting every proposal confirms, or leaves exactly the questions the draft lists as
    /// open; never "no record to plot" or "nothing to plot".
    #[test]
    fn accepting_every_proposal_confirms_or_leaves_exactly_the_open_questions(shape in shapes()) {
        let data = dataset_of(&csv(&shape));
        for question in QUESTIONS {
            let draft = draft_spec(question, &data.profile, &data.table).unwrap();
            match confirm_spec(&draft.spec, &data.table, data.hash) {
                Ok(confirmed) => {
                    prop_assert!(draft.open_questions.is_empty(), "{question}: {:?}", draft.open_questions);
                    let snapshot = take_snapshot(&confirmed, &data.table).unwrap();
                    let (subject_visits, records) = subject_visits_and_records(&snapshot);
                    prop_assert_eq!(subject_visits, records, "{}: several records per subject and visit", question);
                }
                Err(errors) => {
                    let mut unanswered: Vec<&str> = errors
                        .iter()
                        .map(|e| match e {
                            SpecError::Unanswered { question, .. } => Ok(*question),
                            other => Err(other.to_string()),
                        })
                        .collect::<Result<_, _>>()
                        .map_err(|other| TestCaseError::fail(format!("{question}: {other}")))?;
                    unanswered.sort_unstable();
                    let mut open: Vec<&str> = draft.open_questions.iter().map(String::as_str).collect();
                    open.sort_unstable();
                    prop_assert_eq!(unanswered, open, "{}", question);
                }
            }
        }
    }
}
