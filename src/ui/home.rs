//! The landing page: what adamviz does and the governed path a plot takes to become Verified.

use leptos::prelude::*;
use leptos_meta::Title;

/// The steps of the governed flow, as a reviewer reads them (DESIGN.md §1).
const GOVERNED_STEPS: [(&str, &str); 8] = [
    (
        "Upload",
        "CSV, SAS XPORT or CDISC Dataset-JSON; the raw bytes are stored content-addressed and hashed first.",
    ),
    (
        "Profile",
        "Columns, SAS labels, candidate roles and the data facts a reviewer must see.",
    ),
    (
        "Question",
        "Your words, kept verbatim, matched to a draft plot spec without any network model.",
    ),
    (
        "Confirm",
        "Parameter, filters, treatment and visit order, value, scale, unit, low-N policy.",
    ),
    (
        "Compile",
        "The confirmed spec becomes a deterministic, standalone R script.",
    ),
    (
        "Run",
        "A fresh, sandboxed R process renders the boxplot and the statistics.",
    ),
    (
        "Verify",
        "Named checks, including an independent recomputation of every statistic.",
    ),
    (
        "Record",
        "Hash-chained, schema-checked evidence you can download and validate offline.",
    ),
];

/// Home page with an expandable description of the governed flow.
#[component]
pub fn HomePage() -> impl IntoView {
    let (steps_shown, set_steps_shown) = signal(false);
    let toggle_label = move || {
        if steps_shown.get() {
            "Hide the governed path"
        } else {
            "Show the governed path"
        }
    };

    view! {
        <Title text="Home" />
        <section class="hero">
            <h1>"Governed boxplots from ADaM data"</h1>
            <p class="lede">
                "Upload an ADaM dataset, ask a question in words, confirm what the plot shows, and get a boxplot by visit and treatment whose every step is recorded as tamper-evident evidence."
            </p>
            <button
                type="button"
                class="button"
                id="toggle-steps"
                aria-expanded=move || steps_shown.get().to_string()
                aria-controls="governed-steps"
                on:click=move |_| set_steps_shown.update(|shown| *shown = !*shown)
            >
                {toggle_label}
            </button>
        </section>
        <ol id="governed-steps" class="steps" hidden=move || !steps_shown.get()>
            {GOVERNED_STEPS
                .iter()
                .map(|(name, what)| {
                    view! {
                        <li>
                            <strong>{*name}</strong>
                            " — "
                            {*what}
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}
