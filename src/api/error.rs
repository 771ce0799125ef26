//! `AppError`: the one error of every server function, with the HTTP status it maps to and a
//! message a user can act on. Internal details (database, hashing, I/O) go to the log only; the
//! user sees that something failed and that the log says why.

use leptos::server_fn::{
    codec::JsonEncoding,
    error::{FromServerFnError, ServerFnErrorErr},
};
use serde::{Deserialize, Serialize};

/// What went wrong, as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum AppError {
    /// 401: no session, or it ended.
    #[error("you are not logged in (or your session ended): log in again")]
    NotLoggedIn,
    /// 403: the account lacks the role.
    #[error("this needs the {needed} role, which your account does not have")]
    Forbidden {
        /// The roles that would do, e.g. "admin".
        needed: String,
    },
    /// 403: the account still has a temporary password (set by an administrator): nothing but
    /// the Change password page and logout works until its owner chooses their own.
    #[error("your password was set by an administrator: choose your own on the Change password page (/account/password) before anything else")]
    PasswordChangeRequired,
    /// 404.
    #[error("{0} not found")]
    NotFound(String),
    /// 409: conflicts with what is stored.
    #[error("{0}")]
    Conflict(String),
    /// 413.
    #[error("{0}")]
    TooLarge(String),
    /// 422: an input is wrong; `field` names the control.
    #[error("{field}: {message}")]
    Invalid {
        /// The form field (the server function's argument name).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// 429: too many failed logins.
    #[error("{0}")]
    Locked(String),
    /// 500: details in the server log.
    #[error("something went wrong on the server; the server log says what")]
    Internal,
    /// The request or response itself failed (network, encoding).
    #[error("the request failed: {0}")]
    Transport(String),
}

impl AppError {
    /// The HTTP status of the error.
    pub fn status(&self) -> u16 {
        match self {
            AppError::NotLoggedIn => 401,
            AppError::Forbidden { .. } | AppError::PasswordChangeRequired => 403,
            AppError::NotFound(_) => 404,
            AppError::Conflict(_) => 409,
            AppError::TooLarge(_) => 413,
            AppError::Invalid { .. } => 422,
            AppError::Locked(_) => 429,
            AppError::Internal | AppError::Transport(_) => 500,
        }
    }

    /// An invalid input.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        AppError::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// The message for `field`, when this error is about it.
    pub fn about(&self, field: &str) -> Option<String> {
        match self {
            AppError::Invalid {
                field: about,
                message,
            } if about == field => Some(message.clone()),
            _ => None,
        }
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::Transport(value.to_string())
    }
}

impl From<ServerFnErrorErr> for AppError {
    fn from(value: ServerFnErrorErr) -> Self {
        AppError::Transport(value.to_string())
    }
}
