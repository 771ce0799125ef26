//! New data cuts against a real installation (SQLite, objects, the sandboxed R runner): the pilot
//! ADLBC and a later delivery of it (some subjects given Week 26 records, one ALT value
//! corrected). The later cut is found; a Verified and approved ALT revision is re-run on it with
//! the same answers; the comparison names exactly the cells the new data changed; the history's
//! two data-cut filters list the child and the parent. On SQLite and on a real PostgreSQL.

#[path = "support/data_cut.rs"]
mod data_cut;
#[path = "support/flow_server.rs"]
mod flow_server;
#[path = "support/postgres.rs"]
mod postgres;

use std::{collections::BTreeSet, sync::Arc};

use adamviz_evidence::{
    actor::Actor,
    approval::{Decision, SignatureMeaning},
};
use adamviz_model::{
    account::Role,
    revision::{CellChange, HistoryQuery, RunStatus},
};
use adamviz_services::{
    accounts::now,
    approvals::{sign, SignRequest},
    confirm::{confirm, ConfirmRequest, Confirmed},
    data_cuts::{carried_answers, newer_cut_of},
    datasets::{dataset, record_upload, DatasetCache, LoadedDataset},
    history::compare,
    revisions::{revision_detail, RevisionSources},
    runs::start_run,
    upload::{receive_upload, DEFAULT_UPLOAD_LIMIT},
};
use adamviz_store::history::history;
use chrono::Duration;
use flow_server::*;

const PASSWORD: &str = "correct horse battery";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_re_run_on_a_newer_cut_changes_exactly_the_cells_the_new_data_changed() {
    re_run_on_a_newer_cut(server(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgresql_a_re_run_on_a_newer_cut_changes_exactly_the_cells_the_new_data_changed() {
    let cluster = postgres::Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let database = adamviz_store::db::Database::open_postgres(&cluster.url()).unwrap();
    let objects = adamviz_store::objects::ObjectStore::open(&data).unwrap();
    re_run_on_a_newer_cut(server_on(dir, database, objects, 2, None)).await;
}

async fn re_run_on_a_newer_cut(mut server: Server) {
    let ann = server.account_with("ann", PASSWORD, &[Role::Author]);
    let rex = server.account_with("rex", PASSWORD, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);

    // The pilot, uploaded yesterday, and its next delivery today.
    let pilot_bytes = std::fs::read(pilot_path()).unwrap();
    let (cut_bytes, summary) = data_cut::new_cut(&pilot_bytes, 3).unwrap();
    assert_eq!(summary.added_subjects.len(), 3);
    let mut hashes = Vec::new();
    for (bytes, name, at) in [
        (pilot_bytes, "adlbc.xpt", now() - Duration::days(1)),
        (cut_bytes.clone(), "adlbc-2026-12.xpt", now()),
    ] {
        let received = receive_upload(
            &server.objects,
            std::io::Cursor::new(bytes),
            "synthetic",
            DEFAULT_UPLOAD_LIMIT,
        )
        .unwrap();
        assert_eq!(received.table.dataset_name.as_deref(), Some("ADLBC"));
        hashes.push(received.object.digest.to_hex());
        let connection = server.database.connection().unwrap();
        record_upload(&connection, &received, name, &ann, at).unwrap();
    }
    let cut = newer_cut_of(&server.database, &hashes[0])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cut.content_hash, hashes[1]);
    assert_eq!(cut.file_name, "adlbc-2026-12.xpt");
    assert!(newer_cut_of(&server.database, &hashes[1])
        .await
        .unwrap()
        .is_none());

    // The ALT revision on the pilot, Verified and approved.
    let parent = server.verified("cut-parent").await;
    {
        let mut connection = server.database.connection().unwrap();
        sign(
            &mut connection,
            &rex,
            &SignRequest {
                revision_id: parent.clone(),
                decision: Decision::Approved,
                meaning: Some(SignatureMeaning::Approved),
                comment: None,
                password: PASSWORD.to_owned(),
                evidence_head_seen: None,
                user_name: Some("rex".to_owned()),
            },
            None,
            now(),
        )
        .unwrap();
    }

    // Re-run on the new data: the same answers (the visits and levels still fit), the parent.
    let sources = RevisionSources {
        database: server.database.clone(),
        objects: server.objects.clone(),
        datasets: Arc::new(DatasetCache::new(2)),
    };
    let parent_detail = revision_detail(&sources, &parent, &ann)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(parent_detail.newer_cut.as_ref(), Some(&cut));
    let new_table = Arc::new(adamviz_engine::ingest::read_dataset(&cut_bytes).unwrap());
    let new_digest = adamviz_model::digest::Sha256Digest::try_from(hashes[1].clone()).unwrap();
    let new_profile = adamviz_engine::ingest::profile::profile_table(
        &new_table,
        new_digest,
        adamviz_model::profile::DEFAULT_LOW_N_THRESHOLD,
    );
    let (answers, opened) = carried_answers(&parent_detail.answers, &pilot().profile, &new_profile);
    assert!(opened.is_empty(), "{opened:?}");
    let summary_row = {
        let connection = server.database.connection().unwrap();
        dataset(&connection, &hashes[1]).unwrap().unwrap()
    };
    let made = confirm(
        &server.run.execution,
        &summary_row,
        Arc::new(LoadedDataset {
            table: new_table,
            profile: new_profile,
        }),
        ConfirmRequest {
            question: QUESTION.to_owned(),
            answers: Some(answers),
            parent: Some(parent.clone()),
        },
        &server.actor,
    )
    .await
    .unwrap();
    let Confirmed::Created(made) = made else {
        panic!("the same answers confirm on the new cut");
    };
    let child = made.revision.id.clone();
    start_run(&server.run, &child, "cut-child", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(server.settled(&child).await, RunStatus::Verified);

    // The comparison: exactly the Week 26 cells of the arms given new subjects, and the Week 12
    // cell of the arm whose ALT value changed.
    let child_detail = revision_detail(&sources, &child, &ann)
        .await
        .unwrap()
        .unwrap();
    let comparison = compare(&parent_detail, &child_detail);
    let differing: BTreeSet<(String, String)> = comparison
        .differing()
        .map(|c| (c.treatment.clone(), c.visit.clone()))
        .collect();
    let mut expected: BTreeSet<(String, String)> = summary
        .added_subjects
        .iter()
        .map(|(_, arm)| (arm.clone(), "Week 26".to_owned()))
        .collect();
    expected.insert((summary.changed.1.clone(), "Week 12".to_owned()));
    assert_eq!(differing, expected, "{}", comparison.describe_changes());
    assert!(comparison
        .differing()
        .all(|c| c.change == CellChange::Changed));
    let week_26: Vec<_> = comparison
        .differing()
        .filter(|c| c.visit == "Week 26")
        .collect();
    assert!(
        week_26.iter().all(|c| c.n.1 > c.n.0),
        "new subjects raise N"
    );

    // The history's data-cut filters.
    let connection = server.database.connection().unwrap();
    let filtered = |cut: &str| -> Vec<String> {
        history(
            &connection,
            &HistoryQuery {
                cut: Some(cut.to_owned()),
                ..HistoryQuery::default()
            },
        )
        .unwrap()
        .rows
        .into_iter()
        .map(|r| r.id)
        .collect()
    };
    assert_eq!(filtered("revised_for_newer_cut"), [child.to_string()]);
    assert_eq!(filtered("approved_on_older_cut"), [parent.to_string()]);
    let everything = history(&connection, &HistoryQuery::default()).unwrap();
    assert_eq!(everything.total, 2);
    assert_eq!(everything.query.cut, None);
}
