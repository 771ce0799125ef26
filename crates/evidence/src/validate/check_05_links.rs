//! Check 5: the records that should name each other do (request, attempt, verification, bundle,
//! lifecycle, context), the signatures in words, the reproductions.

use super::*;

impl Validation {
    pub(super) fn check_links(&mut self, manifest: &Manifest, records: &Records) {
        let before = self.failures.len();
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
        self.link_verified_records(records);
        self.link_execution(records);
        self.link_signatures(records);
        self.close(
            5,
            before,
            Code::Link,
            "request → verification → bundle → context linked; signatures bound".to_owned(),
        );
    }

    /// A Verified revision's records: none may be missing (the verified attempt's start and
    /// success, the creation and the promotion, the context).
    fn link_verified_records(&mut self, records: &Records) {
        let verified_attempt = of_kind(records, "execution_verification")
            .rfind(|(_, (_, v))| v["passed"] == true)
            .map(|(_, (_, v))| v["attempt_id"].clone());
        let has = |kind: &'static str, field: &str, value: &str| {
            of_kind(records, kind).any(|(_, (_, v))| {
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
    }

    /// The execution's records name each other: request → passing verification → bundle, and
    /// every context names all three.
    fn link_execution(&mut self, records: &Records) {
        let request = of_kind(records, "execution_request")
            .next_back()
            .map(|(_, (_, v))| v["record_hash"].clone());
        let verification =
            of_kind(records, "execution_verification").rfind(|(_, (_, v))| v["passed"] == true);
        let bundle = of_kind(records, "artifact_bundle").next_back();
        let (Some(request), Some((vi, (_, verification))), Some((bi, (_, bundle)))) =
            (&request, verification, bundle)
        else {
            let message = "the bundle lacks an execution request, a passing verification or an artifact bundle record";
            self.failure(Code::Link, None, "$", message.to_owned());
            return;
        };
        let mut unlinked = |index: usize, path: &str, message: &str| {
            self.failure(Code::Link, Some(index + 1), path, message.to_owned());
        };
        if verification["request_hash"] != *request {
            unlinked(vi, "$.request_hash", "does not name the execution request");
        }
        if bundle["verification_hash"] != verification["record_hash"] {
            unlinked(
                bi,
                "$.verification_hash",
                "does not name the passing verification",
            );
        }
        if bundle["attempt_id"] != verification["attempt_id"] {
            unlinked(bi, "$.attempt_id", "not the verified attempt");
        }
        for (ci, (_, context)) in of_kind(records, "revision_context") {
            for (field, expected) in [
                ("request_hash", request),
                ("verification_hash", &verification["record_hash"]),
                ("bundle_hash", &bundle["record_hash"]),
            ] {
                if context[field] != *expected {
                    unlinked(
                        ci,
                        &format!("$.{field}"),
                        "does not name the bundle's record",
                    );
                }
            }
        }
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
        // The revision's status and version as the lifecycle records before each signature
        // leave them.
        let mut status = serde_json::Value::Null;
        let mut version = serde_json::Value::Null;
        for (index, (kind, value)) in records.iter().enumerate() {
            match kind.as_str() {
                "revision_lifecycle" => {
                    self.link_approved_lifecycle(records, index);
                    status = value["to_status"].clone();
                    version = value["version"].clone();
                }
                "approval" => {
                    self.signatures.push(signature_text(value));
                    self.check_approval(records, index, author.as_ref(), (&status, &version));
                }
                _ => {}
            }
        }
    }

    /// An `approved` lifecycle record (at `index`) names an approving signature in the bundle.
    fn link_approved_lifecycle(&mut self, records: &Records, index: usize) {
        let value = &records[index].1;
        if value["event"] != "approved" {
            return;
        }
        let named = records.iter().any(|(k, v)| {
            k == "approval"
                && v["record_hash"] == value["approval_hash"]
                && v["decision"] == "approved"
        });
        if !named {
            self.failure(
                Code::Link,
                Some(index + 1),
                "$.approval_hash",
                "names no approving signature in the bundle".to_owned(),
            );
        }
    }

    /// The approval record at `index`, made when the revision was at `(status, version)`: four
    /// eyes, the reviewer role, the evidence head it is bound to, the version it signs, and (for
    /// an approval) the lifecycle record that follows it.
    fn check_approval(
        &mut self,
        records: &Records,
        index: usize,
        author: Option<&serde_json::Value>,
        (status, version): (&serde_json::Value, &serde_json::Value),
    ) {
        let (record, value) = (Some(index + 1), &records[index].1);
        let signer = &value["signer"];
        if author.is_some_and(|actor| made_by(actor, signer)) {
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
            let message = format!(
                "the signer {} did not have the reviewer role",
                signer["account_name"]
            );
            self.failure(Code::Link, record, "$.signer.roles", message);
        }
        let head = index
            .checked_sub(1)
            .map(|i| records[i].1["record_hash"].clone())
            .unwrap_or_default();
        if value["evidence_head"] != head {
            let message = format!(
                "bound to {}, but the revision's evidence before it ends at {head}",
                value["evidence_head"]
            );
            self.failure(Code::Link, record, "$.evidence_head", message);
        }
        if *status != "verified" || value["revision_version"] != *version {
            let message = format!(
                "signs version {} but the revision was {status} at version {version}",
                value["revision_version"]
            );
            self.failure(Code::Link, record, "$.revision_version", message);
        }
        if value["decision"] == "approved" {
            let followed = records[index + 1..].iter().any(|(k, v)| {
                k == "revision_lifecycle"
                    && v["event"] == "approved"
                    && v["approval_hash"] == value["record_hash"]
            });
            if !followed {
                let message = "an approval no approved lifecycle record names".to_owned();
                self.failure(Code::Link, record, "$.record_hash", message);
            }
        }
    }
}

/// The records of `kind`, with their index.
fn of_kind<'a>(
    records: &'a Records,
    kind: &'static str,
) -> impl DoubleEndedIterator<Item = (usize, &'a (String, serde_json::Value))> + 'a {
    records
        .iter()
        .enumerate()
        .filter(move |(_, (k, _))| k == kind)
}

/// Four eyes: whether `signer` is the revision's creator `actor` — the same account, or an
/// account named as the operating-system user that made the revision on the command line.
fn made_by(actor: &serde_json::Value, signer: &serde_json::Value) -> bool {
    (!actor["account_id"].is_null() && actor["account_id"] == signer["account_id"])
        || actor["account_name"]
            .as_str()
            .zip(signer["account_name"].as_str())
            .is_some_and(|(a, s)| a.eq_ignore_ascii_case(s))
}

/// A signature in words, for the report: decision, signer, time and meaning.
fn signature_text(value: &serde_json::Value) -> String {
    let signer = &value["signer"];
    format!(
        "{} by {} ({}) at {}{}{}",
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
            .unwrap_or_default(),
        crate::summary::reset_note(value)
    )
}
