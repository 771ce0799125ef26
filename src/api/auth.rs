//! Sessions: log in, log out, who is logged in, and the first-start setup of the first admin.
//! Thin: each takes the session and the context, calls one `Services` method, and shapes the
//! answer.

use leptos::prelude::*;

use crate::api::error::AppError;
use adamviz_model::account::Account;

/// Where to go after login: a path on this site, else the home page (never another host).
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        // Printable ASCII only (browsers drop tabs and newlines, turning "/\t/x" into "//x",
        // another host; a newline would not even be a valid header), no backslash anywhere.
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && path.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
                && !path.starts_with("/login") =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

/// Logs in: a new session id (no fixation), the account and the login time in the session,
/// then back to `next`. A failure says only that the name or password is wrong, that the name
/// is locked for this address, or that this address (or the server) has too many logins going
/// (429, with `Retry-After`).
#[server(prefix = "/api", endpoint = "auth/login")]
pub async fn login(name: String, password: String, next: Option<String>) -> Result<(), AppError> {
    use crate::api::boundary::*;
    use adamviz_services::accounts::{self, LoginError};
    boundary(async move {
        let context = context()?;
        let session = session().await?;
        let remote = remote_addr().await;
        if name.trim().is_empty() {
            return Err(AppError::invalid("name", "enter your account name"));
        }
        // Admitted, or refused at once (429): per address, and a bound on the passwords the
        // server checks at once, taken before a database connection is. The ticket goes with
        // the check onto its thread, so a client that hangs up does not free its place while
        // the hash still runs.
        let limiter = use_context::<std::sync::Arc<accounts::login_limits::LoginLimiter>>()
            .unwrap_or_else(default_limiter);
        let client = accounts::login_limits::client_key(remote.as_deref());
        let ticket = limiter
            .admit(&client, std::time::Instant::now())
            .map_err(|refused| {
                retry_after(refused.retry_after_seconds());
                AppError::Locked(refused.to_string())
            })?;
        let account = context
            .services
            .login(name, password, remote, ticket)
            .await
            .map_err(|error| {
                use_case_error(error, |error| match error {
                    LoginError::Invalid | LoginError::TemporaryPasswordExpired { .. } => {
                        AppError::invalid("password", error.to_string())
                    }
                    LoginError::Locked { .. } => AppError::Locked(error.to_string()),
                    LoginError::Database(error) => internal(error),
                })
            })?;
        establish(&session, account.id).await?;
        // A password someone else set opens only the change form: go there at once (the page
        // guard would send a full page load there too, but the browser follows this redirect
        // without one).
        if account.password_change_required {
            leptos_axum::redirect("/account/password?required=1");
        } else {
            leptos_axum::redirect(&safe_next(next.as_deref()));
        }
        Ok(())
    })
    .await
}

/// The limiter of a server that provided none (one per process).
#[cfg(feature = "ssr")]
fn default_limiter() -> std::sync::Arc<adamviz_services::accounts::login_limits::LoginLimiter> {
    use adamviz_services::accounts::login_limits::{LoginLimiter, LoginLimits};
    static DEFAULT: std::sync::OnceLock<std::sync::Arc<LoginLimiter>> = std::sync::OnceLock::new();
    DEFAULT
        .get_or_init(|| LoginLimiter::new(LoginLimits::default()))
        .clone()
}

/// Tells the client when to try again (`Retry-After`, seconds).
#[cfg(feature = "ssr")]
fn retry_after(seconds: u64) {
    if let Some(options) = use_context::<leptos_axum::ResponseOptions>() {
        options.insert_header(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from(seconds),
        );
    }
}

/// Puts `account_id` into a session under a new id.
#[cfg(feature = "ssr")]
async fn establish(session: &tower_sessions::Session, account_id: i64) -> Result<(), AppError> {
    use crate::api::boundary::{internal, ACCOUNT_ID, LOGIN_AT, SEEN_AT};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    session.cycle_id().await.map_err(internal)?;
    for (key, value) in [(ACCOUNT_ID, account_id), (LOGIN_AT, now), (SEEN_AT, now)] {
        session.insert(key, value).await.map_err(internal)?;
    }
    Ok(())
}

/// Logs out: the session is deleted on the server (not only the cookie), then the login page.
#[server(prefix = "/api", endpoint = "auth/logout")]
pub async fn logout() -> Result<(), AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let context = context()?;
        let session = session().await?;
        let account = signed_in_allowing_password_change(&session, &context).await?;
        let remote = remote_addr().await;
        session.flush().await.map_err(internal)?;
        context
            .services
            .record_logout(account, remote)
            .await
            .map_err(internal)?;
        leptos_axum::redirect("/login");
        Ok(())
    })
    .await
}

/// The logged-in account, or `None`. It answers while the account must still replace a
/// temporary password (saying so), so that the page can lead there.
#[server(prefix = "/api", endpoint = "auth/whoami")]
pub async fn whoami() -> Result<Option<Account>, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let context = context()?;
        match signed_in_allowing_password_change(&session().await?, &context).await {
            Ok(account) => Ok(Some(account)),
            Err(AppError::NotLoggedIn) => Ok(None),
            Err(error) => Err(error),
        }
    })
    .await
}

/// Changes the logged-in account's own password: the current one, the new one twice. A
/// temporary password (set by an administrator) can only be used for this. Every other session
/// of the account ends; this one continues under a new id. Then back to `next` (home).
#[server(prefix = "/api", endpoint = "auth/change-password")]
pub async fn change_password(
    current_password: String,
    new_password: String,
    new_password_again: String,
    next: Option<String>,
) -> Result<(), AppError> {
    use crate::api::boundary::*;
    use adamviz_services::accounts::{self, PasswordChange, PasswordChangeError};
    boundary(async move {
        let context = context()?;
        let session = session().await?;
        let account = signed_in_allowing_password_change(&session, &context).await?;
        let remote = remote_addr().await;
        // The session that changes the password is the only one of the account that stays
        // (under a new id, given below once the change is stored).
        let keep = session.id().map(|id| id.to_string());
        let change = PasswordChange {
            current_password,
            new_password,
            new_password_again,
        };
        context
            .services
            .change_own_password(account.id, change, keep, remote)
            .await
            .map_err(|error| {
                use_case_error(error, |error| match error {
                    PasswordChangeError::Account(accounts::AccountError::Database(error)) => {
                        internal(error)
                    }
                    PasswordChangeError::Account(accounts::AccountError::Hash(error)) => {
                        internal(error)
                    }
                    other => AppError::invalid(other.field(), other.to_string()),
                })
            })?;
        session.cycle_id().await.map_err(internal)?;
        leptos_axum::redirect(&safe_next(next.as_deref()));
        Ok(())
    })
    .await
}

/// Creates the first admin with the one-time setup token, logs it in and goes home.
#[server(prefix = "/api", endpoint = "auth/setup")]
pub async fn setup(
    token: String,
    name: String,
    password: String,
    password_again: String,
) -> Result<(), AppError> {
    use crate::api::boundary::*;
    use adamviz_model::account::{check_name, check_password};
    use adamviz_services::accounts::AccountError;
    boundary(async move {
        let context = context()?;
        if !context.setup.accepts(&token) {
            return Err(AppError::NotFound("setup link".to_owned()));
        }
        check_name(&name).map_err(|m| AppError::invalid("name", m.to_string()))?;
        check_password(&password).map_err(|m| AppError::invalid("password", m.to_string()))?;
        if password != password_again {
            return Err(AppError::invalid(
                "password_again",
                "the two passwords differ",
            ));
        }
        if !context.setup.take(&token) {
            return Err(AppError::NotFound("setup link".to_owned()));
        }
        let remote = remote_addr().await;
        let account = context
            .services
            .create_first_admin(name, password, remote)
            .await
            .map_err(|error| {
                use_case_error(error, |error| match error {
                    AccountError::Database(error) => internal(error),
                    other => AppError::invalid("name", other.to_string()),
                })
            })?;
        establish(&session().await?, account.id).await?;
        leptos_axum::redirect("/");
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_is_a_path_on_this_site_or_the_home_page() {
        for (given, expected) in [
            (Some("/datasets"), "/datasets"),
            (Some("/revisions?x=1"), "/revisions?x=1"),
            (None, "/"),
            (Some(""), "/"),
            (Some("https://evil.example/"), "/"),
            (Some("//evil.example"), "/"),
            (Some("/\t/evil.example"), "/"),
            (Some("/\\evil.example"), "/"),
            (Some("/a\\b"), "/"),
            (Some("/x\r\nSet-Cookie: a=b"), "/"),
            (Some("/login?next=/login"), "/"),
        ] {
            assert_eq!(safe_next(given), expected, "{given:?}");
        }
    }
}
