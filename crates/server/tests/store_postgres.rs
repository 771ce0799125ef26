//! The store's governed path on a real PostgreSQL, through the same functions the server calls
//! on SQLite (written once against `store::sql::Sql`): a revision created with its request and
//! lifecycle records, a pressed Run queued once, two runners racing for it (one wins), the
//! attempt started under the claim, its verdict, bundle and promotion to Verified accepted by
//! the PostgreSQL triggers (which read the real evidence records' fields), a second run lost
//! with its runner and given back to the queue as a new attempt, and the chain intact.

#[path = "support/postgres.rs"]
mod postgres;

use adamviz_engine::compiler::ImageSize;
use adamviz_evidence::execution_checks::{
    CheckOutcome, CheckResult, ExecutionVerification, CHECK_NAMES,
};
use adamviz_evidence::{
    actor::Actor,
    execution_request::ExecutionRequest,
    execution_verification::{ExecutionVerificationRecord, OutputHashes},
    revision_context::{RevisionInputs, SourceMetadata},
};
use adamviz_model::{
    digest::Sha256Digest,
    ids::{AttemptId, RevisionId},
};
use adamviz_store::{
    ledger::{append_evidence, verify_ledger},
    objects::ObjectStore,
    repository::*,
    run_queue::*,
    sql::{
        postgres::{migrate, Driver, PgConnection},
        Sql,
    },
};

const SCRIPT: &[u8] = b"boxplot_analysis <- list()\n";
const SNAPSHOT: &[u8] = b"USUBJID,TRTA,AVISIT,AVISITN,AVAL\n";
const PNG: &[u8] = b"\x89PNG not really";
const STATISTICS: &[u8] = b"{\"cells\":[]}";
const ENVIRONMENT: &[u8] = b"{\"r_version\":\"4.2.2\"}";
const NOW: &str = "2026-12-06T09:00:00.000000Z";
const FAR: &str = "2999-01-01T00:00:00.000000Z";

fn digest(byte: u8) -> Sha256Digest {
    Sha256Digest::from_bytes([byte; 32])
}

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

fn create(connection: &mut PgConnection, objects: &ObjectStore) -> Revision {
    let script = objects.put(SCRIPT, 1 << 20).unwrap().digest;
    let snapshot = objects.put(SNAPSHOT, 1 << 20).unwrap().digest;
    let upload = objects.put(b"the dataset", 1 << 20).unwrap().digest;
    let transaction = connection.transaction().unwrap();
    insert_upload(&transaction, &upload, "synthetic", "adlb.xpt", 11).unwrap();
    insert_spec(&transaction, &digest(2), &upload, b"{}").unwrap();
    let id = new_revision_id();
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
        NOW.into(),
        Actor::command_line(),
        adamviz_services::provenance::this_build(),
    );
    let request_hash = *append_evidence(&transaction, request)
        .unwrap()
        .record_hash();
    let revision = create_revision(
        &transaction,
        &NewRevision {
            id,
            spec_hash: digest(2),
            free_scale: false,
            script_hash: script,
            snapshot_id: snapshot,
            snapshot_hash: digest(5),
            request_hash: Some(request_hash),
            actor: Actor::command_line(),
            inputs: inputs(),
            parent: None,
        },
    )
    .unwrap();
    transaction.commit().unwrap();
    revision
}

fn passing_verdict(revision: &RevisionId, attempt: &AttemptId) -> ExecutionVerificationRecord {
    let verdict = ExecutionVerification {
        version: "execution-verification-v1".into(),
        passed: true,
        failed: vec![],
        checks: CHECK_NAMES
            .iter()
            .map(|name| CheckResult {
                name: (*name).to_owned(),
                outcome: CheckOutcome::Pass,
                reason: None,
            })
            .collect(),
    };
    ExecutionVerificationRecord::with_hashes(
        revision.to_owned(),
        attempt.to_owned(),
        digest(6),
        &verdict,
        OutputHashes {
            analytical: Some(digest(7)),
            image: Some(ArtifactRef::of("plot.png", PNG).sha256),
            environment: Some(digest(9)),
        },
        NOW.into(),
    )
}

fn artifact(objects: &ObjectStore, name: &str, bytes: &[u8]) -> ArtifactRef {
    objects.put(bytes, 1 << 20).unwrap();
    ArtifactRef::of(name, bytes)
}

fn claim(connection: &mut PgConnection, claimant: &Claimant, until: &str) -> Option<RunRequest> {
    let transaction = connection.transaction().unwrap();
    let claimed = claim_next(&transaction, claimant, until).unwrap();
    transaction.commit().unwrap();
    claimed
}

#[test]
fn the_governed_path_runs_on_postgresql_through_the_store_functions() {
    let server = postgres::Postgres::start();
    let driver = Driver::new();
    let mut connection = PgConnection::connect(&server.url(), driver.clone()).unwrap();
    migrate(&connection).unwrap();
    let objects_dir = tempfile::tempdir().unwrap();
    let objects = ObjectStore::open(objects_dir.path()).unwrap();
    let revision = create(&mut connection, &objects);
    assert_eq!(revision.status, RevisionStatus::Draft);
    assert_eq!(
        get_revision_inputs(&connection, &revision.id).unwrap(),
        Some(inputs())
    );

    // Run pressed twice: one request.
    for key in ["press-0001", "press-0002"] {
        let transaction = connection.transaction().unwrap();
        enqueue_run(&transaction, &revision.id, key, &Actor::command_line(), 2).unwrap();
        transaction.commit().unwrap();
    }
    let (request, position) = open_request(&connection, &revision.id).unwrap().unwrap();
    assert_eq!((request.state, position), (QueueState::Queued, 1));

    // Two runners (on two connections, as on two hosts) claim at once: one gets it.
    let url = server.url();
    let racers: Vec<_> = [1u32, 2]
        .into_iter()
        .map(|slot| {
            let (url, driver) = (url.clone(), driver.clone());
            std::thread::spawn(move || {
                let mut connection = PgConnection::connect(&url, driver).unwrap();
                claim(&mut connection, &Claimant::of_this_process(slot), FAR)
            })
        })
        .collect();
    let won: Vec<RunRequest> = racers
        .into_iter()
        .filter_map(|racer| racer.join().unwrap())
        .collect();
    assert_eq!(won.len(), 1, "one runner claims the run");
    let claimed = &won[0];
    assert_eq!((claimed.state, claimed.claims), (QueueState::Claimed, 1));

    // The attempt under the claim, its verdict, bundle and promotion.
    let transaction = connection.transaction().unwrap();
    let lease = AttemptLease::of_this_process(std::time::Duration::from_secs(600));
    let started = start_attempt(
        &transaction,
        &revision.id,
        &claimed.attempt_id,
        &digest(3),
        &lease,
        &Actor::command_line(),
    )
    .unwrap();
    assert!(matches!(started, StartOutcome::Started(_)));
    let verdict = append_evidence(
        &transaction,
        passing_verdict(&revision.id, &claimed.attempt_id),
    )
    .unwrap();
    let bundle = BundleToAccept {
        artifacts: BundleArtifacts {
            script: artifact(&objects, "script.R", SCRIPT),
            plot: artifact(&objects, "plot.png", PNG),
            statistics: artifact(&objects, "statistics.json", STATISTICS),
            environment: artifact(&objects, "environment.json", ENVIRONMENT),
            snapshot: artifact(&objects, "snapshot.csv", SNAPSHOT),
            pdf: Some(artifact(&objects, "plot.pdf", b"%PDF-1.5 stand-in")),
            svg: Some(artifact(&objects, "plot.svg", b"<svg/>")),
            statistics_csv: Some(artifact(&objects, "statistics.csv", b"n\n1\n")),
        },
        analytical_hash: digest(7),
        snapshot_hash: digest(5),
        verification_hash: *verdict.record_hash(),
    };
    let completed = complete_verified(
        &transaction,
        &objects,
        &claimed.attempt_id,
        &bundle,
        &Actor::command_line(),
    )
    .unwrap();
    transaction.commit().unwrap();
    assert_eq!(completed.revision.status, RevisionStatus::Verified);
    assert_eq!(completed.revision.version, 2);
    let claimant = Claimant {
        process: claimed.runner.clone().unwrap(),
        slot: claimed.runner_slot.unwrap(),
    };
    assert!(finish_claim(
        &connection,
        claimed.seq,
        &claimed.attempt_id,
        &claimant,
        "verified"
    )
    .unwrap());
    assert_eq!(
        latest_attempt(&connection, &revision.id)
            .unwrap()
            .unwrap()
            .state,
        "succeeded"
    );

    // A second revision whose runner is lost: its attempt ends failed, the request goes back
    // to the queue, and the next claim is a new attempt.
    let second = create(&mut connection, &objects);
    let transaction = connection.transaction().unwrap();
    enqueue_run(&transaction, &second.id, "press", &Actor::command_line(), 2).unwrap();
    transaction.commit().unwrap();
    let soon = "2026-12-06T09:00:01.000000Z";
    let lost = claim(&mut connection, &Claimant::of_this_process(1), soon).unwrap();
    let transaction = connection.transaction().unwrap();
    start_attempt(
        &transaction,
        &second.id,
        &lost.attempt_id,
        &digest(3),
        &lease,
        &Actor::command_line(),
    )
    .unwrap();
    transaction.commit().unwrap();
    let transaction = connection.transaction().unwrap();
    let recovered = recover_lost_claims(&transaction, "2026-12-06T10:00:00.000000Z").unwrap();
    transaction.commit().unwrap();
    assert_eq!(recovered.len(), 1);
    assert!(recovered[0].requeued);
    assert_eq!(
        get_attempt(&connection, &lost.attempt_id)
            .unwrap()
            .unwrap()
            .state,
        "failed"
    );
    let again = claim(&mut connection, &Claimant::of_this_process(2), FAR).unwrap();
    assert_eq!(again.claims, 2);
    assert_eq!(
        again.attempt_id,
        attempt_id_for(&second.id, &attempt_key("press", 2))
    );

    let report = verify_ledger(&connection).unwrap();
    assert_eq!(report.first_break, None);
    // Request, created, started, verdict, bundle, succeeded, verified; then request, created,
    // started, failed.
    assert_eq!(report.records, 11);
    assert_eq!(connection.dialect(), adamviz_store::sql::Dialect::Postgres);

    // The audit (`adamviz ledger verify`) on PostgreSQL: it passes, then finds an insider's
    // edit made with the tables' triggers disabled.
    let report = adamviz_store::audit::audit(&connection, &objects).unwrap();
    assert!(report.passed(), "{report:?}");
    assert_eq!((report.bundles, report.artifacts_verified), (1, 8));
    connection
        .batch_execute(&format!(
            "ALTER TABLE revisions DISABLE TRIGGER USER;
             UPDATE revisions SET status = 'approved', version = 3 WHERE id = '{}';",
            revision.id
        ))
        .unwrap();
    let report = adamviz_store::audit::audit(&connection, &objects).unwrap();
    assert!(!report.passed());
    assert!(
        report
            .row_problems
            .iter()
            .any(|problem| problem.table == "revisions" && problem.id == revision.id.as_str()),
        "{:?}",
        report.row_problems
    );
}

/// The SQL behind people and pages, on PostgreSQL: accounts (names unique and found whatever
/// their case), roles with their history, the security log with its counted login failures,
/// login windows, sessions ended by account, the history page with its filters (author in any
/// case), a revision's summary, lineage and signing attempts.
#[test]
fn accounts_sessions_and_the_pages_queries_run_on_postgresql() {
    use adamviz_model::{account::Role, revision::HistoryQuery};
    use adamviz_store::{
        accounts::*, history::history, login_failures, revision_views, sessions, signatures,
    };
    let server = postgres::Postgres::start();
    let mut connection = PgConnection::connect(&server.url(), Driver::new()).unwrap();
    migrate(&connection).unwrap();
    let objects_dir = tempfile::tempdir().unwrap();
    let objects = ObjectStore::open(objects_dir.path()).unwrap();

    let own = |at: &str| PasswordColumns {
        temporary: false,
        expires_at: None,
        set_at: at.to_owned(),
        set_by_owner_at: Some(at.to_owned()),
    };
    let ann = insert_account(&connection, "Ann", "$argon2id$v=19$a", NOW, &own(NOW)).unwrap();
    let bob = insert_account(&connection, "bob", "$argon2id$v=19$b", NOW, &own(NOW)).unwrap();
    assert!(insert_account(&connection, "ANN", "$argon2id$v=19$c", NOW, &own(NOW)).is_err());
    change_role(
        &connection,
        ann,
        Role::Author,
        "granted",
        (None, "setup"),
        NOW,
    )
    .unwrap();
    change_role(
        &connection,
        bob,
        Role::Reviewer,
        "granted",
        (None, "setup"),
        NOW,
    )
    .unwrap();
    let (found, hash) = find_by_name(&connection, "aNN").unwrap().unwrap();
    assert_eq!(
        (found.id, found.name.as_str(), hash.as_str()),
        (ann, "Ann", "$argon2id$v=19$a")
    );
    assert_eq!(found.roles, vec![Role::Author]);
    let names: Vec<String> = list_accounts(&connection)
        .unwrap()
        .into_iter()
        .map(|account| account.name)
        .collect();
    assert_eq!(names, ["Ann", "bob"]);
    assert_eq!(
        role_grant_at(&connection, bob, Role::Reviewer, FAR)
            .unwrap()
            .map(|grant| grant.by),
        Some("setup".to_owned())
    );
    assert_eq!(account_count(&connection).unwrap(), 2);

    // Login failures of one name in one window: one row, counted.
    let failure = SecurityEvent {
        event: "login",
        account_id: None,
        account_name: "mallory",
        actor_id: None,
        actor_name: None,
        remote_addr: Some("10.0.0.1"),
        success: false,
        detail: Some("unknown account"),
    };
    record_event(&connection, &failure, NOW).unwrap();
    let window = ("2026-12-06T08:00:00.000000Z", "2026-12-06T10:00:00.000000Z");
    assert!(login_failures::count_repeat(
        &connection,
        "login",
        "MALLORY",
        "unknown account",
        window,
        "2026-12-06T09:00:05.000000Z"
    )
    .unwrap());
    let counted = connection
        .query_one(
            "SELECT repeat_count, last_at FROM security_events WHERE account_name = 'mallory'",
            &[],
        )
        .unwrap();
    assert_eq!(counted.get::<i64>(0).unwrap(), 2);
    login_failures::lock(&connection, "Mallory", "10.0.0.1", NOW, FAR).unwrap();
    assert_eq!(
        login_failures::locked_until(&connection, "mallory", "10.0.0.1", NOW).unwrap(),
        Some(FAR.to_owned())
    );
    login_failures::set_window(&connection, "mallory", "10.0.0.1", NOW, 3).unwrap();
    assert_eq!(
        login_failures::window(&connection, "mallory", "10.0.0.1").unwrap(),
        Some((NOW.to_owned(), 3))
    );
    login_failures::clear(&connection, "mallory", "10.0.0.1").unwrap();
    assert_eq!(
        login_failures::window(&connection, "mallory", "10.0.0.1").unwrap(),
        None
    );

    // Sessions: ended by account, except the one kept.
    for (id, account) in [("s1", ann), ("s2", ann), ("s3", bob)] {
        let data = format!("{{\"account_id\":{account}}}").into_bytes();
        assert!(sessions::insert_session(&connection, id, data, i64::MAX / 2).unwrap());
    }
    assert!(!sessions::insert_session(&connection, "s1", b"{}".to_vec(), 1).unwrap());
    assert!(sessions::session_is_stored(&connection, "s1").unwrap());
    assert_eq!(end_sessions(&connection, ann, Some("s2")).unwrap(), 1);
    assert!(sessions::load_session(&connection, "s1", 0)
        .unwrap()
        .is_none());
    assert!(sessions::load_session(&connection, "s2", 0)
        .unwrap()
        .is_some());

    // Pages: the history with its filters, a summary, lineage, signing attempts.
    let first = create(&mut connection, &objects);
    let _second = create(&mut connection, &objects);
    let page = history(&connection, &HistoryQuery::default()).unwrap();
    assert_eq!((page.total, page.rows.len()), (2, 2));
    let author = first.id.as_str().to_owned();
    let by_author = history(
        &connection,
        &HistoryQuery {
            author: Some(Actor::command_line().account_name.to_uppercase()),
            status: Some("draft".into()),
            ..HistoryQuery::default()
        },
    )
    .unwrap();
    assert_eq!(by_author.total, 2, "the author filter ignores case");
    assert!(revision_views::revision_summary(&connection, &first.id)
        .unwrap()
        .is_some());
    assert_eq!(
        revision_views::lineage(&connection, &first.id).unwrap(),
        (None, vec![])
    );
    let signing = SecurityEvent {
        event: "signing",
        account_id: Some(bob),
        account_name: "bob",
        actor_id: Some(bob),
        actor_name: Some("bob"),
        remote_addr: None,
        success: false,
        detail: Some(&format!("{author}: wrong password")),
    };
    record_event(&connection, &signing, NOW).unwrap();
    let attempts = revision_views::signing_attempts(&connection, &first.id).unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].detail, "wrong password");
    assert_eq!(
        signatures::signing_failures_after(&connection, bob, "2026-01-01T00:00:00Z").unwrap(),
        1
    );
    assert_eq!(
        signatures::author_of(&connection, &first.id).unwrap(),
        Some((None, Actor::command_line().account_name))
    );
    assert!(signatures::approval_records(&connection, &first.id)
        .unwrap()
        .is_empty());
}
