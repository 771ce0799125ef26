//! The Evidence section: evidence bundles to download and check offline.

use leptos::prelude::*;
use leptos_meta::Title;

use super::not_found::EmptySection;

/// Lists evidence bundles; there are none until a revision has been verified.
#[component]
pub fn EvidencePage() -> impl IntoView {
    view! {
        <Title text="Evidence" />
        <EmptySection
            heading="Evidence"
            purpose="Evidence bundles: the records, artifacts and manifest of a revision, to download and check offline with `adamviz evidence validate`."
            empty="No evidence has been recorded yet."
        />
    }
}
