//! Reproduction of a retained result: a Verified or Approved revision's script and snapshot
//! read back from the object store (re-hashed), run in a fresh sandboxed R process, and
//! compared with what was verified. The analytical hash must match; with the same environment
//! fingerprint the image hash must match too; with another environment the parts that differ
//! are named. The outcome, good or bad, is a `reproduction` evidence record.

use adamviz_store::sql::Sql;
use serde_json::Value;

use super::execution::ExecutionService;
use adamviz_engine::runner::RunFailure;
use adamviz_evidence::{
    actor::Actor,
    reproduction::{
        OriginalHashes, ReproducedHashes, ReproductionFindings, ReproductionInputs,
        ReproductionOutcome, ReproductionRecord,
    },
    validate::run_request_from,
};
use adamviz_model::{digest::Sha256Digest, ids::RevisionId, revision::RevisionStatus};
use adamviz_store::{
    ledger::{append_evidence, records_about, utc_now},
    repository::{get_revision, Revision},
};

/// Why a reproduction could not be made (a reproduction that ran and differed is not an
/// error: it is a `failed` record).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReproduceError {
    /// No such revision.
    #[error("there is no revision {0}")]
    NoRevision(RevisionId),
    /// Only a retained (Verified or Approved) result is reproduced.
    #[error("revision {id} is {status}: only a Verified or Approved revision has a retained result to reproduce")]
    NotRetained {
        /// The revision.
        id: RevisionId,
        /// Its status in words.
        status: &'static str,
    },
    /// The stored records or objects cannot be read.
    #[error("{0}")]
    Stored(String),
    /// R could not run here (no sandbox, R missing, killed by a signal, out of memory, the
    /// time limit): nothing was recorded, as nothing about the retained result was learnt.
    #[error("R could not run the reproduction here ({0}); nothing was recorded: try again when the runner works")]
    NotRun(String),
}

/// What a reproduction recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reproduced {
    /// The record's hash.
    pub record_hash: Sha256Digest,
    /// Reproduced or failed.
    pub outcome: ReproductionOutcome,
    /// Why it failed.
    pub failures: Vec<String>,
    /// The environment parts that differ.
    pub environment_differences: Vec<String>,
    /// The environment fingerprints matched (the image hash was compared).
    pub same_environment: bool,
}

/// The retained result of a revision, as its records and the store hold it.
struct Retained {
    revision: Revision,
    request: Value,
    context: Value,
}

fn latest(records: &[adamviz_store::ledger::StoredRecord], kind: &str) -> Option<Value> {
    records
        .iter()
        .rev()
        .find(|r| r.kind == kind)
        .and_then(|r| serde_json::from_slice(&r.record).ok())
}

fn retained(connection: &impl Sql, id: &RevisionId) -> Result<Retained, ReproduceError> {
    let stored = |e: &dyn std::fmt::Display| ReproduceError::Stored(e.to_string());
    let revision = get_revision(connection, id)
        .map_err(|e| stored(&e))?
        .ok_or_else(|| ReproduceError::NoRevision(id.clone()))?;
    if !matches!(
        revision.status,
        RevisionStatus::Verified | RevisionStatus::Approved
    ) {
        return Err(ReproduceError::NotRetained {
            id: id.clone(),
            status: revision.status.label(),
        });
    }
    let records = records_about(connection, id).map_err(|e| stored(&e))?;
    let missing = |kind: &str| ReproduceError::Stored(format!("{id} has no {kind} record"));
    Ok(Retained {
        request: latest(&records, "execution_request")
            .ok_or_else(|| missing("execution_request"))?,
        context: latest(&records, "revision_context").ok_or_else(|| missing("revision_context"))?,
        revision,
    })
}

/// Every leaf of `value` as `dotted.path = value`.
fn leaves(prefix: &str, value: &Value, out: &mut std::collections::BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                leaves(&path, inner, out);
            }
        }
        other => {
            out.insert(prefix.to_owned(), other.to_string());
        }
    }
}

/// The parts of two environment records that differ, as dotted paths (`r_version`,
/// `packages.ggplot2`, `graphics.libraries.cairo`), sorted.
pub fn environment_differences(original: &Value, now: &Value) -> Vec<String> {
    let (mut a, mut b) = (Default::default(), Default::default());
    leaves("", original, &mut a);
    leaves("", now, &mut b);
    let mut paths: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|path| a.get(*path) != b.get(*path))
        .cloned()
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn digest_at(value: &Value, path: &[&str]) -> Result<Sha256Digest, ReproduceError> {
    let text = path
        .iter()
        .fold(value, |v, key| &v[*key])
        .as_str()
        .unwrap_or_default();
    Sha256Digest::try_from(text.to_owned()).map_err(|_| {
        ReproduceError::Stored(format!(
            "the revision context's {} is not a hash",
            path.join(".")
        ))
    })
}

/// What R prints before it stops with a non-zero status when this host's memory runs out
/// (RLIMIT_AS, or the machine's): "cannot allocate vector of size …", "cannot allocate memory
/// block of size …", "vector memory exhausted (limit reached?)", and, when the stack cannot
/// grow within the address space, "segfault from C stack overflow" or "C stack usage … is too
/// close to the limit".
const OUT_OF_MEMORY: [&str; 3] = ["cannot allocate", "memory exhausted", "C stack"];

/// Why `result` failed for reasons of this host rather than of the retained result, if it did:
/// the sandbox or R unavailable, the time limit, a signal (the kernel's OOM killer, a CPU or
/// file-size limit, a crash), or R out of memory. The script and snapshot are the retained,
/// re-hashed ones, so none of these says anything about them.
fn host_failure(result: &adamviz_engine::runner::RunResult) -> Option<String> {
    match result.failure.as_ref()? {
        failure @ (RunFailure::Setup { .. }
        | RunFailure::Spawn { .. }
        | RunFailure::IsolationUnavailable { .. }
        | RunFailure::TimedOut { .. }
        | RunFailure::Signalled { .. }) => Some(failure.to_string()),
        failure @ RunFailure::Exited { .. }
            if OUT_OF_MEMORY
                .iter()
                .any(|words| result.stderr.text.contains(words)) =>
        {
            Some(format!("{failure}: out of memory"))
        }
        _ => None,
    }
}

/// Reproduces revision `id` with the execution service's runner and store, and records the
/// outcome as `actor`.
pub async fn reproduce(
    execution: &ExecutionService,
    id: &RevisionId,
    actor: &Actor,
) -> Result<Reproduced, ReproduceError> {
    let key = id.clone();
    let retained = execution
        .database()
        .call(move |connection| {
            Ok::<_, adamviz_store::db::DatabaseError>(retained(connection, &key))
        })
        .await
        .map_err(|e| ReproduceError::Stored(e.to_string()))??;
    let original = OriginalHashes {
        analytical_hash: digest_at(&retained.context, &["outputs", "analytical_hash"])?,
        image_hash: digest_at(&retained.context, &["outputs", "image_hash"])?,
        environment_fingerprint: digest_at(&retained.context, &["environment_fingerprint"])?,
    };
    let (script_id, snapshot_id) = (
        Sha256Digest::try_from(retained.revision.script_hash.clone())
            .map_err(|e| ReproduceError::Stored(e.to_string()))?,
        Sha256Digest::try_from(retained.revision.snapshot_id.clone())
            .map_err(|e| ReproduceError::Stored(e.to_string()))?,
    );
    let mut failures = Vec::new();
    let mut reproduced = ReproducedHashes {
        analytical_hash: None,
        image_hash: None,
        environment_fingerprint: None,
    };
    let mut differences = Vec::new();
    match read_inputs(execution.objects(), &retained, script_id, snapshot_id).await {
        Err(message) => failures.push(format!("the retained inputs cannot be read: {message}")),
        Ok(request) => {
            let result = execution.runner().run(request).await;
            // A run that could not happen says nothing about the retained result: it is an
            // error, not a failed reproduction (the ledger is append-only, and a `failed`
            // record fails the revision's bundle for good, and blocks its approval).
            if let Some(reason) = host_failure(&result) {
                return Err(ReproduceError::NotRun(reason));
            }
            reproduced = hashes_of(&result);
            failures = compare(&result, &reproduced, &original);
            if reproduced.environment_fingerprint != Some(original.environment_fingerprint) {
                if let Some(now) = &result.environment {
                    differences =
                        environment_differences(&retained.context["result"]["environment"], now);
                }
            }
        }
    }
    let record = ReproductionRecord::new(
        ReproductionFindings {
            revision_id: id.clone(),
            revision_version: retained.revision.version,
            inputs: ReproductionInputs {
                script_sha256: script_id,
                snapshot_sha256: snapshot_id,
            },
            original,
            reproduced,
            environment_differences: differences,
            failures,
        },
        utc_now(),
        actor.clone(),
    );
    let sealed = seal(execution, record).await?;
    let record = sealed.record();
    Ok(Reproduced {
        record_hash: *sealed.record_hash(),
        outcome: record.outcome,
        failures: record.failures.clone(),
        environment_differences: record.environment_differences.clone(),
        same_environment: record.same_environment,
    })
}

/// The retained script and snapshot as a run request: `get` re-hashes every object and refuses
/// corrupt bytes; the snapshot is read with the classes the context names. `Err`: why not.
async fn read_inputs(
    objects: &adamviz_store::objects::ObjectStore,
    retained: &Retained,
    script_id: Sha256Digest,
    snapshot_id: Sha256Digest,
) -> Result<adamviz_engine::runner::RunRequest, RetainedReadError> {
    let objects = objects.clone();
    let (script, csv) = tokio::task::spawn_blocking(move || {
        Ok::<_, adamviz_store::objects::ObjectStoreError>((
            objects.get(&script_id)?,
            objects.get(&snapshot_id)?,
        ))
    })
    .await??;
    Ok(run_request_from(
        &retained.request,
        &retained.context,
        script,
        &csv,
    )?)
}

/// Why the retained inputs of a revision cannot be run again.
#[derive(Debug, thiserror::Error)]
enum RetainedReadError {
    /// A stored object is missing or no longer hashes to its name.
    #[error(transparent)]
    Objects(#[from] adamviz_store::objects::ObjectStoreError),
    /// The snapshot or the request does not read back.
    #[error(transparent)]
    Inputs(#[from] adamviz_evidence::validate::RetainedInputError),
    /// The read stopped before it answered.
    #[error("the read stopped: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
}

/// The hashes a reproduction's run gave.
fn hashes_of(result: &adamviz_engine::runner::RunResult) -> ReproducedHashes {
    ReproducedHashes {
        analytical_hash: result.analytical_hash,
        image_hash: result
            .outputs
            .iter()
            .find(|o| o.name == "plot.png")
            .map(|o| o.sha256),
        environment_fingerprint: result.environment_fingerprint,
    }
}

/// What does not come out the same: the run's failure, the statistics' hash, and — in the same
/// environment only, where it must be byte-identical — the image's.
fn compare(
    result: &adamviz_engine::runner::RunResult,
    reproduced: &ReproducedHashes,
    original: &OriginalHashes,
) -> Vec<String> {
    let mut failures = Vec::new();
    if let Some(failure) = &result.failure {
        failures.push(format!("the run failed: {failure}"));
    }
    match reproduced.analytical_hash {
        Some(hash) if hash == original.analytical_hash => {}
        Some(hash) => failures.push(format!(
            "the statistics hash to {hash}, the verified result to {}",
            original.analytical_hash
        )),
        None if result.failure.is_none() => failures.push("the run gave no statistics".to_owned()),
        None => {}
    }
    let same_environment =
        reproduced.environment_fingerprint == Some(original.environment_fingerprint);
    if let Some(image) = reproduced.image_hash.filter(|_| same_environment) {
        if image != original.image_hash {
            failures.push(format!(
                "in the same environment the image hashes to {image}, the verified image to {}",
                original.image_hash
            ));
        }
    }
    failures
}

/// Appends the reproduction record in a transaction of its own.
async fn seal(
    execution: &ExecutionService,
    record: ReproductionRecord,
) -> Result<adamviz_evidence::record::Verified<ReproductionRecord>, ReproduceError> {
    execution
        .database()
        .call(move |connection| {
            let transaction = connection.transaction()?;
            let record = append_evidence(&transaction, record)
                .map_err(|e| ReproduceError::Stored(e.to_string()));
            transaction.commit()?;
            Ok::<_, adamviz_store::db::DatabaseError>(record)
        })
        .await
        .map_err(|e| ReproduceError::Stored(e.to_string()))?
}

/// A `reproduction` record as pages show it.
pub fn reproduction_view(record: &Value) -> Option<adamviz_model::revision::ReproductionView> {
    let texts = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    Some(adamviz_model::revision::ReproductionView {
        reproduced_at: record["reproduced_at"].as_str()?.to_owned(),
        by: record["actor"]["account_name"].as_str()?.to_owned(),
        outcome: record["outcome"].as_str()?.to_owned(),
        same_environment: record["same_environment"].as_bool()?,
        environment_differences: texts(&record["environment_differences"]),
        failures: texts(&record["failures"]),
        record_hash: record["record_hash"].as_str()?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::environment_differences;
    use serde_json::json;

    #[test]
    fn environment_differences_name_the_leaves_that_differ() {
        let a = json!({"r_version": "R 4.4.1", "packages": {"ggplot2": "3.5.1", "jsonlite": "1.8"}, "os": "Debian"});
        let b = json!({"r_version": "R 4.5.0", "packages": {"ggplot2": "3.5.1", "jsonlite": "1.9"}, "locale": "C"});
        assert_eq!(
            environment_differences(&a, &b),
            ["locale", "os", "packages.jsonlite", "r_version"]
        );
        assert!(environment_differences(&a, &a).is_empty());
    }
}
