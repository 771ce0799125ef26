//! One revision's page (the history and the comparison are `history.rs`): status
//! badge and version, question and author, lineage, signatures and reproductions, the verified PNG (the preview beside it until then),
//! the run with its live status, the statistics, the eleven checks, downloads, the script, the
//! environment and the evidence records in ledger order.

use crate::ui::components::Loaded;
use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use super::{
    preview::PreviewPlot,
    review::{Lineage, Reproductions, Signatures},
};
use crate::api::revisions::{get_revision, RunRevision};
use adamviz_model::{
    revision::{ArtifactView, CheckView, EvidenceView, RevisionDetail, RevisionStatus, RunStatus},
    statistics::CellStatistics,
};

/// The status badge: a word, never colour alone.
#[component]
pub fn StatusBadge(status: RevisionStatus) -> impl IntoView {
    let class = format!("badge badge-{}", status.as_str());
    view! { <span class=class>{status.label()}</span> }
}

/// One revision's page.
#[component]
pub fn RevisionPage() -> impl IntoView {
    let params = use_params_map();
    let detail = Resource::new(
        move || params.read().get("id").unwrap_or_default(),
        get_revision,
    );
    view! {
        <Loaded resource=detail loading="Loading the revision…" page="Revision" let:found>
            <RevisionView detail=found on_finished=move || detail.refetch() />
        </Loaded>
    }
}

fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.4}"))
}

/// Follows the run's status through server-sent events (with wasm) and calls `on_finished`
/// when a moving status settles.
fn follow_status(id: String, status: RwSignal<RunStatus>, on_finished: impl Fn() + 'static) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::{closure::Closure, JsCast};
        let Ok(source) = web_sys::EventSource::new(&format!("/api/revisions/{id}/events")) else {
            return;
        };
        let on_status = {
            let source = source.clone();
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
                let Some(text) = event.data().as_string() else {
                    return;
                };
                let Ok(next) = serde_json::from_str::<RunStatus>(&text) else {
                    return;
                };
                let was_moving = status.get_untracked().is_moving();
                let settled = !next.is_moving();
                status.set(next);
                if settled {
                    source.close();
                    if was_moving {
                        on_finished();
                    }
                }
            })
        };
        let _ =
            source.add_event_listener_with_callback("status", on_status.as_ref().unchecked_ref());
        // The stream closes itself once the status settles. (Not on the effect's cleanup: the
        // effect re-runs with every status it receives.)
        on_status.forget();
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (id, status, on_finished);
    }
}

#[component]
fn RevisionView(
    detail: RevisionDetail,
    on_finished: impl Fn() + Send + Sync + 'static,
) -> impl IntoView {
    let id = detail.summary.id.clone();
    let status = RwSignal::new(detail.run.clone());
    let refetch: std::sync::Arc<dyn Fn() + Send + Sync> = std::sync::Arc::new(on_finished);
    {
        let id = id.clone();
        let on_finished = std::sync::Arc::clone(&refetch);
        // One event stream while the status moves; a new one when a run starts again.
        Effect::new(move |following: Option<bool>| {
            let moving = status.get().is_moving();
            if moving && following != Some(true) {
                let done = std::sync::Arc::clone(&on_finished);
                follow_status(id.clone(), status, move || done());
                return true;
            }
            following == Some(true) && moving
        });
    }
    let summary = detail.summary.clone();
    let verified = matches!(
        summary.status,
        RevisionStatus::Verified | RevisionStatus::Approved
    );
    let plot = detail
        .artifacts
        .iter()
        .find(|a| a.name == "plot.png")
        .map(|a| format!("/api/revisions/{id}/files/plot.png?h={}", a.sha256));
    view! {
        <Title text=summary.title.clone() />
        <section class="section revision">
            <p class="breadcrumb"><a href="/revisions">"← Revisions"</a></p>
            <h1>{summary.title.clone()}</h1>
            <p class="status-line">
                <StatusBadge status=summary.status />
                {format!(" version {} · ", summary.version)}
                <code>{summary.id.clone()}</code>
            </p>
            <dl class="facts">
                <dt>"Question"</dt><dd>{summary.question.clone()}</dd>
                <dt>"Author"</dt><dd>{summary.author.clone()}</dd>
                <dt>"Created"</dt><dd>{summary.created_at.clone()}</dd>
                <dt>"Spec hash"</dt><dd><code>{summary.spec_hash.clone()}</code></dd>
                <dt>"Dataset"</dt><dd><a href=format!("/datasets/{}", detail.dataset_hash)><code>{detail.dataset_hash.chars().take(12).collect::<String>()}</code></a></dd>
            </dl>
            <Lineage detail=detail.clone() />
            <RunSection detail=detail.clone() status />
            <div class="revision-plots">
                {plot.map(|src| view! {
                    <figure class="verified-plot">
                        <img src=src alt=format!("Verified boxplot: {}", summary.title) width="1200" height="840" />
                        <figcaption>"The verified plot, as R drew it (re-hashed when served)."</figcaption>
                    </figure>
                })}
                {(!verified).then(|| detail.preview.clone().map(|preview| view! { <PreviewPlot preview /> }))}
            </div>
            <StatisticsTable cells=detail.statistics.clone() />
            <CheckList checks=detail.checks.clone() />
            <Downloads id=id.clone() artifacts=detail.artifacts.clone() verified />
            <div class="review-columns">
                <Signatures detail=detail.clone() on_signed=std::sync::Arc::clone(&refetch) />
                <Reproductions detail=detail.clone() on_reproduced=std::sync::Arc::clone(&refetch) />
            </div>
            <h2>"R script"</h2>
            <pre class="script" tabindex="0" aria-label="The R script"><code>{detail.script.clone()}</code></pre>
            {detail.environment.clone().map(|environment| view! {
                <h2>"Environment"</h2>
                <details>
                    <summary>"R, packages and fonts the run used"</summary>
                    <pre tabindex="0"><code>{environment}</code></pre>
                </details>
            })}
            <EvidenceTable evidence=detail.evidence.clone() />
        </section>
    }
}

/// The governed execution: its live status, and Run (or Retry) for an author of a Draft.
#[component]
fn RunSection(detail: RevisionDetail, status: RwSignal<RunStatus>) -> impl IntoView {
    let id = detail.summary.id.clone();
    let run = ServerAction::<RunRevision>::new();
    let tries = RwSignal::new(0u32);
    // A fresh key per attempt: the same key joins the run it started (double click), a retry
    // after a failure uses the next one.
    let base_key = detail.run_key.clone();
    let key = move || format!("{base_key}-{}", tries.get());
    Effect::new(move |_| {
        if let Some(Ok(_)) = run.value().get() {
            tries.update(|t| *t += 1);
            status.set(RunStatus::Queued {
                attempt_id: String::new(),
                position: 1,
                requeued_because: None,
            });
        }
    });
    let run_error = move || {
        run.value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    let failed = matches!(detail.run, RunStatus::Failed { .. });
    let refresh_href = format!("/revisions/{id}");
    view! {
        <section aria-labelledby="run-heading" class="run">
            <h2 id="run-heading">"Governed execution"</h2>
            <p role="status" class="run-status" aria-live="polite">
                <strong>"Status: "</strong>{move || status.get().describe()}
            </p>
            <noscript>
                <p><a href=refresh_href.clone()>"Refresh the status"</a></p>
            </noscript>
            {move || run_error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
            {detail.can_run.then(|| {
                let id = id.clone();
                view! {
                    <ActionForm action=run>
                        <input type="hidden" name="revision_id" value=id />
                        <input type="hidden" name="idempotency_key" value=key />
                        <button
                            type="submit"
                            class="primary"
                            disabled=move || status.get().is_moving()
                        >
                            {move || if failed || matches!(status.get(), RunStatus::Failed { .. }) {
                                "Retry governed execution"
                            } else {
                                "Run governed execution"
                            }}
                        </button>
                    </ActionForm>
                }
            })}
        </section>
    }
}

/// The cell statistics R reported (nothing before there are any).
#[component]
fn StatisticsTable(cells: Vec<CellStatistics>) -> impl IntoView {
    (!cells.is_empty()).then(|| view! {
        <h2 id="statistics-heading">"Statistics"</h2>
        <div class="table-scroll" tabindex="0" role="region" aria-labelledby="statistics-heading">
        <table class="data-table statistics">
            <caption>"Per treatment and visit, as R reported them (and adamviz recomputed them)"</caption>
            <thead>
                <tr>
                    <th scope="col">"Treatment"</th>
                    <th scope="col">"Visit"</th>
                    <th scope="col">"n"</th>
                    <th scope="col">"Subjects"</th>
                    <th scope="col">"Mean"</th>
                    <th scope="col">"SD"</th>
                    <th scope="col">"Median"</th>
                    <th scope="col">"Q1"</th>
                    <th scope="col">"Q3"</th>
                    <th scope="col">"Min"</th>
                    <th scope="col">"Max"</th>
                    <th scope="col">"Low N"</th>
                </tr>
            </thead>
            <tbody>
                {cells.iter().map(|c| view! {
                    <tr>
                        <td>{c.treatment.clone()}</td>
                        <td>{c.visit.clone()}</td>
                        <td>{c.n}</td>
                        <td>{c.n_subjects}</td>
                        <td>{number(c.mean)}</td>
                        <td>{number(c.sd)}</td>
                        <td>{number(c.median)}</td>
                        <td>{number(c.q1)}</td>
                        <td>{number(c.q3)}</td>
                        <td>{number(c.min)}</td>
                        <td>{number(c.max)}</td>
                        <td>{if c.low_n { "yes" } else { "no" }}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        </div>
    })
}

/// The named checks of the latest verification, each Passed or Failed in words.
#[component]
fn CheckList(checks: Vec<CheckView>) -> impl IntoView {
    (!checks.is_empty()).then(|| {
        view! {
            <h2 id="checks-heading">"Checks"</h2>
            <ul class="checks" aria-labelledby="checks-heading">
                {checks.iter().map(|c| view! {
                    <li class=if c.passed { "check passed" } else { "check failed" }>
                        <strong>{if c.passed { "Passed" } else { "Failed" }}</strong>
                        " " <code>{c.name.clone()}</code>
                        {c.reason.clone().map(|r| view! { <span>{format!(": {r}")}</span> })}
                    </li>
                }).collect_view()}
            </ul>
        }
    })
}

/// The artifacts to download, and the evidence bundle once the revision is Verified.
#[component]
fn Downloads(id: String, artifacts: Vec<ArtifactView>, verified: bool) -> impl IntoView {
    view! {
        <h2 id="downloads-heading">"Downloads"</h2>
        <ul class="downloads" aria-labelledby="downloads-heading">
            {artifacts.iter().map(|a| view! {
                <li>
                    <a href=format!("/api/revisions/{id}/files/{}?download", a.name) download=a.name.clone()>
                        {format!("Download {}", a.name)}
                    </a>
                    {format!(" ({} bytes, SHA-256 ", a.size)}<code>{a.sha256.chars().take(12).collect::<String>()}</code>")"
                    {artifact_purpose(&a.name).map(|purpose| format!(" — {purpose}"))}
                </li>
            }).collect_view()}
        </ul>
        {verified.then(|| view! {
            <p>
                <a href=format!("/api/revisions/{id}/evidence") download=format!("evidence-{id}.zip")>"Download evidence"</a>
                " — one zip with the records, artifacts, schemas and the manifest signed by this installation's key."
            </p>
        })}
        <p class="note">"With script.R and snapshot.csv in one directory, " <code>"Rscript script.R snapshot.csv out/"</code> " draws the same plot and statistics on your machine."</p>
    }
}

/// What an artifact is for, in words, where its name does not say it.
fn artifact_purpose(name: &str) -> Option<&'static str> {
    match name {
        "plot.pdf" => {
            Some("report-ready figure with its title and footnotes (PDF, fonts embedded)")
        }
        "plot.svg" => Some("report-ready figure with its title and footnotes (SVG)"),
        "statistics.csv" => Some("the statistics per cell as a table"),
        "plot.png" => Some("the figure as verified (PNG)"),
        _ => None,
    }
}

/// Every evidence record about the revision, in ledger order, with its canonical JSON.
#[component]
fn EvidenceTable(evidence: Vec<EvidenceView>) -> impl IntoView {
    view! {
        <h2>"Evidence records"</h2>
        <table class="data-table evidence">
            <caption>"Every record about this revision, in ledger order"</caption>
            <thead>
                <tr>
                    <th scope="col">"#"</th>
                    <th scope="col">"Kind"</th>
                    <th scope="col">"What it says"</th>
                    <th scope="col">"Record hash"</th>
                </tr>
            </thead>
            <tbody>
                {evidence.iter().map(|e| view! {
                    <tr>
                        <td>{e.seq}</td>
                        <td><code>{e.kind.clone()}</code></td>
                        <td>
                            {e.summary.clone()}
                            <details>
                                <summary>"Canonical JSON"</summary>
                                <pre tabindex="0"><code>{e.canonical_json.clone()}</code></pre>
                            </details>
                        </td>
                        <td><code>{e.record_hash.chars().take(12).collect::<String>()}</code></td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
