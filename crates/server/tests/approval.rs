//! A second person and a second run, with real SQLite, objects and R: electronic signatures on
//! Verified revisions (reviewer role, four eyes, the password re-entered, meaning and comment,
//! the evidence head, the lock after three wrong passwords, every attempt in the security log,
//! the database's own rules), reproduction of a retained result (same environment, corrupt
//! inputs, the command line), and revisions of revisions keeping their parents' signatures.

#[path = "support/flow_server.rs"]
mod flow_server;

use adamviz_evidence::{
    actor::Actor,
    approval::{Decision, SignatureMeaning},
    reproduction::ReproductionOutcome,
};
use adamviz_model::{
    account::{Account, Role},
    ids::RevisionId,
    revision::RevisionStatus,
};
use adamviz_services::{
    accounts::now,
    approvals::{evidence_head, sign, signatures_of, SignError, SignRequest},
    reproduction::{reproduce, ReproduceError},
};
use adamviz_store::{audit::audit, repository::get_revision};
use chrono::Duration;
use flow_server::*;

const PASSWORD: &str = "correct horse battery";

fn request(id: &RevisionId, decision: Decision, password: &str) -> SignRequest {
    SignRequest {
        revision_id: id.clone(),
        decision,
        meaning: Some(SignatureMeaning::Responsible),
        comment: None,
        password: password.to_owned(),
        evidence_head_seen: None,
        user_name: None,
    }
}

/// The ledger record with hash `hash`, parsed.
fn ledger_record(
    connection: &rusqlite::Connection,
    hash: &adamviz_model::digest::Sha256Digest,
) -> serde_json::Value {
    let bytes: Vec<u8> = connection
        .query_row(
            "SELECT record FROM evidence_ledger WHERE record_hash = ?1",
            [hash.to_hex()],
            |row| row.get(0),
        )
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn security_events(server: &Server, name: &str) -> Vec<(String, String, String)> {
    let connection = server.database.connection().unwrap();
    let mut statement = connection
        .as_sqlite()
        .unwrap()
        .prepare(
            "SELECT event, outcome, coalesce(detail, '') FROM security_events
             WHERE account_name = ?1 AND event LIKE 'signing%' ORDER BY seq",
        )
        .unwrap();
    let rows = statement
        .query_map([name], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_reviewer_signs_with_the_password_and_every_attempt_is_logged() {
    let mut server = server(1);
    // The author may also review, so that four eyes is a rule and not a missing role.
    let ann = server.account_with("ann", PASSWORD, &[Role::Author, Role::Reviewer]);
    let ada = server.account_with("ada", PASSWORD, &[Role::Author]);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let draft = server.revision(None).await;
    let id = server.verified("approval-run-1").await;
    let mut connection = server.database.connection().unwrap();
    let t0 = now();

    // Who and what may not sign.
    let refused =
        |connection: &mut adamviz_store::db::Connection, who: &Account, request: SignRequest| {
            sign(connection, who, &request, None, t0).unwrap_err()
        };
    assert!(matches!(
        refused(
            &mut connection,
            &rex,
            request(&draft, Decision::Approved, PASSWORD)
        ),
        SignError::NotVerified("Draft")
    ));
    assert!(matches!(
        refused(
            &mut connection,
            &ada,
            request(&id, Decision::Approved, PASSWORD)
        ),
        SignError::NotReviewer
    ));
    assert!(matches!(
        refused(
            &mut connection,
            &ann,
            request(&id, Decision::Approved, PASSWORD)
        ),
        SignError::OwnRevision
    ));
    let mut no_meaning = request(&id, Decision::Approved, PASSWORD);
    no_meaning.meaning = None;
    assert!(matches!(
        refused(&mut connection, &rex, no_meaning),
        SignError::MeaningMissing
    ));
    assert!(matches!(
        refused(
            &mut connection,
            &rex,
            request(&id, Decision::ChangesRequested, PASSWORD)
        ),
        SignError::CommentMissing
    ));
    assert!(matches!(
        refused(
            &mut connection,
            &rex,
            request(&id, Decision::Approved, "wrong")
        ),
        SignError::WrongPassword { remaining: 2 }
    ));
    let mut stale = request(&id, Decision::Approved, PASSWORD);
    stale.evidence_head_seen = Some("0".repeat(64));
    assert!(matches!(
        refused(&mut connection, &rex, stale),
        SignError::HeadMoved
    ));

    // Changes requested: recorded, the revision stays Verified at its version.
    let mut changes = request(&id, Decision::ChangesRequested, PASSWORD);
    changes.meaning = None;
    changes.comment = Some("Use the SI unit in the title".to_owned());
    let head = evidence_head(&connection, &id).unwrap().unwrap();
    changes.evidence_head_seen = Some(head.clone());
    let signed = sign(&mut connection, &rex, &changes, None, t0).unwrap();
    assert_eq!(signed.revision.status, RevisionStatus::Verified);
    assert_eq!(signed.revision.version, 2);

    // The approval: Verified → Approved, version + 1, bound to the head it saw.
    let mut approve = request(&id, Decision::Approved, PASSWORD);
    approve.evidence_head_seen = evidence_head(&connection, &id).unwrap();
    let signed = sign(&mut connection, &rex, &approve, Some("127.0.0.1"), t0).unwrap();
    assert_eq!(signed.revision.status, RevisionStatus::Approved);
    assert_eq!(signed.revision.version, 3);
    assert!(matches!(
        refused(
            &mut connection,
            &rex,
            request(&id, Decision::Approved, PASSWORD)
        ),
        SignError::NotVerified("Approved")
    ));
    let signatures = signatures_of(&connection, &id).unwrap();
    assert_eq!(signatures.len(), 2);
    assert_eq!(signatures[0].decision, "changes_requested");
    assert_eq!(
        signatures[0].comment.as_deref(),
        Some("Use the SI unit in the title")
    );
    assert_eq!(signatures[1].decision, "approved");
    assert_eq!(signatures[1].meaning.as_deref(), Some("responsible"));
    assert_eq!(signatures[1].printed_name, "rex");
    assert_eq!(signatures[1].revision_version, 2);
    let record = ledger_record(connection.as_sqlite().unwrap(), &signed.approval_hash);
    assert_eq!(record["signer"]["account_id"], rex.id);
    assert_eq!(record["signer"]["roles"], serde_json::json!(["reviewer"]));
    assert_eq!(record["evidence_head"], approve.evidence_head_seen.unwrap());

    // Every attempt after the form's own checks is a security event, good or bad.
    let events = security_events(&server, "rex");
    let outcomes: Vec<(&str, &str)> = events
        .iter()
        .map(|(e, o, _)| (e.as_str(), o.as_str()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("signing", "failure"),
            ("signing", "failure"),
            ("signing", "failure"),
            ("signing", "success"),
            ("signing", "success"),
            ("signing", "failure"),
        ],
        "{events:?}"
    );
    assert!(events[1].2.ends_with("wrong password"), "{events:?}");
    assert!(events[4].2.contains("approved (responsible)"), "{events:?}");
    assert_eq!(security_events(&server, "ann").len(), 1);
    assert_eq!(security_events(&server, "ada").len(), 1);

    // The database's own rule: no approval without its record, whatever SQL is sent.
    let other = server.verified("approval-run-2").await;
    let raw = connection.as_sqlite().unwrap().execute(
        "UPDATE revisions SET status = 'approved', version = version + 1 WHERE id = ?1",
        [other.as_str()],
    );
    let message = raw.unwrap_err().to_string();
    assert!(message.contains("verified to approved"), "{message}");
    // The audit replays created → verified → approved and finds every row explained.
    let report = audit(&connection, &server.objects).unwrap();
    assert!(report.passed(), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_wrong_passwords_lock_signing_for_fifteen_minutes() {
    let mut server = server(1);
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let quinn = server.account_with("quinn", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let id = server.verified("lock-run").await;
    let mut connection = server.database.connection().unwrap();
    let t0 = now();
    let attempt = |connection: &mut adamviz_store::db::Connection, password: &str, minutes: i64| {
        sign(
            connection,
            &quinn,
            &request(&id, Decision::Approved, password),
            None,
            t0 + Duration::minutes(minutes),
        )
    };
    assert!(matches!(
        attempt(&mut connection, "wrong-1", 0).unwrap_err(),
        SignError::WrongPassword { remaining: 2 }
    ));
    assert!(matches!(
        attempt(&mut connection, "wrong-2", 1).unwrap_err(),
        SignError::WrongPassword { remaining: 1 }
    ));
    assert!(matches!(
        attempt(&mut connection, "wrong-3", 2).unwrap_err(),
        SignError::Locked { .. }
    ));
    // The right password does not help while the lock holds.
    assert!(matches!(
        attempt(&mut connection, PASSWORD, 10).unwrap_err(),
        SignError::Locked { .. }
    ));
    assert_eq!(
        get_revision(&connection, &id).unwrap().unwrap().status,
        RevisionStatus::Verified
    );
    // Fifteen minutes after the lock it is lifted.
    let signed = attempt(&mut connection, PASSWORD, 18).unwrap();
    assert_eq!(signed.revision.status, RevisionStatus::Approved);
    let events = security_events(&server, "quinn");
    assert!(
        events
            .iter()
            .any(|(e, _, d)| e == "signing_lockout" && d.contains("3 wrong passwords")),
        "{events:?}"
    );
    assert_eq!(events.iter().filter(|(_, o, _)| o == "success").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retained_result_reproduces_and_corrupt_inputs_fail_loudly() {
    let mut server = server(1);
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let draft = server.revision(None).await;
    assert!(matches!(
        reproduce(&server.run.execution, &draft, &server.actor)
            .await
            .unwrap_err(),
        ReproduceError::NotRetained { .. }
    ));
    let id = server.verified("reproduce-run").await;
    // Approved revisions reproduce too.
    {
        let mut connection = server.database.connection().unwrap();
        sign(
            &mut connection,
            &rex,
            &request(&id, Decision::Approved, PASSWORD),
            None,
            now(),
        )
        .unwrap();
    }
    let outcome = reproduce(&server.run.execution, &id, &Actor::web(&rex))
        .await
        .unwrap();
    assert_eq!(
        outcome.outcome,
        ReproductionOutcome::Reproduced,
        "{outcome:?}"
    );
    assert!(outcome.environment_differences.is_empty());
    let connection = server.database.connection().unwrap();
    let record = ledger_record(connection.as_sqlite().unwrap(), &outcome.record_hash);
    assert_eq!(record["same_environment"], true);
    assert_eq!(
        record["reproduced"]["analytical_hash"],
        record["original"]["analytical_hash"]
    );
    assert_eq!(
        record["reproduced"]["image_hash"],
        record["original"]["image_hash"]
    );
    assert_eq!(record["revision_version"], 3);

    // The command line: exit 0 and the outcome in words.
    let data_dir = server._dir.path().join("data");
    let cli = |id: &RevisionId| {
        std::process::Command::new(env!("CARGO_BIN_EXE_adamviz"))
            .args(["reproduce", id.as_str(), "--data-dir"])
            .arg(&data_dir)
            .output()
            .unwrap()
    };
    let output = cli(&id);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        text.contains("reproduced") && text.contains("image hash match"),
        "{text}"
    );

    // The stored script corrupted on disk: the reproduction fails, loudly, and says why.
    let revision = get_revision(&connection, &id).unwrap().unwrap();
    let script = server.objects.path_of(
        &adamviz_model::digest::Sha256Digest::try_from(revision.script_hash.clone()).unwrap(),
    );
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&script, permissions).unwrap();
    let mut bytes = std::fs::read(&script).unwrap();
    bytes.extend_from_slice(b"# tampered\n");
    std::fs::write(&script, bytes).unwrap();
    let outcome = reproduce(&server.run.execution, &id, &Actor::web(&rex))
        .await
        .unwrap();
    assert_eq!(outcome.outcome, ReproductionOutcome::Failed);
    assert!(
        outcome.failures[0].contains("cannot be read"),
        "{:?}",
        outcome.failures
    );
    let output = cli(&id);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("NOT reproduced"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_cannot_happen_records_nothing_and_a_failed_reproduction_blocks_approval() {
    let mut server = server(1);
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let id = server.verified("not-run-key").await;
    let records = |server: &Server| -> i64 {
        let connection = server.database.connection().unwrap();
        connection
            .as_sqlite()
            .unwrap()
            .query_row(
                "SELECT count(*) FROM evidence_ledger WHERE kind = 'reproduction'",
                [],
                |row| row.get(0),
            )
            .unwrap()
    };
    // R missing: an error, and no record (it says nothing about the retained result).
    let mut config = adamviz_engine::runner::RunnerConfig::new();
    config.rscript = "/nonexistent/Rscript".into();
    config.work_root = server._dir.path().join("work");
    let broken = adamviz_services::execution::ExecutionService::new(
        server.database.clone(),
        server.objects.clone(),
        std::sync::Arc::new(adamviz_engine::runner::Runner::new(config)),
    );
    let error = reproduce(&broken, &id, &Actor::web(&rex))
        .await
        .unwrap_err();
    assert!(matches!(error, ReproduceError::NotRun(_)), "{error}");
    assert!(
        error.to_string().contains("nothing was recorded"),
        "{error}"
    );
    assert_eq!(records(&server), 0);

    // The stored snapshot corrupted: a failed reproduction, recorded; approving is refused
    // while it is the latest, changes may still be requested.
    let revision = {
        let connection = server.database.connection().unwrap();
        get_revision(&connection, &id).unwrap().unwrap()
    };
    let snapshot = server.objects.path_of(
        &adamviz_model::digest::Sha256Digest::try_from(revision.snapshot_id.clone()).unwrap(),
    );
    let mut permissions = std::fs::metadata(&snapshot).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&snapshot, permissions).unwrap();
    std::fs::write(&snapshot, b"not the snapshot\n").unwrap();
    let outcome = reproduce(&server.run.execution, &id, &Actor::web(&rex))
        .await
        .unwrap();
    assert_eq!(outcome.outcome, ReproductionOutcome::Failed);
    assert_eq!(records(&server), 1);
    let mut connection = server.database.connection().unwrap();
    assert!(matches!(
        sign(
            &mut connection,
            &rex,
            &request(&id, Decision::Approved, PASSWORD),
            None,
            now()
        )
        .unwrap_err(),
        SignError::ReproductionFailed
    ));
    let mut changes = request(&id, Decision::ChangesRequested, PASSWORD);
    changes.comment = Some("The stored snapshot no longer reproduces".to_owned());
    let signed = sign(&mut connection, &rex, &changes, None, now()).unwrap();
    assert_eq!(signed.revision.status, RevisionStatus::Verified);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_named_as_the_command_line_user_who_made_a_revision_cannot_sign_it() {
    let mut server = server(1);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    let quinn = server.account_with("quinn", PASSWORD, &[Role::Reviewer]);
    // Made on the server's command line by the operating-system user "Rex".
    server.actor = Actor {
        via: adamviz_evidence::actor::ActorVia::CommandLine,
        account_id: None,
        account_name: "Rex".to_owned(),
    };
    let id = server.verified("command-line").await;
    let mut connection = server.database.connection().unwrap();
    assert!(matches!(
        sign(
            &mut connection,
            &rex,
            &request(&id, Decision::Approved, PASSWORD),
            None,
            now()
        )
        .unwrap_err(),
        SignError::OwnRevision
    ));
    let signed = sign(
        &mut connection,
        &quinn,
        &request(&id, Decision::Approved, PASSWORD),
        None,
        now(),
    )
    .unwrap();
    assert_eq!(signed.revision.status, RevisionStatus::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revision_of_an_approved_revision_needs_its_own_approval() {
    let mut server = server(1);
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let parent = server.verified("parent-run").await;
    let mut connection = server.database.connection().unwrap();
    sign(
        &mut connection,
        &rex,
        &request(&parent, Decision::Approved, PASSWORD),
        None,
        now(),
    )
    .unwrap();
    let pilot = pilot();
    let draft = adamviz_services::drafts::answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        None,
    )
    .unwrap();
    let child = server
        .run
        .execution
        .materialize_revising(
            &draft.confirmed.unwrap(),
            std::sync::Arc::clone(&pilot.table),
            &server.upload,
            &server.actor,
            Some(parent.clone()),
        )
        .await
        .unwrap()
        .revision;
    assert_eq!(child.status, RevisionStatus::Draft);
    let (parent_id, author): (Option<String>, String) = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT parent_id, author_name FROM revisions WHERE id = ?1",
            [child.id.as_str()],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(parent_id.as_deref(), Some(parent.as_str()));
    assert_eq!(author, "ann");
    let created: String = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT json_extract(record, '$.parent_revision_id') FROM evidence_ledger
             WHERE kind = 'revision_lifecycle' AND json_extract(record, '$.revision_id') = ?1",
            [child.id.as_str()],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(created, parent.as_str());
    // The parent keeps its approval; the child has none and cannot be signed as a Draft.
    assert_eq!(signatures_of(&connection, &parent).unwrap().len(), 1);
    assert!(signatures_of(&connection, &child.id).unwrap().is_empty());
    assert_eq!(
        get_revision(&connection, &parent).unwrap().unwrap().status,
        RevisionStatus::Approved
    );
    assert!(matches!(
        sign(
            &mut connection,
            &rex,
            &request(&child.id, Decision::Approved, PASSWORD),
            None,
            now()
        )
        .unwrap_err(),
        SignError::NotVerified("Draft")
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_pages_and_filters_many_revisions_and_names_approvers() {
    use adamviz_model::revision::HistoryQuery;
    use adamviz_services::history::{history, PAGE_SIZE};
    use adamviz_store::copies::{fill_history, AUTHORS};
    use adamviz_store::repository::latest_attempt;
    let mut server = server(1);
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let approved = server.verified("history-run").await;
    let draft = server.revision(None).await;
    let mut connection = server.database.connection().unwrap();
    sign(
        &mut connection,
        &rex,
        &request(&approved, Decision::Approved, PASSWORD),
        None,
        now(),
    )
    .unwrap();
    let attempt = latest_attempt(&connection, &approved).unwrap().unwrap();
    let copies = 400;
    fill_history(
        &mut connection,
        (&approved, attempt.id.as_str()),
        &draft,
        copies,
        now() - Duration::days(30),
    )
    .unwrap();
    let page = |query: HistoryQuery| history(&connection, &query).unwrap();

    let first = page(HistoryQuery::default());
    assert_eq!(first.total, copies + 2);
    assert_eq!(first.pages, (copies + 2).div_ceil(PAGE_SIZE));
    assert_eq!(first.rows.len(), PAGE_SIZE);
    // Newest first: the two real revisions, then the copies from the newest.
    assert_eq!(first.rows[0].id, draft.as_str());
    assert_eq!(first.rows[1].id, approved.as_str());
    assert_eq!(first.rows[1].status, RevisionStatus::Approved);
    assert_eq!(first.rows[1].approver.as_deref(), Some("rex"));
    assert_eq!(first.rows[1].author, "ann");
    assert_eq!(first.rows[1].parameter, "ALT");
    assert_eq!(first.rows[1].dataset_name, "adlbc.xpt");
    assert!(first
        .rows
        .windows(2)
        .all(|w| w[0].created_at >= w[1].created_at));
    assert_eq!(first.authors.len(), AUTHORS + 1);

    // Every revision exactly once across the pages; past the end is the last page.
    let mut seen = std::collections::BTreeSet::new();
    for number in 1..=first.pages {
        let rows = page(HistoryQuery {
            page: Some(number),
            ..HistoryQuery::default()
        })
        .rows;
        seen.extend(rows.into_iter().map(|r| r.id));
    }
    assert_eq!(seen.len(), copies + 2);
    let beyond = page(HistoryQuery {
        page: Some(10_000),
        ..HistoryQuery::default()
    });
    assert_eq!(beyond.page, first.pages);

    // Filters, alone and together.
    let approved_rows = page(HistoryQuery {
        status: Some("approved".to_owned()),
        ..HistoryQuery::default()
    });
    assert_eq!(approved_rows.total, copies / 4 + 1);
    assert!(approved_rows
        .rows
        .iter()
        .all(|r| r.status == RevisionStatus::Approved && r.approver.as_deref() == Some("rex")));
    let by_author = page(HistoryQuery {
        status: Some("verified".to_owned()),
        author: Some("author-3".to_owned()),
        ..HistoryQuery::default()
    });
    assert!(by_author.total > 0);
    assert!(by_author
        .rows
        .iter()
        .all(|r| r.author == "author-3" && r.status == RevisionStatus::Verified));
    let dataset = page(HistoryQuery {
        dataset: Some(server.upload.content_hash.to_hex()),
        ..HistoryQuery::default()
    });
    assert_eq!(dataset.total, copies + 2);
    let none = page(HistoryQuery {
        dataset: Some("0".repeat(64)),
        ..HistoryQuery::default()
    });
    assert_eq!((none.total, none.pages, none.rows.len()), (0, 1, 0));
    // An unknown status is no filter rather than an error.
    let unknown = page(HistoryQuery {
        status: Some("lost".to_owned()),
        ..HistoryQuery::default()
    });
    assert_eq!(unknown.total, copies + 2);
    // The copies went in through the rules: the audit explains every row.
    let report = audit(&connection, &server.objects).unwrap();
    assert!(report.passed(), "{:?}", report.row_problems.first());
}
