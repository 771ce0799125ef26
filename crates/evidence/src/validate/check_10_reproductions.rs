//! Check 10, offline part: every `reproduction` record reproduced the bundle's analytical hash
//! (the live part, `--replay`, is run by the caller: [`Report::record_replay`]).

use super::*;

impl Validation {
    /// Check 10, offline part: every `reproduction` record reproduced the bundle's analytical
    /// hash (and, in the same environment, its image hash).
    pub(super) fn check_reproductions(&mut self, records: &Records) {
        let before = self.failures.len();
        let bundle = records
            .iter()
            .rev()
            .find(|(k, _)| k == "artifact_bundle")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let mut count = 0;
        for (index, (kind, value)) in records.iter().enumerate() {
            if kind != "reproduction" {
                continue;
            }
            count += 1;
            let record = Some(index + 1);
            for side in ["original", "reproduced"] {
                if value[side]["analytical_hash"] != bundle["analytical_hash"] {
                    self.failure(
                        Code::Replay,
                        record,
                        &format!("$.{side}.analytical_hash"),
                        format!(
                            "{} is not the bundle's analytical hash {}",
                            value[side]["analytical_hash"], bundle["analytical_hash"]
                        ),
                    );
                }
            }
            if value["same_environment"] == true
                && value["reproduced"]["image_hash"] != bundle["image_hash"]
            {
                self.failure(
                    Code::Replay,
                    record,
                    "$.reproduced.image_hash",
                    format!(
                        "in the same environment the image hashes to {}, the bundle's to {}",
                        value["reproduced"]["image_hash"], bundle["image_hash"]
                    ),
                );
            }
            if value["outcome"] != "reproduced" {
                self.failure(
                    Code::Replay,
                    record,
                    "$.outcome",
                    format!("the reproduction failed: {}", value["failures"]),
                );
            }
        }
        if count == 0 {
            self.not_run(
                10,
                "replay in the sandbox",
                "no reproduction records; live replay not asked (--replay)",
            );
        } else {
            self.close(
                10,
                before,
                Code::Replay,
                format!("{count} reproduction records reproduce the analytical hash"),
            );
        }
    }
}
