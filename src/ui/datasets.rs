//! The Datasets section: the uploaded ADaM datasets. Uploading arrives with the data-in work.

use leptos::prelude::*;
use leptos_meta::Title;

use super::not_found::EmptySection;

/// Lists uploaded datasets; there are none until the upload capability exists.
#[component]
pub fn DatasetsPage() -> impl IntoView {
    view! {
        <Title text="Datasets" />
        <EmptySection
            heading="Datasets"
            purpose="Uploaded ADaM datasets (CSV or SAS XPORT) with their content hash, classification and profile warnings."
            empty="No dataset has been uploaded yet."
        />
    }
}
