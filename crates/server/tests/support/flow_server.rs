//! The flow tests' server: the pilot dataset (ADLBC) loaded once, and a data directory with
//! real SQLite, objects and an R runner behind the execution service and the run board, as the
//! web server has them; revisions materialized from the question's proposals and run to an end.
#![allow(dead_code)]

use std::{path::PathBuf, sync::Arc, time::Duration};

use adamviz_engine::ingest::{profile::profile_table, read_dataset, table::Table};
use adamviz_engine::runner::{Runner, RunnerConfig};
use adamviz_evidence::actor::Actor;
use adamviz_model::{
    account::{Account, Role},
    digest::Sha256Digest,
    draft::DraftAnswers,
    ids::RevisionId,
    revision::RunStatus,
};
use adamviz_services::{
    datasets::DatasetCache,
    drafts::{answer_draft, answers_of},
    execution::{ExecutionService, UploadInfo},
    runs::{run_status, QueueSettings, RunContext, RunQueue},
    upload::{receive_upload, DEFAULT_UPLOAD_LIMIT},
};
use adamviz_store::{db::Database, objects::ObjectStore, repository::get_revision};

pub const QUESTION: &str = "ALT over time by arm";

pub struct Loaded {
    pub table: Arc<Table>,
    pub profile: adamviz_model::profile::DatasetProfile,
    pub digest: Sha256Digest,
}

pub fn pilot_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("../shared/data/adlbc.xpt")
}

pub fn load(bytes: &[u8]) -> Loaded {
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

pub fn pilot() -> &'static Loaded {
    static PILOT: std::sync::OnceLock<Loaded> = std::sync::OnceLock::new();
    PILOT.get_or_init(|| load(&std::fs::read(pilot_path()).expect("../shared/data/adlbc.xpt")))
}

pub fn proposed(loaded: &Loaded) -> DraftAnswers {
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

pub struct Server {
    pub database: Database,
    pub objects: ObjectStore,
    pub run: RunContext,
    pub upload: UploadInfo,
    pub actor: Actor,
    pub _dir: tempfile::TempDir,
}

pub fn server(max_concurrent: usize) -> Server {
    server_with(max_concurrent, None)
}

/// A server whose runner calls `rscript` instead of R's, when given.
pub fn server_with(max_concurrent: usize, rscript: Option<&str>) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let database = Database::open_in(&data).unwrap();
    let objects = ObjectStore::open(&data).unwrap();
    server_on(dir, database, objects, max_concurrent, rscript)
}

/// A server on `database` and `objects` (any backend), its work under `dir`.
pub fn server_on(
    dir: tempfile::TempDir,
    database: Database,
    objects: ObjectStore,
    max_concurrent: usize,
    rscript: Option<&str>,
) -> Server {
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
    let queue = Arc::new(RunQueue::new(QueueSettings {
        local_runners: max_concurrent,
        ..QueueSettings::default()
    }));
    let execution = ExecutionService::new(
        database.clone(),
        objects.clone(),
        Arc::new(Runner::new(config)),
    )
    .observed_by(queue.observer());
    let account = Account {
        id: 7,
        name: "ann".to_owned(),
        roles: vec![Role::Author],
        disabled: false,
        created_at: "2026-12-04T00:00:00Z".to_owned(),
        password_change_required: false,
        password_expires_at: None,
        password_set_by_owner_at: Some("2026-12-04T00:00:00Z".to_owned()),
    };
    Server {
        run: RunContext {
            execution,
            queue,
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
    pub async fn revision(&self, answers: Option<DraftAnswers>) -> RevisionId {
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

    pub async fn status(&self, id: &RevisionId) -> RunStatus {
        let key = id.clone();
        let revision = self
            .database
            .call(move |c| get_revision(c, &key).map_err(anyhow::Error::from))
            .await
            .unwrap()
            .unwrap();
        run_status(&self.database, &revision).await.unwrap()
    }

    /// A revision made and run to Verified under idempotency key `key`.
    pub async fn verified(&self, key: &str) -> RevisionId {
        let id = self.revision(None).await;
        adamviz_services::runs::start_run(&self.run, &id, key, self.actor.clone())
            .await
            .unwrap();
        assert_eq!(self.settled(&id).await, RunStatus::Verified);
        id
    }

    /// An account with `roles` whose owner chose `password` (the usual state after the first
    /// login).
    pub fn account_with(&self, name: &str, password: &str, roles: &[Role]) -> Account {
        use adamviz_services::accounts::{create_account, now, Operator, PasswordOrigin};
        let mut connection = self.database.connection().unwrap();
        create_account(
            &mut connection,
            name,
            password,
            roles,
            PasswordOrigin::ChosenByOwner,
            &Operator::setup(),
            None,
            now(),
        )
        .unwrap()
    }

    pub async fn settled(&self, id: &RevisionId) -> RunStatus {
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
