//! One control per confirmation question (select, radios, number, text, filter checkboxes),
//! each with why it is asked and its messages beside it.

use leptos::prelude::*;

use super::{
    ordered::OrderedList,
    signals::{signal_for, AnswerSignals},
};
use adamviz_model::{
    confirmation::{AllowedAnswers, ConfirmationQuestion},
    draft::{errors_about, FieldError, FilterColumn},
    records::RecordOption,
};

/// What every control needs.
#[derive(Clone, Copy)]
pub(super) struct FormContext {
    pub(super) signals: AnswerSignals,
    pub(super) errors: RwSignal<Vec<FieldError>>,
    pub(super) draft_href: StoredValue<String>,
}

/// The messages about `id`, beside its control.
#[component]
pub(super) fn FieldErrors(id: String, errors: RwSignal<Vec<FieldError>>) -> impl IntoView {
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

/// One question with the control that fits it.
#[component]
pub(super) fn QuestionControl(
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
            let choices = record_choices(&id, signals.records, options);
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
pub(super) fn question_fieldset(
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
pub(super) fn radio_choices(
    id: &str,
    signal: RwSignal<String>,
    options: Vec<(String, AnyView)>,
) -> AnyView {
    let options = options
        .into_iter()
        .map(|(answer, label)| (answer, Vec::new(), label))
        .collect();
    radio_choices_with_aliases(id, signal, options)
}

/// The record choices: one radio button per set of records kept, labelled by its answer and
/// what it does, with the other answers that keep the same records listed under it.
fn record_choices(id: &str, signal: RwSignal<String>, options: Vec<RecordOption>) -> AnyView {
    let options = options
        .into_iter()
        .map(|option| {
            let aliases = option
                .aliases_in_words()
                .map(|words| view! { <span class="aliases">{words}</span> });
            let label = view! {
                <code>{option.answer.clone()}</code>" — " {option.description}
                {aliases}
            };
            (option.answer, option.aliases, label.into_any())
        })
        .collect();
    radio_choices_with_aliases(id, signal, options)
}

/// One radio button per `(answer, aliases, label)` for question `id`, checked when `signal`
/// holds the answer or one of its aliases (an answer given under another name keeps the same
/// records); choosing it sets the answer.
fn radio_choices_with_aliases(
    id: &str,
    signal: RwSignal<String>,
    options: Vec<(String, Vec<String>, AnyView)>,
) -> AnyView {
    let name = format!("answers[{id}]");
    options
        .into_iter()
        .enumerate()
        .map(|(index, (answer, aliases, label))| {
            let option_id = format!("answer-{id}-{index}");
            let stands_for = {
                let answer = answer.clone();
                move |given: &str| given == answer || aliases.iter().any(|a| a == given)
            };
            let checked = stands_for(signal.get_untracked().as_str());
            view! {
                <div class="choice">
                    <input
                        type="radio"
                        id=option_id.clone()
                        name=name.clone()
                        value=answer.clone()
                        checked=checked
                        prop:checked=move || signal.with(|given| stands_for(given.as_str()))
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
pub(super) fn threshold_control(
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
pub(super) fn text_control(
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
pub(super) fn select_control(
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
pub(super) fn FilterControl(column: FilterColumn, signals: AnswerSignals) -> impl IntoView {
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
