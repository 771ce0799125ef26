//! `verify_execution_result`: the named checks of DESIGN §1.10 over one execution — the
//! request, the confirmed spec, the records and script actually supplied, and the runner's
//! result — returning `execution-verification-v2`: pass only if every check passes. Each check
//! is a function that fails closed (an error is a failed check with its reason); none can be
//! skipped.

mod report_outputs;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use report_outputs::{check_pdf, check_statistics_csv, check_svg};

use crate::execution_request::ExecutionRequest;
use crate::record::{EvidenceRecord, Unverified, Verified};
use crate::schemas::{violations, EXECUTION_RESULT_V3};
use adamviz_engine::compiler::compile_boxplot_script;
use adamviz_engine::ingest::snapshot::{snapshot_hash, Snapshot};
use adamviz_engine::runner::{canonical_hash, RunResult, RunStatus};
use adamviz_engine::verify::independent_statistics::{
    compare_with_r, compute_cell_statistics, several_records_per_subject_visit,
};
use adamviz_model::{digest::Sha256Digest, spec::PlotSpec};

/// Version of the verification's output.
pub const VERIFICATION_VERSION: &str = "execution-verification-v2";

/// The checks, in the order they run.
pub const CHECK_NAMES: [&str; 11] = [
    "schema",
    "script_hash",
    "snapshot_hash",
    "runner_success",
    "result_manifest",
    "analytical_hash",
    "image_hash",
    "environment_fingerprint",
    "independent_statistics",
    "script_provenance",
    "report_outputs",
];

/// Pass or fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// Established.
    Pass,
    /// Not established; see the reason.
    Fail,
}

/// One named check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckResult {
    /// Its name (one of [`CHECK_NAMES`]).
    pub name: String,
    /// Its outcome.
    pub outcome: CheckOutcome,
    /// Why it failed.
    pub reason: Option<String>,
}

/// `execution-verification-v2`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutionVerification {
    /// Always `execution-verification-v2`.
    pub version: String,
    /// Every check passed.
    pub passed: bool,
    /// Every check, in order.
    pub checks: Vec<CheckResult>,
    /// The names of the failed ones.
    pub failed: Vec<String>,
}

/// What the verifier looks at.
#[derive(Debug, Clone, Copy)]
pub struct VerificationInput<'a> {
    /// The execution request (verified when it was recorded; re-checked here).
    pub request: &'a Verified<ExecutionRequest>,
    /// The confirmed spec the request names.
    pub spec: &'a PlotSpec,
    /// The records actually supplied to the runner.
    pub snapshot: &'a Snapshot,
    /// The script bytes actually supplied to the runner.
    pub script: &'a [u8],
    /// The runner's result.
    pub result: &'a RunResult,
}

/// Why a check failed, in words; it becomes the check's `reason` in the verification record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CheckFailure(pub String);

impl From<String> for CheckFailure {
    fn from(reason: String) -> Self {
        CheckFailure(reason)
    }
}

impl From<&str> for CheckFailure {
    fn from(reason: &str) -> Self {
        CheckFailure(reason.to_owned())
    }
}

/// A check's failure, from anything that reads as its reason.
fn failed<T>(reason: impl Into<CheckFailure>) -> Result<T, CheckFailure> {
    Err(reason.into())
}

type Check = fn(&VerificationInput<'_>) -> Result<(), CheckFailure>;

/// Runs every check (see the module documentation).
pub fn verify_execution_result(input: &VerificationInput<'_>) -> ExecutionVerification {
    let checks: [(&str, Check); 11] = [
        ("schema", check_schema),
        ("script_hash", check_script_hash),
        ("snapshot_hash", check_snapshot_hash),
        ("runner_success", check_runner_success),
        ("result_manifest", check_result_manifest),
        ("analytical_hash", check_analytical_hash),
        ("image_hash", check_image_hash),
        ("environment_fingerprint", check_environment_fingerprint),
        ("independent_statistics", check_independent_statistics),
        ("script_provenance", check_script_provenance),
        ("report_outputs", report_outputs::check_report_outputs),
    ];
    let checks: Vec<CheckResult> = checks
        .iter()
        .map(|(name, check)| {
            let outcome = check(input);
            CheckResult {
                name: (*name).to_owned(),
                outcome: if outcome.is_ok() {
                    CheckOutcome::Pass
                } else {
                    CheckOutcome::Fail
                },
                reason: outcome.err().map(|failure| failure.0),
            }
        })
        .collect();
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| c.outcome == CheckOutcome::Fail)
        .map(|c| c.name.clone())
        .collect();
    ExecutionVerification {
        version: VERIFICATION_VERSION.to_owned(),
        passed: failed.is_empty() && checks.len() == CHECK_NAMES.len(),
        checks,
        failed,
    }
}

fn sha256(bytes: &[u8]) -> Sha256Digest {
    Sha256Digest::from_bytes(Sha256::digest(bytes).into())
}

fn output<'a>(input: &'a VerificationInput<'_>, name: &str) -> Result<&'a [u8], CheckFailure> {
    input
        .result
        .output(name)
        .map(|o| o.bytes.as_slice())
        .ok_or_else(|| CheckFailure(format!("the result has no {name}")))
}

/// The request re-read from its canonical bytes is a valid, self-consistent record, and the
/// result is a valid `execution-result-v3` document.
fn check_schema(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let request = input.request;
    Unverified::<ExecutionRequest>::parse(request.canonical())
        .and_then(|u| u.verify(request.record().previous_hash()))
        .map_err(|e| format!("request: {e}"))?;
    let value = serde_json::to_value(input.result).map_err(|e| format!("result: {e}"))?;
    let problems = violations(&EXECUTION_RESULT_V3, &value).map_err(|e| e.to_string())?;
    if !problems.is_empty() {
        return failed(format!("result: {}", problems.join("; ")));
    }
    let reread: RunResult =
        serde_json::from_value(value).map_err(|e| format!("result does not fit its type: {e}"))?;
    if reread.outputs.len() != input.result.outputs.len() {
        return failed("result: outputs do not survive a round trip".to_owned());
    }
    Ok(())
}

/// The bytes that ran hash to the request's script hash (and to what the runner reports).
fn check_script_hash(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let actual = sha256(input.script);
    let expected = input.request.record().script_hash;
    if actual != expected {
        return failed(format!(
            "the script that ran hashes to {actual}, the request names {expected}"
        ));
    }
    if input.result.script_hash != expected {
        return failed(format!(
            "the runner reports script hash {}, the request names {expected}",
            input.result.script_hash
        ));
    }
    Ok(())
}

/// The records supplied hash (canonically) to the request's snapshot hash.
fn check_snapshot_hash(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let actual = snapshot_hash(input.snapshot);
    let expected = input.request.record().snapshot_hash;
    if actual != expected {
        return failed(format!(
            "the records supplied hash to {actual}, the request names {expected}"
        ));
    }
    if input.result.snapshot_hash != expected {
        return failed(format!(
            "the runner reports snapshot hash {}, the request names {expected}",
            input.result.snapshot_hash
        ));
    }
    Ok(())
}

/// Succeeded, exit status 0, no signal, within the wall-clock limit, every output present.
fn check_runner_success(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let result = input.result;
    if result.status != RunStatus::Succeeded {
        return failed(format!("the run failed: {:?}", result.failure));
    }
    if result.failure.is_some() || result.exit_code != Some(0) || result.signal.is_some() {
        return failed(format!(
            "exit code {:?}, signal {:?}, failure {:?}",
            result.exit_code, result.signal, result.failure
        ));
    }
    if result.duration_ms > result.limits.wall_clock_ms {
        return failed(format!(
            "took {} ms, over the limit of {} ms",
            result.duration_ms, result.limits.wall_clock_ms
        ));
    }
    let names: Vec<&str> = result.outputs.iter().map(|o| o.name.as_str()).collect();
    if names != adamviz_engine::runner::OUTPUT_FILES {
        return failed(format!(
            "outputs {names:?}, expected {:?}",
            adamviz_engine::runner::OUTPUT_FILES
        ));
    }
    Ok(())
}

/// Every field the result copies from the request equals the request's: harness version, and
/// (in the statistics R wrote) the spec and snapshot hashes, (in the environment record) the
/// image size and harness version.
fn check_result_manifest(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let request = input.request.record();
    let result = input.result;
    let mut differences = Vec::new();
    if result.harness_version != request.harness_version {
        differences.push(format!(
            "harness_version {} vs {}",
            result.harness_version, request.harness_version
        ));
    }
    let statistics: serde_json::Value = serde_json::from_slice(output(input, "statistics.json")?)
        .map_err(|e| format!("statistics.json: {e}"))?;
    for (field, expected) in [
        ("spec_hash", request.spec_hash.to_hex()),
        ("snapshot_hash", request.snapshot_hash.to_hex()),
    ] {
        if statistics[field].as_str() != Some(expected.as_str()) {
            differences.push(format!(
                "statistics {field} {} vs {expected}",
                statistics[field]
            ));
        }
    }
    let environment = result
        .environment
        .clone()
        .ok_or("the result has no environment record")?;
    let graphics = &environment["graphics"];
    for (field, expected) in [
        ("width", request.image.width),
        ("height", request.image.height),
        ("resolution", request.image.resolution),
    ] {
        if graphics[field].as_u64() != Some(u64::from(expected)) {
            differences.push(format!(
                "environment graphics.{field} {} vs {expected}",
                graphics[field]
            ));
        }
    }
    if environment["harness_version"].as_str() != Some(request.harness_version.as_str()) {
        differences.push(format!(
            "environment harness_version {} vs {}",
            environment["harness_version"], request.harness_version
        ));
    }
    if differences.is_empty() {
        Ok(())
    } else {
        failed(differences.join("; "))
    }
}

/// The reported analytical hash is the canonical hash of the statistics R wrote.
fn check_analytical_hash(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let statistics: serde_json::Value = serde_json::from_slice(output(input, "statistics.json")?)
        .map_err(|e| format!("statistics.json: {e}"))?;
    let actual = canonical_hash(&statistics).map_err(|e| format!("statistics.json: {e}"))?;
    match input.result.analytical_hash {
        Some(claimed) if claimed == actual => Ok(()),
        claimed => failed(format!(
            "the statistics hash canonically to {actual}, the result says {claimed:?}"
        )),
    }
}

/// The PNG bytes hash to the reported image hash, decode as PNG, have the requested size and
/// are not blank (more than one colour).
fn check_image_hash(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let bytes = output(input, "plot.png")?;
    let claimed = input
        .result
        .output("plot.png")
        .map(|o| o.sha256)
        .ok_or("no plot.png")?;
    let actual = sha256(bytes);
    if actual != claimed {
        return failed(format!(
            "plot.png hashes to {actual}, the result says {claimed}"
        ));
    }
    let image = image::load_from_memory_with_format(bytes, image::ImageFormat::Png)
        .map_err(|e| format!("plot.png does not decode as PNG: {e}"))?
        .to_rgba8();
    let expected = input.request.record().image;
    if (image.width(), image.height()) != (expected.width, expected.height) {
        return failed(format!(
            "plot.png is {}×{}, the request asks for {}×{}",
            image.width(),
            image.height(),
            expected.width,
            expected.height
        ));
    }
    let first = image.pixels().next().copied();
    if image.pixels().all(|p| Some(*p) == first) {
        return failed("plot.png is blank (a single colour)".to_owned());
    }
    Ok(())
}

/// The fingerprint is the canonical hash of the environment record R wrote.
fn check_environment_fingerprint(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let written: serde_json::Value = serde_json::from_slice(output(input, "environment.json")?)
        .map_err(|e| format!("environment.json: {e}"))?;
    let actual = canonical_hash(&written).map_err(|e| format!("environment.json: {e}"))?;
    if input.result.environment.as_ref() != Some(&written) {
        return failed("the result's environment differs from environment.json".to_owned());
    }
    match input.result.environment_fingerprint {
        Some(claimed) if claimed == actual => Ok(()),
        claimed => failed(format!(
            "the environment hashes canonically to {actual}, the result says {claimed:?}"
        )),
    }
}

/// adamviz's own statistics from the supplied records equal R's (relative 1e-9), R echoes the
/// confirmed levels, visits and record choice, and — unless the spec keeps every record — the
/// records hold one per subject × visit (reason `one_record_per_subject_visit`).
fn check_independent_statistics(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let statistics: serde_json::Value = serde_json::from_slice(output(input, "statistics.json")?)
        .map_err(|e| format!("statistics.json: {e}"))?;
    let ours = compute_cell_statistics(input.spec, input.snapshot).map_err(|e| e.to_string())?;
    let records = input.spec.records_choice().map_err(|e| e.to_string())?;
    // A box must not pool several records of one subject unless the spec says every record.
    if records.requires_one() {
        let several =
            several_records_per_subject_visit(input.snapshot).map_err(|e| e.to_string())?;
        if !several.is_empty() {
            return failed(format!(
                "one_record_per_subject_visit: the spec keeps one record per subject and visit ({}), but the records supplied hold several for {} subject × visit combinations, e.g. {}",
                records.answer_text(),
                several.len(),
                several.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let mut differences = compare_with_r(&ours, &statistics["cells"]);
    if statistics["records_per_subject_visit"].as_str() != Some(records.answer_text().as_str()) {
        differences.push(format!(
            "R's records_per_subject_visit {} differs from the spec's {:?}",
            statistics["records_per_subject_visit"],
            records.answer_text()
        ));
    }
    if statistics["treatment_levels"] != serde_json::json!(input.spec.treatment.levels) {
        differences.push("treatment levels differ from the spec".to_owned());
    }
    if statistics["visits"] != serde_json::json!(input.spec.visit.visits) {
        differences.push("visits differ from the spec".to_owned());
    }
    if differences.is_empty() {
        Ok(())
    } else {
        let shown: Vec<&str> = differences.iter().take(5).map(String::as_str).collect();
        failed(format!(
            "{} differences: {}",
            differences.len(),
            shown.join("; ")
        ))
    }
}

/// Recompiling the confirmed spec for the supplied records yields the bytes that ran, and the
/// spec hashes to the request's spec hash.
fn check_script_provenance(input: &VerificationInput<'_>) -> Result<(), CheckFailure> {
    let request = input.request.record();
    let spec_hash = input.spec.spec_hash().map_err(|e| e.to_string())?;
    if spec_hash != request.spec_hash {
        return failed(format!(
            "the spec hashes to {spec_hash}, the request names {}",
            request.spec_hash
        ));
    }
    // The request's snapshot hash: the snapshot_hash check establishes that the records
    // supplied have it, so hashing them again here would only repeat that work.
    let recompiled = compile_boxplot_script(
        input.spec,
        &input.snapshot.columns,
        &request.snapshot_hash,
        request.image,
    )
    .map_err(|e| format!("the spec does not recompile: {e}"))?;
    if recompiled.bytes != input.script {
        let at = recompiled
            .bytes
            .iter()
            .zip(input.script)
            .position(|(a, b)| a != b)
            .unwrap_or(recompiled.bytes.len().min(input.script.len()));
        return failed(format!(
            "the script that ran differs from the recompiled one from byte {at}"
        ));
    }
    Ok(())
}
