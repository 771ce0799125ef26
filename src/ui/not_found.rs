//! Fallback page for unknown paths, and the shared empty-section block.

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

/// A section heading, what the section is for, and its empty state.
#[component]
pub fn EmptySection(
    heading: &'static str,
    purpose: &'static str,
    empty: &'static str,
) -> impl IntoView {
    view! {
        <section class="section">
            <h1>{heading}</h1>
            <p class="purpose">{purpose}</p>
            <p class="empty-state" role="status">{empty}</p>
        </section>
    }
}
