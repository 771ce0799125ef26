//! One line on what an evidence record says, for listings (the CLI's `revisions show`, the
//! revision page).

/// A few words on what a record says, for listings.
pub fn record_summary(record: &serde_json::Value) -> String {
    let text = |field: &str| record[field].as_str().unwrap_or_default().to_owned();
    let short = |field: &str| text(field).chars().take(12).collect::<String>();
    match record["kind"].as_str().unwrap_or_default() {
        "execution_request" => format!(
            "script {} snapshot {}",
            short("script_hash"),
            short("snapshot_hash")
        ),
        "execution_attempt" => match record["reason"].as_str() {
            Some(reason) => format!("{} {}: {reason}", text("event"), text("attempt_id")),
            None => format!("{} {}", text("event"), text("attempt_id")),
        },
        "execution_verification" if record["passed"] == true => "passed: every check".to_owned(),
        "execution_verification" => format!("failed: {}", record["failed"]),
        "artifact_bundle" => format!("accepted, image {}", short("image_hash")),
        "revision_lifecycle" => format!(
            "{} → {} (version {})",
            record["from_status"].as_str().unwrap_or("new"),
            text("to_status"),
            record["version"]
        ),
        "revision_context" => format!("question {:?}", text("question")),
        "approval" => match record["meaning"].as_str() {
            Some(meaning) => format!(
                "{} by {} ({meaning}) at {}{}",
                text("decision"),
                record["signer"]["printed_name"]
                    .as_str()
                    .unwrap_or_default(),
                text("signed_at"),
                reset_note(record)
            ),
            None => {
                format!(
                    "changes requested by {} at {}: {}",
                    record["signer"]["printed_name"]
                        .as_str()
                        .unwrap_or_default(),
                    text("signed_at"),
                    text("comment")
                ) + &reset_note(record)
            }
        },
        "reproduction" => match record["outcome"].as_str() {
            Some("reproduced") => format!(
                "reproduced: analytical hash {}{}",
                record["reproduced"]["analytical_hash"]
                    .as_str()
                    .unwrap_or_default()
                    .chars()
                    .take(12)
                    .collect::<String>(),
                if record["same_environment"] == true {
                    ", same environment, same image".to_owned()
                } else {
                    format!(
                        ", environment differs: {}",
                        record["environment_differences"]
                    )
                }
            ),
            _ => format!("FAILED: {}", record["failures"]),
        },
        _ => String::new(),
    }
}

/// "; the signer's password was last set by X at T" when an approval record (v3) says someone
/// other than the signer set it.
pub fn reset_note(record: &serde_json::Value) -> String {
    let signer = &record["signer"];
    match (
        signer["password_reset_at"].as_str(),
        signer["password_reset_by"].as_str(),
    ) {
        (Some(at), Some(by)) => {
            format!("; the signer's password was last set by someone else: {by} at {at}")
        }
        _ => String::new(),
    }
}
