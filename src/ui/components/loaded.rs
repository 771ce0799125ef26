//! A server read as a page shows it, in one place: a status line while it loads, an alert that
//! says why when it failed, and the caller's view of the value once it arrived.

use std::fmt::Display;

use leptos::prelude::*;
use leptos_meta::Title;

/// Shows `resource`: `loading` (a `role="status"` line) until it answers, then the children
/// with the value, or the error as a `role="alert"` paragraph. When the read is the whole page
/// (`page` names it), the error comes under the page's title and heading, with `back` (a link's
/// address and text) below it.
///
/// ```ignore
/// <Loaded resource=detail loading="Loading the revision…" page="Revision" let:found>
///     <RevisionView detail=found />
/// </Loaded>
/// ```
#[component]
pub fn Loaded<T, E, F, V>(
    /// The read.
    resource: Resource<Result<T, E>>,
    /// What the status line says while the read is under way.
    loading: &'static str,
    /// The page's name, when the read is the whole page.
    #[prop(optional)]
    page: Option<&'static str>,
    /// A way back from a page whose read failed: its address and its text.
    #[prop(optional)]
    back: Option<(&'static str, &'static str)>,
    /// The view of the value.
    children: F,
) -> impl IntoView
where
    T: Clone + Send + Sync + 'static,
    E: Display + Clone + Send + Sync + 'static,
    F: Fn(T) -> V + Send + Sync + Clone + 'static,
    V: IntoView + 'static,
{
    view! {
        <Suspense fallback=move || view! { <p role="status">{loading}</p> }>
            {
                let children = children.clone();
                move || {
                    let children = children.clone();
                    Suspend::new(async move {
                        match resource.await {
                            Ok(value) => children(value).into_any(),
                            Err(error) => failed(error.to_string(), page, back).into_any(),
                        }
                    })
                }
            }
        </Suspense>
    }
}

/// The error, alone or as the whole page.
fn failed(
    message: String,
    page: Option<&'static str>,
    back: Option<(&'static str, &'static str)>,
) -> impl IntoView {
    let alert = view! { <p class="form-error" role="alert">{message}</p> };
    match page {
        None => alert.into_any(),
        Some(name) => view! {
            <Title text=name />
            <section class="section">
                <h1>{name}</h1>
                {alert}
                {back.map(|(href, text)| view! { <p><a href=href>{text}</a></p> })}
            </section>
        }
        .into_any(),
    }
}
