//! The server side of the boundary every server function goes through: the context the server
//! provides (the services, session settings, the setup token), who is logged in (from the
//! session, checked against the account on every request), role checks, and turning an error
//! into its HTTP status. Server functions call these, then one method of `Services`.

use std::sync::{Arc, Mutex};

use leptos::prelude::*;
use tower_sessions::Session;

use super::error::AppError;
use adamviz_model::account::{Account, Role};
use adamviz_services::{error::UseCaseError, Services};
use subtle::ConstantTimeEq;

/// Session keys.
pub const ACCOUNT_ID: &str = "account_id";
/// When the session was logged in (Unix seconds): the absolute lifetime counts from it.
pub const LOGIN_AT: &str = "login_at";
/// When the session was last used (Unix seconds, refreshed at most once a minute).
pub const SEEN_AT: &str = "seen_at";

/// The signing session of this login session: `[account id, login time]` once the account
/// signed in it. Its first signature needed the user name and the password; later ones in the
/// same login session need the password only (21 CFR 11.200(a)(1)). It ends with the login
/// session (logout, idle or absolute timeout).
pub const SIGNING_SESSION: &str = "signing_session";

/// How long sessions live.
#[derive(Debug, Clone, Copy)]
pub struct SessionSettings {
    /// Ended after this long without a request.
    pub idle_timeout: std::time::Duration,
    /// Ended this long after login, however active.
    pub absolute_lifetime: std::time::Duration,
}

impl Default for SessionSettings {
    fn default() -> Self {
        Self {
            idle_timeout: std::time::Duration::from_secs(30 * 60),
            absolute_lifetime: std::time::Duration::from_secs(12 * 60 * 60),
        }
    }
}

/// The one-time setup token of a server started with no account: 128 random bits, valid until
/// used or the server stops.
#[derive(Debug, Clone, Default)]
pub struct SetupToken(Arc<Mutex<Option<String>>>);

impl SetupToken {
    /// A fresh token.
    pub fn fresh() -> Self {
        Self(Arc::new(Mutex::new(Some(format!(
            "{:032x}",
            rand::random::<u128>()
        )))))
    }

    /// No token (accounts exist).
    pub fn none() -> Self {
        Self::default()
    }

    /// The token, while unused.
    pub fn current(&self) -> Option<String> {
        self.0.lock().map(|t| t.clone()).unwrap_or(None)
    }

    /// Whether `given` is the unused token (compared in constant time).
    pub fn accepts(&self, given: &str) -> bool {
        self.current()
            .is_some_and(|token| bool::from(token.as_bytes().ct_eq(given.as_bytes())))
    }

    /// Uses the token up if `given` is it (compared in constant time).
    pub fn take(&self, given: &str) -> bool {
        let Ok(mut token) = self.0.lock() else {
            return false;
        };
        let matches = token
            .as_deref()
            .is_some_and(|t| bool::from(t.as_bytes().ct_eq(given.as_bytes())));
        if matches {
            *token = None;
        }
        matches
    }

    /// Ends the token whatever it is (an account exists: the setup is done).
    pub fn revoke(&self) {
        if let Ok(mut token) = self.0.lock() {
            *token = None;
        }
    }

    /// Whether `given` is the unused token and no account exists yet: the link dies as soon
    /// as any account exists, however it was made (`adamviz users add`, another node).
    pub async fn open_for(&self, given: &str, services: &Services) -> bool {
        if !self.accepts(given) {
            return false;
        }
        match services.account_count().await {
            Ok(0) => true,
            Ok(_) => {
                self.revoke();
                false
            }
            Err(error) => {
                tracing::error!(%error, "the setup link: cannot count the accounts");
                false
            }
        }
    }
}

/// What the server provides to every server function and page render: the use cases, and
/// what only the web needs (session lifetimes, the first-start setup token).
#[derive(Debug, Clone)]
pub struct ApiContext {
    /// The use cases (database, objects, runs, the signing key).
    pub services: Services,
    /// Session lifetimes.
    pub sessions: SessionSettings,
    /// The first-start setup token.
    pub setup: SetupToken,
}

impl ApiContext {
    /// The context of these services.
    pub fn new(services: Services, sessions: SessionSettings, setup: SetupToken) -> Self {
        Self {
            services,
            sessions,
            setup,
        }
    }
}

/// The context, or an internal error when the server did not provide it.
pub fn context() -> Result<ApiContext, AppError> {
    use_context::<ApiContext>().ok_or_else(|| internal("the API context is missing"))
}

/// Logs `detail` and returns the user-facing internal error.
pub fn internal(detail: impl std::fmt::Display) -> AppError {
    tracing::error!(%detail, "internal error in a server function");
    AppError::Internal
}

/// The error a server function answers when a use case ran on the database: `refused` says
/// what the page is told of the use case's own refusal; a database that failed under it is an
/// internal error (logged).
pub fn use_case_error<E>(error: UseCaseError<E>, refused: impl FnOnce(E) -> AppError) -> AppError
where
    E: std::fmt::Display,
{
    match error {
        UseCaseError::Refused(error) => refused(error),
        UseCaseError::Database(error) => internal(error),
    }
}

/// The session of the current request.
pub async fn session() -> Result<Session, AppError> {
    leptos_axum::extract::<Session>()
        .await
        .map_err(|error| internal(format!("no session layer: {error}")))
}

/// The remote address of the current request, when the server knows it.
pub async fn remote_addr() -> Option<String> {
    leptos_axum::extract::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .await
        .ok()
        .map(|axum::extract::ConnectInfo(addr)| addr.ip().to_string())
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The account the session is logged in as, if it may act: as
/// [`signed_in_allowing_password_change`], and its password is its owner's own (an account with
/// a temporary password set by an administrator gets [`AppError::PasswordChangeRequired`]).
pub async fn signed_in(session: &Session, context: &ApiContext) -> Result<Account, AppError> {
    let account = signed_in_allowing_password_change(session, context).await?;
    if account.password_change_required {
        return Err(AppError::PasswordChangeRequired);
    }
    Ok(account)
}

/// The account the session is logged in as, even while it must still replace a temporary
/// password (for the Change password page, logout and whoami only): the session holds an
/// account, is younger than the absolute lifetime, and the account exists and is not disabled.
/// A session that fails is ended on the server. Refreshes the idle timer at most once a minute.
pub async fn signed_in_allowing_password_change(
    session: &Session,
    context: &ApiContext,
) -> Result<Account, AppError> {
    let read = |key: &'static str| async move {
        session
            .get::<i64>(key)
            .await
            .map_err(|error| internal(format!("session {key}: {error}")))
    };
    let (Some(id), Some(login_at)) = (read(ACCOUNT_ID).await?, read(LOGIN_AT).await?) else {
        return Err(AppError::NotLoggedIn);
    };
    let now = now_unix();
    if now - login_at > context.sessions.absolute_lifetime.as_secs() as i64 {
        let _ = session.flush().await;
        return Err(AppError::NotLoggedIn);
    }
    let account = context
        .services
        .active_account(id)
        .await
        .map_err(internal)?;
    let Some(account) = account else {
        let _ = session.flush().await;
        return Err(AppError::NotLoggedIn);
    };
    if read(SEEN_AT).await?.is_none_or(|seen| now - seen >= 60) {
        session
            .insert(SEEN_AT, now)
            .await
            .map_err(|error| internal(format!("session: {error}")))?;
    }
    Ok(account)
}

/// Whether this login session holds a signing session of its account (see [`SIGNING_SESSION`]).
pub async fn signing_session_open(session: &Session) -> Result<bool, AppError> {
    let read = |key: &'static str| async move {
        session
            .get::<i64>(key)
            .await
            .map_err(|error| internal(format!("session {key}: {error}")))
    };
    let signing = session
        .get::<[i64; 2]>(SIGNING_SESSION)
        .await
        .map_err(|error| internal(format!("session {SIGNING_SESSION}: {error}")))?;
    let (account, login_at) = (read(ACCOUNT_ID).await?, read(LOGIN_AT).await?);
    Ok(
        matches!((signing, account, login_at), (Some([a, l]), Some(account), Some(login)) if a == account && l == login),
    )
}

/// Records that this login session's account signed: its signing session is open.
pub async fn open_signing_session(session: &Session) -> Result<(), AppError> {
    let read = |key: &'static str| async move {
        session
            .get::<i64>(key)
            .await
            .map_err(|error| internal(format!("session {key}: {error}")))
    };
    if let (Some(account), Some(login_at)) = (read(ACCOUNT_ID).await?, read(LOGIN_AT).await?) {
        session
            .insert(SIGNING_SESSION, [account, login_at])
            .await
            .map_err(|error| internal(format!("session: {error}")))?;
    }
    Ok(())
}

/// The logged-in account of the current request (401 without one).
pub async fn current_account() -> Result<Account, AppError> {
    let context = context()?;
    signed_in(&session().await?, &context).await
}

/// The logged-in account, if it holds one of `roles` (401 without a session, 403 without the
/// role).
pub async fn require(roles: &[Role]) -> Result<Account, AppError> {
    let account = current_account().await?;
    if account.has_any(roles) {
        Ok(account)
    } else {
        Err(AppError::Forbidden {
            needed: roles
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(" or "),
        })
    }
}

/// Marks the response with `error`'s status and returns it. A plain HTML form post (no wasm)
/// keeps the redirect back to its page, where the error is shown; a status would replace it.
pub fn respond(error: AppError) -> AppError {
    if !accepts_html() {
        if let (Some(options), Ok(status)) = (
            use_context::<leptos_axum::ResponseOptions>(),
            axum::http::StatusCode::from_u16(error.status()),
        ) {
            options.set_status(status);
        }
    }
    error
}

/// Whether the current request is a plain HTML form post (no wasm): it wants a page back.
pub fn accepts_html() -> bool {
    use_context::<axum::http::request::Parts>().is_some_and(|parts| {
        parts
            .headers
            .get(axum::http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"))
    })
}

/// Runs a server function's body and gives its error the HTTP status it maps to.
pub async fn boundary<T>(
    body: impl std::future::Future<Output = Result<T, AppError>>,
) -> Result<T, AppError> {
    body.await.map_err(respond)
}
