//! The repository on both databases, a real SQLite file and a real PostgreSQL (a throwaway
//! cluster per test): each transition and each refusal, with the database's own rules
//! (triggers) tested by going around the repository with raw SQL through the store's `Sql`
//! seam. Every test runs twice, as `sqlite::<name>` and `postgres_db::<name>` (see
//! `on_both!`); only the SQL that takes a rule away differs by dialect.

#[path = "support/evidence_kinds.rs"]
mod evidence_kinds;
#[path = "support/postgres.rs"]
mod postgres;

/// `on_both!(name, …)`: for each `fn name(backend: Backend)` of the enclosing module, a test
/// `sqlite::name` on SQLite and a test `postgres_db::name` on PostgreSQL.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(super::Backend::Sqlite)
                }
            )*
        }
        mod postgres_db {
            $(
                #[test]
                fn $name() {
                    super::$name(super::Backend::Postgres)
                }
            )*
        }
    };
}

use adamviz_engine::compiler::ImageSize;
use adamviz_evidence::actor::Actor;
use adamviz_evidence::execution_checks::{
    CheckOutcome, CheckResult, ExecutionVerification, CHECK_NAMES,
};
use adamviz_evidence::{
    execution_request::ExecutionRequest,
    execution_verification::{ExecutionVerificationRecord, OutputHashes},
    revision_context::{RevisionInputs, SourceMetadata},
};
use adamviz_model::digest::Sha256Digest;
use adamviz_model::ids::{AttemptId, RevisionId};
use adamviz_store::{
    db::Database,
    ledger::{append_evidence, records_about, verify_ledger},
    objects::{ObjectStore, ObjectStoreError},
    repository::*,
    sql::{Dialect, Sql},
    sql_params,
};

fn digest(byte: u8) -> Sha256Digest {
    Sha256Digest::from_bytes([byte; 32])
}

fn verdict(passed: bool) -> ExecutionVerification {
    let checks: Vec<CheckResult> = CHECK_NAMES
        .iter()
        .map(|name| {
            let fail = !passed && *name == "image_hash";
            CheckResult {
                name: (*name).to_owned(),
                outcome: if fail {
                    CheckOutcome::Fail
                } else {
                    CheckOutcome::Pass
                },
                reason: fail.then(|| "plot.png is blank".to_owned()),
            }
        })
        .collect();
    ExecutionVerification {
        version: "execution-verification-v1".into(),
        passed,
        failed: if passed {
            vec![]
        } else {
            vec!["image_hash".into()]
        },
        checks,
    }
}

/// The `execution_verification` record of `verdict(passed)` for `attempt` of `revision`, about
/// the fixture's PNG.
fn verdict_record(
    revision: &RevisionId,
    attempt: &AttemptId,
    passed: bool,
) -> ExecutionVerificationRecord {
    ExecutionVerificationRecord::with_hashes(
        revision.to_owned(),
        attempt.to_owned(),
        digest(6),
        &verdict(passed),
        OutputHashes {
            analytical: Some(digest(7)),
            image: Some(ArtifactRef::of("plot.png", PNG).sha256),
            environment: Some(digest(9)),
        },
        "2026-12-03T09:00:00.000000Z".into(),
    )
}

/// The database a test runs on.
#[derive(Debug, Clone, Copy)]
enum Backend {
    /// A SQLite file in the fixture's temp directory.
    Sqlite,
    /// A throwaway PostgreSQL cluster of the fixture's own.
    Postgres,
}

/// A store on one backend. (Fields drop in order: the pool's connections close before the
/// cluster stops.)
struct Fixture {
    database: Database,
    objects: ObjectStore,
    _cluster: Option<postgres::Postgres>,
    _dir: tempfile::TempDir,
}

/// The objects a fixture's revisions and bundles name.
const SCRIPT: &[u8] = b"boxplot_analysis <- list()\n";
const SNAPSHOT: &[u8] = b"USUBJID,TRTA,AVISIT,AVISITN,AVAL\n";
const PNG: &[u8] = b"\x89PNG not really";
const STATISTICS: &[u8] = b"{\"cells\":[]}";
const ENVIRONMENT: &[u8] = b"{\"r_version\":\"4.2.2\"}";

fn inputs() -> RevisionInputs {
    RevisionInputs {
        source: SourceMetadata {
            content_hash: digest(1),
            file_name: "adlb.xpt".into(),
            classification: "synthetic".into(),
            size: 10,
            format: "xpt".into(),
            dataset_name: Some("ADLB".into()),
            dataset_label: None,
            row_count: 3,
            column_count: 5,
        },
        profile_warnings: vec![],
    }
}

impl Fixture {
    /// A fresh store on `backend`, its objects in a temp directory.
    fn on(backend: Backend) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (database, cluster) = match backend {
            Backend::Sqlite => (Database::open_in(dir.path()).unwrap(), None),
            Backend::Postgres => {
                let cluster = postgres::Postgres::start();
                let database = Database::open_postgres(&cluster.url()).unwrap();
                (database, Some(cluster))
            }
        };
        let objects = ObjectStore::open(dir.path()).unwrap();
        Self {
            database,
            objects,
            _cluster: cluster,
            _dir: dir,
        }
    }

    fn put(&self, bytes: &[u8]) -> Sha256Digest {
        self.objects.put(bytes, 1 << 20).unwrap().digest
    }

    fn artifact(&self, name: &str, bytes: &[u8]) -> ArtifactRef {
        self.put(bytes);
        ArtifactRef::of(name, bytes)
    }

    fn revision(&self, free_scale: bool) -> Revision {
        let (script, snapshot) = (self.put(SCRIPT), self.put(SNAPSHOT));
        let mut connection = self.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        insert_upload(&transaction, &digest(1), "synthetic", "adlb.xpt", 10).unwrap();
        insert_spec(&transaction, &digest(2), &digest(1), b"{}").unwrap();
        let id = new_revision_id();
        let request_hash = (!free_scale).then(|| {
            let request = ExecutionRequest::new(
                id.clone(),
                digest(2),
                script,
                snapshot,
                digest(5),
                ImageSize::default(),
                adamviz_engine::compiler::report_text::ReportText {
                    title: "a title".to_owned(),
                    footnotes: vec!["a footnote".to_owned()],
                },
                "2026-12-03T09:00:00.000000Z".into(),
                Actor::command_line(),
                adamviz_services::provenance::this_build(),
            );
            *append_evidence(&transaction, request)
                .unwrap()
                .record_hash()
        });
        let revision = create_revision(
            &transaction,
            &NewRevision {
                id,
                spec_hash: digest(2),
                free_scale,
                script_hash: script,
                snapshot_id: snapshot,
                snapshot_hash: digest(5),
                request_hash,
                actor: Actor::command_line(),
                inputs: inputs(),
                parent: None,
            },
        )
        .unwrap();
        transaction.commit().unwrap();
        revision
    }

    fn start(
        &self,
        revision: &RevisionId,
        key: &str,
        fingerprint: u8,
    ) -> Result<StartOutcome, RepositoryError> {
        self.start_held_by(
            revision,
            key,
            fingerprint,
            &AttemptLease::of_this_process(std::time::Duration::from_secs(600)),
        )
    }

    fn start_held_by(
        &self,
        revision: &RevisionId,
        key: &str,
        fingerprint: u8,
        lease: &AttemptLease,
    ) -> Result<StartOutcome, RepositoryError> {
        let mut connection = self.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let outcome = start_attempt(
            &transaction,
            revision,
            &attempt_id_for(revision, key),
            &digest(fingerprint),
            lease,
            &Actor::command_line(),
        )?;
        transaction.commit().unwrap();
        Ok(outcome)
    }

    fn bundle(&self, verification_hash: Sha256Digest) -> BundleToAccept {
        BundleToAccept {
            artifacts: BundleArtifacts {
                script: self.artifact("script.R", SCRIPT),
                plot: self.artifact("plot.png", PNG),
                statistics: self.artifact("statistics.json", STATISTICS),
                environment: self.artifact("environment.json", ENVIRONMENT),
                snapshot: self.artifact("snapshot.csv", SNAPSHOT),
                pdf: Some(self.artifact("plot.pdf", b"%PDF-1.5 stand-in")),
                svg: Some(self.artifact("plot.svg", b"<svg/>")),
                statistics_csv: Some(self.artifact("statistics.csv", b"n\n1\n")),
            },
            analytical_hash: digest(7),
            snapshot_hash: digest(5),
            verification_hash,
        }
    }

    /// Records a verdict for the attempt and tries to complete it, all in one transaction.
    fn complete(
        &self,
        revision: &RevisionId,
        attempt: &AttemptId,
        passed: bool,
    ) -> Result<Revision, RepositoryError> {
        self.complete_with(revision, attempt, passed, |bundle| bundle)
    }

    /// Like [`Fixture::complete`], with the bundle changed by `edit` first.
    fn complete_with(
        &self,
        revision: &RevisionId,
        attempt: &AttemptId,
        passed: bool,
        edit: impl FnOnce(BundleToAccept) -> BundleToAccept,
    ) -> Result<Revision, RepositoryError> {
        let mut connection = self.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let stored =
            append_evidence(&transaction, verdict_record(revision, attempt, passed)).unwrap();
        let bundle = edit(self.bundle(*stored.record_hash()));
        let completed = complete_verified(
            &transaction,
            &self.objects,
            attempt,
            &bundle,
            &Actor::command_line(),
        )?;
        transaction.commit().unwrap();
        Ok(completed.revision)
    }
}

fn a_draft_goes_to_verified_only_with_passing_evidence_and_a_bundle(backend: Backend) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    assert_eq!(
        (revision.status, revision.version),
        (RevisionStatus::Draft, 1)
    );
    let StartOutcome::Started(attempt) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!("not started");
    };
    assert_eq!(attempt.captured_version, 1);
    // A failing verdict cannot bind a bundle (the database refuses), and nothing is promoted.
    let refused = f.complete(&revision.id, &attempt.id, false).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("needs passing verification evidence"),
        "{refused}"
    );
    let verified = f.complete(&revision.id, &attempt.id, true).unwrap();
    assert_eq!(
        (verified.status, verified.version),
        (RevisionStatus::Verified, 2)
    );
    assert_eq!(
        verified.image_hash,
        Some(ArtifactRef::of("plot.png", PNG).sha256.to_hex())
    );
    // Every row change has its record, about this revision, in this order (the refused
    // completion above left nothing, not even its verdict: its transaction rolled back).
    let connection = f.database.connection().unwrap();
    let kinds: Vec<String> = records_about(&connection, &revision.id)
        .unwrap()
        .into_iter()
        .map(|r| r.kind)
        .collect();
    // The context record is the service's; the repository writes the rest.
    assert_eq!(kinds, evidence_kinds::VERIFIED[..7]);
    assert_eq!(verify_ledger(&connection).unwrap().first_break, None);
    drop(connection);
    // Verified is not Draft: no further attempt.
    assert!(matches!(
        f.start(&revision.id, "key-2", 11),
        Err(RepositoryError::NotDraft {
            status: RevisionStatus::Verified,
            ..
        })
    ));
}

fn the_same_key_returns_the_same_attempt_and_other_inputs_are_refused(backend: Backend) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    let StartOutcome::Started(first) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    assert_eq!(
        f.start(&revision.id, "key-1", 11).unwrap(),
        StartOutcome::Existing(first.clone())
    );
    assert!(matches!(
        f.start(&revision.id, "key-1", 12),
        Err(RepositoryError::KeyReusedWithOtherInputs { .. })
    ));
    assert!(matches!(
        f.start(&revision.id, "key-2", 11),
        Err(RepositoryError::AnotherActiveAttempt { attempt, .. }) if attempt == first.id
    ));
}

fn a_failed_attempt_leaves_the_draft_retryable_and_terminal_attempts_never_change(
    backend: Backend,
) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    let StartOutcome::Started(first) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    {
        let mut connection = f.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        fail_attempt(
            &transaction,
            &first.id,
            "runner: timed out",
            None,
            &Actor::command_line(),
        )
        .unwrap();
        transaction.commit().unwrap();
        let raw = connection.execute(
            "UPDATE attempts SET state = 'active' WHERE id = ?1",
            sql_params![first.id.as_str()],
        );
        let refused = raw.unwrap_err().to_string();
        assert!(
            refused.contains("terminal attempt cannot change")
                || refused.contains("an attempt ends once"),
            "{refused}"
        );
    }
    let StartOutcome::Started(second) = f.start(&revision.id, "key-2", 11).unwrap() else {
        panic!()
    };
    assert_eq!(
        f.complete(&revision.id, &second.id, true).unwrap().status,
        RevisionStatus::Verified
    );
}

fn a_stale_version_is_not_promoted_and_nothing_of_the_completion_remains(backend: Backend) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    let StartOutcome::Started(attempt) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    // The revision moves on while the attempt runs. No code path does that, and the database
    // refuses it (migration 4); an attacker who drops that rule can, and the version check of
    // the promotion still holds. (On SQLite that rule is a trigger of its own, dropped; on
    // PostgreSQL it is one trigger with the version-moves-by-one check, disabled, as the table's
    // owner can.)
    let connection = f.database.connection().unwrap();
    let take_the_rule_away = match connection.dialect() {
        Dialect::Sqlite => "DROP TRIGGER revisions_change_only_by_promotion",
        Dialect::Postgres => {
            "ALTER TABLE revisions DISABLE TRIGGER revisions_change_only_by_their_edges"
        }
    };
    connection.execute(take_the_rule_away, &[]).unwrap();
    connection
        .execute(
            "UPDATE revisions SET version = version + 1 WHERE id = ?1",
            sql_params![revision.id.as_str()],
        )
        .unwrap();
    drop(connection);
    assert!(matches!(
        f.complete(&revision.id, &attempt.id, true),
        Err(RepositoryError::StaleVersion {
            captured: 1,
            actual: 2,
            ..
        })
    ));
    let connection = f.database.connection().unwrap();
    let bundles: i64 = connection
        .query_one("SELECT count(*) FROM artifact_bundles", &[])
        .unwrap()
        .get(0)
        .unwrap();
    assert_eq!(bundles, 0);
    assert_eq!(
        get_revision(&connection, &revision.id)
            .unwrap()
            .unwrap()
            .status,
        RevisionStatus::Draft
    );
}

fn the_database_itself_refuses_promotion_without_a_bundle_and_for_free_scales(backend: Backend) {
    let f = Fixture::on(backend);
    let draft = f.revision(false);
    let free = f.revision(true);
    assert_eq!(free.status, RevisionStatus::ExperimentalDraft);
    assert!(matches!(
        f.start(&free.id, "key-1", 11),
        Err(RepositoryError::NotDraft {
            status: RevisionStatus::ExperimentalDraft,
            ..
        })
    ));
    let connection = f.database.connection().unwrap();
    for id in [&draft.id, &free.id] {
        let refused = connection
            .execute(
                "UPDATE revisions SET status = 'verified', version = version + 1 WHERE id = ?1",
                sql_params![id.as_str()],
            )
            .unwrap_err();
        assert!(
            refused.to_string().contains("becomes verified only")
                || refused
                    .to_string()
                    .contains("changes only from draft to verified"),
            "{refused}"
        );
    }
    let refused = connection
        .execute(
            "UPDATE revisions SET status = 'draft' WHERE id = ?1",
            sql_params![draft.id.as_str()],
        )
        .unwrap_err();
    assert!(
        refused.to_string().contains("version on by one")
            || refused
                .to_string()
                .contains("changes only from draft to verified"),
        "{refused}"
    );
}

fn reconcile_fails_attempts_left_active_and_a_retry_succeeds(backend: Backend) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    let StartOutcome::Started(attempt) = f
        .start_held_by(
            &revision.id,
            "key-1",
            11,
            &lease_of_a_process_that_is_gone(),
        )
        .unwrap()
    else {
        panic!()
    };
    let mut connection = f.database.connection().unwrap();
    let transaction = connection.transaction().unwrap();
    let reconciled =
        reconcile_active_attempts(&transaction, "server restarted during the attempt").unwrap();
    transaction.commit().unwrap();
    assert_eq!(reconciled, vec![attempt.id.clone()]);
    let stored = get_attempt(&connection, &attempt.id).unwrap().unwrap();
    assert_eq!(
        (stored.state.as_str(), stored.reason.as_deref()),
        ("failed", Some("server restarted during the attempt"))
    );
    drop(connection);
    let StartOutcome::Started(retry) = f.start(&revision.id, "key-2", 11).unwrap() else {
        panic!()
    };
    assert_eq!(
        f.complete(&revision.id, &retry.id, true).unwrap().status,
        RevisionStatus::Verified
    );
}

fn a_bundle_whose_bytes_are_missing_or_changed_in_the_store_is_refused(backend: Backend) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    let StartOutcome::Started(attempt) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    // An artifact that was never stored.
    let missing = f
        .complete_with(&revision.id, &attempt.id, true, |mut bundle| {
            bundle.artifacts.plot = ArtifactRef::of("plot.png", b"never stored");
            bundle
        })
        .unwrap_err();
    assert!(
        matches!(&missing, RepositoryError::Artifact { name, source: ObjectStoreError::NotFound { .. } } if name == "plot.png"),
        "{missing}"
    );
    // A stored artifact whose file was changed on disk.
    // (Changed after the fixture stored it: storing the same bytes again now repairs it.)
    let statistics = ArtifactRef::of("statistics.json", STATISTICS);
    let corrupt = f
        .complete_with(&revision.id, &attempt.id, true, |bundle| {
            std::fs::write(f.objects.path_of(&statistics.sha256), b"{\"cells\":[1]}").unwrap();
            bundle
        })
        .unwrap_err();
    assert!(
        matches!(&corrupt, RepositoryError::Artifact { name, source: ObjectStoreError::Corrupt { .. } } if name == "statistics.json"),
        "{corrupt}"
    );
    // A size that is not the stored one.
    std::fs::write(f.objects.path_of(&statistics.sha256), STATISTICS).unwrap();
    let size = f
        .complete_with(&revision.id, &attempt.id, true, |mut bundle| {
            bundle.artifacts.environment.size += 1;
            bundle
        })
        .unwrap_err();
    assert!(
        matches!(&size, RepositoryError::ArtifactSize { name, .. } if name == "environment.json"),
        "{size}"
    );
    let connection = f.database.connection().unwrap();
    assert_eq!(
        get_revision(&connection, &revision.id)
            .unwrap()
            .unwrap()
            .status,
        RevisionStatus::Draft
    );
    drop(connection);
    assert_eq!(
        f.complete(&revision.id, &attempt.id, true).unwrap().status,
        RevisionStatus::Verified
    );
}

fn the_database_refuses_rows_without_their_evidence_records(backend: Backend) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    let StartOutcome::Started(attempt) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    let connection = f.database.connection().unwrap();
    // A succeeded attempt without a bundle.
    let refused = connection
        .execute(
            "UPDATE attempts SET state = 'succeeded' WHERE id = ?1",
            sql_params![attempt.id.as_str()],
        )
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("succeeds only with an accepted artifact bundle")
            || refused.to_string().contains("an attempt ends once"),
        "{refused}"
    );
    // A bundle row whose artifact_bundle record does not exist (passing verification present).
    let record = verdict_record(&revision.id, &attempt.id, true);
    let mut connection = connection;
    let transaction = connection.transaction().unwrap();
    let verification = *append_evidence(&transaction, record).unwrap().record_hash();
    let refused = transaction
        .execute(
            "INSERT INTO artifact_bundles (revision_id, attempt_id, script_hash, png_hash,
                statistics_hash, environment_hash, snapshot_id, verification_hash, record_hash,
                accepted_at)
             VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5, ?6, ?6, '2026-12-03T09:00:00.000000Z')",
            sql_params![
                revision.id.as_str(),
                attempt.id.as_str(),
                revision.script_hash.as_str(),
                digest(8).to_hex(),
                revision.snapshot_id.as_str(),
                verification.to_hex()
            ],
        )
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("needs its artifact_bundle evidence record"),
        "{refused}"
    );
    drop(transaction);
    // A bundle for another script than the revision's own: its record names that script, so
    // the record matches but the revision does not.
    drop(connection);
    let other = f
        .complete_with(&revision.id, &attempt.id, true, |mut bundle| {
            bundle.artifacts.script = f.artifact("script.R", b"another script\n");
            bundle
        })
        .unwrap_err();
    assert!(
        other
            .to_string()
            .contains("the revision's own script and snapshot"),
        "{other}"
    );
}

/// A lease held by a process of this host that has exited.
fn lease_of_a_process_that_is_gone() -> AttemptLease {
    let mut child = std::process::Command::new("/bin/true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let owner = adamviz_store::owner::ProcessIdentity {
        pid,
        ..adamviz_store::owner::ProcessIdentity::current().clone()
    };
    AttemptLease {
        owner: owner.to_column(),
        until: "2999-01-01T00:00:00.000000Z".to_owned(),
    }
}

/// Before: recovery at start ended every active attempt, so an `adamviz run` or a `serve`
/// starting on a data directory failed the attempt another live process was running.
fn reconcile_leaves_the_attempt_of_a_live_owner_alone(backend: Backend) {
    let f = Fixture::on(backend);
    let revision = f.revision(false);
    let StartOutcome::Started(attempt) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    let mut connection = f.database.connection().unwrap();
    let transaction = connection.transaction().unwrap();
    let reconciled = reconcile_active_attempts(&transaction, "restarted").unwrap();
    transaction.commit().unwrap();
    assert_eq!(reconciled, Vec::<AttemptId>::new());
    let stored = get_attempt(&connection, &attempt.id).unwrap().unwrap();
    assert_eq!(stored.state, "active");
}

on_both!(
    a_draft_goes_to_verified_only_with_passing_evidence_and_a_bundle,
    the_same_key_returns_the_same_attempt_and_other_inputs_are_refused,
    a_failed_attempt_leaves_the_draft_retryable_and_terminal_attempts_never_change,
    a_stale_version_is_not_promoted_and_nothing_of_the_completion_remains,
    the_database_itself_refuses_promotion_without_a_bundle_and_for_free_scales,
    reconcile_fails_attempts_left_active_and_a_retry_succeeds,
    a_bundle_whose_bytes_are_missing_or_changed_in_the_store_is_refused,
    the_database_refuses_rows_without_their_evidence_records,
    reconcile_leaves_the_attempt_of_a_live_owner_alone,
);

mod run_queue_rules {
    //! The durable run queue on both databases: a pressed Run is recorded once per key and
    //! per revision, claimed oldest first, renewed only by its holder, given back to the queue
    //! with its attempt failed when its runner is lost, and final once done.

    use super::*;
    use adamviz_store::{owner::ProcessIdentity, run_queue::*};

    fn enqueue(f: &Fixture, revision: &RevisionId, key: &str) -> (RunRequest, bool) {
        let mut connection = f.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let queued = enqueue_run(&transaction, revision, key, &Actor::command_line(), 2).unwrap();
        transaction.commit().unwrap();
        queued
    }

    fn claim_as(f: &Fixture, claimant: &Claimant, lease_until: &str) -> Option<RunRequest> {
        let mut connection = f.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let claimed = claim_next(&transaction, claimant, lease_until).unwrap();
        transaction.commit().unwrap();
        claimed
    }

    fn recover(f: &Fixture, now: &str) -> Vec<RecoveredClaim> {
        let mut connection = f.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let recovered = recover_lost_claims(&transaction, now).unwrap();
        transaction.commit().unwrap();
        recovered
    }

    /// A claimant in a process of this host that has exited.
    fn gone_claimant() -> Claimant {
        let lease = lease_of_a_process_that_is_gone();
        Claimant {
            process: lease.owner,
            slot: 1,
        }
    }

    const FAR: &str = "2999-01-01T00:00:00.000000Z";

    fn a_pressed_run_is_recorded_once_and_a_second_press_joins_it(backend: Backend) {
        let f = Fixture::on(backend);
        let (first, second) = (f.revision(false), f.revision(false));
        let (request, new) = enqueue(&f, &first.id, "press-0001");
        assert!(new);
        assert_eq!(request.state, QueueState::Queued);
        assert_eq!(request.claims, 0);
        assert_eq!(request.attempt_id, attempt_id_for(&first.id, "press-0001"));
        assert_eq!(request.requested_by, Actor::command_line());
        // The same key, and another key while the first is open: the same request.
        assert_eq!(
            enqueue(&f, &first.id, "press-0001"),
            (request.clone(), false)
        );
        assert_eq!(
            enqueue(&f, &first.id, "press-0002"),
            (request.clone(), false)
        );
        let (other, new) = enqueue(&f, &second.id, "press-0001");
        assert!(new);
        let connection = f.database.connection().unwrap();
        assert_eq!(open_request(&connection, &first.id).unwrap().unwrap().1, 1);
        assert_eq!(open_request(&connection, &second.id).unwrap().unwrap().1, 2);
        assert_eq!(other.seq, request.seq + 1);
    }

    fn runners_claim_oldest_first_and_only_the_holder_renews_or_finishes(backend: Backend) {
        let f = Fixture::on(backend);
        let (first, second) = (f.revision(false), f.revision(false));
        enqueue(&f, &first.id, "press-0001");
        enqueue(&f, &second.id, "press-0001");
        let (one, two) = (Claimant::of_this_process(1), Claimant::of_this_process(2));
        let claimed = claim_as(&f, &one, FAR).unwrap();
        assert_eq!(claimed.revision_id, first.id);
        assert_eq!((claimed.state, claimed.claims), (QueueState::Claimed, 1));
        assert_eq!(claimed.phase, Some(RunPhase::Preparing));
        assert_eq!(claim_as(&f, &two, FAR).unwrap().revision_id, second.id);
        assert_eq!(claim_as(&f, &two, FAR), None, "nothing is left to claim");
        let connection = f.database.connection().unwrap();
        let attempt = &claimed.attempt_id;
        assert!(renew_claim(
            &connection,
            claimed.seq,
            attempt,
            &one,
            Some(RunPhase::Running),
            FAR
        )
        .unwrap());
        assert!(!renew_claim(&connection, claimed.seq, attempt, &two, None, FAR).unwrap());
        let (stored, position) = open_request(&connection, &first.id).unwrap().unwrap();
        assert_eq!((stored.phase, position), (Some(RunPhase::Running), 0));
        assert!(!finish_claim(&connection, claimed.seq, attempt, &two, "verified").unwrap());
        assert!(finish_claim(&connection, claimed.seq, attempt, &one, "verified").unwrap());
        assert_eq!(open_request(&connection, &first.id).unwrap(), None);
        let done = request_by_seq(&connection, claimed.seq).unwrap().unwrap();
        assert_eq!(
            (done.state, done.outcome.as_deref()),
            (QueueState::Done, Some("verified"))
        );
        // Finished is final, and no request is ever deleted.
        let changed = connection.execute(
            "UPDATE run_queue SET state = 'queued' WHERE seq = ?1",
            sql_params![claimed.seq],
        );
        assert!(changed
            .unwrap_err()
            .to_string()
            .contains("a finished run request cannot change"));
        let deleted = connection.execute("DELETE FROM run_queue", &[]);
        assert!(deleted.unwrap_err().to_string().contains("never deleted"));
    }

    fn a_lost_runner_fails_its_attempt_and_the_run_goes_back_to_the_queue_as_a_new_attempt(
        backend: Backend,
    ) {
        let f = Fixture::on(backend);
        let revision = f.revision(false);
        let (request, _) = enqueue(&f, &revision.id, "press-0001");
        let lost = gone_claimant();
        let claimed = claim_as(&f, &lost, FAR).unwrap();
        // The lost runner had started the claim's attempt before it died.
        let gone_lease = AttemptLease {
            owner: lost.process.clone(),
            until: FAR.to_owned(),
        };
        let StartOutcome::Started(attempt) = f
            .start_held_by(&revision.id, "press-0001", 11, &gone_lease)
            .unwrap()
        else {
            panic!("the first claim's attempt starts")
        };
        assert_eq!(attempt.id, claimed.attempt_id);

        let recovered = recover(&f, &adamviz_store::ledger::utc_now());
        assert_eq!(recovered.len(), 1);
        assert!(recovered[0].requeued);
        let connection = f.database.connection().unwrap();
        assert_eq!(
            get_attempt(&connection, &attempt.id)
                .unwrap()
                .unwrap()
                .state,
            "failed"
        );
        let (again, position) = open_request(&connection, &revision.id).unwrap().unwrap();
        assert_eq!(
            (again.state, again.seq, position),
            (QueueState::Queued, request.seq, 1)
        );
        assert!(again
            .requeued_because
            .unwrap()
            .contains("was lost during claim 1"));
        drop(connection);

        // The second claim is a new attempt, named apart from any key a person can press.
        let live = Claimant::of_this_process(1);
        let second = claim_as(&f, &live, FAR).unwrap();
        assert_eq!(second.claims, 2);
        assert_eq!(
            second.attempt_id,
            attempt_id_for(&revision.id, "press-0001#claim2")
        );
        assert_eq!(attempt_key("press-0001", 2), "press-0001#claim2");
        // A live runner of this host is not lost while its lease holds; once it stops renewing
        // (stuck, or its task gone), it is.
        assert!(recover(&f, "2998-12-31T00:00:00.000000Z").is_empty());
        let recovered = recover(&f, "2999-01-01T00:00:01.000000Z");
        assert_eq!(recovered.len(), 1);
        assert_eq!(recovered[0].attempt_id, second.attempt_id);
    }

    fn a_runner_elsewhere_is_lost_when_its_lease_expires_and_claims_run_out(backend: Backend) {
        let f = Fixture::on(backend);
        let revision = f.revision(false);
        enqueue(&f, &revision.id, "press-0001");
        let elsewhere = Claimant {
            process: ProcessIdentity {
                host: "another-host".to_owned(),
                pid: 4242,
                start_ticks: 1,
            }
            .to_column(),
            slot: 3,
        };
        let lease = "2026-12-06T10:00:00.000000Z";
        claim_as(&f, &elsewhere, lease).unwrap();
        assert!(
            recover(&f, "2026-12-06T09:59:59.000000Z").is_empty(),
            "the lease holds"
        );
        assert!(recover(&f, "2026-12-06T10:00:01.000000Z")[0].requeued);
        // The second (and last, max_claims = 2) claim is lost too: the request ends, not run.
        claim_as(&f, &elsewhere, lease).unwrap();
        let recovered = recover(&f, "2026-12-06T10:00:01.000000Z");
        assert!(!recovered[0].requeued);
        let connection = f.database.connection().unwrap();
        assert_eq!(open_request(&connection, &revision.id).unwrap(), None);
        let done = request_by_seq(&connection, recovered[0].seq)
            .unwrap()
            .unwrap();
        assert_eq!(done.state, QueueState::Done);
        assert!(done.outcome.unwrap().starts_with(
            "not run: its runner (another-host/4242/1 runner 3) was lost during claim 2"
        ));
    }

    fn a_process_stopped_on_purpose_gives_its_claims_back_without_using_up_a_try(backend: Backend) {
        let f = Fixture::on(backend);
        let revision = f.revision(false);
        enqueue(&f, &revision.id, "press-0001");
        let me = Claimant::of_this_process(1);
        let claimed = claim_as(&f, &me, FAR).unwrap();
        let StartOutcome::Started(attempt) = f.start(&revision.id, "press-0001", 11).unwrap()
        else {
            panic!("the claim's attempt starts")
        };
        let mut connection = f.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let released = release_claims_of(&transaction, &me.process, "stopped by SIGTERM").unwrap();
        transaction.commit().unwrap();
        assert_eq!(released, 1);
        assert_eq!(
            get_attempt(&connection, &attempt.id)
                .unwrap()
                .unwrap()
                .state,
            "failed"
        );
        let again = request_by_seq(&connection, claimed.seq).unwrap().unwrap();
        assert_eq!(
            (again.state, again.claims, again.max_claims),
            (QueueState::Queued, 1, 3)
        );
        assert_eq!(
            again.requeued_because.as_deref(),
            Some("stopped by SIGTERM")
        );
        drop(connection);
        let next = claim_as(&f, &me, FAR).unwrap();
        assert_eq!(
            next.attempt_id,
            attempt_id_for(&revision.id, "press-0001#claim2")
        );
    }

    on_both!(
        a_pressed_run_is_recorded_once_and_a_second_press_joins_it,
        runners_claim_oldest_first_and_only_the_holder_renews_or_finishes,
        a_lost_runner_fails_its_attempt_and_the_run_goes_back_to_the_queue_as_a_new_attempt,
        a_runner_elsewhere_is_lost_when_its_lease_expires_and_claims_run_out,
        a_process_stopped_on_purpose_gives_its_claims_back_without_using_up_a_try,
    );
}
