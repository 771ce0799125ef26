//! The draft page: the question's draft with the matcher's explanations, every confirmation
//! question as a form control that fits it, each error beside its control, the live preview,
//! and Confirm, which creates the revision and opens its page.
//!
//! With wasm, answers live in signals: each change asks the server for the questions, errors
//! and preview anew. Without it, the page is a function of its address: "Update preview" and
//! the move buttons send the form to this page (GET) and Confirm posts it.

use crate::ui::components::Loaded;
use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_location, use_params_map};

use super::{auth::use_account, preview::PreviewPlot};
use crate::api::drafts::{load_draft, preview_draft, ConfirmDraft, ConfirmOutcome};
use adamviz_model::{
    account::{Account, Role},
    confirmation::ConfirmationQuestion,
    draft::{errors_about, DraftAnswers, DraftView, FieldError, Preview},
    matcher::MatchNote,
};

mod controls;
mod ordered;
mod signals;

use controls::{FormContext, QuestionControl};

use signals::AnswerSignals;

/// The draft page.
#[component]
pub fn DraftPage() -> impl IntoView {
    let params = use_params_map();
    let location = use_location();
    let draft = Resource::new(
        move || {
            (
                params.read().get("content_hash").unwrap_or_default(),
                location.search.get(),
            )
        },
        |(hash, search)| load_draft(hash, search.trim_start_matches('?').to_owned()),
    );
    view! {
        <Loaded
            resource=draft
            loading="Drafting the plot…"
            page="Draft"
            back=("/datasets", "Back to the datasets")
            let:view
        >
            <DraftEditor view />
        </Loaded>
    }
}

#[component]
fn DraftEditor(view: DraftView) -> impl IntoView {
    let hash = view.dataset.content_hash.clone();
    let question = view.question.clone();
    let signals = AnswerSignals::new(&view.answers, &view.questions);
    let questions = RwSignal::new(view.questions.clone());
    let errors = RwSignal::new(view.errors.clone());
    let preview = RwSignal::new(view.preview.clone());
    let updating = RwSignal::new(false);
    let refresh = LivePreview {
        hash: hash.clone(),
        question: question.clone(),
        signals,
        questions,
        errors,
        preview,
        updating,
        sequence: StoredValue::new(0),
    }
    .refresher();
    let answers = Memo::new(move |_| signals.answers());
    {
        let refresh = refresh.clone();
        Effect::watch(
            move || answers.get(),
            move |answers, _, _| refresh(answers.clone()),
            false,
        );
    }
    let confirm = ServerAction::<ConfirmDraft>::new();
    show_refusals(confirm, errors);
    let account = use_account();
    let draft_href = format!("/datasets/{hash}/draft");
    let context = FormContext {
        signals,
        errors,
        draft_href: StoredValue::new(draft_href.clone()),
    };
    let filter_columns = view.filter_columns.clone();
    view! {
        <Title text=format!("Draft: {}", view.question) />
        <section class="section draft">
            <DraftHeading view=view.clone() />
            <div class="draft-layout">
                <ActionForm action=confirm attr:class="confirm-form" attr:aria-label="Confirmation questions">
                    <input type="hidden" name="content_hash" value=hash.clone() />
                    <input type="hidden" name="question" value=question.clone() />
                    {view.parent.clone().map(|parent| view! { <input type="hidden" name="parent" value=parent /> })}
                    <input type="hidden" name="answers[levels_of]" value=move || signals.levels_of.get() />
                    <input type="hidden" name="answers[visits_of]" value=move || signals.visits_of.get() />
                    <GeneralErrors errors />
                    <For
                        each=move || questions.get()
                        key=|q| (q.id.clone(), serde_json::to_string(&q.allowed).unwrap_or_default())
                        let:q
                    >
                        <QuestionControl q context filter_columns=filter_columns.clone() />
                    </For>
                    <div class="form-actions">
                        <button
                            type="submit"
                            formmethod="get"
                            formaction=draft_href.clone()
                            on:click={
                                let refresh = refresh.clone();
                                move |ev| {
                                    ev.prevent_default();
                                    refresh(signals.answers());
                                }
                            }
                        >
                            "Update preview"
                        </button>
                        <ConfirmButton account />
                        <button type="submit" formmethod="get" formaction=format!("/datasets/{hash}/set") on:click=super::sets::submit_as_get>
                            "Draft a figure set from these answers"
                        </button>
                    </div>
                    <p class="note">"A figure set: this plot for every parameter, the answers above shared by every figure, each parameter with its own unit and records rule."</p>
                </ActionForm>
                <PreviewPane preview updating />
            </div>
        </section>
    }
}

/// The draft's breadcrumb, title, the revision it revises and what the question's words chose.
#[component]
fn DraftHeading(view: DraftView) -> impl IntoView {
    let dataset_href = format!("/datasets/{}", view.dataset.content_hash);
    view! {
        <p class="breadcrumb"><a href=dataset_href>{format!("← {}", view.dataset.file_name)}</a></p>
        <h1>"Draft: " {view.question.clone()}</h1>
        {view.parent.clone().map(|parent| view! {
            <p class="note revising">
                "Revising " <a href=format!("/revisions/{parent}")><code>{parent.clone()}</code></a>
                ": the new revision names it as its parent and needs its own approval; the parent keeps its own."
            </p>
        })}
        {(!view.opened.is_empty()).then(|| view! {
            <div class="note opened" role="note" aria-label="Left open by the new data">
                <p>"On the new data cut these questions are left open: their earlier answers no longer fit. Answer them before you confirm."</p>
                <ul>{view.opened.iter().map(|o| view! { <li>{o.clone()}</li> }).collect_view()}</ul>
            </div>
        })}
        <MatchNotes matches=view.matches />
    }
}

/// Shows what Confirm refused, beside each question (a success opens the revision's page).
fn show_refusals(confirm: ServerAction<ConfirmDraft>, errors: RwSignal<Vec<FieldError>>) {
    Effect::new(move |_| {
        if let Some(result) = confirm.value().get() {
            match result {
                Ok(ConfirmOutcome::Refused { errors: refused }) => errors.set(refused),
                Ok(ConfirmOutcome::Created { .. }) => {}
                Err(error) => errors.set(vec![FieldError {
                    question: "general".to_owned(),
                    message: error.to_string(),
                }]),
            }
        }
    });
}

/// The messages about no one question, at the top of the form.
#[component]
fn GeneralErrors(errors: RwSignal<Vec<FieldError>>) -> impl IntoView {
    move || {
        let general = errors_about(&errors.get(), "general");
        (!general.is_empty()).then(|| {
            view! {
                <div class="form-error" role="alert">
                    {general.into_iter().map(|m| view! { <p>{m}</p> }).collect_view()}
                </div>
            }
        })
    }
}

/// Asks the server for the draft as answered whenever the answers change, and follows what it
/// says (questions, messages, preview); an answer that arrives after a later question is stale
/// and dropped.
#[derive(Clone)]
struct LivePreview {
    hash: String,
    question: String,
    signals: AnswerSignals,
    questions: RwSignal<Vec<ConfirmationQuestion>>,
    errors: RwSignal<Vec<FieldError>>,
    preview: RwSignal<Option<Preview>>,
    updating: RwSignal<bool>,
    /// The number of the latest question asked.
    sequence: StoredValue<u64>,
}

impl LivePreview {
    fn refresher(self) -> impl Fn(DraftAnswers) + Clone + 'static {
        move |answers: DraftAnswers| {
            let live = self.clone();
            let ticket = live.sequence.get_value() + 1;
            live.sequence.set_value(ticket);
            live.updating.set(true);
            leptos::task::spawn_local(async move {
                let outcome =
                    preview_draft(live.hash.clone(), live.question.clone(), answers).await;
                if live.sequence.get_value() != ticket {
                    return;
                }
                live.updating.set(false);
                match outcome {
                    Ok(outcome) => {
                        live.signals.follow(&outcome.answers, &outcome.questions);
                        live.questions.set(outcome.questions);
                        live.errors.set(outcome.errors);
                        live.preview.set(outcome.preview);
                    }
                    Err(error) => live.errors.set(vec![FieldError {
                        question: "general".to_owned(),
                        message: error.to_string(),
                    }]),
                }
            });
        }
    }
}

/// Which words of the question chose what, and why.
#[component]
fn MatchNotes(matches: Vec<MatchNote>) -> impl IntoView {
    view! {
        <details class="explanations" open>
            <summary>"What the question matched"</summary>
            <dl class="matches">
                {matches.iter().map(|note| view! {
                    <dt><code>{note.field.clone()}</code>" → " {note.chosen.clone()}</dt>
                    <dd>
                        {(!note.words.is_empty()).then(|| view! {
                            <span class="words">{format!("words: {} — ", note.words.join(", "))}</span>
                        })}
                        {note.why.clone()}
                    </dd>
                }).collect_view()}
            </dl>
        </details>
    }
}

/// Confirm, for an author; a note for anyone else.
#[component]
fn ConfirmButton(account: Resource<Option<Account>>) -> impl IntoView {
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                let author = account.await.is_some_and(|a| a.has(Role::Author));
                if author {
                    view! { <button type="submit" class="primary">"Confirm and create the revision"</button> }.into_any()
                } else {
                    view! { <p class="note">"Only an author can confirm a draft; your account can read it."</p> }.into_any()
                }
            })}
        </Transition>
    }
}

/// The live preview beside the questions, with its table.
#[component]
fn PreviewPane(preview: RwSignal<Option<Preview>>, updating: RwSignal<bool>) -> impl IntoView {
    view! {
        <section class="preview-pane" aria-labelledby="preview-heading" aria-busy=move || updating.get().to_string()>
            <h2 id="preview-heading">"Preview"</h2>
            <p role="status" class="preview-status">
                {move || if updating.get() { "Updating the preview…" } else { "" }}
            </p>
            {move || match preview.get() {
                Some(preview) => view! { <PreviewPlot preview /> }.into_any(),
                None => view! {
                    <p class="note">"No preview until every question has a valid answer: see the messages beside the questions."</p>
                }.into_any(),
            }}
            {move || preview.get().map(|p| view! { <PreviewTable preview=p /> })}
        </section>
    }
}

/// The preview's numbers as a table: N per cell, and whether it is low N.
#[component]
fn PreviewTable(preview: Preview) -> impl IntoView {
    view! {
        <details class="preview-numbers">
            <summary>"The preview's numbers"</summary>
            <table class="data-table">
                <caption>"Subjects per treatment and visit (records where they differ)"</caption>
                <thead>
                    <tr>
                        <th scope="col">"Treatment"</th>
                        <th scope="col">"Visit"</th>
                        <th scope="col">"N"</th>
                        <th scope="col">"Median"</th>
                        <th scope="col">"Low N"</th>
                    </tr>
                </thead>
                <tbody>
                    {preview.panels.into_iter().flat_map(|(_, cells)| cells).map(|cell| {
                        let s = cell.statistics;
                        view! {
                            <tr>
                                <td>{s.treatment.clone()}</td>
                                <td>{s.visit.clone()}</td>
                                <td>{if s.n == s.n_subjects { s.n.to_string() } else { format!("{} ({})", s.n_subjects, s.n) }}</td>
                                <td>{s.median.map(|m| format!("{m:.4}")).unwrap_or_else(|| "–".to_owned())}</td>
                                <td>{if s.low_n { "yes" } else { "no" }}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </details>
    }
}
