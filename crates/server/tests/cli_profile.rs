//! `adamviz profile` as a user runs it: the real binary on real files.

use std::process::Command;

fn adamviz(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .expect("adamviz runs")
}

#[test]
fn profile_json_of_the_pilot_adlbc() {
    let output = adamviz(&["profile", "../shared/data/adlbc.xpt", "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let profile: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(profile["row_count"], 74_264);
    assert_eq!(profile["columns"].as_array().unwrap().len(), 46);
    assert_eq!(profile["source_format"], "xpt");
    assert_eq!(profile["roles"]["treatment"][0], "TRTA");
    assert_eq!(profile["roles"]["visit"][0]["order"], "AVISITN");
    let alt = profile["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["code"] == "ALT")
        .expect("ALT");
    assert_eq!(alt["units"][0], "U/L");
    assert_eq!(alt["unit_source"], "parameter_label");
    let kinds: Vec<&str> = profile["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    for expected in [
        "padded_visit_labels",
        "visits_without_order",
        "flag_removes_baseline",
        "derived_looking_parameters",
    ] {
        assert!(
            kinds.contains(&expected),
            "missing warning {expected}: {kinds:?}"
        );
    }
}

#[test]
fn profile_report_shows_dates_as_iso_8601() {
    let output = adamviz(&["profile", "../shared/data/adlbc.xpt"]);
    assert!(output.status.success());
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(
        report.starts_with(
            "../shared/data/adlbc.xpt: SAS XPORT dataset ADLBC, 74264 records, 46 columns"
        ),
        "{report}"
    );
    let adt = report
        .lines()
        .find(|l| l.trim_start().starts_with("ADT "))
        .expect("ADT line");
    assert!(adt.contains("[2012-06-29, 2015-03-05]"), "{adt}");
    assert!(report.contains("filtering on ANL01FL = \"Y\" would remove all 4527 baseline records"));
}

#[test]
fn profile_of_a_broken_file_fails_with_the_reason_and_exit_1() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("ragged.csv");
    std::fs::write(&path, "A,B\n1,2\n3\n").unwrap();
    let output = adamviz(&["profile", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.trim(),
        format!(
            "error: cannot read {}: line 3 of the CSV file has 1 fields, but the header has 2",
            path.display()
        )
    );
    assert!(output.stdout.is_empty());
}
