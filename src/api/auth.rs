//! Sessions: log in, log out, who is logged in, and the first-start setup of the first admin.
//! Thin: each takes the session and the context, calls one `Services` method, and shapes the
//! answer.

mod change_password;
mod login;
mod logout;
mod password_notices;
mod setup;
mod whoami;

pub use change_password::{change_password, ChangePassword};
pub use login::{login, Login};
pub use logout::{logout, Logout};
pub use password_notices::{password_notices, PasswordNotices};
pub use setup::{setup, Setup};
pub use whoami::{whoami, Whoami};

#[cfg(feature = "ssr")]
use leptos::prelude::*;

#[cfg(feature = "ssr")]
use crate::api::error::AppError;

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

/// A password check's turn for the client at `remote` (the login form and Change password share
/// the limiter and its budgets), or the refusal (429 with `Retry-After`).
#[cfg(feature = "ssr")]
async fn password_check_turn(
    remote: Option<&str>,
) -> Result<adamviz_services::accounts::login_limiter::LoginTicket, AppError> {
    use adamviz_services::accounts::login_limiter::{client_key, LoginLimiter};
    let limiter = use_context::<std::sync::Arc<LoginLimiter>>().unwrap_or_else(default_limiter);
    limiter.admit(&client_key(remote)).await.map_err(|refused| {
        retry_after(refused.retry_after_seconds());
        AppError::Locked(refused.to_string())
    })
}

/// The limiter of a server that provided none (one per process).
#[cfg(feature = "ssr")]
fn default_limiter() -> std::sync::Arc<adamviz_services::accounts::login_limiter::LoginLimiter> {
    use adamviz_services::accounts::login_limiter::{LoginLimiter, LoginLimits};
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
