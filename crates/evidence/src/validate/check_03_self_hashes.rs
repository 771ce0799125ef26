//! Check 3: every record's self-hash recomputed from its canonical JSON.

use super::*;

impl Validation {
    pub(super) fn check_self_hashes(&mut self, archive: &Archive, manifest: &Manifest) {
        let before = self.failures.len();
        for (index, entry) in manifest.records.iter().enumerate() {
            let Some(bytes) = archive.bytes(&entry.path) else {
                continue;
            };
            let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(bytes) else {
                continue;
            };
            let claimed = value["record_hash"].as_str().unwrap_or_default().to_owned();
            if let Some(object) = value.as_object_mut() {
                object.remove("record_hash");
            }
            let actual = serde_jcs::to_vec(&value)
                .map(|b| sha256_hex(&b))
                .unwrap_or_default();
            if actual != claimed {
                self.failure(
                    Code::SelfHash,
                    Some(index + 1),
                    "$.record_hash",
                    format!("the content hashes to {actual}, the record says {claimed}"),
                );
            }
            if claimed != entry.record_hash {
                self.failure(
                    Code::SelfHash,
                    Some(index + 1),
                    "$.record_hash",
                    format!(
                        "the manifest names {}, the record {claimed}",
                        entry.record_hash
                    ),
                );
            }
        }
        self.close(
            3,
            before,
            Code::SelfHash,
            "every record hashes to its record_hash".to_owned(),
        );
    }
}
