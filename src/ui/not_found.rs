//! Fallback page for unknown paths.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::A;

/// Shown for any path the router does not know. On the server it also sets status 404.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found" />
        <section class="section">
            <h1>"Page not found"</h1>
            <p>"There is no page at this address. " <A href="/">"Go to the home page"</A> "."</p>
        </section>
    }
}
