//! The home page's work list against a real installation, on SQLite and on PostgreSQL: an
//! author's revisions (one Approved, one sent back with changes requested, one Verified and
//! waiting, one Draft) among a history of copies by other authors, and a newer delivery of the
//! dataset; each person's list holds exactly what waits for them.

#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/postgres.rs"]
mod postgres;

use adamviz_evidence::{
    actor::Actor,
    approval::{Decision, SignatureMeaning},
};
use adamviz_model::{
    account::{Account, Role},
    ids::RevisionId,
    work_list::{WorkKind, WorkList, WORK_ROWS},
};
use adamviz_services::{
    accounts::now,
    approvals::{sign, SignRequest},
    datasets::record_upload,
    upload::{receive_upload, DEFAULT_UPLOAD_LIMIT},
    work_list::work_list_of,
};
use adamviz_store::{
    copies::fill_history, db::Database, objects::ObjectStore, repository::latest_attempt,
};
use chrono::Duration;
use flow_server::*;

const PASSWORD: &str = "correct horse battery";

fn signed(server: &Server, reviewer: &Account, id: &RevisionId, decision: Decision) {
    let mut connection = server.database.connection().unwrap();
    let comment = (decision == Decision::ChangesRequested)
        .then(|| "Keep every visit: the SAP names them all.".to_owned());
    sign(
        &mut connection,
        reviewer,
        &SignRequest {
            revision_id: id.clone(),
            decision,
            meaning: Some(SignatureMeaning::Responsible),
            comment,
            password: PASSWORD.to_owned(),
            evidence_head_seen: None,
            user_name: None,
        },
        None,
        now(),
    )
    .unwrap();
}

/// The pilot, recorded as uploaded a day ago, and a later delivery of it with one byte of its
/// data changed (a valid XPT with other bytes and the same dataset name, ADLBC).
fn deliver_two_cuts(server: &Server, uploader: &Account) {
    let pilot = std::fs::read(pilot_path()).unwrap();
    let mut later = pilot.clone();
    let middle = later.len() / 2;
    later[middle] ^= 1;
    for (bytes, name, at) in [
        (pilot, "adlbc.xpt", now() - Duration::days(1)),
        (later, "adlbc-cut2.xpt", now()),
    ] {
        let received = receive_upload(
            &server.objects,
            std::io::Cursor::new(bytes),
            "synthetic",
            DEFAULT_UPLOAD_LIMIT,
        )
        .unwrap();
        assert_eq!(received.table.dataset_name.as_deref(), Some("ADLBC"));
        let connection = server.database.connection().unwrap();
        record_upload(&connection, &received, name, uploader, at).unwrap();
    }
}

fn section(list: &WorkList, kind: WorkKind) -> Option<(usize, Vec<String>)> {
    list.sections
        .iter()
        .find(|s| s.kind == kind)
        .map(|s| (s.count, s.rows.iter().map(|r| r.id.clone()).collect()))
}

fn count(list: &WorkList, kind: WorkKind) -> usize {
    section(list, kind).expect("the section is there").0
}

fn ids(list: &WorkList, kind: WorkKind) -> Vec<String> {
    section(list, kind).expect("the section is there").1
}

async fn each_person_sees_what_waits_for_them(mut server: Server) {
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let approved = server.verified("work-approved").await;
    let sent_back = server.verified("work-sent-back").await;
    let waiting = server.verified("work-waiting").await;
    let draft = server.revision(None).await;
    signed(&server, &rex, &approved, Decision::Approved);
    signed(&server, &rex, &sent_back, Decision::ChangesRequested);
    deliver_two_cuts(&server, &ann);
    let copies = 200;
    {
        let mut connection = server.database.connection().unwrap();
        let attempt = latest_attempt(&connection, &approved).unwrap().unwrap();
        fill_history(
            &mut connection,
            (&approved, attempt.id.as_str()),
            &draft,
            copies,
            now() - Duration::days(30),
        )
        .unwrap();
    }
    let connection = server.database.connection().unwrap();
    let list_of = |account: &Account| work_list_of(&connection, account).unwrap();

    // The author: her draft, her revision sent back, every revision of hers on the older cut;
    // no signing section (she is no reviewer).
    let mine = list_of(&ann);
    assert_eq!(mine.viewer, "ann");
    assert!(section(&mine, WorkKind::AwaitingMySignature).is_none());
    assert_eq!(
        (
            count(&mine, WorkKind::MyDrafts),
            ids(&mine, WorkKind::MyDrafts)
        ),
        (1, vec![draft.to_string()])
    );
    assert_eq!(
        (
            count(&mine, WorkKind::SentBackToMe),
            ids(&mine, WorkKind::SentBackToMe)
        ),
        (1, vec![sent_back.to_string()])
    );
    let older_cut = ids(&mine, WorkKind::NewerDataCut);
    assert_eq!(count(&mine, WorkKind::NewerDataCut), 4);
    for id in [&approved, &sent_back, &waiting, &draft] {
        assert!(older_cut.contains(&id.to_string()), "{id} not on the list");
    }
    assert_eq!(count(&mine, WorkKind::RunsInProgress), 0);
    // Approved: hers and a quarter of the copies, newest first (hers is newer than every copy).
    assert_eq!(count(&mine, WorkKind::RecentlyApproved), 1 + copies / 4);
    let approved_rows = ids(&mine, WorkKind::RecentlyApproved);
    assert_eq!(approved_rows.len(), WORK_ROWS);
    assert_eq!(approved_rows[0], approved.to_string());

    // The reviewer: every Verified revision of someone else that nobody signed or sent back
    // (the waiting one and half the copies); nothing of his own.
    let his = list_of(&rex);
    let awaiting = ids(&his, WorkKind::AwaitingMySignature);
    assert_eq!(count(&his, WorkKind::AwaitingMySignature), 1 + copies / 2);
    assert_eq!(awaiting[0], waiting.to_string());
    for id in [&approved, &sent_back] {
        assert!(!awaiting.contains(&id.to_string()), "{id} is not waiting");
    }
    for kind in [
        WorkKind::MyDrafts,
        WorkKind::SentBackToMe,
        WorkKind::NewerDataCut,
    ] {
        assert_eq!(count(&his, kind), 0, "{kind:?}");
    }
    let section = his
        .sections
        .iter()
        .find(|s| s.kind == WorkKind::AwaitingMySignature)
        .unwrap();
    assert_eq!(
        section.kind.history_filter(),
        Some(("verified", false)),
        "the history's Verified filter lists the same revisions"
    );
    assert_eq!(section.rows[0].author, "ann");

    // The author revises the revision sent back: it leaves her "sent back" list.
    drop(connection);
    let revised = server
        .run
        .execution
        .materialize_revising(
            &pilot_spec(),
            std::sync::Arc::clone(&pilot().table),
            &server.upload,
            &server.actor,
            Some(sent_back.clone()),
        )
        .await
        .unwrap()
        .revision
        .id;
    let connection = server.database.connection().unwrap();
    let mine = work_list_of(&connection, &ann).unwrap();
    assert_eq!(count(&mine, WorkKind::SentBackToMe), 0);
    assert_eq!(
        ids(&mine, WorkKind::MyDrafts),
        vec![revised.to_string(), draft.to_string()]
    );
}

/// The pilot's confirmed spec for the test's question.
fn pilot_spec() -> adamviz_model::spec::PlotSpec {
    let pilot = pilot();
    adamviz_services::drafts::answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        None,
    )
    .unwrap()
    .confirmed
    .expect("confirms")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_each_person_sees_what_waits_for_them() {
    each_person_sees_what_waits_for_them(server(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgresql_each_person_sees_what_waits_for_them() {
    let cluster = postgres::Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let database = Database::open_postgres(&cluster.url()).unwrap();
    let objects = ObjectStore::open(&data).unwrap();
    each_person_sees_what_waits_for_them(flow_server::server_on(dir, database, objects, 1, None))
        .await;
}
