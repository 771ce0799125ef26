//! The compiler against real R: golden scripts (insta snapshots) that R parses and runs, user
//! text of any kind compiled into scripts that echo it back unchanged, and a detached run of
//! the pilot ALT script equal to the governed run.

#[path = "support/r_fixtures.rs"]
mod r_fixtures;

use std::path::Path;

use std::sync::Arc;

use adamviz_engine::ingest::snapshot::SnapshotValue;
use adamviz_engine::runner::{RunStatus, Runner};
use adamviz_engine::verify::independent_statistics::{compare_with_r, compute_cell_statistics};
use adamviz_model::spec::{LowNAction, YScale};
use proptest::prelude::*;
use r_fixtures::*;

fn hostile_texts() -> SpecTexts {
    SpecTexts {
        subject_column: "subject id\"; system(\"touch /tmp/pwned\")".into(),
        treatment_column: "arm`\\".into(),
        visit_column: "visit\nlabel".into(),
        value_column: "value (\u{00b5}mol/L) $x".into(),
        levels: vec![
            "\"); system(\"echo pwned\"); (\"".into(),
            "Drug \u{00e9}\u{202e} \\n literal".into(),
            "NA".into(),
        ],
        visits: vec!["Day 1".into(), "Week 2 #comment".into()],
        unit: Some("\u{00b5}mol/L\t'".into()),
        title: "A \"quoted\" title\nwith a second line and \u{1F600}".into(),
        question: "what about `backticks` and \\ backslashes?".into(),
    }
}

#[test]
fn golden_scripts_are_stable_and_parsed_and_run_by_r() {
    let plain = SpecTexts::plain();
    let mut no_unit = SpecTexts::plain();
    no_unit.unit = None;
    let cases = [
        (
            "plain_fixed_annotate",
            plain,
            YScale::Fixed,
            LowNAction::Annotate,
        ),
        (
            "free_points_only_no_unit",
            no_unit,
            YScale::Free,
            LowNAction::PointsOnly,
        ),
        (
            "hostile_text_suppress_box",
            hostile_texts(),
            YScale::Fixed,
            LowNAction::SuppressBox,
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let runner = Runner::new(test_config(dir.path()));
    let mut files = Vec::new();
    for (name, texts, y_scale, below) in cases {
        let spec = spec_from(&texts, y_scale, below);
        let (script, request) = compiled(&spec, snapshot_from(&texts));
        let text = String::from_utf8(script.bytes.clone()).unwrap();
        insta::assert_snapshot!(name, text);
        // The same spec and compiler give the same bytes.
        assert_eq!(compiled(&spec, snapshot_from(&texts)).0.bytes, script.bytes);
        assert!(
            text.is_ascii(),
            "{name}: the printer escapes all non-ASCII text"
        );
        assert!(
            text.lines().all(|l| !l.ends_with(' ')),
            "{name}: trailing blanks"
        );
        let file = dir.path().join(format!("{name}.R"));
        std::fs::write(&file, &script.bytes).unwrap();
        files.push(file);
        let result = runtime.block_on(runner.run(request));
        assert_eq!(
            result.status,
            RunStatus::Succeeded,
            "{name}: {:?}\n{}",
            result.failure,
            result.stderr.text
        );
        // For a reviewer who wants to look at the plots: ADAMVIZ_TEST_PNG_DIR=dir.
        if let Some(keep) = std::env::var_os("ADAMVIZ_TEST_PNG_DIR") {
            let png = &result.output("plot.png").unwrap().bytes;
            std::fs::write(Path::new(&keep).join(format!("{name}.png")), png).unwrap();
        }
    }
    let (_, pilot) = pilot_alt();
    insta::assert_snapshot!(
        "pilot_alt",
        String::from_utf8(pilot.script.bytes.clone()).unwrap()
    );
    let pilot_file = dir.path().join("pilot_alt.R");
    std::fs::write(&pilot_file, &pilot.script.bytes).unwrap();
    files.push(pilot_file);
    let paths: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    let parsed = rscript(
        "for (f in commandArgs(TRUE)) cat(length(parse(f, keep.source = FALSE)), '')",
        &paths,
    );
    let counts: Vec<usize> = parsed
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 4);
    assert!(
        counts.iter().all(|&n| n >= 8),
        "top-level expressions: {counts:?}"
    );
}

/// Text pieces that break naive code generation.
fn nasty_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just("\\".to_owned()),
        Just("\\n".to_owned()),
        Just("\n".to_owned()),
        Just("\t".to_owned()),
        Just("`".to_owned()),
        Just("\"); system(\"echo pwned\"); (\"".to_owned()),
        Just("#".to_owned()),
        Just("$x".to_owned()),
        Just("%in%".to_owned()),
        Just("{".to_owned()),
        Just("NA".to_owned()),
        Just("\u{00e9}".to_owned()),
        Just("\u{1F600}".to_owned()),
        Just("\u{202e}".to_owned()),
        Just("\u{4e2d}\u{6587}".to_owned()),
        "[A-Za-z0-9 ._-]{1,6}",
    ]
}

fn nasty_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(nasty_piece(), 1..5)
        .prop_map(|pieces| format!("x{}", pieces.concat()))
}

fn nasty_texts() -> impl Strategy<Value = SpecTexts> {
    (
        proptest::collection::vec(nasty_text(), 4),
        proptest::collection::btree_set(nasty_text(), 1..4),
        proptest::collection::btree_set(nasty_text(), 1..4),
        proptest::option::of(nasty_text()),
        nasty_text(),
        nasty_text(),
    )
        .prop_filter_map(
            "column names must differ",
            |(columns, levels, visits, unit, title, question)| {
                let distinct: std::collections::BTreeSet<_> = columns.iter().collect();
                (distinct.len() == 4).then(|| SpecTexts {
                    subject_column: columns[0].clone(),
                    treatment_column: columns[1].clone(),
                    visit_column: columns[2].clone(),
                    value_column: columns[3].clone(),
                    levels: levels.into_iter().collect(),
                    // Visit labels are compared blank-trimmed.
                    visits: visits.into_iter().map(|v| v.trim().to_owned()).collect(),
                    unit,
                    title,
                    question,
                })
            },
        )
        .prop_filter("visits must differ once trimmed", |t| {
            let distinct: std::collections::BTreeSet<_> = t.visits.iter().collect();
            distinct.len() == t.visits.len()
        })
}

proptest! {
    // Every case is a real R run (about a second and a half).
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_text_compiles_to_a_script_that_echoes_it_back(texts in nasty_texts()) {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let runner = Runner::new(test_config(dir.path()));
        let spec = spec_from(&texts, YScale::Fixed, LowNAction::Annotate);
        let (_, request) = compiled(&spec, snapshot_from(&texts));
        let result = runtime.block_on(runner.run(request));
        prop_assert_eq!(result.status, RunStatus::Succeeded, "{:?}\n{}", result.failure, result.stderr.text);
        let statistics: serde_json::Value =
            serde_json::from_slice(&result.output("statistics.json").unwrap().bytes).unwrap();
        prop_assert_eq!(&statistics["title"], &serde_json::json!(texts.title));
        prop_assert_eq!(&statistics["question"], &serde_json::json!(texts.question));
        prop_assert_eq!(&statistics["unit"], &serde_json::json!(texts.unit));
        prop_assert_eq!(&statistics["subject_column"], &serde_json::json!(texts.subject_column));
        prop_assert_eq!(&statistics["treatment_column"], &serde_json::json!(texts.treatment_column));
        prop_assert_eq!(&statistics["visit_column"], &serde_json::json!(texts.visit_column));
        prop_assert_eq!(&statistics["value_column"], &serde_json::json!(texts.value_column));
        prop_assert_eq!(&statistics["treatment_levels"], &serde_json::json!(texts.levels));
        prop_assert_eq!(&statistics["visits"], &serde_json::json!(texts.visits));
        let cells = statistics["cells"].as_array().unwrap();
        prop_assert_eq!(cells.len(), texts.levels.len() * texts.visits.len());
        let mut i = 0;
        for level in &texts.levels {
            for visit in &texts.visits {
                prop_assert_eq!(&cells[i]["treatment"], &serde_json::json!(level));
                prop_assert_eq!(&cells[i]["visit"], &serde_json::json!(visit));
                // Every record was read back: each cell has its subjects.
                prop_assert!(cells[i]["n_subjects"].as_u64().unwrap() >= 2);
                i += 1;
            }
        }
        let ours = compute_cell_statistics(&spec, &snapshot_from(&texts)).unwrap();
        let differences = compare_with_r(&ours, &statistics["cells"]);
        prop_assert!(differences.is_empty(), "{:?}", differences);
    }

    // adamviz's own statistics (the verifier's double programming) against R's on values of
    // every magnitude, ties, signed zeros and missing values.
    #[test]
    fn adamviz_computes_the_statistics_r_reports(
        values in proptest::collection::vec(
            proptest::option::weighted(0.9, prop_oneof![
                -1e6..1e6f64,
                Just(0.0), Just(-0.0), Just(1e300), Just(-1e-300), Just(0.1), Just(7.0),
            ]),
            30..120,
        ),
    ) {
        let texts = SpecTexts::plain();
        let spec = spec_from(&texts, YScale::Fixed, LowNAction::Annotate);
        let mut snapshot = snapshot_from(&texts);
        let mut values = values.into_iter().cycle();
        for row in &mut snapshot.rows {
            row[3] = match values.next().unwrap() {
                Some(v) => SnapshotValue::Number(v),
                None => SnapshotValue::Missing,
            };
        }
        // A few more records per cell, so that quartiles interpolate.
        let extra: Vec<_> = snapshot.rows.iter().take(12).cloned().map(|mut row| {
            row[0] = SnapshotValue::Text(Arc::from("EXTRA"));
            row
        }).collect();
        snapshot.rows.extend(extra);
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let runner = Runner::new(test_config(dir.path()));
        let (_, request) = compiled(&spec, snapshot.clone());
        let result = runtime.block_on(runner.run(request));
        prop_assert_eq!(result.status, RunStatus::Succeeded, "{:?}\n{}", result.failure, result.stderr.text);
        let statistics: serde_json::Value =
            serde_json::from_slice(&result.output("statistics.json").unwrap().bytes).unwrap();
        let ours = compute_cell_statistics(&spec, &snapshot).unwrap();
        let differences = compare_with_r(&ours, &statistics["cells"]);
        prop_assert!(differences.is_empty(), "{:?}", differences);
    }
}

#[test]
fn a_detached_run_of_the_pilot_alt_script_equals_the_governed_run() {
    let (_, pilot) = pilot_alt();
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let runner = Runner::new(test_config(dir.path()));
    let governed = runtime.block_on(runner.run(pilot.run_request()));
    assert_eq!(
        governed.status,
        RunStatus::Succeeded,
        "{:?}\n{}",
        governed.failure,
        governed.stderr.text
    );

    let detached_dir = dir.path().join("detached");
    std::fs::create_dir(&detached_dir).unwrap();
    std::fs::write(detached_dir.join("script.R"), &pilot.script.bytes).unwrap();
    let mut csv = Vec::new();
    adamviz_engine::ingest::snapshot::write_csv(&pilot.snapshot, &mut csv).unwrap();
    std::fs::write(detached_dir.join("snapshot.csv"), csv).unwrap();
    let status = std::process::Command::new("Rscript")
        .args(["--vanilla", "script.R", "snapshot.csv", "out"])
        .current_dir(&detached_dir)
        .status()
        .expect("Rscript must be installed");
    assert!(status.success());

    let read_json = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
    let detached_statistics =
        read_json(&std::fs::read(detached_dir.join("out/statistics.json")).unwrap());
    let governed_statistics = read_json(&governed.output("statistics.json").unwrap().bytes);
    assert_eq!(detached_statistics, governed_statistics);
    // The pilot's known N: 86 placebo subjects with ALT at baseline, 25 on low dose at week 26.
    let cells = governed_statistics["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 30);
    assert_eq!(cells[0]["n_subjects"], 86);
    assert_eq!(cells[19]["visit"], "Week 26");
    assert_eq!(cells[19]["n_subjects"], 25);
    // adamviz's own statistics agree with R's to 1e-9.
    let (spec, _) = pilot_alt();
    let ours = compute_cell_statistics(spec, &pilot.snapshot).unwrap();
    assert_eq!(
        compare_with_r(&ours, &governed_statistics["cells"]),
        Vec::<String>::new()
    );
    // Same R, same device, same fonts: the same PNG, byte for byte.
    let detached_png = std::fs::read(detached_dir.join("out/plot.png")).unwrap();
    let governed_png = &governed.output("plot.png").unwrap().bytes;
    assert_eq!(&detached_png, governed_png);
    assert_eq!(&governed_png[..8], b"\x89PNG\r\n\x1a\n");
}

/// The report-ready outputs of the pilot ALT run: two governed runs write the same PDF, SVG
/// and statistics CSV byte for byte; the PDF's text (read by poppler's pdftotext) holds the
/// title and every footnote; the SVG is an SVG document; the CSV holds the statistics.
#[test]
fn report_outputs_are_byte_identical_across_runs_and_the_pdf_says_its_footnotes() {
    use adamviz_engine::compiler::report_text::{report_text, ReportFacts};
    use adamviz_evidence::execution_checks::{check_pdf, check_statistics_csv, check_svg};
    let (spec, pilot) = pilot_alt();
    let dataset_hash = spec.dataset_content_hash;
    let report = report_text(
        spec,
        ReportFacts {
            dataset_name: "adlbc.xpt",
            dataset_hash: &dataset_hash,
            script_hash: &pilot.script.script_hash,
            revision_id: "rev-0123456789abcdef0123456789abcdef",
            parent: None,
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let runner = Runner::new(test_config(dir.path()));
    let run = || {
        let mut request = pilot.run_request();
        request.report = Some(report.clone());
        let result = runtime.block_on(runner.run(request));
        assert_eq!(
            result.status,
            RunStatus::Succeeded,
            "{}",
            result.stderr.text
        );
        result
    };
    let (first, second) = (run(), run());
    for name in ["plot.pdf", "plot.svg", "statistics.csv", "plot.png"] {
        assert_eq!(
            first.output(name).unwrap().bytes,
            second.output(name).unwrap().bytes,
            "{name} differs between two runs"
        );
    }
    let pdf = &first.output("plot.pdf").unwrap().bytes;
    assert_eq!(check_pdf(pdf), Ok(()));
    assert_eq!(check_svg(&first.output("plot.svg").unwrap().bytes), Ok(()));
    assert_eq!(
        check_statistics_csv(
            &first.output("statistics.csv").unwrap().bytes,
            &first.output("statistics.json").unwrap().bytes
        ),
        Ok(())
    );
    let pdf_path = dir.path().join("plot.pdf");
    std::fs::write(&pdf_path, pdf).unwrap();
    let text = std::process::Command::new("pdftotext")
        .args(["-layout", pdf_path.to_str().unwrap(), "-"])
        .output()
        .expect("pdftotext must be installed (make tools installs poppler-utils)");
    assert!(text.status.success());
    // Collapse the layout's runs of blanks so that words compare, not columns.
    let text = String::from_utf8(text.stdout)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains(&report.title), "{text}");
    for footnote in &report.footnotes {
        let words = footnote.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains(&words), "the PDF lacks {footnote:?}:\n{text}");
    }
}
