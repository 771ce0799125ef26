//! The report: failure codes as words, the verdict and its exit code, the replay's outcome
//! recorded (check 10), the JSON form with its own digest, and the text an auditor reads.

use super::*;

impl Code {
    /// The code as the report writes it, e.g. `ARTIFACT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Invocation => "INVOCATION",
            Code::Schema => "SCHEMA",
            Code::SelfHash => "SELF_HASH",
            Code::Chain => "CHAIN",
            Code::Link => "LINK",
            Code::Artifact => "ARTIFACT",
            Code::Snapshot => "SNAPSHOT",
            Code::Statistics => "STATISTICS",
            Code::Provenance => "PROVENANCE",
            Code::Replay => "REPLAY",
            Code::ReplayRefused => "REPLAY_REFUSED",
            Code::Git => "GIT",
            Code::Signature => "SIGNATURE",
        }
    }
}

impl Report {
    /// The report in words, as `adamviz evidence validate` prints it.
    pub fn text(&self) -> String {
        // Whatever came from the bundle (revision id, names, paths, messages that quote it) is
        // escaped: a bundle must not be able to write to the auditor's terminal.
        let mut out = format!(
            "evidence bundle {} (SHA-256 {})\n",
            visible(self.revision_id.as_deref().unwrap_or("?")),
            self.bundle_sha256
        );
        for check in &self.checks {
            out.push_str(&format!(
                "{:>2}. {:<40} {:<14} {}\n",
                check.number,
                check.name,
                check.outcome,
                visible(&check.detail)
            ));
        }
        for failure in &self.failures {
            out.push_str(&format!(
                "FAIL {} {}{}: {}\n",
                failure.code.as_str(),
                failure
                    .record
                    .map(|r| format!("record {r} "))
                    .unwrap_or_default(),
                visible(&failure.path),
                visible(&failure.message)
            ));
        }
        for signature in &self.signatures {
            out.push_str(&format!("signature: {}\n", visible(signature)));
        }
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        out.push_str(&format!(
            "{}; {} failures\n{}: {}\n",
            counts.join(", "),
            self.failures.len(),
            self.verdict.words(),
            self.verdict_meaning
        ));
        out
    }

    /// The verdict in words: what it proves and what it does not.
    pub(super) fn meaning(&self) -> String {
        let key = || {
            self.checks
                .iter()
                .find(|c| c.number == 12)
                .map(|c| visible(&c.detail))
                .unwrap_or_default()
        };
        match self.verdict {
            Verdict::Pass => format!(
                "every check holds and the manifest is {}; this proves the bundle came from the holder of that key",
                key()
            ),
            Verdict::ConsistentOriginNotProven => "every check holds, but that only shows the bundle agrees with itself: anyone can make such a bundle and sign it with a key of their own. Get the installation's public key out of band (not from the bundle, not from the server alone) and run again with --trusted-key FILE".to_owned(),
            Verdict::Fail if self.checks.first().is_some_and(|c| c.outcome == "fail") => {
                "the archive was refused before any check (see check 1)".to_owned()
            }
            Verdict::Fail => format!(
                "{} failures: the bundle is not what it claims",
                self.failures.len()
            ),
        }
    }

    /// The exit status `adamviz evidence validate` ends with: 0 PASS, 3 consistent but origin
    /// not proven, 5 FAIL, 2 when the archive was refused before any check (unreadable,
    /// unsafe, over the caps).
    pub fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::Pass => EXIT_PASS,
            Verdict::ConsistentOriginNotProven => EXIT_ORIGIN_NOT_PROVEN,
            Verdict::Fail if self.failures.iter().any(|f| f.code == Code::Invocation) => {
                EXIT_INVOCATION
            }
            Verdict::Fail => EXIT_FAIL,
        }
    }
}

/// The digest the JSON report carries of itself: SHA-256 of its canonical JSON.
pub fn report_json(report: &Report) -> Result<Vec<u8>, serde_json::Error> {
    let mut value = serde_json::to_value(report)?;
    let digest = sha256_hex(&serde_jcs::to_vec(&value)?);
    value["report_sha256"] = serde_json::Value::String(digest);
    serde_jcs::to_vec(&value)
}

impl Report {
    /// Records check 10 (the replay): its outcome replaces "not asked".
    pub fn record_replay(&mut self, outcome: Result<String, ReplayFailure>) {
        let check = self.checks.iter_mut().find(|c| c.number == 10);
        match outcome {
            Ok(detail) => {
                if let Some(check) = check {
                    // Recorded reproductions that failed keep the check failed.
                    if check.outcome != "fail" {
                        check.outcome = "pass";
                        check.detail = detail;
                    }
                }
            }
            Err(failure) => {
                let message = failure.to_string();
                if let Some(check) = check {
                    check.outcome = "fail";
                    check.detail = message.clone();
                }
                self.failures.push(Failure {
                    record: None,
                    code: Code::Replay,
                    path: "artifacts/statistics.json".to_owned(),
                    message,
                });
                self.set_failed();
            }
        }
    }

    /// Records that `--replay` was asked but refused (`why`): the bundle's own script is never
    /// run, and the validator has no script of its own when check 9 failed.
    pub fn refuse_replay(&mut self, why: ReplayRefusal) {
        let message = format!(
            "refused to replay: {why}; the validator runs only the script it compiles itself from the bundle's spec, never code taken from a bundle"
        );
        if let Some(check) = self.checks.iter_mut().find(|c| c.number == 10) {
            check.outcome = "fail";
            check.detail = message.clone();
        }
        self.failures.push(Failure {
            record: None,
            code: Code::ReplayRefused,
            path: "artifacts/script.R".to_owned(),
            message,
        });
        self.set_failed();
    }

    fn set_failed(&mut self) {
        self.verdict = Verdict::Fail;
        self.verdict_meaning = self.meaning();
    }
}
