//! The repository on a real SQLite file: each transition and each refusal, with the database's
//! own rules (triggers) tested by going around the repository with raw SQL.
#![cfg(feature = "ssr")]

use adamviz::{
    domain::digest::Sha256Digest,
    evidence::execution_verification::{ExecutionVerificationRecord, OutputHashes},
    store::{db::Database, ledger::append_evidence, repository::*},
    verify::execution::{CheckOutcome, CheckResult, ExecutionVerification, CHECK_NAMES},
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

struct Fixture {
    _dir: tempfile::TempDir,
    database: Database,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let database = Database::open_in(dir.path()).unwrap();
        Self {
            _dir: dir,
            database,
        }
    }

    fn revision(&self, free_scale: bool) -> Revision {
        let mut connection = self.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        insert_upload(&transaction, &digest(1), "synthetic", "adlb.xpt", 10).unwrap();
        insert_spec(&transaction, &digest(2), &digest(1), b"{}").unwrap();
        let revision = create_revision(
            &transaction,
            &NewRevision {
                id: new_revision_id(),
                spec_hash: digest(2),
                free_scale,
                script_hash: digest(3),
                snapshot_id: digest(4),
                snapshot_hash: digest(5),
                request_hash: None,
            },
        )
        .unwrap();
        transaction.commit().unwrap();
        revision
    }

    fn start(
        &self,
        revision: &str,
        key: &str,
        fingerprint: u8,
    ) -> Result<StartOutcome, RepositoryError> {
        let mut connection = self.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let outcome = start_attempt(
            &transaction,
            revision,
            &attempt_id_for(revision, key),
            &digest(fingerprint),
        )?;
        transaction.commit().unwrap();
        Ok(outcome)
    }

    /// Records a verdict for the attempt and tries to complete it, all in one transaction.
    fn complete(
        &self,
        revision: &str,
        attempt: &str,
        passed: bool,
    ) -> Result<Revision, RepositoryError> {
        let mut connection = self.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        let record = ExecutionVerificationRecord::with_hashes(
            revision.to_owned(),
            attempt.to_owned(),
            digest(6),
            &verdict(passed),
            OutputHashes {
                analytical: Some(digest(7)),
                image: Some(digest(8)),
                environment: Some(digest(9)),
            },
            "2026-12-03T09:00:00.000000Z".into(),
        );
        let stored = append_evidence(&transaction, record).unwrap();
        let revision = complete_verified(
            &transaction,
            attempt,
            &BundleToAccept {
                script_hash: digest(3),
                png_hash: digest(8),
                statistics_hash: digest(10),
                analytical_hash: digest(7),
                snapshot_id: digest(4),
                verification_hash: *stored.record_hash(),
            },
        )?;
        transaction.commit().unwrap();
        Ok(revision)
    }
}

#[test]
fn a_draft_goes_to_verified_only_with_passing_evidence_and_a_bundle() {
    let f = Fixture::new();
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
    assert_eq!(verified.image_hash, Some(digest(8).to_hex()));
    // Verified is not Draft: no further attempt.
    assert!(matches!(
        f.start(&revision.id, "key-2", 11),
        Err(RepositoryError::NotDraft {
            status: RevisionStatus::Verified,
            ..
        })
    ));
}

#[test]
fn the_same_key_returns_the_same_attempt_and_other_inputs_are_refused() {
    let f = Fixture::new();
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

#[test]
fn a_failed_attempt_leaves_the_draft_retryable_and_terminal_attempts_never_change() {
    let f = Fixture::new();
    let revision = f.revision(false);
    let StartOutcome::Started(first) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    {
        let mut connection = f.database.connection().unwrap();
        let transaction = connection.transaction().unwrap();
        fail_attempt(&transaction, &first.id, "runner: timed out").unwrap();
        transaction.commit().unwrap();
        let raw = connection.execute(
            "UPDATE attempts SET state = 'active' WHERE id = ?1",
            [&first.id],
        );
        assert!(raw
            .unwrap_err()
            .to_string()
            .contains("terminal attempt cannot change"));
    }
    let StartOutcome::Started(second) = f.start(&revision.id, "key-2", 11).unwrap() else {
        panic!()
    };
    assert_eq!(
        f.complete(&revision.id, &second.id, true).unwrap().status,
        RevisionStatus::Verified
    );
}

#[test]
fn a_stale_version_is_not_promoted_and_nothing_of_the_completion_remains() {
    let f = Fixture::new();
    let revision = f.revision(false);
    let StartOutcome::Started(attempt) = f.start(&revision.id, "key-1", 11).unwrap() else {
        panic!()
    };
    // The revision moves on while the attempt runs.
    let connection = f.database.connection().unwrap();
    connection
        .execute(
            "UPDATE revisions SET version = version + 1 WHERE id = ?1",
            [&revision.id],
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
        .query_row("SELECT count(*) FROM artifact_bundles", [], |r| r.get(0))
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

#[test]
fn the_database_itself_refuses_promotion_without_a_bundle_and_for_free_scales() {
    let f = Fixture::new();
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
                [id],
            )
            .unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("becomes verified only from draft"),
            "{refused}"
        );
    }
    let refused = connection
        .execute(
            "UPDATE revisions SET status = 'draft' WHERE id = ?1",
            [&draft.id],
        )
        .unwrap_err();
    assert!(
        refused.to_string().contains("version on by one"),
        "{refused}"
    );
}

#[test]
fn reconcile_fails_attempts_left_active_and_a_retry_succeeds() {
    let f = Fixture::new();
    let revision = f.revision(false);
    let StartOutcome::Started(attempt) = f.start(&revision.id, "key-1", 11).unwrap() else {
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
