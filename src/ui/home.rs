//! The home page: what adamviz does, the governed path a plot takes to become Verified, and
//! the signed-in person's work list (what waits for them, by section, with counts).

use leptos::prelude::*;
use leptos_meta::Title;

use super::{components::Loaded, history::page_href, review::utc_time, revisions::StatusBadge};
use crate::api::{auth::password_notices, work::my_work_list};
use adamviz_model::{
    revision::HistoryQuery,
    work_list::{WorkList, WorkSection},
};

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

/// Home page: the work list first, then an expandable description of the governed flow.
#[component]
pub fn HomePage() -> impl IntoView {
    let work = Resource::new(|| (), |_| my_work_list());
    let notices = Resource::new(|| (), |_| password_notices());
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
        <Suspense fallback=|| ()>
            {move || notices.get().and_then(Result::ok).map(|notices| view! { <PasswordNoticesView notices /> })}
        </Suspense>
        <section class="section work-list" aria-labelledby="work-heading">
            <h2 id="work-heading">"My work"</h2>
            <Loaded resource=work loading="Loading your work list…" let:list>
                <WorkListView list />
            </Loaded>
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

/// The changes of the account's password since its previous login when someone else made one:
/// an administrator's reset the owner did not ask for is how a takeover would begin.
#[component]
fn PasswordNoticesView(
    notices: Vec<adamviz_model::account::PasswordChangeNotice>,
) -> impl IntoView {
    (!notices.is_empty()).then(|| {
        view! {
            <section class="section password-notices" role="alert" aria-labelledby="password-notices-heading">
                <h2 id="password-notices-heading">"Your password was set by someone else"</h2>
                <p>"Recently (since your previous login, and in the last 30 days), your password was changed:"</p>
                <ul>
                    {notices.into_iter().map(|notice| {
                        let from = notice.remote_addr.map(|a| format!(" from {a}")).unwrap_or_default();
                        let who = if notice.by_owner {
                            format!("in your name (logged in as you){from}")
                        } else {
                            format!("by {}{from}", notice.by)
                        };
                        view! { <li>{format!("on {}: {who}", utc_time(&notice.at))}</li> }
                    }).collect_view()}
                </ul>
                <p>"If you did not ask for this, tell your quality assurance contact: signatures made with your account since then are listed for review by "<code>"adamviz ledger verify"</code>"."</p>
            </section>
        }
    })
}

/// The sections of a work list, each a heading with its count, what it holds and its rows.
#[component]
fn WorkListView(list: WorkList) -> impl IntoView {
    let summary = list
        .sections
        .iter()
        .map(|s| format!("{} {}", s.count, s.kind.heading().to_lowercase()))
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <p role="status">{format!("{}: {summary}.", list.viewer)}</p>
        {list.sections.into_iter().map(|section| view! { <WorkSectionView section viewer=list.viewer.clone() /> }).collect_view()}
    }
}

#[component]
fn WorkSectionView(section: WorkSection, viewer: String) -> impl IntoView {
    let key = section.kind.key();
    let heading_id = format!("work-{key}");
    let list_label = heading_id.clone();
    let shown = section.rows.len();
    let count = section.count;
    view! {
        <section class="work-section" aria-labelledby=heading_id.clone()>
            <h3 id=heading_id.clone()>{format!("{} ({count})", section.kind.heading())}</h3>
            <p class="note">{section.kind.description()}</p>
            {if section.rows.is_empty() {
                view! { <p>"Nothing here."</p> }.into_any()
            } else {
                view! {
                    <ul aria-labelledby=list_label>
                        {section.rows.into_iter().map(|row| {
                            let id = row.id.clone();
                            view! {
                                <li>
                                    <a href=format!("/revisions/{id}")>{format!("{} — {}", row.title, row.dataset_name)}</a>
                                    " "
                                    <StatusBadge status=row.status />
                                    {format!(" by {}, made {}", row.author, utc_time(&row.created_at))}
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
            {(count > shown).then(|| {
                let more = format!("{} more", count - shown);
                let history = section.kind.history_filter().map(|(status, mine)| {
                    let query = HistoryQuery {
                        status: Some(status.to_owned()),
                        author: mine.then(|| viewer.clone()),
                        ..HistoryQuery::default()
                    };
                    page_href(&query, 1)
                });
                match history {
                    Some(href) => view! { <p><a href=href>{format!("{more} in the history")}</a></p> }.into_any(),
                    None => view! { <p>{more}</p> }.into_any(),
                }
            })}
        </section>
    }
}
