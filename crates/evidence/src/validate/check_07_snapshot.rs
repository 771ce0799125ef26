//! Check 7: the snapshot hash recomputed from snapshot.csv; and the entry of checks 7–9, which
//! recompute from the bundle's own snapshot and the confirmed spec in its context record (8, the
//! statistics, in `check_08_statistics.rs`; 9, the script, in `check_09_provenance.rs`).

use super::*;

impl Validation {
    /// Checks 7–9: the snapshot hash, the statistics and the script, recomputed from the
    /// bundle's own snapshot.csv and the confirmed spec in its context record.
    pub(super) fn check_recomputed(&mut self, archive: &Archive, records: &Records) {
        let context = records
            .iter()
            .rev()
            .find(|(k, _)| k == "revision_context")
            .map(|(_, v)| v);
        let request = records
            .iter()
            .rev()
            .find(|(k, _)| k == "execution_request")
            .map(|(_, v)| v);
        let (Some(context), Some(request)) = (context, request) else {
            for (number, name) in &CHECKS[6..9] {
                self.fail(
                    *number,
                    name,
                    Code::Link,
                    None,
                    "$",
                    "no revision_context or execution_request record to recompute from".to_owned(),
                );
            }
            return;
        };
        let csv = archive.bytes("artifacts/snapshot.csv");
        let columns = retained_inputs::snapshot_columns(&context["snapshot"]["columns"]);
        let snapshot = match (csv, columns) {
            (Some(csv), Ok(columns)) => {
                retained_inputs::read_snapshot_csv(csv, columns).map_err(|e| e.to_string())
            }
            (None, _) => Err("artifacts/snapshot.csv is absent".to_owned()),
            (_, Err(e)) => Err(e.to_string()),
        };
        let snapshot = match snapshot {
            Ok(snapshot) => snapshot,
            Err(message) => {
                self.fail(
                    7,
                    CHECKS[6].1,
                    Code::Snapshot,
                    None,
                    "artifacts/snapshot.csv",
                    message,
                );
                self.not_run(8, CHECKS[7].1, "no snapshot to recompute from");
                self.not_run(9, CHECKS[8].1, "no snapshot to recompute from");
                return;
            }
        };
        let hash = snapshot_hash(&snapshot);
        let before = self.failures.len();
        for (path, named) in [
            ("$.snapshot_hash", &request["snapshot_hash"]),
            (
                "$.snapshot.snapshot_hash",
                &context["snapshot"]["snapshot_hash"],
            ),
        ] {
            if named.as_str() != Some(hash.to_hex().as_str()) {
                self.failure(
                    Code::Snapshot,
                    None,
                    path,
                    format!("snapshot.csv hashes (canonically) to {hash}; the record says {named}"),
                );
            }
        }
        self.close(
            7,
            before,
            Code::Snapshot,
            format!("{} records hash to {hash}", snapshot.rows.len()),
        );

        let spec: Result<PlotSpec, _> = serde_json::from_value(context["spec"].clone());
        self.check_statistics(archive, &spec, &snapshot);
        self.check_provenance(archive, records, request, &spec, snapshot, hash);
    }
}
