//! The HTML document (`shell`, rendered on the server only) and the application router (`App`):
//! this file is the one list of pages. Pages themselves live in `ui/`.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    path, SsrMode,
};

use crate::ui::{
    admin::AccountsPage,
    auth::{ChangePasswordPage, LoginPage, SetupPage},
    datasets::{DatasetPage, DatasetsPage},
    drafts::DraftPage,
    evidence::EvidencePage,
    history::{ComparePage, HistoryPageView},
    home::HomePage,
    layout::Layout,
    not_found::NotFoundPage,
    revisions::RevisionPage,
    sets::{SetDraftPage, SetPage},
};

/// The Content-Security-Policy of a page whose scripts carry `nonce` (responses that are not
/// pages get a stricter one from the server's security headers).
pub fn page_csp(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// The HTML document around the application, rendered once per request on the server. Its
/// Content-Security-Policy allows only scripts carrying this response's nonce (the hydration
/// script) and the site's own files.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let (Some(nonce), Some(response)) = (
        leptos::nonce::use_nonce(),
        use_context::<leptos_axum::ResponseOptions>(),
    ) {
        if let Ok(policy) = axum::http::HeaderValue::from_str(&page_csp(&nonce.to_string())) {
            response.insert_header(axum::http::header::CONTENT_SECURITY_POLICY, policy);
        }
    }
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The application: layout around the routed pages. Every page streams in order: what a page
/// waits for (the header's account, a page's data) is in the HTML where it belongs, so pages
/// and their forms work before the wasm arrives, and without it.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();

    view! {
        <Stylesheet id="leptos" href="/pkg/adamviz.css" />
        <Title formatter=|page: String| format!("{page} · adamviz") />
        <Router>
            <Layout>
                <Routes fallback=NotFoundPage>
                    <Route path=path!("") view=HomePage ssr=SsrMode::InOrder />
                    <Route path=path!("/datasets") view=DatasetsPage ssr=SsrMode::InOrder />
                    <Route path=path!("/datasets/:content_hash") view=DatasetPage ssr=SsrMode::InOrder />
                    <Route path=path!("/datasets/:content_hash/draft") view=DraftPage ssr=SsrMode::InOrder />
                    <Route path=path!("/datasets/:content_hash/set") view=SetDraftPage ssr=SsrMode::InOrder />
                    <Route path=path!("/sets/:id") view=SetPage ssr=SsrMode::InOrder />
                    <Route path=path!("/revisions") view=HistoryPageView ssr=SsrMode::InOrder />
                    <Route path=path!("/revisions/compare") view=ComparePage ssr=SsrMode::InOrder />
                    <Route path=path!("/revisions/:id") view=RevisionPage ssr=SsrMode::InOrder />
                    <Route path=path!("/evidence") view=EvidencePage ssr=SsrMode::InOrder />
                    <Route path=path!("/login") view=LoginPage ssr=SsrMode::InOrder />
                    <Route path=path!("/setup") view=SetupPage ssr=SsrMode::InOrder />
                    <Route path=path!("/admin/accounts") view=AccountsPage ssr=SsrMode::InOrder />
                    <Route path=path!("/account/password") view=ChangePasswordPage ssr=SsrMode::InOrder />
                </Routes>
            </Layout>
        </Router>
    }
}
