//! The server-function boundary: every server function lives in `api/<domain>/` and is thin
//! (session → role → a plain service function), with one error type ([`error::AppError`]).
//! [`ACCESS`] is the one table of who may call what; `docs/access.md` is generated from it
//! ([`access_markdown`], `crates/server/tests/access_doc.rs`) and `crates/server/tests/access.rs` walks it.

pub mod admin;
pub mod auth;
#[cfg(feature = "ssr")]
pub mod boundary;
pub mod datasets;
pub mod drafts;
pub mod error;
pub mod meta;
pub mod revisions;
pub mod sets;
pub mod work;

use adamviz_model::account::Role;

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
    ("/api/auth/logout", Access::LoggedIn),
    ("/api/meta/installation", Access::LoggedIn),
    ("/api/admin/accounts", Access::AnyOf(&[Role::Admin])),
    ("/api/admin/create-account", Access::AnyOf(&[Role::Admin])),
    ("/api/admin/set-roles", Access::AnyOf(&[Role::Admin])),
    ("/api/admin/disable-account", Access::AnyOf(&[Role::Admin])),
    ("/api/admin/set-password", Access::AnyOf(&[Role::Admin])),
    ("/api/auth/change-password", Access::LoggedIn),
    ("/api/auth/password-notices", Access::LoggedIn),
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
    ("/api/work/list", Access::LoggedIn),
    ("/api/sets/draft", Access::LoggedIn),
    ("/api/sets/confirm", Access::AnyOf(&[Role::Author])),
    ("/api/sets/detail", Access::LoggedIn),
    ("/api/sets/run", Access::AnyOf(&[Role::Author])),
    ("/api/sets/rerun", Access::AnyOf(&[Role::Author])),
    ("/api/revisions/rerun", Access::AnyOf(&[Role::Author])),
];

/// Routes that are not server functions (POST), with who may use them.
pub const ROUTE_ACCESS: &[(&str, Access)] = &[
    ("/api/datasets/upload", Access::AnyOf(&[Role::Author])),
    ("/api/revisions/{id}/events", Access::LoggedIn),
    ("/api/revisions/{id}/files/{name}", Access::LoggedIn),
    ("/api/revisions/{id}/evidence", Access::LoggedIn),
    ("/api/sets/{id}/evidence", Access::LoggedIn),
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
    ("/account/password", Access::LoggedIn),
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

/// `docs/access.md`: the access tables as Markdown, generated from [`ACCESS`], [`ROUTE_ACCESS`]
/// and [`PAGE_ACCESS`] so the document cannot drift from the code (`crates/server/tests/access_doc.rs`).
#[cfg(feature = "ssr")]
pub fn access_markdown() -> String {
    use std::fmt::Write as _;

    let mark = |access: Access, column: usize| -> &'static str {
        let allowed = match access {
            Access::Public => column == 0,
            Access::LoggedIn => column > 0,
            Access::AnyOf(roles) => {
                column > 0
                    && roles.contains(&[Role::Author, Role::Reviewer, Role::Admin][column - 1])
            }
        };
        if allowed {
            "yes"
        } else {
            ""
        }
    };
    let table = |out: &mut String, heading: &str, rows: &[(&str, Access)]| {
        let _ = writeln!(out, "| {heading} | public | author | reviewer | admin |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for (path, access) in rows {
            let _ = write!(out, "| `{path}` |");
            for column in 0..4 {
                let _ = write!(out, " {} |", mark(*access, column));
            }
            let _ = writeln!(out);
        }
    };
    let mut out = String::from(
        "# Who may call what\n\n\
         Generated from the code (`api::ACCESS`, `api::ROUTE_ACCESS`, `api::PAGE_ACCESS` in \
         `src/api.rs`) by `crates/server/tests/access_doc.rs`; do not edit by hand (`ADAMVIZ_UPDATE_DOCS=1 \
         cargo test -p adamviz-server --test access_doc` rewrites it). `crates/server/tests/access.rs` calls every \
         entry as each role and fails on a route that is in no table. \"public\" means no login \
         (the function checks what it needs itself, e.g. the setup token); an account with a \
         temporary password gets only `/api/auth/change-password`, `/api/auth/logout`, \
         `/api/auth/whoami` and the page `/account/password` until it chooses its own; a reviewer \
         never signs their own revision. See [security.md](security.md).\n\n\
         ## Server functions (POST)\n\n",
    );
    table(&mut out, "server function", ACCESS);
    out.push_str("\n## Other routes\n\n");
    table(&mut out, "route", ROUTE_ACCESS);
    out.push_str(
        "\n## Pages (GET)\n\nAny page not listed needs a login; every page under `/admin` needs \
         the admin role.\n\n",
    );
    table(&mut out, "page", PAGE_ACCESS);
    out
}
