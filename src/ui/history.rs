//! The revision history (newest first; filters by status, dataset, author and data cut; pages; the
//! lineage; two revisions picked to compare) and the comparison page (the answers that differ,
//! the statistics per cell with their differences, the two images side by side). Both pages are
//! functions of their address, so the filters, paging and Compare work without wasm.

use crate::ui::components::Loaded;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use super::{review::utc_time, revisions::StatusBadge};
use crate::api::revisions::{compare_revisions, revision_history};
use adamviz_model::revision::{
    CompareSide, Comparison, HistoryPage, HistoryQuery, HistoryRow, RevisionStatus,
};

const STATUSES: [RevisionStatus; 4] = [
    RevisionStatus::Draft,
    RevisionStatus::ExperimentalDraft,
    RevisionStatus::Verified,
    RevisionStatus::Approved,
];

/// The history's data-cut filters: (value, words).
const DATA_CUT_FILTERS: [(&str, &str); 2] = [
    ("revised_for_newer_cut", "Revised for a newer data cut"),
    ("approved_on_older_cut", "Approved on an older cut"),
];

fn short(id: &str) -> String {
    id.chars().take(16).collect()
}

/// The address of history page `page` with `query`'s filters.
pub(super) fn page_href(query: &HistoryQuery, page: usize) -> String {
    let mut parts = Vec::new();
    for (name, value) in [
        ("status", &query.status),
        ("dataset", &query.dataset),
        ("author", &query.author),
        ("cut", &query.cut),
    ] {
        if let Some(value) = value {
            parts.push(format!("{name}={}", urlencoding(value)));
        }
    }
    parts.push(format!("page={page}"));
    format!("/revisions?{}", parts.join("&"))
}

/// Percent-encodes what is not a letter, digit or `-._~`.
fn urlencoding(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The history of every revision.
#[component]
pub fn HistoryPageView() -> impl IntoView {
    let query = use_query_map();
    let history = Resource::new(
        move || {
            let map = query.read();
            let text = |name: &str| map.get(name).filter(|v| !v.is_empty());
            HistoryQuery {
                status: text("status"),
                dataset: text("dataset"),
                author: text("author"),
                cut: text("cut"),
                page: text("page").and_then(|p| p.parse().ok()),
            }
        },
        revision_history,
    );
    view! {
        <Title text="Revisions" />
        <section class="section history">
            <h1>"Revisions"</h1>
            <p class="purpose">"The history of every plot revision, newest first: status (Draft, Experimental/Draft, Verified, Approved), who made and who approved it, and which revision it revises."</p>
            <Loaded resource=history loading="Loading revisions…" let:page>
                <History page />
            </Loaded>
        </section>
    }
}

#[component]
fn History(page: HistoryPage) -> impl IntoView {
    let query = page.query.clone();
    let rows = page.rows.clone();
    view! {
        <HistoryFilters page=page.clone() />
        <p role="status">{format!("{} revisions; page {} of {}", page.total, page.page, page.pages)}</p>
        {if rows.is_empty() {
            view! { <p>"No revision matches: open a dataset, ask a question and confirm the draft, or change the filters."</p> }.into_any()
        } else {
            view! { <HistoryTable rows=rows.clone() /> }.into_any()
        }}
        <nav aria-label="Pages" class="pager">
            {(page.page > 1).then(|| view! { <a href=page_href(&query, page.page - 1) rel="prev">"Previous page"</a> })}
            {(page.page < page.pages).then(|| view! { <a href=page_href(&query, page.page + 1) rel="next">"Next page"</a> })}
        </nav>
        <CompareForm rows />
    }
}

/// The filters (status, dataset, author) as a GET form, showing those in force.
#[component]
fn HistoryFilters(page: HistoryPage) -> impl IntoView {
    let query = page.query.clone();
    let selected = |current: &Option<String>, value: &str| current.as_deref() == Some(value);
    view! {
        <form method="get" action="/revisions" class="filters" aria-label="Filter revisions">
            <div class="field">
                <label for="filter-status">"Status"</label>
                <select id="filter-status" name="status">
                    <option value="">"All statuses"</option>
                    {STATUSES.iter().map(|s| view! {
                        <option value=s.as_str() selected=selected(&query.status, s.as_str())>{s.label()}</option>
                    }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="filter-dataset">"Dataset"</label>
                <select id="filter-dataset" name="dataset">
                    <option value="">"All datasets"</option>
                    {page.datasets.iter().map(|(hash, name)| view! {
                        <option value=hash.clone() selected=selected(&query.dataset, hash)>{format!("{name} ({})", hash.chars().take(8).collect::<String>())}</option>
                    }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="filter-author">"Author"</label>
                <select id="filter-author" name="author">
                    <option value="">"All authors"</option>
                    {page.authors.iter().map(|a| view! {
                        <option value=a.clone() selected=selected(&query.author, a)>{a.clone()}</option>
                    }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="filter-cut">"Data cut"</label>
                <select id="filter-cut" name="cut">
                    <option value="">"Any data cut"</option>
                    {DATA_CUT_FILTERS.iter().map(|(value, words)| view! {
                        <option value=*value selected=selected(&query.cut, value)>{*words}</option>
                    }).collect_view()}
                </select>
            </div>
            <button type="submit">"Apply filters"</button>
        </form>
    }
}

/// The page's revisions, newest first.
#[component]
fn HistoryTable(rows: Vec<HistoryRow>) -> impl IntoView {
    view! {
                <div class="table-scroll" tabindex="0" role="region" aria-labelledby="history-caption">
                <table class="data-table">
                    <caption id="history-caption">"Revisions, newest first"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Title"</th>
                            <th scope="col">"Status"</th>
                            <th scope="col">"Version"</th>
                            <th scope="col">"Dataset"</th>
                            <th scope="col">"Parameter"</th>
                            <th scope="col">"Question"</th>
                            <th scope="col">"Author"</th>
                            <th scope="col">"Approver"</th>
                            <th scope="col">"Created"</th>
                            <th scope="col">"Revises"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows.iter().map(|r| view! {
                            <tr>
                                <th scope="row"><a href=format!("/revisions/{}", r.id)>{if r.title.is_empty() { short(&r.id) } else { r.title.clone() }}</a></th>
                                <td><StatusBadge status=r.status /></td>
                                <td>{r.version}</td>
                                <td>{r.dataset_name.clone()}</td>
                                <td>{r.parameter.clone()}</td>
                                <td>{r.question.clone()}</td>
                                <td>{r.author.clone()}</td>
                                <td>{r.approver.clone().unwrap_or_else(|| "—".to_owned())}</td>
                                <td>{utc_time(&r.created_at)}</td>
                                <td>{r.parent.clone().map(|p| view! { <a href=format!("/revisions/{p}")><code>{short(&p)}</code></a> })}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
    }
}

/// Compare two of the page's revisions (the newest two proposed), when there are two.
#[component]
fn CompareForm(rows: Vec<HistoryRow>) -> impl IntoView {
    (rows.len() >= 2).then(|| view! {
            <form method="get" action="/revisions/compare" class="compare-form" aria-label="Compare two revisions">
                <h2>"Compare two revisions"</h2>
                <div class="field">
                    <label for="compare-a">"First revision"</label>
                    <select id="compare-a" name="a">
                        {rows.iter().enumerate().map(|(i, r)| view! {
                            <option value=r.id.clone() selected=i == 1>{format!("{} · {} v{}", short(&r.id), r.title, r.version)}</option>
                        }).collect_view()}
                    </select>
                </div>
                <div class="field">
                    <label for="compare-b">"Second revision"</label>
                    <select id="compare-b" name="b">
                        {rows.iter().enumerate().map(|(i, r)| view! {
                            <option value=r.id.clone() selected=i == 0>{format!("{} · {} v{}", short(&r.id), r.title, r.version)}</option>
                        }).collect_view()}
                    </select>
                </div>
                <button type="submit">"Compare"</button>
            </form>
    })
}

fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.4}"))
}

fn difference(pair: (Option<f64>, Option<f64>)) -> String {
    match pair {
        (Some(a), Some(b)) => format!("{:+.4}", b - a),
        _ => "–".to_owned(),
    }
}

fn count(value: Option<usize>) -> String {
    value.map_or_else(|| "–".to_owned(), |n| n.to_string())
}

fn side_view(side: CompareSide, label: &'static str) -> impl IntoView {
    let image = side.plot_sha256.clone().map(|hash| {
        view! {
            <img
                src=format!("/api/revisions/{}/files/plot.png?h={hash}", side.id)
                alt=format!("{label}: the verified plot of {}", side.id)
                width="1200"
                height="840"
            />
        }
    });
    view! {
        <figure class="compare-side">
            {image.map(|img| img.into_any()).unwrap_or_else(|| view! { <p>"Not verified yet: no image."</p> }.into_any())}
            <figcaption>
                {format!("{label}: ")}
                <a href=format!("/revisions/{}", side.id)>{side.title.clone()}</a>
                " " <StatusBadge status=side.status /> {format!(" version {}", side.version)}
            </figcaption>
        </figure>
    }
}

/// Two revisions side by side.
#[component]
pub fn ComparePage() -> impl IntoView {
    let query = use_query_map();
    let comparison = Resource::new(
        move || {
            let map = query.read();
            (
                map.get("a").unwrap_or_default(),
                map.get("b").unwrap_or_default(),
            )
        },
        |(a, b)| compare_revisions(a, b),
    );
    view! {
        <Title text="Compare revisions" />
        <section class="section compare">
            <p class="breadcrumb"><a href="/revisions">"← Revisions"</a></p>
            <h1>"Compare revisions"</h1>
            <Loaded resource=comparison loading="Loading both revisions…" let:comparison>
                <CompareView comparison />
            </Loaded>
        </section>
    }
}

#[component]
fn CompareView(comparison: Comparison) -> impl IntoView {
    view! {
        <h2 id="answers-heading">"Answers that differ"</h2>
        {if comparison.answers.is_empty() {
            view! { <p>"The two revisions have the same answers."</p> }.into_any()
        } else {
            view! {
                <table class="data-table" aria-labelledby="answers-heading">
                    <thead>
                        <tr>
                            <th scope="col">"Question"</th>
                            <th scope="col">{format!("First ({})", short(&comparison.a.id))}</th>
                            <th scope="col">{format!("Second ({})", short(&comparison.b.id))}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {comparison.answers.iter().map(|d| view! {
                            <tr>
                                <th scope="row">{d.question.clone()}</th>
                                <td>{d.a.clone()}</td>
                                <td>{d.b.clone()}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}
        <h2>"Images"</h2>
        <div class="compare-images">
            {side_view(comparison.a.clone(), "First")}
            {side_view(comparison.b.clone(), "Second")}
        </div>
        <h2 id="cells-heading">"Statistics per cell"</h2>
        <p role="status" class="cell-changes">{comparison.describe_changes()}</p>
        {if comparison.cells.is_empty() {
            view! { <p>"Neither revision has verified statistics yet."</p> }.into_any()
        } else {
            view! {
                <div class="table-scroll" tabindex="0" role="region" aria-labelledby="cells-heading">
                <table class="data-table statistics">
                    <caption>"First, second and the difference (second − first); – where a revision has no such cell"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Change"</th>
                            <th scope="col">"Treatment"</th>
                            <th scope="col">"Visit"</th>
                            <th scope="col">"n, first"</th>
                            <th scope="col">"n, second"</th>
                            <th scope="col">"Mean, first"</th>
                            <th scope="col">"Mean, second"</th>
                            <th scope="col">"Mean difference"</th>
                            <th scope="col">"Median, first"</th>
                            <th scope="col">"Median, second"</th>
                            <th scope="col">"Median difference"</th>
                            <th scope="col">"Q1, first"</th>
                            <th scope="col">"Q1, second"</th>
                            <th scope="col">"Q3, first"</th>
                            <th scope="col">"Q3, second"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {comparison.cells.iter().map(|c| view! {
                            <tr class=format!("cell-{}", c.change.words().replace(' ', "-"))>
                                <td>{c.change.words()}</td>
                                <td>{c.treatment.clone()}</td>
                                <td>{c.visit.clone()}</td>
                                <td>{count(c.n.0)}</td>
                                <td>{count(c.n.1)}</td>
                                <td>{number(c.mean.0)}</td>
                                <td>{number(c.mean.1)}</td>
                                <td>{difference(c.mean)}</td>
                                <td>{number(c.median.0)}</td>
                                <td>{number(c.median.1)}</td>
                                <td>{difference(c.median)}</td>
                                <td>{number(c.q1.0)}</td>
                                <td>{number(c.q1.1)}</td>
                                <td>{number(c.q3.0)}</td>
                                <td>{number(c.q3.1)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
            }.into_any()
        }}
    }
}
