//! The browser's flow as plain service functions, with real SQLite, real objects and real R:
//! the form's answers applied to a draft (moves, a changed variable, errors beside their
//! questions, the record question of a vital-signs set), the preview's numbers, the draft
//! page's address, and runs from the web — a double start joins one attempt, many revisions
//! started at once queue at the runner's bound and all become Verified, a Verified or
//! Experimental/Draft revision does not run, and the revision page reads everything back.
#![cfg(feature = "ssr")]

#[path = "support/study_shapes.rs"]
mod study_shapes;

use std::{path::PathBuf, sync::Arc, time::Duration};

use adamviz::{
    api::drafts::{apply_move, DraftAddress},
    domain::{
        account::{Account, Role},
        digest::Sha256Digest,
        draft::DraftAnswers,
        ids::RevisionId,
        revision::{RevisionStatus, RunStatus},
    },
    evidence::actor::Actor,
    evidence::dsse::Envelope,
    ingest::{profile::profile_table, read_dataset, table::Table},
    runner::{Runner, RunnerConfig},
    service::{
        bundle::{export_bundle, ExportError, Manifest},
        datasets::DatasetCache,
        drafts::{answer_draft, answers_of, preview},
        execution::{ExecutionService, UploadInfo},
        installation_key::InstallationKey,
        revisions::{revision_detail, RevisionSources},
        runs::{run_status, start_run, RunBoard, RunContext, StartRunError},
        upload::{receive_upload, DEFAULT_UPLOAD_LIMIT},
    },
    store::{db::Database, objects::ObjectStore, repository::get_revision},
};

const QUESTION: &str = "ALT over time by arm";

struct Loaded {
    table: Arc<Table>,
    profile: adamviz::domain::profile::DatasetProfile,
    digest: Sha256Digest,
}

fn pilot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/adlbc.xpt")
}

fn load(bytes: &[u8]) -> Loaded {
    use sha2::{Digest, Sha256};
    let digest = Sha256Digest::from_bytes(Sha256::digest(bytes).into());
    let table = read_dataset(bytes).unwrap();
    let profile = profile_table(&table, digest, 3);
    Loaded {
        table: Arc::new(table),
        profile,
        digest,
    }
}

fn pilot() -> &'static Loaded {
    static PILOT: std::sync::OnceLock<Loaded> = std::sync::OnceLock::new();
    PILOT.get_or_init(|| load(&std::fs::read(pilot_path()).expect("../shared/data/adlbc.xpt")))
}

fn proposed(loaded: &Loaded) -> DraftAnswers {
    let draft = answer_draft(
        QUESTION,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        None,
    )
    .unwrap();
    answers_of(&draft.spec)
}

#[test]
fn the_proposals_confirm_and_the_preview_counts_the_subjects_the_verifier_counts() {
    let pilot = pilot();
    let draft = answer_draft(QUESTION, &pilot.profile, &pilot.table, pilot.digest, None).unwrap();
    assert!(draft.errors.is_empty(), "{:?}", draft.errors);
    let spec = draft.confirmed.expect("the pilot's proposals confirm");
    let preview = preview(&spec, &pilot.table).unwrap();
    let panels: Vec<&str> = preview.panels.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        panels,
        ["Placebo", "Xanomeline Low Dose", "Xanomeline High Dose"]
    );
    let baseline = |arm: &str| {
        preview
            .panels
            .iter()
            .find(|(t, _)| t == arm)
            .unwrap()
            .1
            .iter()
            .find(|c| c.statistics.visit == "Baseline")
            .unwrap()
            .clone()
    };
    // DESIGN §4: 86/84/82 subjects at baseline.
    assert_eq!(baseline("Placebo").statistics.n_subjects, 86);
    assert_eq!(baseline("Xanomeline High Dose").statistics.n_subjects, 84);
    assert_eq!(baseline("Xanomeline Low Dose").statistics.n_subjects, 82);
    assert_eq!(preview.y_label, "AVAL (U/L)");
    for (_, cells) in &preview.panels {
        for cell in cells {
            let s = &cell.statistics;
            let (Some(min), Some(max), Some(q1), Some(q3)) = (s.min, s.max, s.q1, s.q3) else {
                continue;
            };
            let (low, high) = (cell.whisker_low.unwrap(), cell.whisker_high.unwrap());
            assert!(
                min <= low && low <= q1 && q3 <= high && high <= max,
                "{s:?}"
            );
            let reach = 1.5 * (q3 - q1);
            for outlier in &cell.outliers {
                assert!(*outlier < q1 - reach || *outlier > q3 + reach);
            }
        }
    }
}

#[test]
fn answers_move_levels_follow_a_new_variable_and_errors_name_their_question() {
    let pilot = pilot();
    let mut answers = proposed(pilot);
    apply_move(&mut answers, "treatment_levels:up:Xanomeline High Dose");
    apply_move(&mut answers, "treatment_levels:up:Xanomeline High Dose");
    apply_move(&mut answers, "treatment_levels:up:Xanomeline High Dose"); // already first
    answers.low_n_threshold = Some("60".to_owned());
    let draft = answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&answers),
    )
    .unwrap();
    let spec = draft.confirmed.expect("confirms");
    assert_eq!(
        spec.treatment.levels,
        ["Xanomeline High Dose", "Placebo", "Xanomeline Low Dose"]
    );
    let low_n = preview(&spec, &pilot.table)
        .unwrap()
        .panels
        .iter()
        .flat_map(|(_, cells)| cells)
        .filter(|c| c.statistics.low_n)
        .count();
    assert!(low_n > 0, "a threshold of 60 marks the late visits low N");

    // The treatment variable changes; the levels listed for TRTA are not applied to TRTP.
    let mut changed = proposed(pilot);
    changed.treatment_variable = Some("TRTP".to_owned());
    changed.treatment_levels = vec!["Placebo".to_owned()];
    let draft = answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&changed),
    )
    .unwrap();
    assert!(draft.errors.is_empty(), "{:?}", draft.errors);
    assert_eq!(draft.answers.levels_of.as_deref(), Some("TRTP"));
    assert_eq!(draft.spec.treatment.levels.len(), 3);

    // Errors beside their questions; nothing confirms.
    let mut wrong = proposed(pilot);
    wrong.visits.clear();
    wrong.low_n_threshold = Some("0".to_owned());
    wrong
        .filters
        .insert("SAFFL".to_owned(), vec!["maybe".to_owned()]);
    let draft = answer_draft(
        QUESTION,
        &pilot.profile,
        &pilot.table,
        pilot.digest,
        Some(&wrong),
    )
    .unwrap();
    assert!(draft.confirmed.is_none());
    let about = |id: &str| {
        draft
            .errors
            .iter()
            .filter(|e| e.question == id)
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(about("visits"), ["at least one is needed"]);
    assert_eq!(
        about("low_n_threshold"),
        ["expected a whole number from 1 to 1000"]
    );
    assert!(
        about("filters")[0].contains("\"maybe\" does not occur in column \"SAFFL\""),
        "{:?}",
        draft.errors
    );
}

#[test]
fn the_record_question_of_a_vital_signs_set_is_proposed_and_a_wrong_answer_is_named() {
    let shape = study_shapes::vital_signs();
    let loaded = load(&study_shapes::csv(&shape));
    let question = "systolic blood pressure by visit and arm";
    let draft = answer_draft(
        question,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        None,
    )
    .unwrap();
    let asked = draft
        .questions
        .iter()
        .any(|q| q.id == "records_per_subject_visit");
    assert!(
        asked,
        "several records per subject and visit: the question is asked"
    );
    let mut answers = answers_of(&draft.spec);
    answers.records_per_subject_visit = Some("one".to_owned());
    let refused = answer_draft(
        question,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        Some(&answers),
    )
    .unwrap();
    assert!(refused.confirmed.is_none());
    assert!(
        refused
            .errors
            .iter()
            .any(|e| e.question == "records_per_subject_visit"
                && e.message.contains("still have several records")),
        "{:?}",
        refused.errors
    );
    answers.records_per_subject_visit = Some("ATPT=AFTER STANDING FOR 1 MINUTE".to_owned());
    let accepted = answer_draft(
        question,
        &loaded.profile,
        &loaded.table,
        loaded.digest,
        Some(&answers),
    )
    .unwrap();
    assert!(accepted.errors.is_empty(), "{:?}", accepted.errors);
    assert!(accepted.confirmed.is_some());
}

#[test]
fn the_draft_address_holds_the_answers_and_a_move() {
    let answers = proposed(pilot());
    let address = DraftAddress {
        question: "ALT & friends | 100%".to_owned(),
        answers: Some(answers.clone()),
        move_item: Some("visits:down:Baseline".to_owned()),
    };
    let href = address.href("abc");
    let query = href.split_once('?').unwrap().1;
    assert_eq!(DraftAddress::parse(query), address);
    // As a browser sends a plain form (brackets escaped, spaces as +).
    let sent = "question=ALT+over+time&answers%5Bvisits%5D%5B%5D=Week+2&answers%5Bvisits%5D%5B%5D=Baseline&move=visits%3Aup%3ABaseline";
    let parsed = DraftAddress::parse(sent);
    assert_eq!(parsed.question, "ALT over time");
    let mut moved = parsed.answers.unwrap();
    apply_move(&mut moved, parsed.move_item.as_deref().unwrap());
    assert_eq!(moved.visits, ["Baseline", "Week 2"]);
}

struct Server {
    database: Database,
    objects: ObjectStore,
    run: RunContext,
    upload: UploadInfo,
    actor: Actor,
    _dir: tempfile::TempDir,
}

fn server(max_concurrent: usize) -> Server {
    server_with(max_concurrent, None)
}

/// A server whose runner calls `rscript` instead of R's, when given.
fn server_with(max_concurrent: usize, rscript: Option<&str>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let database = Database::open_in(&data).unwrap();
    let objects = ObjectStore::open(&data).unwrap();
    let received = receive_upload(
        &objects,
        std::fs::File::open(pilot_path()).unwrap(),
        "synthetic",
        DEFAULT_UPLOAD_LIMIT,
    )
    .unwrap();
    let mut config = RunnerConfig::new();
    config.work_root = dir.path().join("work");
    config.max_concurrent = max_concurrent;
    if let Some(rscript) = rscript {
        config.rscript = PathBuf::from(rscript);
    }
    std::fs::create_dir_all(&config.work_root).unwrap();
    let board = Arc::new(RunBoard::new(max_concurrent));
    let execution = ExecutionService::new(
        database.clone(),
        objects.clone(),
        Arc::new(Runner::new(config)),
    )
    .observed_by(board.observer());
    let account = Account {
        id: 7,
        name: "ann".to_owned(),
        roles: vec![Role::Author],
        disabled: false,
        created_at: "2026-12-04T00:00:00Z".to_owned(),
    };
    Server {
        run: RunContext {
            execution,
            board,
            datasets: Arc::new(DatasetCache::new(2)),
        },
        upload: UploadInfo {
            content_hash: received.object.digest,
            classification: "synthetic".to_owned(),
            file_name: "adlbc.xpt".to_owned(),
            size: received.object.size,
        },
        actor: Actor::web(&account),
        database,
        objects,
        _dir: dir,
    }
}

impl Server {
    async fn revision(&self, answers: Option<DraftAnswers>) -> RevisionId {
        let pilot = pilot();
        let draft = answer_draft(
            QUESTION,
            &pilot.profile,
            &pilot.table,
            pilot.digest,
            answers.as_ref(),
        )
        .unwrap();
        let spec = draft.confirmed.expect("confirms");
        self.run
            .execution
            .materialize(&spec, Arc::clone(&pilot.table), &self.upload, &self.actor)
            .await
            .unwrap()
            .revision
            .id
    }

    async fn status(&self, id: &RevisionId) -> RunStatus {
        let key = id.clone();
        let revision = self
            .database
            .call(move |c| get_revision(c, &key).map_err(anyhow::Error::from))
            .await
            .unwrap()
            .unwrap();
        run_status(&self.database, &self.run.board, &revision)
            .await
            .unwrap()
    }

    async fn settled(&self, id: &RevisionId) -> RunStatus {
        for _ in 0..1200 {
            let status = self.status(id).await;
            if !status.is_moving() {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("revision {id} did not settle in two minutes");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_from_the_web_join_queue_and_end_verified() {
    let server = server(1);
    let first = server.revision(None).await;
    let second = server.revision(None).await;
    let third = server.revision(None).await;

    // A double click: the same key twice joins one attempt.
    let attempt = start_run(
        &server.run,
        &first,
        "double-click-key",
        server.actor.clone(),
    )
    .await
    .unwrap();
    let again = start_run(
        &server.run,
        &first,
        "double-click-key",
        server.actor.clone(),
    )
    .await
    .unwrap();
    assert_eq!(attempt, again);
    // Two more at once with one runner slot: they queue (positions), none is refused.
    start_run(
        &server.run,
        &second,
        "second-key-0001",
        server.actor.clone(),
    )
    .await
    .unwrap();
    start_run(&server.run, &third, "third-key-00001", server.actor.clone())
        .await
        .unwrap();
    let positions: Vec<RunStatus> = vec![server.status(&second).await, server.status(&third).await];
    assert!(
        positions
            .iter()
            .any(|s| matches!(s, RunStatus::Queued { .. })),
        "with one slot, a later run waits its turn: {positions:?}"
    );
    if let (RunStatus::Queued { position: a, .. }, RunStatus::Queued { position: b, .. }) =
        (&positions[0], &positions[1])
    {
        assert!(a < b, "{positions:?}");
    }
    for id in [&first, &second, &third] {
        assert_eq!(server.settled(id).await, RunStatus::Verified, "{id}");
    }
    // One attempt for the double click.
    let attempts: i64 = server
        .database
        .call({
            let first = first.clone();
            move |c| {
                c.query_row(
                    "SELECT count(*) FROM attempts WHERE revision_id = ?1",
                    [first.as_str()],
                    |row| row.get(0),
                )
                .map_err(anyhow::Error::from)
            }
        })
        .await
        .unwrap();
    assert_eq!(attempts, 1);

    // A Verified revision does not run again.
    let refused = start_run(
        &server.run,
        &first,
        "another-key-0001",
        server.actor.clone(),
    )
    .await;
    assert!(
        matches!(refused, Err(StartRunError::NotDraft { .. })),
        "{refused:?}"
    );

    // The revision page reads it all back.
    let sources = RevisionSources {
        database: server.database.clone(),
        objects: server.objects.clone(),
        board: server.run.board.clone(),
        datasets: server.run.datasets.clone(),
    };
    let detail = revision_detail(&sources, &first, true)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.summary.status, RevisionStatus::Verified);
    assert_eq!(detail.summary.author, "ann");
    assert_eq!(detail.summary.question, QUESTION);
    assert_eq!(detail.checks.len(), 10);
    assert!(
        detail.checks.iter().all(|c| c.passed),
        "{:?}",
        detail.checks
    );
    assert!(!detail.can_run);
    assert!(detail.preview.is_none());
    let names: Vec<&str> = detail.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "script.R",
            "snapshot.csv",
            "statistics.json",
            "plot.png",
            "environment.json"
        ]
    );
    let placebo = detail
        .statistics
        .iter()
        .find(|c| c.treatment == "Placebo" && c.visit == "Baseline")
        .unwrap();
    assert_eq!(placebo.n_subjects, 86);
    assert!(detail.script.contains("boxplot"));
    assert!(detail.environment.unwrap().contains("ggplot2"));
    let kinds: Vec<&str> = detail.evidence.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"execution_request"));
    assert!(kinds.contains(&"artifact_bundle") && kinds.contains(&"revision_context"));

    // Its evidence bundle: byte-identical for the same ledger state, signed, complete.
    let dir = tempfile::tempdir().unwrap();
    let key = InstallationKey::load_or_create(dir.path()).unwrap();
    let connection = server.database.connection().unwrap();
    let bundle = export_bundle(&connection, &server.objects, &key, &first).unwrap();
    let again = export_bundle(&connection, &server.objects, &key, &first).unwrap();
    assert_eq!(
        bundle, again,
        "the same revision and ledger state give the same bytes"
    );
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bundle)).unwrap();
    let mut read = |name: &str| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut archive.by_name(name).unwrap(), &mut bytes).unwrap();
        bytes
    };
    let manifest_bytes = read("manifest.json");
    let envelope: Envelope = serde_json::from_slice(&read("manifest.dsse.json")).unwrap();
    assert_eq!(
        adamviz::evidence::dsse::verify(&envelope, &key.public_key()).unwrap(),
        manifest_bytes
    );
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes).unwrap();
    assert_eq!(manifest.revision_id, first.to_string());
    assert_eq!(manifest.signing_key.fingerprint, key.fingerprint());
    let record_kinds: Vec<&str> = manifest.records.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(record_kinds, kinds);
    for file in manifest.artifacts.iter() {
        let bytes = read(&file.path);
        assert_eq!(
            adamviz::service::bundle::file_hash(&bytes),
            file.sha256,
            "{}",
            file.path
        );
        assert_eq!(bytes.len() as u64, file.size);
    }
    for record in &manifest.records {
        let value: serde_json::Value = serde_json::from_slice(&read(&record.path)).unwrap();
        assert_eq!(value["record_hash"], record.record_hash.as_str());
    }
    assert_eq!(
        manifest.schemas.len(),
        adamviz::evidence::schemas::ALL_SCHEMAS.len()
    );
    assert!(String::from_utf8(read("README.txt"))
        .unwrap()
        .contains("adamviz evidence validate"));
    drop(archive);
    // A Draft revision has no bundle yet.
    let draft = server.revision(None).await;
    assert!(matches!(
        export_bundle(&connection, &server.objects, &key, &draft),
        Err(ExportError::NotVerified(_))
    ));
}

#[tokio::test]
async fn a_free_scale_revision_is_never_executed() {
    let server = server(1);
    let mut answers = proposed(pilot());
    answers.y_scale = Some("free".to_owned());
    let id = server.revision(Some(answers)).await;
    assert_eq!(server.status(&id).await, RunStatus::NotExecutable);
    let refused = start_run(&server.run, &id, "free-scale-key-1", server.actor.clone()).await;
    assert!(
        matches!(&refused, Err(StartRunError::NotDraft { status, .. }) if *status == "Experimental/Draft"),
        "{refused:?}"
    );
    let bad_key = start_run(&server.run, &id, "short", server.actor.clone()).await;
    assert!(matches!(bad_key, Err(StartRunError::BadKey)));
}

#[tokio::test]
async fn a_failed_run_says_why_and_a_retry_is_a_new_attempt() {
    let server = server_with(1, Some("/nonexistent/Rscript"));
    let id = server.revision(None).await;
    let first = start_run(&server.run, &id, "first-try-key-1", server.actor.clone())
        .await
        .unwrap();
    let failed = server.settled(&id).await;
    let RunStatus::Failed { attempt_id, reason } = &failed else {
        panic!("expected a failure: {failed:?}");
    };
    assert_eq!(attempt_id, &first.to_string());
    assert!(!reason.is_empty());
    // The same key names the ended attempt (nothing runs again); a new key is a retry.
    let same = start_run(&server.run, &id, "first-try-key-1", server.actor.clone())
        .await
        .unwrap();
    assert_eq!(same, first);
    assert!(matches!(
        server.settled(&id).await,
        RunStatus::Failed { .. }
    ));
    let retry = start_run(&server.run, &id, "second-try-key-2", server.actor.clone())
        .await
        .unwrap();
    assert_ne!(retry, first);
    let again = server.settled(&id).await;
    assert!(
        matches!(&again, RunStatus::Failed { attempt_id, .. } if *attempt_id == retry.to_string()),
        "{again:?}"
    );
}
