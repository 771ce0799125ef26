//! Check 8: the statistics recomputed independently from the bundle's snapshot agree with R's
//! statistics.json.

use super::*;

impl Validation {
    /// Check 8, on the snapshot check 7 read and the context's spec.
    pub(super) fn check_statistics(
        &mut self,
        archive: &Archive,
        spec: &Result<PlotSpec, serde_json::Error>,
        snapshot: &Snapshot,
    ) {
        let before = self.failures.len();
        match spec {
            Ok(spec) => match (
                compute_cell_statistics(spec, snapshot),
                archive
                    .bytes("artifacts/statistics.json")
                    .map(serde_json::from_slice::<serde_json::Value>),
            ) {
                (Ok(ours), Some(Ok(statistics))) => {
                    for difference in compare_with_r(&ours, &statistics["cells"]) {
                        self.failure(
                            Code::Statistics,
                            None,
                            "artifacts/statistics.json",
                            difference,
                        );
                    }
                }
                (Err(e), _) => self.failure(
                    Code::Statistics,
                    None,
                    "artifacts/snapshot.csv",
                    e.to_string(),
                ),
                (_, other) => self.failure(
                    Code::Statistics,
                    None,
                    "artifacts/statistics.json",
                    format!("absent or not JSON: {other:?}"),
                ),
            },
            Err(e) => self.failure(
                Code::Statistics,
                None,
                "$.spec",
                format!("the context's spec is not a plot spec: {e}"),
            ),
        }
        self.close(
            8,
            before,
            Code::Statistics,
            "every cell agrees with statistics.json (relative 1e-9)".to_owned(),
        );
    }
}
