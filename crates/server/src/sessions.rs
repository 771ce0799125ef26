//! The session store of `tower-sessions` over the `sessions` rows of the app's database
//! (SQLite or PostgreSQL): each record's data as JSON and its expiry as Unix seconds (not the
//! serde form of the record, whose time format depends on features of the `time` crate), on a
//! blocking thread. Expired records are never returned and are deleted by
//! [`delete_expired_sessions_every`], which `main` starts once.

use async_trait::async_trait;
use tower_sessions::{
    session::{Id, Record},
    session_store::{self, ExpiredDeletion},
    SessionStore,
};

use adamviz_store::{
    db::{Connection, Database, DatabaseError},
    sessions::{
        delete_expired_sessions, delete_session, insert_session, load_session, update_session,
    },
    sql::SqlError,
};

/// How often expired sessions are deleted.
pub const EXPIRED_SESSION_SWEEP: std::time::Duration = std::time::Duration::from_secs(300);

/// Sessions in the database.
#[derive(Debug, Clone)]
pub struct DatabaseSessionStore {
    database: Database,
}

impl DatabaseSessionStore {
    /// A store over `database`.
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

fn backend(error: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(error.to_string())
}

fn now_unix() -> i64 {
    tower_sessions::cookie::time::OffsetDateTime::now_utc().unix_timestamp()
}

impl DatabaseSessionStore {
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, SqlError> + Send + 'static,
    ) -> session_store::Result<T> {
        self.database
            .call(move |connection| work(connection).map_err(DatabaseError::from))
            .await
            .map_err(backend)
    }
}

#[async_trait]
impl SessionStore for DatabaseSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        // A fresh id until one is free (a collision of 128 random bits is not expected, but
        // overwriting another person's session must be impossible, not unlikely).
        loop {
            let json = serde_json::to_vec(&record.data)
                .map_err(|e| session_store::Error::Encode(e.to_string()))?;
            let (id, expiry) = (record.id.to_string(), record.expiry_date.unix_timestamp());
            let inserted = self
                .run(move |connection| insert_session(&*connection, &id, json, expiry))
                .await?;
            if inserted {
                return Ok(());
            }
            record.id = Id::default();
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let json = serde_json::to_vec(&record.data)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        let (id, expiry) = (record.id.to_string(), record.expiry_date.unix_timestamp());
        // An update only: a session deleted meanwhile (logout, a disabled account) stays
        // deleted even if a request that was in flight saves it afterwards. New sessions go
        // through `create`.
        self.run(move |connection| update_session(&*connection, &id, json, expiry))
            .await?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let key = id.to_string();
        let row: Option<(Vec<u8>, i64)> = self
            .run(move |connection| load_session(&*connection, &key, now_unix()))
            .await?;
        let Some((json, expiry)) = row else {
            return Ok(None);
        };
        let decode = |e: &dyn std::fmt::Display| session_store::Error::Decode(e.to_string());
        Ok(Some(Record {
            id: *id,
            data: serde_json::from_slice(&json).map_err(|e| decode(&e))?,
            expiry_date: tower_sessions::cookie::time::OffsetDateTime::from_unix_timestamp(expiry)
                .map_err(|e| decode(&e))?,
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        let id = id.to_string();
        self.run(move |connection| delete_session(&*connection, &id))
            .await?;
        Ok(())
    }
}

#[async_trait]
impl ExpiredDeletion for DatabaseSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        self.run(|connection| delete_expired_sessions(&*connection, now_unix()))
            .await?;
        Ok(())
    }
}

/// Deletes expired sessions now and then every `period`, for as long as the runtime runs: the
/// one background task of the session layer, started by the server.
pub fn delete_expired_sessions_every(store: DatabaseSessionStore, period: std::time::Duration) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(period);
        loop {
            ticks.tick().await;
            if let Err(error) = store.delete_expired().await {
                tracing::error!(%error, "cannot delete expired sessions");
            }
        }
    });
}
