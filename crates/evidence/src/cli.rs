//! The validator's command line, shared by `adamviz evidence validate` and the standalone
//! `adamviz-verify` binary: the same options, the same report and the same exit codes (0 PASS,
//! 3 CONSISTENT ORIGIN NOT PROVEN, 5 FAIL, 2 bad invocation or an archive refused).

use std::path::PathBuf;

use clap::Args;

use crate::dsse;
use crate::set_bundle;
use crate::validate;
use adamviz_engine::runner;

/// Options of the validator.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The bundle (zip).
    pub bundle: PathBuf,
    /// Print the report as canonical JSON with its own digest.
    #[arg(long)]
    pub json: bool,
    /// A file with the installation's Ed25519 public key (64 hex digits, or the output of
    /// `adamviz key show`), obtained out of band: without it the verdict is at best
    /// CONSISTENT, ORIGIN NOT PROVEN (exit 3), never PASS.
    #[arg(long)]
    pub trusted_key: Option<PathBuf>,
    /// Run again, in the sandboxed R, the script the validator compiles itself from the
    /// bundle's spec (never the bundle's script.R; refused when check 9 failed) and compare the
    /// analytical hash.
    #[arg(long)]
    pub replay: bool,
    /// A git repository (e.g. a clone of adamviz) the recorded source commit must exist in.
    #[arg(long)]
    pub repository: Option<PathBuf>,
}

/// Validates the bundle `args` names, prints the report (text or `--json`) and returns the
/// process's exit code; `program` prefixes the messages on standard error.
pub async fn validate_command(program: &str, args: &ValidateArgs) -> i32 {
    let invocation = |message: String| {
        eprintln!("{program}: {message}");
        validate::EXIT_INVOCATION
    };
    let trusted_key = match args.trusted_key.as_ref() {
        None => None,
        Some(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) => return invocation(format!("cannot read {}: {e}", path.display())),
            };
            match dsse::public_key_from_hex(trusted_key_text(&text)) {
                Ok(key) => Some(key),
                Err(e) => return invocation(format!("{}: {e}", path.display())),
            }
        }
    };
    if let Some(code) = validate_if_set(program, args, trusted_key) {
        return code;
    }
    // One open file, read through once (hashed, then the archive read within its caps); never
    // the whole bundle in memory.
    let file = match std::fs::File::open(&args.bundle) {
        Ok(file) => file,
        Err(e) => return invocation(format!("cannot read {}: {e}", args.bundle.display())),
    };
    let validated = validate::validate_reader(
        std::io::BufReader::new(file),
        &validate::Options {
            trusted_key,
            repository: args.repository.clone(),
        },
    );
    let mut report = validated.report;
    if args.replay {
        match validated.replay {
            Ok(plan) => report.record_replay(replay(plan).await),
            Err(why) => report.refuse_replay(why),
        }
    }
    if args.json {
        match validate::report_json(&report) {
            Ok(json) => println!("{}", String::from_utf8_lossy(&json)),
            Err(e) => return invocation(format!("cannot write the report as JSON: {e}")),
        }
    } else {
        print!("{}", report.text());
    }
    let code = report.exit_code();
    if code == validate::EXIT_INVOCATION {
        if let Some(refusal) = report.failures.first() {
            eprintln!(
                "{program}: refused: {}",
                validate::terminal::visible(&refusal.message)
            );
        }
    }
    code
}

/// A figure set's bundle (a zip holding `set-manifest.json`) validated as a set: the set
/// manifest, then every figure's bundle; `None` for anything else (one figure's bundle, or what
/// the bundle validator refuses itself).
fn validate_if_set(
    program: &str,
    args: &ValidateArgs,
    trusted_key: Option<ed25519_dalek::VerifyingKey>,
) -> Option<i32> {
    let file = std::fs::File::open(&args.bundle).ok()?;
    let archive = zip::ZipArchive::new(std::io::BufReader::new(file)).ok()?;
    archive.index_for_name(set_bundle::SET_MANIFEST)?;
    if args.replay {
        eprintln!("{program}: --replay runs one figure: validate that figure's bundle (under figures/ in the set bundle) with --replay");
        return Some(validate::EXIT_INVOCATION);
    }
    let bytes = match std::fs::read(&args.bundle) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{program}: cannot read {}: {e}", args.bundle.display());
            return Some(validate::EXIT_INVOCATION);
        }
    };
    let report = set_bundle::validate_set(
        &bytes,
        &validate::Options {
            trusted_key,
            repository: args.repository.clone(),
        },
    );
    if args.json {
        match serde_jcs::to_vec(&report) {
            Ok(json) => println!("{}", String::from_utf8_lossy(&json)),
            Err(e) => {
                eprintln!("{program}: cannot write the report as JSON: {e}");
                return Some(validate::EXIT_INVOCATION);
            }
        }
    } else {
        print!("{}", report.text());
    }
    Some(report.exit_code())
}

/// The hex key in a `--trusted-key` file: the file's whole text, or the `public key` line of
/// what `adamviz key show` prints.
fn trusted_key_text(text: &str) -> &str {
    text.lines()
        .find_map(|line| line.trim().strip_prefix("public key"))
        .unwrap_or(text)
        .trim()
}

/// Check 10: the script the validator compiled from the bundle's spec (check 9 passed: it is
/// byte for byte the bundle's, but the bytes run are the validator's own) run again in the
/// sandbox on the bundle's snapshot; the statistics must hash (canonically) to the analytical
/// hash the bundle records.
async fn replay(plan: validate::ReplayPlan) -> Result<String, validate::ReplayFailure> {
    let (request, expected) = (plan.request, plan.expected_analytical_hash);
    let work = tempfile::tempdir()?;
    let mut config = runner::RunnerConfig::new();
    config.work_root = work.path().to_path_buf();
    let runner = runner::Runner::new(config);
    let result = runner.run(request).await;
    match result.analytical_hash {
        Some(actual) if actual.to_hex() == expected => Ok(format!(
            "the script compiled from the spec re-ran in the sandbox: analytical hash {actual}"
        )),
        Some(actual) => Err(validate::ReplayFailure::Differs { actual, expected }),
        None => Err(validate::ReplayFailure::NoStatistics(format!(
            "{:?}",
            result.failure
        ))),
    }
}
