//! Check 4: the records in ledger order, each naming its predecessor's hash.

use super::*;

impl Validation {
    pub(super) fn check_chain(&mut self, manifest: &Manifest, records: &Records) {
        let before = self.failures.len();
        for (index, pair) in manifest.records.windows(2).enumerate() {
            let (previous, next) = (&pair[0], &pair[1]);
            if next.ledger_seq <= previous.ledger_seq {
                self.failure(
                    Code::Chain,
                    Some(index + 2),
                    "$",
                    format!(
                        "ledger position {} after {}: out of order",
                        next.ledger_seq, previous.ledger_seq
                    ),
                );
            } else if next.ledger_seq == previous.ledger_seq + 1 {
                let named = records
                    .get(index + 1)
                    .and_then(|(_, v)| v["previous_hash"].as_str())
                    .unwrap_or_default();
                if named != previous.record_hash {
                    self.failure(
                        Code::Chain,
                        Some(index + 2),
                        "$.previous_hash",
                        format!(
                            "names {named}, but the record before it is {}",
                            previous.record_hash
                        ),
                    );
                }
            }
        }
        self.close(
            4,
            before,
            Code::Chain,
            "records in ledger order, neighbours linked".to_owned(),
        );
    }
}
