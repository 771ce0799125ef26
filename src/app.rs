//! The HTML document (`shell`, rendered on the server only) and the application router (`App`):
//! this file is the one list of pages. Pages themselves live in `ui/`.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    path,
};

use crate::ui::{
    datasets::DatasetsPage, evidence::EvidencePage, home::HomePage, layout::Layout,
    not_found::NotFoundPage, revisions::RevisionsPage,
};

/// The HTML document around the application, rendered once per request on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
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

/// The application: layout around the routed pages.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();

    view! {
        <Stylesheet id="leptos" href="/pkg/adamviz.css" />
        <Title formatter=|page: String| format!("{page} · adamviz") />
        <Router>
            <Layout>
                <Routes fallback=NotFoundPage>
                    <Route path=path!("") view=HomePage />
                    <Route path=path!("/datasets") view=DatasetsPage />
                    <Route path=path!("/revisions") view=RevisionsPage />
                    <Route path=path!("/evidence") view=EvidencePage />
                </Routes>
            </Layout>
        </Router>
    }
}
