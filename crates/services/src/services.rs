//! [`Services`]: the one value the web layer and the commands hold. It owns the database pool,
//! the object store, the dataset cache, the execution service and this process's side of the
//! run queue, and offers each use case as a method, so that a caller never handles a database
//! connection or an object-store error. `adamviz-server`'s `main` builds it; the server
//! functions receive it inside their context.

use std::{io::Read, sync::Arc};

use adamviz_engine::runner::{Runner, RunnerConfig};
use adamviz_evidence::actor::Actor;
use adamviz_model::figure_set::{MemberAnswerMap, SetMember};
use adamviz_model::{
    account::{Account, Role},
    data_cut::NewerCut,
    dataset::{DatasetSummary, UploadOutcome},
    digest::Sha256Digest,
    ids::{AttemptId, FigureSetId, RevisionId},
    revision::{
        ArtifactView, Comparison, HistoryPage, HistoryQuery, RevisionDetail, RevisionSummary,
        RunStatus,
    },
    work_list::WorkList,
};
use adamviz_store::{
    db::{Connection, Database, DatabaseError},
    figure_sets::StoredSet,
    objects::ObjectStore,
};

use crate::{
    accounts::{
        self, login_limiter::LoginTicket, AccountError, LoginError, Operator, PasswordChange,
        PasswordChangeError, PasswordOrigin, SecurityEvent,
    },
    approvals::{self, SignError, SignRequest, Signed},
    bundle::{self, ExportError},
    data_cuts,
    datasets::{self, DatasetCache, LoadedDataset},
    error::{ReadError, UseCaseError},
    execution::ExecutionService,
    figure_sets, history,
    installation_key::InstallationKey,
    reproduction::{self, ReproduceError, Reproduced},
    revisions::{self, RevisionSources},
    runs::{self, QueueSettings, RunContext, RunQueue, StartRunError},
    set_bundle,
    upload::{receive_upload, UploadError, DEFAULT_UPLOAD_LIMIT},
    work_list,
};

/// The use cases over one installation's database and object store.
#[derive(Clone)]
pub struct Services {
    database: Database,
    objects: ObjectStore,
    upload_limit: u64,
    datasets: Arc<DatasetCache>,
    execution: ExecutionService,
    runs: Arc<RunQueue>,
    key: Option<InstallationKey>,
    temporary_password_hours: i64,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("objects", &self.objects.describe())
            .field("upload_limit", &self.upload_limit)
            .field("key", &self.key.as_ref().map(InstallationKey::fingerprint))
            .finish_non_exhaustive()
    }
}

impl Services {
    /// The use cases over these stores, with a runner of the default configuration, the
    /// default upload limit, no signing key and the default queue settings.
    pub fn new(database: Database, objects: ObjectStore) -> Self {
        Self::with_runner(
            database,
            objects,
            Arc::new(Runner::new(RunnerConfig::new())),
        )
    }

    /// [`Services::new`] with this runner (its isolation and concurrency bound).
    pub fn with_runner(database: Database, objects: ObjectStore, runner: Arc<Runner>) -> Self {
        let runs = Arc::new(RunQueue::new(QueueSettings::default()));
        Self {
            execution: ExecutionService::new(database.clone(), objects.clone(), runner)
                .observed_by(runs.observer()),
            database,
            objects,
            upload_limit: DEFAULT_UPLOAD_LIMIT,
            datasets: Arc::new(DatasetCache::new(4)),
            runs,
            key: None,
            temporary_password_hours: accounts::DEFAULT_TEMPORARY_PASSWORD_HOURS,
        }
    }

    /// The same services, refusing uploads larger than `bytes` while they stream.
    pub fn with_upload_limit(mut self, bytes: u64) -> Self {
        self.upload_limit = bytes;
        self
    }

    /// The same services, with temporary passwords that work for `hours`.
    pub fn with_temporary_password_hours(mut self, hours: i64) -> Self {
        self.temporary_password_hours = hours;
        self
    }

    /// The same services, their runs queued with `settings` (how many runners this process
    /// starts, leases, retries).
    pub fn with_queue_settings(mut self, settings: QueueSettings) -> Self {
        self.runs = Arc::new(RunQueue::new(settings));
        self.execution = self.execution.observed_by(self.runs.observer());
        self
    }

    /// The same services, signing evidence bundles with `key`.
    pub fn with_key(mut self, key: InstallationKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The database (for the composition root, the session store and the commands).
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// The object store (for the composition root and the commands).
    pub fn objects(&self) -> &ObjectStore {
        &self.objects
    }

    /// The execution service: materializing revisions and governed runs.
    pub fn execution(&self) -> &ExecutionService {
        &self.execution
    }

    /// The dataset cache.
    pub fn dataset_cache(&self) -> &Arc<DatasetCache> {
        &self.datasets
    }

    /// The upload limit in bytes.
    pub fn upload_limit(&self) -> u64 {
        self.upload_limit
    }

    /// How long a password an administrator sets works before its owner replaces it.
    pub fn temporary_password_hours(&self) -> i64 {
        self.temporary_password_hours
    }

    /// The fingerprint of the installation's signing key, when there is one.
    pub fn key_fingerprint(&self) -> Option<String> {
        self.key.as_ref().map(InstallationKey::fingerprint)
    }

    /// What a run reads its inputs from and is queued on.
    pub fn run_context(&self) -> RunContext {
        RunContext {
            execution: self.execution.clone(),
            queue: self.runs.clone(),
            datasets: self.datasets.clone(),
        }
    }

    /// What the revision pages read.
    pub fn revision_sources(&self) -> RevisionSources {
        RevisionSources {
            database: self.database.clone(),
            objects: self.objects.clone(),
            datasets: self.datasets.clone(),
        }
    }

    /// Runs `work` on a pooled connection on a blocking thread.
    async fn on_connection<T: Send + 'static, E: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, UseCaseError<E>> {
        self.database
            .call(move |connection| Ok::<_, DatabaseError>(work(connection)))
            .await?
            .map_err(UseCaseError::Refused)
    }

    /// Whether the database answers a trivial statement (the health check).
    pub async fn database_answers(&self) -> Result<(), ReadError> {
        self.on_connection(|connection| adamviz_store::health::ping(connection))
            .await
            .map_err(ReadError::from)
    }

    // --- accounts -------------------------------------------------------------------------

    /// The account `id`, if it exists and is not disabled.
    pub async fn active_account(&self, id: i64) -> Result<Option<Account>, ReadError> {
        self.on_connection(move |connection| accounts::active_account(connection, id))
            .await
            .map_err(ReadError::from)
    }

    /// How many accounts exist.
    pub async fn account_count(&self) -> Result<usize, ReadError> {
        self.on_connection(|connection| accounts::account_count(connection))
            .await
            .map_err(ReadError::from)
    }

    /// Every account (administrators' page).
    pub async fn list_accounts(&self) -> Result<Vec<Account>, ReadError> {
        self.on_connection(|connection| accounts::list_accounts(connection))
            .await
            .map_err(ReadError::from)
    }

    /// Checks a login; the ticket of the login limiter goes with the check onto its thread and
    /// is marked succeeded there, so a client that hangs up does not free its place while the
    /// hash still runs.
    pub async fn login(
        &self,
        name: String,
        password: String,
        remote_addr: Option<String>,
        ticket: LoginTicket,
    ) -> Result<Account, UseCaseError<LoginError>> {
        self.on_connection(move |connection| {
            let result = accounts::login(
                connection,
                name.trim(),
                &password,
                remote_addr.as_deref(),
                accounts::now(),
            );
            if result.is_ok() {
                ticket.succeeded();
            }
            drop(ticket);
            result
        })
        .await
    }

    /// The recent changes of account `id`'s password, when any was made by someone else (an
    /// administrator's reset, the command line); empty otherwise.
    pub async fn password_change_notices(
        &self,
        id: i64,
    ) -> Result<Vec<adamviz_model::account::PasswordChangeNotice>, ReadError> {
        self.on_connection(move |connection| {
            accounts::password_change_notices(connection, id, accounts::now())
        })
        .await
        .map_err(ReadError::from)
    }

    /// Records a logout in the security log.
    pub async fn record_logout(
        &self,
        account: Account,
        remote_addr: Option<String>,
    ) -> Result<(), ReadError> {
        self.on_connection(move |connection| {
            accounts::record_event(
                connection,
                &SecurityEvent {
                    event: "logout",
                    account_id: Some(account.id),
                    account_name: &account.name,
                    actor_id: None,
                    actor_name: None,
                    remote_addr: remote_addr.as_deref(),
                    success: true,
                    detail: None,
                },
                accounts::now(),
            )
        })
        .await
        .map_err(ReadError::from)
    }

    /// An account changes its own password; every other session of it ends (`keep` stays).
    /// The login limiter's ticket goes with the check as for a login: a wrong current password
    /// costs the address's failure budget, anything else does not.
    pub async fn change_own_password(
        &self,
        account_id: i64,
        change: PasswordChange,
        keep: Option<String>,
        remote_addr: Option<String>,
        ticket: LoginTicket,
    ) -> Result<Account, UseCaseError<PasswordChangeError>> {
        self.on_connection(move |connection| {
            let result = accounts::change_own_password(
                connection,
                account_id,
                &change,
                keep.as_deref(),
                remote_addr.as_deref(),
                accounts::now(),
            );
            if !matches!(
                result,
                Err(PasswordChangeError::WrongCurrent | PasswordChangeError::Locked { .. })
            ) {
                ticket.succeeded();
            }
            drop(ticket);
            result
        })
        .await
    }

    /// Creates the first administrator (first-start setup): the password is its owner's own;
    /// refused ([`AccountError::SetupDone`]) once any account exists.
    pub async fn create_first_admin(
        &self,
        name: String,
        password: String,
        remote_addr: Option<String>,
    ) -> Result<Account, UseCaseError<AccountError>> {
        self.on_connection(move |connection| {
            accounts::create_first_admin(
                connection,
                &name,
                &password,
                remote_addr.as_deref(),
                accounts::now(),
            )
        })
        .await
    }

    /// An administrator creates an account with a temporary password.
    pub async fn create_account(
        &self,
        admin: Account,
        name: String,
        password: String,
        roles: Vec<Role>,
        remote_addr: Option<String>,
    ) -> Result<Account, UseCaseError<AccountError>> {
        let hours = self.temporary_password_hours;
        self.on_connection(move |connection| {
            let now = accounts::now();
            accounts::create_account(
                connection,
                name.trim(),
                &password,
                &roles,
                PasswordOrigin::temporary_for(now, hours),
                &Operator::account(&admin),
                remote_addr.as_deref(),
                now,
            )
        })
        .await
    }

    /// An administrator sets a temporary password (a reset).
    pub async fn set_temporary_password(
        &self,
        admin: Account,
        name: String,
        password: String,
        remote_addr: Option<String>,
    ) -> Result<Account, UseCaseError<AccountError>> {
        let hours = self.temporary_password_hours;
        self.on_connection(move |connection| {
            let now = accounts::now();
            accounts::set_password(
                connection,
                name.trim(),
                &password,
                PasswordOrigin::temporary_for(now, hours),
                &Operator::account(&admin),
                remote_addr.as_deref(),
                now,
            )
        })
        .await
    }

    /// An administrator sets an account's roles.
    pub async fn set_roles(
        &self,
        admin: Account,
        name: String,
        roles: Vec<Role>,
        remote_addr: Option<String>,
    ) -> Result<Account, UseCaseError<AccountError>> {
        self.on_connection(move |connection| {
            accounts::set_roles(
                connection,
                &name,
                &roles,
                &Operator::account(&admin),
                remote_addr.as_deref(),
                accounts::now(),
            )
        })
        .await
    }

    /// An administrator disables an account.
    pub async fn disable_account(
        &self,
        admin: Account,
        name: String,
        remote_addr: Option<String>,
    ) -> Result<Account, UseCaseError<AccountError>> {
        self.on_connection(move |connection| {
            accounts::disable_account(
                connection,
                &name,
                &Operator::account(&admin),
                remote_addr.as_deref(),
                accounts::now(),
            )
        })
        .await
    }

    /// Whether the session `id` is still stored and unexpired.
    pub async fn session_still_stored(&self, id: String) -> Result<bool, ReadError> {
        accounts::session_still_stored(&self.database, id).await
    }

    // --- datasets -------------------------------------------------------------------------

    /// Every dataset, newest first.
    pub async fn list_datasets(&self) -> Result<Vec<DatasetSummary>, ReadError> {
        self.on_connection(|connection| datasets::list_datasets(connection))
            .await
            .map_err(ReadError::from)
    }

    /// The dataset with this content hash, as listed.
    pub async fn dataset(&self, content_hash: String) -> Result<Option<DatasetSummary>, ReadError> {
        self.on_connection(move |connection| datasets::dataset(connection, &content_hash))
            .await
            .map_err(ReadError::from)
    }

    /// The dataset `digest` as read (table and profile, from the cache when read before).
    pub async fn load_dataset(
        &self,
        digest: Sha256Digest,
    ) -> Result<Arc<LoadedDataset>, ReadError> {
        let (cache, objects) = (self.datasets.clone(), self.objects.clone());
        Ok(tokio::task::spawn_blocking(move || cache.load(&objects, &digest)).await??)
    }

    /// Receives an upload from `reader` (streamed into the object store while it is hashed,
    /// refused past the upload limit), reads it, and records the dataset. Bytes that no reader
    /// accepts are removed again if this upload put them there (bytes stored before, an
    /// artifact or another upload, stay what they are).
    pub async fn upload(
        &self,
        reader: impl Read + Send + 'static,
        classification: String,
        file_name: String,
        uploader: Account,
    ) -> Result<UploadOutcome, UploadError> {
        let (objects, limit) = (self.objects.clone(), self.upload_limit);
        let received = tokio::task::spawn_blocking(move || {
            receive_upload(&objects, reader, &classification, limit)
        })
        .await?;
        let received = match received {
            Err(UploadError::Unreadable { object, source }) => {
                if object.created {
                    let (objects, digest) = (self.objects.clone(), object.digest);
                    tokio::task::spawn_blocking(move || objects.remove(&digest)).await??;
                }
                return Err(UploadError::Unreadable { object, source });
            }
            other => other?,
        };
        self.on_connection(move |connection| {
            datasets::record_upload(
                connection,
                &received,
                &file_name,
                &uploader,
                accounts::now(),
            )
        })
        .await
        .map_err(|error| UploadError::Record(ReadError::from(error)))
    }

    /// Adds the synthetic demo dataset (the same bytes as `public/demo/adlb-synthetic.xpt`).
    pub async fn add_demo_dataset(&self, uploader: Account) -> Result<UploadOutcome, UploadError> {
        use adamviz_engine::ingest::{
            demo::{generate_demo_table, DEMO_SUBJECTS_PER_ARM},
            xpt_writer::write_xpt,
        };
        let bytes =
            tokio::task::spawn_blocking(|| write_xpt(&generate_demo_table(DEMO_SUBJECTS_PER_ARM)))
                .await?;
        self.upload(
            std::io::Cursor::new(bytes),
            "synthetic".to_owned(),
            "adlb-synthetic.xpt".to_owned(),
            uploader,
        )
        .await
    }

    /// A later upload of the dataset `content_hash` (same name, other bytes), if any.
    pub async fn newer_cut_of(&self, content_hash: &str) -> Result<Option<NewerCut>, ReadError> {
        data_cuts::newer_cut_of(&self.database, content_hash).await
    }

    // --- revisions ------------------------------------------------------------------------

    /// Every revision, newest first.
    pub async fn list_revisions(&self) -> Result<Vec<RevisionSummary>, ReadError> {
        self.on_connection(|connection| revisions::list_revisions(connection))
            .await
            .map_err(ReadError::from)
    }

    /// One revision with everything its page shows, as `viewer` sees it.
    pub async fn revision_detail(
        &self,
        id: &RevisionId,
        viewer: &Account,
    ) -> Result<Option<RevisionDetail>, ReadError> {
        revisions::revision_detail(&self.revision_sources(), id, viewer).await
    }

    /// Two revisions side by side (`None` when either does not exist).
    pub async fn compare(
        &self,
        a: &RevisionId,
        b: &RevisionId,
        viewer: &Account,
    ) -> Result<Result<Comparison, RevisionId>, ReadError> {
        let Some(first) = self.revision_detail(a, viewer).await? else {
            return Ok(Err(a.clone()));
        };
        let Some(second) = self.revision_detail(b, viewer).await? else {
            return Ok(Err(b.clone()));
        };
        Ok(Ok(history::compare(&first, &second)))
    }

    /// A page of the revision history, filtered.
    pub async fn history(&self, query: HistoryQuery) -> Result<HistoryPage, ReadError> {
        self.on_connection(move |connection| history::history(connection, &query))
            .await
            .map_err(ReadError::from)
    }

    /// The home page's work list of `account`.
    pub async fn work_list(&self, account: Account) -> Result<WorkList, ReadError> {
        self.on_connection(move |connection| work_list::work_list_of(connection, &account))
            .await
            .map_err(ReadError::from)
    }

    /// Where the execution of `id` stands; `None` when there is no such revision.
    pub async fn run_status(&self, id: &RevisionId) -> Result<Option<RunStatus>, ReadError> {
        runs::status_of_revision(&self.database, id).await
    }

    /// A receiver that wakes whenever this process stores a change of a run's status (queued,
    /// claimed, a phase, the end). Changes stored by another process are not seen here.
    pub fn run_status_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.runs.status_changes()
    }

    /// Starts (or joins, under the same idempotency key) the governed run of a Draft revision.
    pub async fn start_run(
        &self,
        id: &RevisionId,
        idempotency_key: &str,
        actor: Actor,
    ) -> Result<AttemptId, StartRunError> {
        runs::start_run(&self.run_context(), id, idempotency_key, actor).await
    }

    /// Signs a Verified revision.
    pub async fn sign(
        &self,
        signer: Account,
        request: SignRequest,
        remote_addr: Option<String>,
    ) -> Result<Signed, UseCaseError<SignError>> {
        self.on_connection(move |connection| {
            approvals::sign(
                connection,
                &signer,
                &request,
                remote_addr.as_deref(),
                accounts::now(),
            )
        })
        .await
    }

    /// Runs a retained result again and records whether it reproduced.
    pub async fn reproduce(
        &self,
        id: &RevisionId,
        actor: &Actor,
    ) -> Result<Reproduced, ReproduceError> {
        reproduction::reproduce(&self.execution, id, actor).await
    }

    /// One artifact of a revision with its bytes, re-hashed.
    pub async fn artifact(
        &self,
        id: &RevisionId,
        name: &str,
    ) -> Result<Option<(ArtifactView, Vec<u8>)>, ReadError> {
        revisions::artifact_bytes(&self.database, &self.objects, id, name).await
    }

    /// The revision's evidence bundle, signed with the installation's key.
    pub async fn evidence_bundle(&self, id: &RevisionId) -> Result<Vec<u8>, ExportError> {
        bundle::export_for_download(&self.database, &self.objects, self.key.as_ref(), id).await
    }

    // --- figure sets ----------------------------------------------------------------------

    /// The figure set `id`, as stored.
    pub async fn stored_set(&self, id: &FigureSetId) -> Result<Option<StoredSet>, ReadError> {
        figure_sets::stored_set(&self.database, id).await
    }

    /// The figures of a set as `viewer` sees them.
    pub async fn set_members(
        &self,
        set: &StoredSet,
        viewer: &Account,
    ) -> Result<Vec<SetMember>, ReadError> {
        figure_sets::set_members(&self.revision_sources(), set, viewer).await
    }

    /// The answers of each figure of a set.
    pub async fn member_answers(&self, set: &StoredSet) -> Result<MemberAnswerMap, ReadError> {
        figure_sets::member_answers_of(&self.database, set).await
    }

    /// Starts the run of every figure of a set that can run.
    pub async fn run_set(
        &self,
        set: &StoredSet,
        idempotency_key: &str,
        actor: &Actor,
    ) -> Result<usize, StartRunError> {
        figure_sets::run_all(&self.run_context(), set, idempotency_key, actor).await
    }

    /// The set's evidence bundle (each figure's own bundle and the signed set manifest).
    pub async fn set_evidence_bundle(&self, set: &StoredSet) -> Result<Vec<u8>, ExportError> {
        set_bundle::export_set_for_download(&self.database, &self.objects, self.key.as_ref(), set)
            .await
    }
}
