//! The draft page: the question's draft with the matcher's explanations, every confirmation
//! question as a form control that fits it, each error beside its control, the live preview,
//! and Confirm, which creates the revision and opens its page.
//!
//! With wasm, answers live in signals: each change asks the server for the questions, errors
//! and preview anew. Without it, the page is a function of its address: "Update preview" and
//! the move buttons send the form to this page (GET) and Confirm posts it.

use std::collections::BTreeMap;

use crate::ui::components::Loaded;
use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_location, use_params_map};

use super::{auth::use_account, preview::PreviewPlot};
use crate::{
    api::drafts::{load_draft, move_at, preview_draft, ConfirmDraft, ConfirmOutcome},
    domain::{
        account::{Account, Role},
        confirmation::{AllowedAnswers, ConfirmationQuestion},
        draft::{errors_about, DraftAnswers, DraftView, FieldError, FilterColumn, Preview},
        matcher::MatchNote,
    },
};

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

/// Items of an ordered question: the kept ones in their order, then the others.
fn ordered_items(kept: &[String], all: &[String]) -> Vec<(String, bool)> {
    let mut items: Vec<(String, bool)> = kept.iter().map(|k| (k.clone(), true)).collect();
    items.extend(
        all.iter()
            .filter(|item| !kept.contains(item))
            .map(|item| (item.clone(), false)),
    );
    items
}

fn items_of(questions: &[ConfirmationQuestion], id: &str) -> Vec<String> {
    questions
        .iter()
        .find(|q| q.id == id)
        .and_then(|q| match &q.allowed {
            AllowedAnswers::OrderedSubsetOf { items } => Some(items.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The form's answers as signals.
#[derive(Clone, Copy)]
struct AnswerSignals {
    parameter: RwSignal<String>,
    filters: RwSignal<BTreeMap<String, Vec<String>>>,
    treatment_variable: RwSignal<String>,
    levels: RwSignal<Vec<(String, bool)>>,
    levels_of: RwSignal<String>,
    value_variable: RwSignal<String>,
    visit_variable: RwSignal<String>,
    visits: RwSignal<Vec<(String, bool)>>,
    visits_of: RwSignal<String>,
    records: RwSignal<String>,
    y_scale: RwSignal<String>,
    unit: RwSignal<String>,
    unit_touched: RwSignal<bool>,
    threshold: RwSignal<String>,
    action: RwSignal<String>,
    title: RwSignal<String>,
    title_touched: RwSignal<bool>,
}

impl AnswerSignals {
    fn new(answers: &DraftAnswers, questions: &[ConfirmationQuestion]) -> Self {
        let text = |value: &Option<String>| RwSignal::new(value.clone().unwrap_or_default());
        Self {
            parameter: text(&answers.parameter),
            filters: RwSignal::new(answers.filters.clone()),
            treatment_variable: text(&answers.treatment_variable),
            levels: RwSignal::new(ordered_items(
                &answers.treatment_levels,
                &items_of(questions, "treatment_levels"),
            )),
            levels_of: text(&answers.levels_of),
            value_variable: text(&answers.value_variable),
            visit_variable: text(&answers.visit_variable),
            visits: RwSignal::new(ordered_items(
                &answers.visits,
                &items_of(questions, "visits"),
            )),
            visits_of: text(&answers.visits_of),
            records: text(&answers.records_per_subject_visit),
            y_scale: text(&answers.y_scale),
            unit: text(&answers.unit),
            unit_touched: RwSignal::new(false),
            threshold: text(&answers.low_n_threshold),
            action: text(&answers.low_n_action),
            title: text(&answers.title),
            title_touched: RwSignal::new(false),
        }
    }

    /// The answers to send. A unit or title the user has not touched is left to the server,
    /// so one derived from the parameter follows a new parameter.
    fn answers(&self) -> DraftAnswers {
        let kept = |list: RwSignal<Vec<(String, bool)>>| {
            list.get()
                .into_iter()
                .filter(|(_, keep)| *keep)
                .map(|(item, _)| item)
                .collect()
        };
        let some = |s: RwSignal<String>| Some(s.get()).filter(|v| !v.is_empty());
        DraftAnswers {
            parameter: some(self.parameter),
            filters: self.filters.get(),
            treatment_variable: some(self.treatment_variable),
            treatment_levels: kept(self.levels),
            levels_of: some(self.levels_of),
            value_variable: some(self.value_variable),
            visit_variable: some(self.visit_variable),
            visits: kept(self.visits),
            visits_of: some(self.visits_of),
            records_per_subject_visit: some(self.records),
            y_scale: some(self.y_scale),
            unit: if self.unit_touched.get() {
                some(self.unit)
            } else {
                None
            },
            low_n_threshold: some(self.threshold),
            low_n_action: some(self.action),
            title: if self.title_touched.get() {
                some(self.title)
            } else {
                None
            },
        }
    }

    /// Takes what the server settled that the user did not choose here: lists reset for a new
    /// variable, a newly asked record question's proposal, a derived unit or title.
    fn follow(&self, settled: &DraftAnswers, questions: &[ConfirmationQuestion]) {
        let set = |signal: RwSignal<String>, value: &Option<String>| {
            let value = value.clone().unwrap_or_default();
            if signal.get_untracked() != value {
                signal.set(value);
            }
        };
        if settled.levels_of.clone().unwrap_or_default() != self.levels_of.get_untracked() {
            self.levels.set(ordered_items(
                &settled.treatment_levels,
                &items_of(questions, "treatment_levels"),
            ));
            set(self.levels_of, &settled.levels_of);
        }
        if settled.visits_of.clone().unwrap_or_default() != self.visits_of.get_untracked() {
            self.visits.set(ordered_items(
                &settled.visits,
                &items_of(questions, "visits"),
            ));
            set(self.visits_of, &settled.visits_of);
        }
        set(self.records, &settled.records_per_subject_visit);
        if !self.unit_touched.get_untracked() {
            set(self.unit, &settled.unit);
        }
        if !self.title_touched.get_untracked() {
            set(self.title, &settled.title);
        }
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
    let account = use_account();
    let draft_href = format!("/datasets/{hash}/draft");
    let context = FormContext {
        signals,
        errors,
        draft_href: StoredValue::new(draft_href.clone()),
    };
    let filter_columns = view.filter_columns.clone();
    let dataset_href = format!("/datasets/{hash}");
    view! {
        <Title text=format!("Draft: {}", view.question) />
        <section class="section draft">
            <p class="breadcrumb"><a href=dataset_href>{format!("← {}", view.dataset.file_name)}</a></p>
            <h1>"Draft: " {view.question.clone()}</h1>
            {view.parent.clone().map(|parent| view! {
                <p class="note revising">
                    "Revising " <a href=format!("/revisions/{parent}")><code>{parent.clone()}</code></a>
                    ": the new revision names it as its parent and needs its own approval; the parent keeps its own."
                </p>
            })}
            <MatchNotes matches=view.matches.clone() />
            <div class="draft-layout">
                <ActionForm action=confirm attr:class="confirm-form" attr:aria-label="Confirmation questions">
                    <input type="hidden" name="content_hash" value=hash.clone() />
                    <input type="hidden" name="question" value=question.clone() />
                    {view.parent.clone().map(|parent| view! { <input type="hidden" name="parent" value=parent /> })}
                    <input type="hidden" name="answers[levels_of]" value=move || signals.levels_of.get() />
                    <input type="hidden" name="answers[visits_of]" value=move || signals.visits_of.get() />
                    {move || {
                        let general = errors_about(&errors.get(), "general");
                        (!general.is_empty()).then(|| view! {
                            <div class="form-error" role="alert">
                                {general.into_iter().map(|m| view! { <p>{m}</p> }).collect_view()}
                            </div>
                        })
                    }}
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
                    </div>
                </ActionForm>
                <PreviewPane preview updating />
            </div>
        </section>
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

/// What every control needs.
#[derive(Clone, Copy)]
struct FormContext {
    signals: AnswerSignals,
    errors: RwSignal<Vec<FieldError>>,
    draft_href: StoredValue<String>,
}

/// The messages about `id`, beside its control.
#[component]
fn FieldErrors(id: String, errors: RwSignal<Vec<FieldError>>) -> impl IntoView {
    let element_id = format!("error-{id}");
    view! {
        <div id=element_id class="field-errors" aria-live="polite">
            {move || errors_about(&errors.get(), &id)
                .into_iter()
                .map(|message| view! { <p class="form-error" role="alert">{message}</p> })
                .collect_view()}
        </div>
    }
}

fn signal_for(signals: &AnswerSignals, id: &str) -> Option<RwSignal<String>> {
    Some(match id {
        "parameter" => signals.parameter,
        "treatment_variable" => signals.treatment_variable,
        "value_variable" => signals.value_variable,
        "visit_variable" => signals.visit_variable,
        "records_per_subject_visit" => signals.records,
        "y_scale" => signals.y_scale,
        "unit" => signals.unit,
        "low_n_threshold" => signals.threshold,
        "low_n_action" => signals.action,
        "title" => signals.title,
        _ => return None,
    })
}

/// One question with the control that fits it.
#[component]
fn QuestionControl(
    q: ConfirmationQuestion,
    context: FormContext,
    filter_columns: Vec<FilterColumn>,
) -> impl IntoView {
    let id = q.id.clone();
    let (errors, signals) = (context.errors, context.signals);
    let open = q.proposed.is_none();
    match (id.as_str(), q.allowed.clone()) {
        ("filters", _) => {
            let columns = filter_columns
                .into_iter()
                .map(|column| view! { <FilterControl column signals /> })
                .collect_view();
            question_fieldset(&q, false, columns.into_any(), errors)
        }
        ("treatment_levels" | "visits", _) => {
            let list = if id == "visits" {
                signals.visits
            } else {
                signals.levels
            };
            let control =
                view! { <OrderedList id=id.clone() list draft_href=context.draft_href /> };
            question_fieldset(&q, false, control.into_any(), errors)
        }
        (_, AllowedAnswers::RecordChoice { options }) => {
            let options = options
                .into_iter()
                .map(|option| {
                    let label =
                        view! { <code>{option.answer.clone()}</code>" — " {option.description} };
                    (option.answer, label.into_any())
                })
                .collect();
            let choices = radio_choices(&id, signals.records, options);
            question_fieldset(&q, open, choices, errors)
        }
        ("y_scale", _) => {
            let options = [
                (
                    "fixed",
                    "Fixed: one y axis shared by every panel (governed)",
                ),
                (
                    "free",
                    "Free: each panel its own y axis (Experimental/Draft, never executed)",
                ),
            ]
            .into_iter()
            .map(|(value, label)| (value.to_owned(), label.into_any()))
            .collect();
            let choices = radio_choices(&id, signals.y_scale, options);
            question_fieldset(&q, false, choices, errors)
        }
        ("low_n_threshold", _) => threshold_control(&q, signals.threshold, errors),
        ("title", _) | (_, AllowedAnswers::Text) => {
            let signal = signal_for(&signals, &id).unwrap_or(signals.title);
            let touched = if id == "unit" {
                signals.unit_touched
            } else {
                signals.title_touched
            };
            text_control(&q, signal, touched, errors)
        }
        (_, AllowedAnswers::OneOf { choices }) => select_control(&q, choices, signals, errors),
        _ => view! {
            <div class="question">
                <p>{q.question.clone()}</p>
                <FieldErrors id=id.clone() errors />
            </div>
        }
        .into_any(),
    }
}

/// A question whose control is a group (a fieldset): its legend, why it is asked, the control
/// and its messages. `open`: nothing is proposed, an answer is needed.
fn question_fieldset(
    q: &ConfirmationQuestion,
    open: bool,
    control: AnyView,
    errors: RwSignal<Vec<FieldError>>,
) -> AnyView {
    let id = q.id.clone();
    let described_by = format!("error-{id}");
    view! {
        <fieldset class="question" aria-describedby=described_by>
            <legend>{q.question.clone()}{open.then_some(" (needs an answer)")}</legend>
            <p class="why">{q.why.clone()}</p>
            {control}
            <FieldErrors id=id.clone() errors />
        </fieldset>
    }
    .into_any()
}

/// One radio button per `(answer, label)` for question `id`, checked as `signal` says.
fn radio_choices(id: &str, signal: RwSignal<String>, options: Vec<(String, AnyView)>) -> AnyView {
    let name = format!("answers[{id}]");
    options
        .into_iter()
        .enumerate()
        .map(|(index, (answer, label))| {
            let option_id = format!("answer-{id}-{index}");
            let checked = signal.get_untracked() == answer;
            view! {
                <div class="choice">
                    <input
                        type="radio"
                        id=option_id.clone()
                        name=name.clone()
                        value=answer.clone()
                        checked=checked
                        prop:checked={
                            let answer = answer.clone();
                            move || signal.get() == answer
                        }
                        on:change=move |_| signal.set(answer.clone())
                    />
                    <label for=option_id>{label}</label>
                </div>
            }
        })
        .collect_view()
        .into_any()
}

/// The low-N threshold: a whole number from 1 to 1000.
fn threshold_control(
    q: &ConfirmationQuestion,
    signal: RwSignal<String>,
    errors: RwSignal<Vec<FieldError>>,
) -> AnyView {
    let id = q.id.clone();
    let control_id = format!("answer-{id}");
    view! {
        <div class="question">
            <label for=control_id.clone()>{q.question.clone()}</label>
            <p class="why">{q.why.clone()}</p>
            <input
                type="number"
                id=control_id
                name=format!("answers[{id}]")
                min="1"
                max="1000"
                step="1"
                value=signal.get_untracked()
                prop:value=move || signal.get()
                on:input=move |ev| signal.set(event_target_value(&ev))
                aria-describedby=format!("error-{id}")
            />
            <FieldErrors id=id.clone() errors />
        </div>
    }
    .into_any()
}

/// A free-text answer (the title, a unit the data does not list); `touched` records that the
/// user wrote it, so a change of parameter no longer replaces it.
fn text_control(
    q: &ConfirmationQuestion,
    signal: RwSignal<String>,
    touched: RwSignal<bool>,
    errors: RwSignal<Vec<FieldError>>,
) -> AnyView {
    let id = q.id.clone();
    let control_id = format!("answer-{id}");
    view! {
        <div class="question">
            <label for=control_id.clone()>{q.question.clone()}</label>
            <p class="why">{q.why.clone()}</p>
            <input
                type="text"
                id=control_id
                name=format!("answers[{id}]")
                value=signal.get_untracked()
                prop:value=move || signal.get()
                on:change=move |ev| {
                    touched.set(true);
                    signal.set(event_target_value(&ev));
                }
                aria-describedby=format!("error-{id}")
            />
            <FieldErrors id=id.clone() errors />
        </div>
    }
    .into_any()
}

/// One answer of a list (a select), with the choices the data does not allow listed below it;
/// a unit may also be `none`.
fn select_control(
    q: &ConfirmationQuestion,
    mut choices: Vec<String>,
    signals: AnswerSignals,
    errors: RwSignal<Vec<FieldError>>,
) -> AnyView {
    let id = q.id.clone();
    let control_id = format!("answer-{id}");
    let signal = signal_for(&signals, &id).unwrap_or(signals.parameter);
    let open = q.proposed.is_none();
    let unit = id == "unit";
    if unit && !choices.iter().any(|c| c == "none") {
        choices.push("none".to_owned());
    }
    let unavailable = (!q.unavailable.is_empty()).then(|| {
        view! {
            <details class="unavailable">
                <summary>{format!("{} not available", q.unavailable.len())}</summary>
                <ul>
                    {q.unavailable.iter().map(|u| view! { <li><code>{u.choice.clone()}</code>": " {u.reason.clone()}</li> }).collect_view()}
                </ul>
            </details>
        }
    });
    view! {
        <div class="question">
            <label for=control_id.clone()>{q.question.clone()}{open.then_some(" (needs an answer)")}</label>
            <p class="why">{q.why.clone()}</p>
            <select
                id=control_id
                name=format!("answers[{id}]")
                on:change=move |ev| {
                    if unit {
                        signals.unit_touched.set(true);
                    }
                    signal.set(event_target_value(&ev));
                }
                prop:value=move || signal.get()
                aria-describedby=format!("error-{id}")
            >
                {open.then(|| view! { <option value="" selected=signal.get_untracked().is_empty()>"— choose —"</option> })}
                {choices.into_iter().map(|choice| {
                    let selected = signal.get_untracked() == choice;
                    view! { <option value=choice.clone() selected=selected>{choice.clone()}</option> }
                }).collect_view()}
            </select>
            {unavailable}
            <FieldErrors id=id.clone() errors />
        </div>
    }
    .into_any()
}

/// The values of one flag column as checkboxes: the records kept have one of the checked values.
#[component]
fn FilterControl(column: FilterColumn, signals: AnswerSignals) -> impl IntoView {
    let FilterColumn {
        column: name,
        label,
        values,
    } = column;
    let legend = match &label {
        Some(label) => format!("{name} ({label}): keep records whose value is"),
        None => format!("{name}: keep records whose value is"),
    };
    view! {
        <fieldset class="filter">
            <legend>{legend}</legend>
            {values.into_iter().enumerate().map(|(index, value)| {
                let input_id = format!("filter-{name}-{index}");
                let column = name.clone();
                let shown = if value.is_empty() { "(blank)".to_owned() } else { value.clone() };
                let is_kept = {
                    let (column, value) = (column.clone(), value.clone());
                    move || signals.filters.with(|f| f.get(&column).is_some_and(|v| v.contains(&value)))
                };
                let initially = is_kept();
                view! {
                    <span class="choice inline">
                        <input
                            type="checkbox"
                            id=input_id.clone()
                            name=format!("answers[filters][{name}][]")
                            value=value.clone()
                            checked=initially
                            prop:checked=is_kept
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                signals.filters.update(|filters| {
                                    let kept = filters.entry(column.clone()).or_default();
                                    kept.retain(|v| v != &value);
                                    if on {
                                        kept.push(value.clone());
                                    }
                                    if kept.is_empty() {
                                        filters.remove(&column);
                                    }
                                });
                            }
                        />
                        <label for=input_id>{format!("{name} = {shown}")}</label>
                    </span>
                }
            }).collect_view()}
        </fieldset>
    }
}

/// An ordered list with a keep checkbox and move up/down buttons per item. Without wasm the
/// buttons send the form to the draft page, which applies the move.
#[component]
fn OrderedList(
    id: String,
    list: RwSignal<Vec<(String, bool)>>,
    draft_href: StoredValue<String>,
) -> impl IntoView {
    let items = move || {
        list.get()
            .into_iter()
            .map(|(item, _)| item)
            .collect::<Vec<_>>()
    };
    view! {
        <ol class="ordered-list">
            <For each=items key=|item| item.clone() let:item>
                <OrderedItem id=id.clone() item list draft_href />
            </For>
        </ol>
    }
}

/// One item of an ordered list: keep it or not, move it up or down.
#[component]
fn OrderedItem(
    id: String,
    item: String,
    list: RwSignal<Vec<(String, bool)>>,
    draft_href: StoredValue<String>,
) -> impl IntoView {
    let slug: String = item
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let keep_id = format!("keep-{id}-{slug}");
    let up_id = format!("up-{id}-{slug}");
    let down_id = format!("down-{id}-{slug}");
    let is_kept = {
        let item = item.clone();
        move || list.with(|l| l.iter().any(|(i, k)| *i == item && *k))
    };
    let initially = is_kept();
    let move_item = {
        let item = item.clone();
        move |up: bool, focus: String| {
            list.update(|l| {
                if let Some(at) = l.iter().position(|(i, _)| *i == item) {
                    move_at(l, at, up);
                }
            });
            refocus(focus);
        }
    };
    let (move_up, move_down) = (move_item.clone(), move_item);
    let (up_focus, down_focus) = (up_id.clone(), down_id.clone());
    let on_keep = {
        let item = item.clone();
        move |ev| {
            let on = event_target_checked(&ev);
            list.update(|l| {
                if let Some(entry) = l.iter_mut().find(|(i, _)| *i == item) {
                    entry.1 = on;
                }
            });
        }
    };
    view! {
        <li>
            <input
                type="checkbox"
                id=keep_id.clone()
                name=format!("answers[{id}][]")
                value=item.clone()
                checked=initially
                prop:checked=is_kept
                on:change=on_keep
            />
            <label for=keep_id>{item.clone()}</label>
            <span class="move-buttons">
                <MoveButton
                    id=up_id
                    value=format!("{id}:up:{item}")
                    label=format!("Move {item} up")
                    text="Up"
                    draft_href
                    on_move=move || move_up(true, up_focus.clone())
                />
                <MoveButton
                    id=down_id
                    value=format!("{id}:down:{item}")
                    label=format!("Move {item} down")
                    text="Down"
                    draft_href
                    on_move=move || move_down(false, down_focus.clone())
                />
            </span>
        </li>
    }
}

/// A move button: with wasm it moves the item in place; without, it sends the form to the
/// draft page (GET), which applies the move named by its value.
#[component]
fn MoveButton(
    id: String,
    value: String,
    label: String,
    text: &'static str,
    draft_href: StoredValue<String>,
    on_move: impl Fn() + 'static,
) -> impl IntoView {
    view! {
        <button
            type="submit"
            id=id
            name="move"
            value=value
            formmethod="get"
            formaction=draft_href.get_value()
            aria-label=label
            on:click=move |ev| {
                ev.prevent_default();
                on_move();
            }
        >
            {text}
        </button>
    }
}

/// Keeps the keyboard where it was: a moved item's button gets the focus back after the list
/// is redrawn.
fn refocus(element_id: String) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        request_animation_frame(move || {
            if let Some(element) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(&element_id))
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = element.focus();
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = element_id;
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
