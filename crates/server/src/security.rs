//! The HTTP layers around every request: security headers on every response, the CSRF check
//! on every state-changing request, canonical paths only, and the page guard (a page needs a login, an admin page the
//! admin role, the setup page its token). Server functions check their own access
//! (`api::boundary`); this guards what the browser navigates to.

use axum::{
    extract::{Request, State},
    http::{header, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use tower_sessions::Session;

use adamviz::api::{
    boundary::{signed_in_allowing_password_change, ApiContext},
    page_access, Access,
};

/// The page where an account chooses its own password.
pub const CHANGE_PASSWORD_PAGE: &str = "/account/password";

/// The policy of responses that are not pages (server functions, files, errors). Pages get
/// one with the nonce of their hydration script (`app::shell`).
const DEFAULT_CSP: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/// Adds the security headers to every response; pages are never stored by the browser, so the
/// back button after logout shows no private page.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html"));
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DEFAULT_CSP),
        );
    }
    if is_html {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Which origin state-changing requests must come from.
#[derive(Debug, Clone)]
pub struct OriginPolicy {
    /// The public URL's origin, when one is configured; otherwise the request's own `Host`.
    pub public_origin: Option<String>,
}

impl OriginPolicy {
    /// The policy for `public_url` (`scheme://host[:port]`, any path dropped).
    pub fn new(public_url: Option<&str>) -> Self {
        let public_origin = public_url.map(|url| {
            let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
            let scheme = scheme.to_ascii_lowercase();
            let authority = rest.split('/').next().unwrap_or(rest).to_ascii_lowercase();
            // Browsers leave the default port out of Origin.
            let default_port = if scheme == "https" { ":443" } else { ":80" };
            let authority = authority.strip_suffix(default_port).unwrap_or(&authority);
            format!("{scheme}://{authority}")
        });
        Self { public_origin }
    }

    fn allows(&self, request: &Request) -> bool {
        let headers = request.headers();
        match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
            Some(origin) => {
                let own = match &self.public_origin {
                    Some(origin) => Some(origin.clone()),
                    None => headers
                        .get(header::HOST)
                        .and_then(|v| v.to_str().ok())
                        .map(|host| format!("http://{}", host.to_ascii_lowercase())),
                };
                own.is_some_and(|own| own == origin.to_ascii_lowercase())
            }
            None => headers
                .get("sec-fetch-site")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|site| site == "same-origin"),
        }
    }
}

/// Refuses (403) every request that can change state (anything but GET, HEAD and OPTIONS) unless
/// it comes from this site: its `Origin` is the server's own, or, without `Origin`,
/// `Sec-Fetch-Site` says same-origin.
pub async fn csrf_guard(
    State(policy): State<OriginPolicy>,
    request: Request,
    next: Next,
) -> Response {
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if !safe && !policy.allows(&request) {
        tracing::warn!(
            method = %request.method(),
            path = request.uri().path(),
            origin = ?request.headers().get(header::ORIGIN),
            "refused a cross-site request"
        );
        return (
            StatusCode::FORBIDDEN,
            "refused: this request did not come from adamviz's own pages (cross-site request)",
        )
            .into_response();
    }
    next.run(request).await
}

/// Why `path` is not in its one canonical form, if it is not: an empty segment (`//`), a `.`
/// or `..` segment, a backslash, or an encoded dot, slash or backslash (`%2e`, `%2f`, `%5c`).
/// Browsers send canonical paths, so only a hand-made request has one of these; refusing them
/// means that the path the page guard judges is the path the router and the renderer see
/// (`/pkg/../admin/accounts` is neither a static file nor a way round the admin check).
pub fn non_canonical(path: &str) -> Option<&'static str> {
    if !path.starts_with('/') {
        return Some("a path starts with '/'");
    }
    if path.contains('\\') {
        return Some("a backslash");
    }
    let lower = path.to_ascii_lowercase();
    if ["%2e", "%2f", "%5c"]
        .iter()
        .any(|code| lower.contains(code))
    {
        return Some("an encoded '.', '/' or '\\'");
    }
    // Every segment but the last must be non-empty ("/" alone is the home page; a trailing
    // slash is left to the router's 404).
    let segments: Vec<&str> = path[1..].split('/').collect();
    let last = segments.len() - 1;
    for (index, segment) in segments.iter().enumerate() {
        if *segment == "." || *segment == ".." {
            return Some("a '.' or '..' segment");
        }
        if segment.is_empty() && index != last {
            return Some("an empty segment ('//')");
        }
    }
    None
}

/// Refuses (400) a request whose path is not canonical ([`non_canonical`]), before any other
/// layer reads the path.
pub async fn canonical_paths(request: Request, next: Next) -> Response {
    if let Some(reason) = non_canonical(request.uri().path()) {
        tracing::warn!(
            path = request.uri().path(),
            reason,
            "refused a non-canonical path"
        );
        return (
            StatusCode::BAD_REQUEST,
            format!("refused: the path is not canonical ({reason})"),
        )
            .into_response();
    }
    next.run(request).await
}

/// Whether `path` is a page the router renders (not a server function, a static file or the
/// health check).
fn is_page(path: &str) -> bool {
    let static_file = path.starts_with("/pkg/")
        || path.starts_with("/demo/")
        // A file at the site's root, e.g. /favicon.svg.
        || (path.matches('/').count() == 1 && path.contains('.'));
    !(path.starts_with("/api/") || path == "/healthz" || static_file)
}

fn small_page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} · adamviz</title></head>\
         <body><main><h1>{title}</h1><p>{text}</p><p><a href=\"/\">adamviz home</a></p></main></body></html>"
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

/// What a path given as a query value keeps as it is: RFC 3986's unreserved characters and `/`.
const PATH_IN_QUERY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

fn percent_encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, PATH_IN_QUERY).to_string()
}

/// The page guard: a page needs a login (else to `/login?next=…`), an admin page the admin role
/// (else 403), the setup page a valid setup token (else 404). The account goes into the
/// request for the renderer.
pub async fn page_guard(
    State(context): State<ApiContext>,
    session: Session,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    if !matches!(*request.method(), Method::GET | Method::HEAD) || !is_page(&path) {
        return next.run(request).await;
    }
    let account = signed_in_allowing_password_change(&session, &context)
        .await
        .ok();
    // A temporary password (set by an administrator) opens the Change password page only.
    if account.as_ref().is_some_and(|a| a.password_change_required)
        && path != CHANGE_PASSWORD_PAGE
        && !matches!(page_access(&path), Access::Public)
    {
        return Redirect::to(&format!("{CHANGE_PASSWORD_PAGE}?required=1")).into_response();
    }
    match page_access(&path) {
        Access::Public if path == "/setup" => {
            let token = request
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("token=")))
                .unwrap_or_default();
            if !context.setup.open_for(token, &context.services).await {
                return small_page(
                    StatusCode::NOT_FOUND,
                    "Not found",
                    "There is no setup to do here: the setup link is used, an account exists already, or the server that printed it has stopped.",
                );
            }
        }
        Access::Public => {}
        Access::LoggedIn | Access::AnyOf(_) if account.is_none() => {
            let target = match request.uri().query() {
                Some(query) => format!("{path}?{query}"),
                None => path.clone(),
            };
            return Redirect::to(&format!("/login?next={}", percent_encode(&target)))
                .into_response();
        }
        Access::AnyOf(roles) if !account.as_ref().is_some_and(|a| a.has_any(roles)) => {
            return small_page(
                StatusCode::FORBIDDEN,
                "Not allowed",
                &format!(
                    "This page needs the {} role, which your account does not have.",
                    roles
                        .iter()
                        .map(|r| r.as_str())
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            );
        }
        Access::LoggedIn | Access::AnyOf(_) => {}
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::non_canonical;

    #[test]
    fn only_canonical_paths_pass() {
        for path in [
            "/",
            "/admin/accounts",
            "/admin/",
            "/pkg/adamviz.wasm",
            "/datasets/abc/draft",
            "/api/revisions/rev-1/files/plot.png",
        ] {
            assert_eq!(non_canonical(path), None, "{path}");
        }
        for path in [
            "//admin/accounts",
            "/pkg/../admin/accounts",
            "/admin/./accounts",
            "/admin/accounts/..",
            "/admin/accounts/.",
            "/pkg/%2E%2e/admin",
            "/pkg/..%2Fadmin",
            "/pkg/..%5cadmin",
            "/pkg\\..\\admin",
            "admin/accounts",
        ] {
            assert!(non_canonical(path).is_some(), "{path}");
        }
    }
}
