//! The Revisions section: plot revisions and their lifecycle (Draft, Verified, Approved).

use leptos::prelude::*;
use leptos_meta::Title;

use super::not_found::EmptySection;

/// Lists plot revisions; there are none until governed execution exists.
#[component]
pub fn RevisionsPage() -> impl IntoView {
    view! {
        <Title text="Revisions" />
        <EmptySection
            heading="Revisions"
            purpose="Every plot revision with its status (Draft, Verified, Approved), who made it and the hashes that bind it."
            empty="No revision has been made yet."
        />
    }
}
