//! The server-function boundary: every server function lives in `api/<domain>/` and is thin
//! (session → role → a plain service function), with one error type ([`error::AppError`]).
//! [`ACCESS`] is the one table of who may call what; the README shows it and
//! `tests/access.rs` walks it.

pub mod admin;
pub mod auth;
#[cfg(feature = "ssr")]
pub mod boundary;
pub mod datasets;
pub mod drafts;
pub mod error;
pub mod meta;
pub mod revisions;

use crate::domain::account::Role;

/// Who may call a server function or open a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone (the function checks what it needs itself, e.g. the setup token).
    Public,
    /// Any logged-in account.
    LoggedIn,
    /// A logged-in account with one of these roles.
    AnyOf(&'static [Role]),
}

/// Every server function (path) and page, with who may use it.
pub const ACCESS: &[(&str, Access)] = &[
    ("/api/auth/login", Access::Public),
    ("/api/auth/setup", Access::Public),
    ("/api/auth/whoami", Access::Public),
    ("/api/meta/installation", Access::Public),
    ("/api/auth/logout", Access::LoggedIn),
    ("/api/admin/accounts", Access::AnyOf(&[Role::Admin])),
    ("/api/admin/create-account", Access::AnyOf(&[Role::Admin])),
    ("/api/admin/set-roles", Access::AnyOf(&[Role::Admin])),
    ("/api/admin/disable-account", Access::AnyOf(&[Role::Admin])),
    ("/api/datasets/list", Access::LoggedIn),
    ("/api/datasets/detail", Access::LoggedIn),
    ("/api/datasets/demo", Access::AnyOf(&[Role::Author])),
    ("/api/drafts/load", Access::LoggedIn),
    ("/api/drafts/preview", Access::LoggedIn),
    ("/api/drafts/confirm", Access::AnyOf(&[Role::Author])),
    ("/api/revisions/list", Access::LoggedIn),
    ("/api/revisions/detail", Access::LoggedIn),
    ("/api/revisions/run", Access::AnyOf(&[Role::Author])),
    ("/api/revisions/status", Access::LoggedIn),
    ("/api/revisions/sign", Access::AnyOf(&[Role::Reviewer])),
    (
        "/api/revisions/reproduce",
        Access::AnyOf(&[Role::Author, Role::Reviewer]),
    ),
    ("/api/revisions/history", Access::LoggedIn),
    ("/api/revisions/compare", Access::LoggedIn),
];

/// Routes that are not server functions (POST), with who may use them.
pub const ROUTE_ACCESS: &[(&str, Access)] = &[
    ("/api/datasets/upload", Access::AnyOf(&[Role::Author])),
    ("/api/revisions/{id}/events", Access::LoggedIn),
    ("/api/revisions/{id}/files/{name}", Access::LoggedIn),
    ("/api/revisions/{id}/evidence", Access::LoggedIn),
];

/// Pages (GET) and who may open them; any other page needs a login.
pub const PAGE_ACCESS: &[(&str, Access)] = &[
    ("/login", Access::Public),
    ("/setup", Access::Public),
    ("/healthz", Access::Public),
    ("/", Access::LoggedIn),
    ("/datasets", Access::LoggedIn),
    ("/revisions", Access::LoggedIn),
    ("/revisions/compare", Access::LoggedIn),
    ("/evidence", Access::LoggedIn),
    ("/admin/accounts", Access::AnyOf(&[Role::Admin])),
];

/// The access rule of the page at `path`.
pub fn page_access(path: &str) -> Access {
    if path.starts_with("/admin") {
        return Access::AnyOf(&[Role::Admin]);
    }
    PAGE_ACCESS
        .iter()
        .find(|(page, _)| *page == path)
        .map_or(Access::LoggedIn, |(_, access)| *access)
}
