//! Check 5: the records that should name each other do (request, attempt, verification, bundle,
//! lifecycle, context), the signatures in words, the reproductions.

use super::*;

impl Validation {
    pub(super) fn check_links(&mut self, manifest: &Manifest, records: &Records) {
        let before = self.failures.len();
        let of = |kind: &'static str| {
            records
                .iter()
                .enumerate()
                .filter(move |(_, (k, _))| k == kind)
        };
        for (index, (_, value)) in records.iter().enumerate() {
            if value["revision_id"] != manifest.revision_id.as_str() {
                self.failure(
                    Code::Link,
                    Some(index + 1),
                    "$.revision_id",
                    format!(
                        "{} is not the bundle's revision {}",
                        value["revision_id"], manifest.revision_id
                    ),
                );
            }
        }
        // A Verified revision's records: none may be missing.
        let verified_attempt = of("execution_verification")
            .rfind(|(_, (_, v))| v["passed"] == true)
            .map(|(_, (_, v))| v["attempt_id"].clone());
        let has = |kind: &'static str, field: &str, value: &str| {
            of(kind).any(|(_, (_, v))| {
                v[field] == value
                    && (kind != "execution_attempt"
                        || Some(&v["attempt_id"]) == verified_attempt.as_ref())
            })
        };
        for (kind, field, value, what) in [
            (
                "execution_attempt",
                "event",
                "started",
                "the verified attempt's start",
            ),
            (
                "execution_attempt",
                "event",
                "succeeded",
                "the verified attempt's success",
            ),
            (
                "revision_lifecycle",
                "to_status",
                "draft",
                "the revision's creation",
            ),
            (
                "revision_lifecycle",
                "to_status",
                "verified",
                "the revision's promotion to verified",
            ),
            (
                "revision_context",
                "kind",
                "revision_context",
                "the revision context",
            ),
        ] {
            if !has(kind, field, value) {
                self.failure(
                    Code::Link,
                    None,
                    "$",
                    format!("the bundle lacks {what} (an {kind} record with {field} {value})"),
                );
            }
        }
        let request = of("execution_request")
            .next_back()
            .map(|(_, (_, v))| v["record_hash"].clone());
        let verification = of("execution_verification").rfind(|(_, (_, v))| v["passed"] == true);
        let bundle = of("artifact_bundle").next_back();
        match (&request, verification, bundle) {
            (Some(request), Some((vi, (_, verification))), Some((bi, (_, bundle)))) => {
                if verification["request_hash"] != *request {
                    self.failure(Code::Link, Some(vi + 1), "$.request_hash", "does not name the execution request".to_owned());
                }
                if bundle["verification_hash"] != verification["record_hash"] {
                    self.failure(Code::Link, Some(bi + 1), "$.verification_hash", "does not name the passing verification".to_owned());
                }
                if bundle["attempt_id"] != verification["attempt_id"] {
                    self.failure(Code::Link, Some(bi + 1), "$.attempt_id", "not the verified attempt".to_owned());
                }
                for (ci, (_, context)) in of("revision_context") {
                    for (field, expected) in [("request_hash", request), ("verification_hash", &verification["record_hash"]), ("bundle_hash", &bundle["record_hash"])] {
                        if context[field] != *expected {
                            self.failure(Code::Link, Some(ci + 1), &format!("$.{field}"), "does not name the bundle's record".to_owned());
                        }
                    }
                }
            }
            _ => self.failure(Code::Link, None, "$", "the bundle lacks an execution request, a passing verification or an artifact bundle record".to_owned()),
        }
        self.link_signatures(records);
        self.close(
            5,
            before,
            Code::Link,
            "request → verification → bundle → context linked; signatures bound".to_owned(),
        );
    }

    /// Each `approval` record: signed by a reviewer other than the revision's author, of the
    /// Verified version it names, bound to the head of the records before it; an approving one
    /// followed by the `approved` lifecycle record naming it, and every `approved` lifecycle
    /// record naming an approving signature in the bundle.
    pub(super) fn link_signatures(&mut self, records: &Records) {
        let author = records
            .iter()
            .find(|(k, v)| k == "revision_lifecycle" && v["event"] == "created")
            .map(|(_, v)| v["actor"].clone());
        // Four eyes: the same account, or an account named as the operating-system user that
        // made the revision on the command line.
        let by_author = |signer: &serde_json::Value| {
            author.as_ref().is_some_and(|actor| {
                (!actor["account_id"].is_null() && actor["account_id"] == signer["account_id"])
                    || actor["account_name"]
                        .as_str()
                        .zip(signer["account_name"].as_str())
                        .is_some_and(|(a, s)| a.eq_ignore_ascii_case(s))
            })
        };
        let mut status = serde_json::Value::Null;
        let mut version = serde_json::Value::Null;
        for (index, (kind, value)) in records.iter().enumerate() {
            let record = Some(index + 1);
            if kind == "revision_lifecycle" {
                if value["event"] == "approved" {
                    let named = records.iter().any(|(k, v)| {
                        k == "approval"
                            && v["record_hash"] == value["approval_hash"]
                            && v["decision"] == "approved"
                    });
                    if !named {
                        self.failure(
                            Code::Link,
                            record,
                            "$.approval_hash",
                            "names no approving signature in the bundle".to_owned(),
                        );
                    }
                }
                status = value["to_status"].clone();
                version = value["version"].clone();
                continue;
            }
            if kind != "approval" {
                continue;
            }
            let signer = &value["signer"];
            self.signatures.push(format!(
                "{} by {} ({}) at {}{}",
                value["decision"]
                    .as_str()
                    .unwrap_or_default()
                    .replace('_', " "),
                signer["printed_name"].as_str().unwrap_or_default(),
                signer["account_name"].as_str().unwrap_or_default(),
                value["signed_at"].as_str().unwrap_or_default(),
                value["meaning"]
                    .as_str()
                    .map(|m| format!(", meaning: {m}"))
                    .unwrap_or_default()
            ));
            if by_author(signer) {
                self.failure(
                    Code::Link,
                    record,
                    "$.signer.account_id",
                    format!(
                        "signed by the revision's author (account {}): a second person must sign",
                        signer["account_id"]
                    ),
                );
            }
            let reviewer = signer["roles"]
                .as_array()
                .is_some_and(|roles| roles.iter().any(|r| r == "reviewer"));
            if !reviewer {
                self.failure(
                    Code::Link,
                    record,
                    "$.signer.roles",
                    format!(
                        "the signer {} did not have the reviewer role",
                        signer["account_name"]
                    ),
                );
            }
            let head = index
                .checked_sub(1)
                .map(|i| records[i].1["record_hash"].clone())
                .unwrap_or_default();
            if value["evidence_head"] != head {
                self.failure(
                    Code::Link,
                    record,
                    "$.evidence_head",
                    format!(
                        "bound to {}, but the revision's evidence before it ends at {head}",
                        value["evidence_head"]
                    ),
                );
            }
            if status != "verified" || value["revision_version"] != version {
                self.failure(
                    Code::Link,
                    record,
                    "$.revision_version",
                    format!(
                        "signs version {} but the revision was {status} at version {version}",
                        value["revision_version"]
                    ),
                );
            }
            if value["decision"] == "approved" {
                let followed = records[index + 1..].iter().any(|(k, v)| {
                    k == "revision_lifecycle"
                        && v["event"] == "approved"
                        && v["approval_hash"] == value["record_hash"]
                });
                if !followed {
                    self.failure(
                        Code::Link,
                        record,
                        "$.record_hash",
                        "an approval no approved lifecycle record names".to_owned(),
                    );
                }
            }
        }
    }

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
