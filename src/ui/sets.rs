//! Figure sets in the browser: the set's draft page (the shared answers once, then per
//! parameter a tick box, its unit, its records rule when the data asks, what is still open and
//! its small preview; Confirm) and the set's page (the counts, Run all, each figure's status,
//! plot and downloads, and a signing form per Verified figure: one signing session, the first
//! signature with the user name and password, the ones after with the password).

use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_location, use_params_map};

use super::{
    components::Loaded,
    preview::PreviewPlot,
    review::{utc_time, SignForm},
    revisions::StatusBadge,
};
use crate::api::{
    revisions::SignRevision,
    sets::{get_set, load_set_draft, ConfirmSet, RerunSetOnNewerCut, RunSet},
};
use adamviz_model::{
    figure_set::{MemberDraft, SetConfirmOutcome, SetDraftView, SetMember, SetView},
    revision::RevisionStatus,
};

/// Sends the form of the pressed button to the button's `formaction` as a GET (what a plain
/// browser does), so an `ActionForm` does not take it for its own submission.
pub fn submit_as_get(event: leptos::ev::MouseEvent) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        event.prevent_default();
        let Some(button) = event
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlButtonElement>().ok())
        else {
            return;
        };
        let Some(form) = button.form() else {
            return;
        };
        let Ok(data) = web_sys::FormData::new_with_form(&form) else {
            return;
        };
        let Ok(query) = web_sys::UrlSearchParams::new_with_str_sequence_sequence(&data) else {
            return;
        };
        let action = button.form_action();
        let target = format!("{action}?{}", String::from(query.to_string()));
        if let Some(window) = web_sys::window() {
            let _ = window.location().set_href(&target);
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = event;
}

/// The set's draft page.
#[component]
pub fn SetDraftPage() -> impl IntoView {
    let params = use_params_map();
    let location = use_location();
    let draft = Resource::new(
        move || {
            (
                params.read().get("content_hash").unwrap_or_default(),
                location.search.get(),
            )
        },
        |(hash, search)| load_set_draft(hash, search.trim_start_matches('?').to_owned()),
    );
    view! {
        <Loaded
            resource=draft
            loading="Drafting one figure per parameter…"
            page="Figure set"
            back=("/datasets", "Back to the datasets")
            let:view
        >
            <SetDraftEditor view />
        </Loaded>
    }
}

#[component]
fn SetDraftEditor(view: SetDraftView) -> impl IntoView {
    let hash = view.dataset.content_hash.clone();
    let confirm = ServerAction::<ConfirmSet>::new();
    let refused = move || match confirm.value().get() {
        Some(Ok(SetConfirmOutcome::Refused { errors })) => errors
            .into_iter()
            .map(|(code, e)| format!("{code}: {}", e.message))
            .collect::<Vec<_>>(),
        Some(Err(error)) => vec![error.to_string()],
        _ => Vec::new(),
    };
    let shared_json = serde_json::to_string(&view.shared_answers).unwrap_or_default();
    let (ready, included) = (view.ready(), view.included());
    view! {
        <Title text=format!("Figure set: {}", view.question) />
        <section class="section set-draft">
            <p class="breadcrumb">
                <a href=format!("/datasets/{hash}")>{format!("← {}", view.dataset.file_name)}</a>
            </p>
            <h1>"Figure set: " {view.question.clone()}</h1>
            {view.revises.clone().map(|earlier| view! {
                <p class="note revising">
                    "Re-running figure set " <a href=format!("/sets/{earlier}")><code>{earlier.clone()}</code></a>
                    " on a newer data cut: each figure revises that set's figure of the same parameter and needs its own approval."
                </p>
            })}
            {(!view.opened.is_empty()).then(|| view! {
                <div class="note opened" role="note" aria-label="Left open by the new data">
                    <p>"On the new data cut these shared questions are left open: their earlier answers no longer fit. Change the shared answers before you confirm."</p>
                    <ul>{view.opened.iter().map(|o| view! { <li>{o.clone()}</li> }).collect_view()}</ul>
                </div>
            })}
            <p>
                "One boxplot per parameter, each its own revision with its own run, evidence and approval. "
                "The shared answers below hold for every figure; each parameter answers its unit and its records rule itself."
            </p>
            <section aria-labelledby="shared-heading" class="set-shared">
                <h2 id="shared-heading">"Shared answers (every figure)"</h2>
                <dl class="shared-answers">
                    {view.shared.iter().map(|s| view! {
                        <dt>{s.question.clone()}</dt>
                        <dd>{s.answer.clone()}</dd>
                    }).collect_view()}
                </dl>
                {(!view.shared_errors.is_empty()).then(|| view! {
                    <div class="form-error" role="alert">
                        {view.shared_errors.iter().map(|e| view! { <p>{format!("{}: {}", e.question, e.message)}</p> }).collect_view()}
                    </div>
                })}
                <p><a href=view.change_shared_href.clone()>"Change the shared answers"</a>" (on the single-figure draft page; come back with “Draft a figure set from these answers”)."</p>
            </section>
            <ActionForm action=confirm attr:class="set-form" attr:aria-label="Figures of the set">
                <input type="hidden" name="content_hash" value=hash.clone() />
                <input type="hidden" name="question" value=view.question.clone() />
                <input type="hidden" name="shared" value=shared_json />
                {view.revises.clone().map(|r| view! { <input type="hidden" name="revises" value=r /> })}
                <h2>"Parameters"</h2>
                <p role="status">{format!("{included} parameters ticked; {ready} ready to confirm.")}</p>
                <div class="set-members">
                    {view.members.into_iter().map(|member| view! { <MemberFields member /> }).collect_view()}
                </div>
                {move || {
                    let errors = refused();
                    (!errors.is_empty()).then(|| view! {
                        <div class="form-error" role="alert">
                            <p>"Nothing was created:"</p>
                            <ul>{errors.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}</ul>
                        </div>
                    })
                }}
                <div class="form-actions">
                    <button type="submit" formmethod="get" formaction=format!("/datasets/{hash}/set") on:click=submit_as_get>
                        "Update the set"
                    </button>
                    <button type="submit" class="primary" disabled=move || confirm.pending().get()>
                        {move || if confirm.pending().get() { "Creating the revisions…".to_owned() } else { format!("Confirm the set: create {included} revisions") }}
                    </button>
                </div>
            </ActionForm>
        </section>
    }
}

/// One parameter's fields on the set's draft page.
#[component]
fn MemberFields(member: MemberDraft) -> impl IntoView {
    let code = member.code.clone();
    let name = |field: &str| format!("members[{code}][{field}]");
    let id = |field: &str| format!("member-{field}-{code}");
    let options = member.record_options.clone();
    let chosen = member.records_per_subject_visit.clone();
    let state = if !member.included {
        "not in the set".to_owned()
    } else if member.errors.is_empty() {
        "ready".to_owned()
    } else {
        format!("{} open", member.errors.len())
    };
    view! {
        <fieldset class="set-member">
            <legend>
                {format!("{} — {}", member.code, member.label)}
                <span class="note">{format!(" ({}{state})", member.category.clone().map(|c| format!("{c}; ")).unwrap_or_default())}</span>
            </legend>
            <input type="hidden" name=name("listed") value="1" />
            <label>
                <input type="checkbox" name=name("include") value="1" checked=member.included />
                {format!(" Include {}", member.code)}
                {member.derived_looking.then_some(" (its code looks derived)")}
            </label>
            {member.included.then(|| view! {
                <div class="field">
                    <label for=id("unit")>{format!("Unit of {}", member.code)}</label>
                    <input id=id("unit") type="text" name=name("unit") value=member.unit.clone() />
                </div>
                {(!options.is_empty()).then(|| view! {
                    <div class="field">
                        <label for=id("records")>{format!("Records per subject and visit for {}", member.code)}</label>
                        <select id=id("records") name=name("records_per_subject_visit")>
                            <option value="" selected=chosen.is_empty()>"— choose —"</option>
                            {options.iter().map(|o| view! {
                                <option value=o.answer.clone() selected=o.stands_for(&chosen)>{format!("{} — {}", o.answer, o.description)}</option>
                            }).collect_view()}
                        </select>
                    </div>
                })}
                {(!member.errors.is_empty()).then(|| view! {
                    <ul class="form-error" role="alert" aria-label=format!("Open questions of {}", member.code)>
                        {member.errors.iter().map(|e| view! { <li>{format!("{}: {}", e.question, e.message)}</li> }).collect_view()}
                    </ul>
                })}
                {member.preview.clone().map(|preview| view! {
                    <figure class="set-preview" aria-label=format!("Preview of {}", member.code)>
                        <PreviewPlot preview />
                    </figure>
                })}
            })}
        </fieldset>
    }
}

/// A figure set's page.
#[component]
pub fn SetPage() -> impl IntoView {
    let params = use_params_map();
    let set = Resource::new(move || params.read().get("id").unwrap_or_default(), get_set);
    let refetch = move || set.refetch();
    view! {
        <Loaded resource=set loading="Loading the figure set…" page="Figure set" let:view>
            <SetOverview view on_change=refetch />
        </Loaded>
    }
}

#[component]
fn SetOverview(
    view: SetView,
    on_change: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let run = ServerAction::<RunSet>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = run.value().get() {
            on_change();
        }
    });
    // Live status: while a figure is queued or running, read the set again every two seconds.
    let moving = view.summary.running > 0;
    Effect::new(move |_| {
        if moving {
            set_timeout(on_change, std::time::Duration::from_secs(2));
        }
    });
    let set_path = format!("/sets/{}", view.id);
    let first = view.signing_needs_user_name;
    view! {
        <Title text=format!("Figure set: {}", view.question) />
        <section class="section set-page">
            <p class="breadcrumb">
                <a href=format!("/datasets/{}", view.dataset_hash)>{format!("← {}", view.dataset_name)}</a>
            </p>
            <h1>"Figure set: " {view.question.clone()}</h1>
            <p>{format!("Made by {} on {}. Set {}.", view.created_by, utc_time(&view.created_at), view.id)}</p>
            {view.revises.clone().map(|earlier| view! {
                <p>"Re-runs figure set " <a href=format!("/sets/{earlier}")><code>{earlier.clone()}</code></a>" on a newer data cut: each figure beside its parent, with what changed per cell."</p>
            })}
            <p role="status" aria-live="polite" class="set-summary">{view.summary.describe()}</p>
            {view.newer_cut.clone().map(|cut| view! { <SetNewerCut id=view.id.clone() cut author=view.can_rerun /> })}
            <p>
                <a href=format!("/api/sets/{}/evidence", view.id) download=format!("evidence-{}.zip", view.id)>"Download the set's evidence bundle"</a>
                " — each Verified or Approved figure's own evidence bundle and the set manifest naming them, signed with this installation's key. Check it offline with "
                <code>"adamviz evidence validate"</code>"."
            </p>
            {view.can_run_all.then(|| view! {
                <ActionForm action=run attr:aria-label="Run every figure">
                    <input type="hidden" name="set_id" value=view.id.clone() />
                    <input type="hidden" name="idempotency_key" value=view.run_key.clone() />
                    <p class="note">"Queues a governed run for every figure that is Draft and not running (a failed one runs again)."</p>
                    {move || run.value().get().and_then(Result::err).map(|e| view! { <p class="form-error" role="alert">{e.to_string()}</p> })}
                    <button type="submit" class="primary" disabled=move || run.pending().get()>"Run all"</button>
                </ActionForm>
            })}
            {moving.then(|| view! { <p class="note"><a href=set_path.clone()>"Refresh"</a>" (the page follows the runs by itself once its script has loaded)."</p> })}
            <p class="note">
                {if first {
                    "Signing: your first signature in this session takes your user name and password; the ones after it take the password only (one signing session, 21 CFR 11.200(a)(1)). Each figure gets its own signature, bound to its own evidence."
                } else {
                    "Signing: you have signed in this session, so each further signature takes your password only. Each figure gets its own signature, bound to its own evidence."
                }}
            </p>
            <div class="set-figures">
                {view.members.into_iter().map(|member| view! {
                    <SetFigure member set_path=set_path.clone() first on_change />
                }).collect_view()}
            </div>
        </section>
    }
}

/// A later delivery of the set's dataset, and for an author "Re-run on the new data".
#[component]
fn SetNewerCut(id: String, cut: adamviz_model::data_cut::NewerCut, author: bool) -> impl IntoView {
    let rerun = ServerAction::<RerunSetOnNewerCut>::new();
    let error = move || {
        rerun
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    view! {
        <div class="newer-cut" role="note" aria-label="A newer data cut">
            <p>
                <strong>"A newer data cut exists: "</strong>
                <a href=format!("/datasets/{}", cut.content_hash)>{cut.file_name.clone()}</a>
                {format!(", uploaded {}. This set was made on the earlier one.", utc_time(&cut.uploaded_at))}
            </p>
            {author.then(|| view! {
                <ActionForm action=rerun attr:aria-label="Re-run the set on the new data">
                    <input type="hidden" name="set_id" value=id.clone() />
                    <p class="note">"Opens the set's draft on the new data with the same answers; what no longer fits is left open. Each new figure revises this set's figure of the same parameter and is approved on its own."</p>
                    {move || error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
                    <button type="submit">"Re-run on the new data"</button>
                </ActionForm>
            })}
        </div>
    }
}

/// One figure of a set: status, plot, downloads, and its signing form.
#[component]
fn SetFigure(
    member: SetMember,
    set_path: String,
    first: bool,
    on_change: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let sign = ServerAction::<SignRevision>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = sign.value().get() {
            on_change();
        }
    });
    let error = Signal::derive(move || {
        sign.value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    });
    let id = member.summary.id.clone();
    let retained = matches!(
        member.summary.status,
        RevisionStatus::Verified | RevisionStatus::Approved
    );
    let mut review = member.review.clone();
    review.first_signature_of_session = first;
    let heading = format!("{} — {}", member.parameter, member.summary.title);
    view! {
        <article class="set-figure" aria-label=heading.clone()>
            <h2>{heading.clone()}</h2>
            <p>
                <StatusBadge status=member.summary.status />
                {match member.summary.status {
                    RevisionStatus::Draft => format!(" {} · version {} · ", member.run.describe(), member.summary.version),
                    _ => format!(" version {} · ", member.summary.version),
                }}
                <a href=format!("/revisions/{id}")>{format!("Open revision {id}")}</a>
            </p>
            {member.last_decision.clone().map(|d| view! { <p class="note">{d}</p> })}
            {member.parent.clone().map(|parent| view! {
                <p>
                    {member.changes.clone().unwrap_or_else(|| "Compared once both are Verified.".to_owned())}
                    " "
                    <a href=format!("/revisions/compare?a={parent}&b={id}")>{format!("Compare {} with the earlier cut", member.parameter)}</a>
                </p>
            })}
            {retained.then(|| view! {
                <img class="set-plot" src=format!("/api/revisions/{id}/files/plot.png") alt=format!("Boxplot of {}", member.parameter) loading="lazy" />
                <p class="downloads">
                    {["plot.pdf", "plot.svg", "statistics.csv"].into_iter().map(|name| view! {
                        <a href=format!("/api/revisions/{id}/files/{name}?download") download=name>{format!("Download {name} of {}", member.parameter)}</a>" "
                    }).collect_view()}
                </p>
            })}
            {member.review.sign_note.clone().map(|note| view! { <p class="note" role="note">{note}</p> })}
            {review.can_sign.then(|| view! {
                <SignForm sign id=id.clone() review=review.clone() return_to=Some(set_path.clone()) error />
            })}
        </article>
    }
}
