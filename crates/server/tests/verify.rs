//! The verifier on a real governed run of the pilot ALT spec: the run passes every check, and
//! a result with exactly one thing wrong fails exactly the check that establishes it.

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

use adamviz_engine::runner::{canonical_hash, RunResult, RunStatus, Runner};
use adamviz_evidence::execution_checks::{verify_execution_result, VerificationInput, CHECK_NAMES};
use adamviz_evidence::{
    execution_request::ExecutionRequest, execution_verification::ExecutionVerificationRecord,
    record::seal,
};
use adamviz_model::digest::Sha256Digest;
use adamviz_store::ledger::append_evidence;
use r_fixtures::*;
use sha2::{Digest, Sha256};

fn sha256(bytes: &[u8]) -> Sha256Digest {
    Sha256Digest::from_bytes(Sha256::digest(bytes).into())
}

fn set_output(result: &mut RunResult, name: &str, bytes: Vec<u8>) {
    let output = result.outputs.iter_mut().find(|o| o.name == name).unwrap();
    output.sha256 = sha256(&bytes);
    output.size = bytes.len() as u64;
    output.bytes = bytes;
}

/// Rewrites statistics.json through `change`, keeping the reported hashes consistent.
fn edit_statistics(result: &mut RunResult, change: impl Fn(&mut serde_json::Value)) {
    let mut statistics: serde_json::Value =
        serde_json::from_slice(&result.output("statistics.json").unwrap().bytes).unwrap();
    change(&mut statistics);
    result.analytical_hash = Some(canonical_hash(&statistics).unwrap());
    set_output(
        result,
        "statistics.json",
        serde_json::to_vec(&statistics).unwrap(),
    );
}

fn png(width: u32, height: u32, varied: bool) -> Vec<u8> {
    let image = image::RgbaImage::from_fn(width, height, |x, _| {
        image::Rgba([if varied && x % 7 == 0 { 0 } else { 255 }, 255, 255, 255])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    image.write_to(&mut bytes, image::ImageFormat::Png).unwrap();
    bytes.into_inner()
}

#[test]
fn each_wrong_thing_fails_exactly_its_check() {
    let (spec, pilot) = pilot_alt();
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(Runner::new(test_config(dir.path())).run(pilot.run_request()));
    assert_eq!(
        result.status,
        RunStatus::Succeeded,
        "{}",
        result.stderr.text
    );
    let mut csv = Vec::new();
    adamviz_engine::ingest::snapshot::write_csv(&pilot.snapshot, &mut csv).unwrap();
    let request = seal(
        ExecutionRequest::new(
            adamviz_model::ids::RevisionId::parse(&format!("rev-{}", "a1".repeat(16))).unwrap(),
            pilot.script.spec_hash,
            pilot.script.script_hash,
            sha256(&csv),
            pilot.snapshot_hash,
            pilot.image,
            adamviz_engine::compiler::report_text::ReportText {
                title: "a title".to_owned(),
                footnotes: vec!["a footnote".to_owned()],
            },
            "2026-12-03T08:40:00.000000Z".to_owned(),
            adamviz_evidence::actor::Actor::command_line(),
            adamviz_services::provenance::this_build(),
        ),
        Sha256Digest::from_bytes([0; 32]),
    )
    .unwrap();
    let input = VerificationInput {
        request: &request,
        spec,
        snapshot: &pilot.snapshot,
        script: &pilot.script.bytes,
        result: &result,
    };
    let verification = verify_execution_result(&input);
    assert!(verification.passed, "{verification:#?}");
    let names: Vec<&str> = verification
        .checks
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, CHECK_NAMES);

    let other = Sha256Digest::from_bytes([0xee; 32]);
    let mut other_spec = spec.clone();
    other_spec.title.push_str(" (edited)");
    type Mutation = Box<dyn Fn(&mut RunResult)>;
    let cases: Vec<(&str, Mutation, &[&str])> = vec![
        (
            "result of another schema version",
            Box::new(|r| r.schema_version = "execution-result-v0".into()),
            &["schema"],
        ),
        (
            "runner reports another script hash",
            Box::new(move |r| r.script_hash = other),
            &["script_hash"],
        ),
        (
            "runner reports another snapshot hash",
            Box::new(move |r| r.snapshot_hash = other),
            &["snapshot_hash"],
        ),
        (
            "over the wall-clock limit",
            Box::new(|r| r.duration_ms = r.limits.wall_clock_ms + 1),
            &["runner_success"],
        ),
        (
            "statistics for another spec",
            Box::new(|r| edit_statistics(r, |s| s["spec_hash"] = "ab".repeat(32).into())),
            &["result_manifest"],
        ),
        (
            "wrong analytical hash",
            Box::new(move |r| r.analytical_hash = Some(other)),
            &["analytical_hash"],
        ),
        (
            "PNG hash that is not the bytes'",
            Box::new(move |r| {
                r.outputs
                    .iter_mut()
                    .find(|o| o.name == "plot.png")
                    .unwrap()
                    .sha256 = other
            }),
            &["image_hash"],
        ),
        (
            "a blank PNG",
            Box::new(|r| set_output(r, "plot.png", png(1200, 840, false))),
            &["image_hash"],
        ),
        (
            "a PNG of the wrong size",
            Box::new(|r| set_output(r, "plot.png", png(600, 420, true))),
            &["image_hash"],
        ),
        (
            "bytes that are not PNG",
            Box::new(|r| set_output(r, "plot.png", b"GIF89a".to_vec())),
            &["image_hash"],
        ),
        (
            "wrong environment fingerprint",
            Box::new(move |r| r.environment_fingerprint = Some(other)),
            &["environment_fingerprint"],
        ),
        (
            "R's mean of one cell off by 1e-6",
            Box::new(|r| {
                edit_statistics(r, |s| {
                    let mean = s["cells"][3]["mean"].as_f64().unwrap();
                    s["cells"][3]["mean"] = (mean * (1.0 + 1e-6)).into();
                })
            }),
            // statistics.csv was written with the statistics R computed, so it no longer
            // holds what statistics.json now says.
            &["independent_statistics", "report_outputs"],
        ),
        (
            "R's low-N flag flipped",
            Box::new(|r| {
                edit_statistics(r, |s| {
                    let low = s["cells"][29]["low_n"].as_bool().unwrap();
                    s["cells"][29]["low_n"] = (!low).into();
                })
            }),
            // statistics.csv was written with the statistics R computed, so it no longer
            // holds what statistics.json now says.
            &["independent_statistics", "report_outputs"],
        ),
        (
            "a PDF that is not one",
            Box::new(|r| set_output(r, "plot.pdf", b"%PDF-1.5\nnot a document\n%%EOF\n".to_vec())),
            &["report_outputs"],
        ),
        (
            "an SVG cut short",
            Box::new(|r| {
                let svg = r.output("plot.svg").unwrap().bytes.clone();
                set_output(r, "plot.svg", svg[..svg.len() / 2].to_vec())
            }),
            &["report_outputs"],
        ),
        (
            "a CSV with one median changed",
            Box::new(|r| {
                let csv =
                    String::from_utf8(r.output("statistics.csv").unwrap().bytes.clone()).unwrap();
                let mut lines: Vec<String> = csv.lines().map(str::to_owned).collect();
                let median = lines[0].split(',').position(|c| c == "median").unwrap();
                let mut fields: Vec<String> = lines[4].split(',').map(str::to_owned).collect();
                fields[median] = "12345.5".to_owned();
                lines[4] = fields.join(",");
                set_output(
                    r,
                    "statistics.csv",
                    format!("{}\n", lines.join("\n")).into_bytes(),
                )
            }),
            &["report_outputs"],
        ),
    ];
    for (name, mutate, checks) in cases {
        let mut wrong = result.clone();
        mutate(&mut wrong);
        let verification = verify_execution_result(&VerificationInput {
            result: &wrong,
            ..input
        });
        assert!(!verification.passed, "{name}: passed");
        assert_eq!(
            verification.failed, checks,
            "{name}: {:#?}",
            verification.checks
        );
        for check in checks {
            let reason = verification
                .checks
                .iter()
                .find(|c| c.name == *check)
                .unwrap()
                .reason
                .clone();
            assert!(reason.is_some_and(|r| !r.is_empty()), "{name}: no reason");
        }
    }
    // Both verdicts are recordable evidence, chained after the request in a real ledger.
    let database_dir = tempfile::tempdir().unwrap();
    let database = adamviz_store::db::Database::open_in(database_dir.path()).unwrap();
    let mut connection = database.connection().unwrap();
    let transaction = connection.transaction().unwrap();
    let stored_request = append_evidence(&transaction, request.record().clone()).unwrap();
    let failing = verify_execution_result(&VerificationInput {
        result: &{
            let mut r = result.clone();
            r.analytical_hash = Some(other);
            r
        },
        ..input
    });
    for verdict in [&verification, &failing] {
        let record = ExecutionVerificationRecord::new(
            adamviz_model::ids::RevisionId::parse(&format!("rev-{}", "a1".repeat(16))).unwrap(),
            adamviz_model::ids::AttemptId::parse(&format!("att-{}", "b2".repeat(16))).unwrap(),
            *stored_request.record_hash(),
            verdict,
            &result,
            "2026-12-03T08:41:00.000000Z".to_owned(),
        );
        let stored = append_evidence(&transaction, record).unwrap();
        assert_eq!(stored.record().passed, verdict.passed);
    }
    transaction.commit().unwrap();
    let report = adamviz_store::ledger::verify_ledger(&connection).unwrap();
    assert_eq!((report.records, report.first_break), (3, None));
    // A verdict that claims to pass with a failed check is refused by its schema.
    let mut forged = ExecutionVerificationRecord::new(
        adamviz_model::ids::RevisionId::parse(&format!("rev-{}", "a1".repeat(16))).unwrap(),
        adamviz_model::ids::AttemptId::parse(&format!("att-{}", "b2".repeat(16))).unwrap(),
        *stored_request.record_hash(),
        &failing,
        &result,
        "2026-12-03T08:42:00.000000Z".to_owned(),
    );
    forged.passed = true;
    let transaction = connection.transaction().unwrap();
    assert!(matches!(
        append_evidence(&transaction, forged),
        Err(adamviz_store::ledger::AppendEvidenceError::Evidence(
            adamviz_evidence::record::EvidenceError::Schema { .. }
        ))
    ));
    drop(transaction);
    assert_eq!(
        adamviz_store::ledger::verify_ledger(&connection)
            .unwrap()
            .records,
        3
    );

    // The spec that ran is not the one the request names.
    let verification = verify_execution_result(&VerificationInput {
        spec: &other_spec,
        ..input
    });
    assert_eq!(
        verification.failed,
        ["script_provenance"],
        "{:#?}",
        verification.checks
    );
    // The script that ran is not the one compiled from the spec (and not the requested one).
    let mut tampered = pilot.script.bytes.clone();
    let at = tampered.iter().position(|&b| b == b'5').unwrap();
    tampered[at] = b'6';
    let verification = verify_execution_result(&VerificationInput {
        script: &tampered,
        ..input
    });
    assert_eq!(verification.failed, ["script_hash", "script_provenance"]);
    // A failed run fails runner_success (and the checks that need its outputs).
    let mut failed = result.clone();
    failed.status = RunStatus::Failed;
    failed.exit_code = Some(1);
    let verification = verify_execution_result(&VerificationInput {
        result: &failed,
        ..input
    });
    assert!(!verification.passed && verification.failed.contains(&"runner_success".to_owned()));
}

#[path = "support/study_shapes.rs"]
mod study_shapes;

/// Runs `spec` over `table` with real R and verifies it; the result and the verdict.
fn run_and_verify(
    spec: &adamviz_model::spec::PlotSpec,
    table: &adamviz_engine::ingest::table::Table,
    hash: &Sha256Digest,
) -> (
    RunResult,
    adamviz_evidence::execution_checks::ExecutionVerification,
    adamviz_services::prepare::PreparedExecution,
) {
    let prepared = adamviz_services::prepare::prepare_execution(
        spec,
        table,
        hash,
        adamviz_engine::compiler::ImageSize::default(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(Runner::new(test_config(dir.path())).run(prepared.run_request()));
    let mut csv = Vec::new();
    adamviz_engine::ingest::snapshot::write_csv(&prepared.snapshot, &mut csv).unwrap();
    let request = seal(
        ExecutionRequest::new(
            adamviz_model::ids::RevisionId::parse(&format!("rev-{}", "c3".repeat(16))).unwrap(),
            prepared.script.spec_hash,
            prepared.script.script_hash,
            sha256(&csv),
            prepared.snapshot_hash,
            prepared.image,
            adamviz_engine::compiler::report_text::ReportText {
                title: "a title".to_owned(),
                footnotes: vec!["a footnote".to_owned()],
            },
            "2026-12-04T08:40:00.000000Z".to_owned(),
            adamviz_evidence::actor::Actor::command_line(),
            adamviz_services::provenance::this_build(),
        ),
        Sha256Digest::from_bytes([0; 32]),
    )
    .unwrap();
    let verification = verify_execution_result(&VerificationInput {
        request: &request,
        spec,
        snapshot: &prepared.snapshot,
        script: &prepared.script.bytes,
        result: &result,
    });
    (result, verification, prepared)
}

/// Vital signs with three positions and an average per visit: a spec that keeps every record
/// verifies, with R's N of records above its N of subjects; the same records under a spec that
/// says one record per subject and visit (and nothing else wrong: the script, snapshot and R's
/// statistics all belong to that spec) fail exactly `independent_statistics`, for its own
/// reason.
#[test]
fn several_records_under_a_one_record_spec_fail_exactly_independent_statistics() {
    use adamviz_engine::question::answer::apply_text_answer;
    use adamviz_model::spec::RecordsPerSubjectVisit;
    let bytes = study_shapes::csv(&study_shapes::vital_signs());
    let hash = sha256(&bytes);
    let table = adamviz_engine::ingest::read_dataset(&bytes).unwrap();
    let profile = adamviz_engine::ingest::profile::profile_table(&table, hash, 5);
    let mut draft = adamviz_engine::ingest::draft::draft_spec(
        "systolic blood pressure by visit",
        &profile,
        &table,
    )
    .unwrap()
    .spec;
    apply_text_answer(&mut draft, &profile, "records_per_subject_visit", "every").unwrap();
    let every = adamviz_engine::ingest::confirm::confirm_spec(&draft, &table, hash).unwrap();

    let (result, verification, _) = run_and_verify(&every, &table, &hash);
    assert_eq!(
        result.status,
        RunStatus::Succeeded,
        "{}",
        result.stderr.text
    );
    assert!(verification.passed, "{verification:#?}");
    let statistics: serde_json::Value =
        serde_json::from_slice(&result.output("statistics.json").unwrap().bytes).unwrap();
    assert_eq!(statistics["records_per_subject_visit"], "every");
    let first = &statistics["cells"][0];
    assert_eq!(
        (first["n"].as_u64(), first["n_subjects"].as_u64()),
        (Some(112), Some(28))
    );

    // Same records, a spec that claims one per subject and visit (not through confirmation,
    // which refuses it): compiled, snapshotted and run for that spec.
    let mut one = every.clone();
    one.records_per_subject_visit = Some(RecordsPerSubjectVisit::One);
    let (result, verification, _) = run_and_verify(&one, &table, &hash);
    assert_eq!(
        result.status,
        RunStatus::Succeeded,
        "{}",
        result.stderr.text
    );
    assert_eq!(
        verification.failed,
        ["independent_statistics"],
        "{verification:#?}"
    );
    let reason = verification
        .checks
        .iter()
        .find(|c| c.name == "independent_statistics")
        .and_then(|c| c.reason.clone())
        .unwrap();
    assert!(
        reason.starts_with("one_record_per_subject_visit: ")
            && reason.contains("420 subject × visit combinations"),
        "{reason}"
    );
}
