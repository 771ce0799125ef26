//! Checks 7, 8 and 9: the snapshot hash recomputed from snapshot.csv, the statistics recomputed
//! independently, and the spec recompiled to the script (which sets what `--replay` may run).

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
        let columns = snapshot_columns(&context["snapshot"]["columns"]);
        let snapshot = match (csv, columns) {
            (Some(csv), Ok(columns)) => read_snapshot_csv(csv, columns),
            (None, _) => Err("artifacts/snapshot.csv is absent".to_owned()),
            (_, Err(e)) => Err(e),
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

        let before = self.failures.len();
        let spec: Result<PlotSpec, _> = serde_json::from_value(context["spec"].clone());
        match &spec {
            Ok(spec) => match (
                compute_cell_statistics(spec, &snapshot),
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

        let before = self.failures.len();
        let mut compiled_script = None;
        let image: ImageSize = serde_json::from_value(request["image"].clone()).unwrap_or_default();
        match &spec {
            // Without a spec there is nothing to compile: the check fails rather than pass
            // vacuously (and a replay has no script of the validator's own to run).
            Err(e) => self.failure(
                Code::Provenance,
                None,
                "$.spec",
                format!("the context's spec is not a plot spec, so no script can be compiled: {e}"),
            ),
            Ok(spec) => match compile_boxplot_script(spec, &snapshot.columns, &hash, image) {
                Ok(compiled) => {
                    let script = archive.bytes("artifacts/script.R");
                    if script != Some(compiled.bytes.as_slice()) {
                        self.failure(Code::Provenance, None, "artifacts/script.R", format!("the spec compiles (compiler {}) to a script of {} bytes with SHA-256 {}; the bundle's differs", request["compiler_version"], compiled.bytes.len(), compiled.script_hash));
                    }
                    if request["script_hash"].as_str()
                        != Some(compiled.script_hash.to_hex().as_str())
                    {
                        self.failure(
                            Code::Provenance,
                            None,
                            "$.script_hash",
                            "the request names another script".to_owned(),
                        );
                    }
                    compiled_script = Some(compiled);
                }
                Err(e) => self.failure(
                    Code::Provenance,
                    None,
                    "$.spec",
                    format!("the spec does not compile: {e}"),
                ),
            },
        }
        self.close(
            9,
            before,
            Code::Provenance,
            "the spec recompiles to script.R byte for byte".to_owned(),
        );
        let check_9_failed = self.failures[before..]
            .iter()
            .any(|f| f.code == Code::Provenance);
        self.replay = match compiled_script {
            Some(compiled) if !check_9_failed => records
                .iter()
                .rev()
                .find(|(k, _)| k == "artifact_bundle")
                .and_then(|(_, bundle)| bundle["analytical_hash"].as_str())
                .map(|expected| ReplayPlan {
                    request: RunRequest {
                        script: compiled.bytes,
                        expected_script_hash: compiled.script_hash,
                        snapshot: Arc::new(snapshot),
                        expected_snapshot_hash: hash,
                        image,
                    },
                    expected_analytical_hash: expected.to_owned(),
                })
                .ok_or_else(|| "no artifact_bundle record names an analytical hash".to_owned()),
            _ => Err(
                "check 9 failed: the bundle's script.R is not the script its spec compiles to"
                    .to_owned(),
            ),
        };
    }
}

fn snapshot_columns(columns: &serde_json::Value) -> Result<Vec<SnapshotColumn>, String> {
    let columns = columns
        .as_array()
        .ok_or("the context names no snapshot columns")?;
    columns
        .iter()
        .map(|column| {
            let role = match column["role"].as_str() {
                Some("subject") => "subject",
                Some("treatment") => "treatment",
                Some("visit") => "visit",
                Some("visit_order") => "visit_order",
                Some("value") => "value",
                other => return Err(format!("unknown snapshot column role {other:?}")),
            };
            let class = match column["class"].as_str() {
                Some("character") => ColumnClass::Character,
                Some("numeric") => ColumnClass::Numeric,
                other => return Err(format!("unknown column class {other:?}")),
            };
            Ok(SnapshotColumn {
                name: column["name"].as_str().unwrap_or_default().to_owned(),
                class,
                role,
            })
        })
        .collect()
}

/// Reads snapshot.csv as `write_csv` writes it: a quoted header, text quoted, numbers bare, a
/// missing value as an empty bare field.
fn read_snapshot_csv(bytes: &[u8], columns: Vec<SnapshotColumn>) -> Result<Snapshot, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "snapshot.csv is not UTF-8".to_owned())?;
    let mut rows: Vec<Vec<(bool, String)>> = Vec::new();
    let mut row = Vec::new();
    let (mut field, mut quoted, mut in_quotes) = (String::new(), false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                in_quotes = true;
                quoted = true;
            }
            ',' => row.push((quoted, std::mem::take(&mut field))),
            '\n' => {
                row.push((quoted, std::mem::take(&mut field)));
                rows.push(std::mem::take(&mut row));
            }
            other => field.push(other),
        }
        if c == ',' || c == '\n' {
            quoted = false;
        }
    }
    if in_quotes || !field.is_empty() || !row.is_empty() {
        return Err("snapshot.csv does not end with a complete line".to_owned());
    }
    let mut lines = rows.into_iter();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    if header != names {
        return Err(format!(
            "snapshot.csv's header {header:?} is not the context's columns {names:?}"
        ));
    }
    let mut values = Vec::new();
    for (line, fields) in lines.enumerate() {
        if fields.len() != columns.len() {
            return Err(format!(
                "snapshot.csv line {}: {} fields, {} columns",
                line + 2,
                fields.len(),
                columns.len()
            ));
        }
        let mut out = Vec::with_capacity(fields.len());
        for ((quoted, text), column) in fields.into_iter().zip(&columns) {
            out.push(match (quoted, column.class) {
                (true, ColumnClass::Character) => SnapshotValue::Text(text.into()),
                (false, _) if text.is_empty() => SnapshotValue::Missing,
                (false, ColumnClass::Numeric) => {
                    SnapshotValue::Number(text.parse::<f64>().map_err(|_| {
                        format!("snapshot.csv line {}: {text:?} is not a number", line + 2)
                    })?)
                }
                _ => {
                    return Err(format!(
                        "snapshot.csv line {}: {text:?} does not fit column {} ({})",
                        line + 2,
                        column.name,
                        column.class.as_str()
                    ))
                }
            });
        }
        values.push(out);
    }
    Ok(Snapshot {
        columns,
        rows: values,
    })
}

/// The run request of a retained result: the script's bytes and the snapshot read from its
/// CSV with the column classes its `revision_context` record names, checked against the hashes
/// its `execution_request` record names (the runner re-hashes both). Used by the bundle's
/// replay and by the reproduction of a stored revision.
pub fn run_request_from(
    request: &serde_json::Value,
    context: &serde_json::Value,
    script: Vec<u8>,
    snapshot_csv: &[u8],
) -> Result<crate::runner::RunRequest, String> {
    let columns = snapshot_columns(&context["snapshot"]["columns"])?;
    let snapshot = read_snapshot_csv(snapshot_csv, columns)?;
    let hash = |field: &str| -> Result<crate::domain::digest::Sha256Digest, String> {
        crate::domain::digest::Sha256Digest::try_from(
            request[field].as_str().unwrap_or_default().to_owned(),
        )
        .map_err(|_| format!("the request's {field} is not a hash"))
    };
    Ok(crate::runner::RunRequest {
        script,
        expected_script_hash: hash("script_hash")?,
        snapshot: std::sync::Arc::new(snapshot),
        expected_snapshot_hash: hash("snapshot_hash")?,
        image: serde_json::from_value(request["image"].clone()).unwrap_or_default(),
    })
}
