//! The session store of `tower-sessions` in the app's database (SQLite or PostgreSQL) (table `sessions`): each
//! record's data as JSON and its expiry as Unix seconds (not the serde form of the record,
//! whose time format depends on features of the `time` crate), on a blocking thread.
//! Expired records are never returned and are deleted by [`delete_expired_sessions_every`],
//! which the server starts once (`server::http::serve`).

use async_trait::async_trait;
use tower_sessions::{
    session::{Id, Record},
    session_store::{self, ExpiredDeletion},
    SessionStore,
};

use super::db::Database;
use crate::{
    sql::{Dialect, Sql, SqlError},
    sql_params,
};

/// Stores a new session unless its id is taken; whether it was stored.
pub fn insert_session(
    connection: &impl Sql,
    id: &str,
    data: Vec<u8>,
    expiry_unix: i64,
) -> Result<bool, SqlError> {
    Ok(connection.execute(
        "INSERT INTO sessions (id, data, expiry_unix) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        sql_params![id, data, expiry_unix],
    )? == 1)
}

/// Updates a stored session (one deleted meanwhile stays deleted).
pub fn update_session(
    connection: &impl Sql,
    id: &str,
    data: Vec<u8>,
    expiry_unix: i64,
) -> Result<(), SqlError> {
    connection.execute(
        "UPDATE sessions SET data = ?2, expiry_unix = ?3 WHERE id = ?1",
        sql_params![id, data, expiry_unix],
    )?;
    Ok(())
}

/// A session's data and expiry, unless it expired by `now_unix`.
pub fn load_session(
    connection: &impl Sql,
    id: &str,
    now_unix: i64,
) -> Result<Option<(Vec<u8>, i64)>, SqlError> {
    connection
        .query_opt(
            "SELECT data, expiry_unix FROM sessions WHERE id = ?1 AND expiry_unix > ?2",
            sql_params![id, now_unix],
        )?
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .transpose()
}

/// Deletes a session.
pub fn delete_session(connection: &impl Sql, id: &str) -> Result<(), SqlError> {
    connection.execute("DELETE FROM sessions WHERE id = ?1", sql_params![id])?;
    Ok(())
}

/// Deletes the sessions expired by `now_unix`.
pub fn delete_expired_sessions(connection: &impl Sql, now_unix: i64) -> Result<(), SqlError> {
    connection.execute(
        "DELETE FROM sessions WHERE expiry_unix <= ?1",
        sql_params![now_unix],
    )?;
    Ok(())
}

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
        work: impl FnOnce(&mut super::db::Connection) -> Result<T, SqlError> + Send + 'static,
    ) -> session_store::Result<T> {
        self.database
            .call(move |connection| work(connection).map_err(super::db::DatabaseError::from))
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

/// Whether session `id` is stored and unexpired (a logout or a disabled account deletes it).
pub fn session_is_stored(connection: &impl Sql, id: &str) -> Result<bool, SqlError> {
    let now = match connection.dialect() {
        Dialect::Sqlite => "unixepoch()",
        Dialect::Postgres => "CAST(extract(epoch FROM now()) AS BIGINT)",
    };
    connection
        .query_one(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1 AND expiry_unix > {now})"
            ),
            sql_params![id],
        )?
        .get(0)
}
