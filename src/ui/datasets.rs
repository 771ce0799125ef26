//! The Datasets section: every uploaded dataset, the upload form (authors) with its progress
//! bar, the synthetic demo dataset in one click, and a dataset's page with its profile.

use crate::ui::components::Loaded;
use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::{
    components::A,
    hooks::{use_params_map, use_query_map},
};

use super::auth::use_account;
use crate::api::datasets::{get_dataset, list_datasets, AddDemoDataset};
use adamviz_model::{
    account::Role,
    dataset::{DatasetDetail, DatasetSummary},
    profile::{ColumnProfile, DatasetProfile, ProfileWarning, UnitSource},
};

/// Bytes in words: "34.2 MB".
fn size_text(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else if bytes >= 1_000 {
        format!("{:.1} kB", bytes as f64 / 1e3)
    } else {
        format!("{bytes} bytes")
    }
}

/// The Datasets page.
#[component]
pub fn DatasetsPage() -> impl IntoView {
    let account = use_account();
    let demo = ServerAction::<AddDemoDataset>::new();
    let datasets = Resource::new(move || demo.version().get(), |_| list_datasets());
    view! {
        <Title text="Datasets" />
        <section class="section">
            <h1>"Datasets"</h1>
            <p class="purpose">
                "Uploaded ADaM datasets (CSV, SAS XPORT or CDISC Dataset-JSON) with their content hash, "
                "classification and who uploaded them. Open one for its profile and warnings."
            </p>
            <Loaded resource=datasets loading="Loading datasets…" let:list>
                {if list.is_empty() {
                    view! { <p class="empty-state" role="status">"No dataset has been uploaded yet."</p> }.into_any()
                } else {
                    view! { <DatasetTable datasets=list /> }.into_any()
                }}
            </Loaded>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    account.await.filter(|a| a.has(Role::Author)).map(|_| view! {
                        <UploadForm />
                        <h2>"Or try the demo"</h2>
                        <ActionForm action=demo>
                            <p>
                                "A synthetic ADLB-like dataset (three arms, several visits, no real "
                                "subject behind any record)."
                            </p>
                            <button type="submit">"Try the synthetic demo dataset"</button>
                        </ActionForm>
                        <p class="form-error" role="alert">
                            {move || demo.value().get().and_then(Result::err).map(|e| e.to_string())}
                        </p>
                    })
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn DatasetTable(datasets: Vec<DatasetSummary>) -> impl IntoView {
    view! {
        <table class="data-table">
            <caption>"Every dataset, newest first"</caption>
            <thead>
                <tr>
                    <th scope="col">"Name"</th>
                    <th scope="col">"Format"</th>
                    <th scope="col">"Classification"</th>
                    <th scope="col">"Rows × columns"</th>
                    <th scope="col">"Content hash"</th>
                    <th scope="col">"Uploaded"</th>
                </tr>
            </thead>
            <tbody>
                {datasets
                    .into_iter()
                    .map(|d| {
                        let href = format!("/datasets/{}", d.content_hash);
                        let prefix = d.hash_prefix().to_owned();
                        view! {
                            <tr>
                                <th scope="row"><A href=href>{d.file_name.clone()}</A></th>
                                <td>{format_name(&d.format)}</td>
                                <td>{d.classification.clone()}</td>
                                <td>{format!("{} × {}", d.rows, d.columns)}</td>
                                <td><code title=d.content_hash.clone()>{prefix}</code></td>
                                <td>{format!("{} by {}", d.uploaded_at, d.uploaded_by)}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

/// The upload form. Without wasm it is a plain multipart form post (the server answers with
/// the dataset's page, or back here with the message); with wasm it is sent by
/// `XMLHttpRequest`, whose upload events move the progress bar.
#[component]
fn UploadForm() -> impl IntoView {
    let query = use_query_map();
    let (error, set_error) = signal(None::<String>);
    let shown_error = move || error.get().or_else(|| query.read().get("upload_error"));
    // Bytes sent and total while sending; then the phase in words.
    let (progress, set_progress) = signal(None::<(f64, f64)>);
    let (phase, set_phase) = signal(None::<String>);
    // Drag and drop: a file dropped on the field becomes the file control's file.
    let file_input = NodeRef::<leptos::html::Input>::new();
    let (dragging, set_dragging) = signal(false);
    let on_drop = move |event: leptos::ev::DragEvent| {
        event.prevent_default();
        set_dragging.set(false);
        #[cfg(feature = "hydrate")]
        if let (Some(files), Some(input)) = (
            event.data_transfer().and_then(|d| d.files()),
            file_input.get(),
        ) {
            input.set_files(Some(&files));
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = file_input;
    };
    let on_submit = move |event: leptos::ev::SubmitEvent| {
        #[cfg(feature = "hydrate")]
        send_with_progress(event, set_progress, set_phase, set_error);
        #[cfg(not(feature = "hydrate"))]
        let _ = (event, set_progress, set_phase, set_error);
    };
    view! {
        <h2 id="upload-heading">"Upload a dataset"</h2>
        <form
            method="post"
            action="/api/datasets/upload"
            enctype="multipart/form-data"
            aria-labelledby="upload-heading"
            on:submit=on_submit
        >
            <fieldset>
                <legend>"Classification of the data (required)"</legend>
                <label class="radio">
                    <input type="radio" name="classification" value="synthetic" required />
                    " Synthetic: generated data; no real subject is behind any record."
                </label>
                <label class="radio">
                    <input type="radio" name="classification" value="deidentified" />
                    " De-identified: real study data with every identifying detail removed."
                </label>
            </fieldset>
            <div
                id="drop-zone"
                class="field drop-zone"
                class:dragging=move || dragging.get()
                on:dragover=move |ev: leptos::ev::DragEvent| {
                    ev.prevent_default();
                    set_dragging.set(true);
                }
                on:dragleave=move |_| set_dragging.set(false)
                on:drop=on_drop
            >
                <label for="upload-file">"Dataset file (CSV, SAS XPORT or Dataset-JSON)"</label>
                <input id="upload-file" type="file" name="file" required aria-describedby="upload-error drop-hint" node_ref=file_input />
                <p id="drop-hint" class="why">"Choose a file, or drop it here."</p>
                <p id="upload-error" class="field-error" role="alert">{shown_error}</p>
            </div>
            <div class="upload-progress" aria-live="polite">
                {move || progress.get().map(|(sent, total)| view! {
                    <progress max=total value=sent aria-label="Upload progress"></progress>
                    <span>{format!("{} of {} sent", size_text(sent as u64), size_text(total as u64))}</span>
                })}
                {move || phase.get().map(|text| view! { <p role="status">{text}</p> })}
            </div>
            <button type="submit">"Upload"</button>
        </form>
    }
}

/// Sends the form with `XMLHttpRequest` so that its upload events can move the progress bar;
/// on success opens the dataset's page, on a refusal shows the server's message.
#[cfg(feature = "hydrate")]
fn send_with_progress(
    event: leptos::ev::SubmitEvent,
    set_progress: WriteSignal<Option<(f64, f64)>>,
    set_phase: WriteSignal<Option<String>>,
    set_error: WriteSignal<Option<String>>,
) {
    use wasm_bindgen::{closure::Closure, JsCast};
    let Some(form) = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlFormElement>().ok())
    else {
        return;
    };
    let (Ok(data), Ok(request)) = (
        web_sys::FormData::new_with_form(&form),
        web_sys::XmlHttpRequest::new(),
    ) else {
        // Not possible here: let the browser post the form itself.
        return;
    };
    event.prevent_default();
    set_error.set(None);
    set_phase.set(None);
    let on_progress = Closure::<dyn FnMut(web_sys::ProgressEvent)>::new(
        move |progress: web_sys::ProgressEvent| {
            if progress.length_computable() {
                set_progress.set(Some((progress.loaded(), progress.total())));
                if progress.loaded() >= progress.total() {
                    set_phase.set(Some("reading…".to_owned()));
                }
            }
        },
    );
    let navigate = leptos_router::hooks::use_navigate();
    let done_request = request.clone();
    let on_load = Closure::<dyn FnMut()>::new(move || {
        let status = done_request.status().unwrap_or(0);
        let body = done_request
            .response_text()
            .ok()
            .flatten()
            .unwrap_or_default();
        set_progress.set(None);
        match upload_answer(status, &body) {
            Ok((phase, page)) => {
                set_phase.set(Some(phase));
                navigate(&page, Default::default());
            }
            Err(message) => {
                set_phase.set(None);
                set_error.set(Some(message));
            }
        }
    });
    let on_error = Closure::<dyn FnMut()>::new(move || {
        set_progress.set(None);
        set_phase.set(None);
        set_error.set(Some(
            "the upload failed: the connection was lost".to_owned(),
        ));
    });
    if request.open("POST", "/api/datasets/upload").is_err() {
        return;
    }
    let _ = request.set_request_header("Accept", "application/json");
    if let Ok(upload) = request.upload() {
        upload.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
    }
    request.set_onload(Some(on_load.as_ref().unchecked_ref()));
    request.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // The closures live as long as the page: one upload at a time, a few bytes each.
    on_progress.forget();
    on_load.forget();
    on_error.forget();
    set_phase.set(Some("sending…".to_owned()));
    let _ = request.send_with_opt_form_data(Some(&data));
}

/// What the server's answer to an upload says: the phase to show and the dataset's page to
/// open, or the refusal's message.
#[cfg(feature = "hydrate")]
fn upload_answer(status: u16, body: &str) -> Result<(String, String), String> {
    if status != 200 {
        return Err(serde_json::from_str::<crate::api::error::AppError>(body)
            .map(|e| e.to_string())
            .unwrap_or_else(|_| format!("the upload failed (HTTP {status})")));
    }
    let outcome = serde_json::from_str::<adamviz_model::dataset::UploadOutcome>(body)
        .map_err(|error| format!("unexpected answer: {error}"))?;
    let d = &outcome.dataset;
    let phase = if outcome.new {
        format!("read {} rows × {} columns", d.rows, d.columns)
    } else {
        format!("already uploaded on {} by {}", d.uploaded_at, d.uploaded_by)
    };
    Ok((phase, format!("/datasets/{}", d.content_hash)))
}

/// The warnings as lines, with the per-parameter ones (several records per subject and visit,
/// low-N cells) of more than three parameters folded into one line whose details list each:
/// forty lines of the same kind hide the few that differ.
fn group_warnings(warnings: &[ProfileWarning]) -> Vec<(String, Vec<String>)> {
    let several: Vec<&ProfileWarning> = warnings
        .iter()
        .filter(|w| matches!(w, ProfileWarning::SeveralRecordsPerSubjectVisit { .. }))
        .collect();
    let low_n: Vec<&ProfileWarning> = warnings
        .iter()
        .filter(|w| matches!(w, ProfileWarning::LowNCells { .. }))
        .collect();
    let parameter = |w: &ProfileWarning| match w {
        ProfileWarning::SeveralRecordsPerSubjectVisit { parameter, .. }
        | ProfileWarning::LowNCells { parameter, .. } => parameter.clone(),
        _ => String::new(),
    };
    let fold = |group: &[&ProfileWarning], what: &str| {
        let names: Vec<String> = group.iter().map(|w| parameter(w)).collect();
        (
            format!("{} parameters {what}: {}", group.len(), names.join(", ")),
            group.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        )
    };
    let mut lines = Vec::new();
    let (mut several_done, mut low_n_done) = (false, false);
    for warning in warnings {
        match warning {
            ProfileWarning::SeveralRecordsPerSubjectVisit { .. } if several.len() > 3 => {
                if !several_done {
                    lines.push(fold(
                        &several,
                        "have several records for some subject and visit",
                    ));
                    several_done = true;
                }
            }
            ProfileWarning::LowNCells { .. } if low_n.len() > 3 => {
                if !low_n_done {
                    lines.push(fold(
                        &low_n,
                        "have treatment × visit cells with few subjects",
                    ));
                    low_n_done = true;
                }
            }
            other => lines.push((other.to_string(), Vec::new())),
        }
    }
    lines
}

/// One dataset: its facts, the warnings a reviewer must see, and its columns.
#[component]
pub fn DatasetPage() -> impl IntoView {
    let params = use_params_map();
    let detail = Resource::new(
        move || params.read().get("content_hash").unwrap_or_default(),
        get_dataset,
    );
    view! {
        <Loaded resource=detail loading="Reading the dataset…" page="Dataset" let:detail>
            <DatasetView detail />
        </Loaded>
    }
}

#[component]
fn DatasetView(detail: DatasetDetail) -> impl IntoView {
    let DatasetDetail { summary, profile } = detail;
    let warnings = reviewer_warnings(&profile);
    view! {
        <Title text=summary.file_name.clone() />
        <section class="section">
            <h1>{summary.file_name.clone()}</h1>
            <dl class="facts">
                <dt>"Format"</dt><dd>{format_name(&summary.format)}{summary.dataset_name.clone().map(|n| format!(" (member {n})"))}</dd>
                <dt>"Classification"</dt><dd>{summary.classification.clone()}</dd>
                <dt>"Rows × columns"</dt><dd>{format!("{} × {}", summary.rows, summary.columns)}</dd>
                <dt>"Size"</dt><dd>{size_text(summary.size)}</dd>
                <dt>"Content hash (SHA-256)"</dt><dd><code>{summary.content_hash.clone()}</code></dd>
                <dt>"Uploaded"</dt><dd>{format!("{} by {}", summary.uploaded_at, summary.uploaded_by)}</dd>
            </dl>
            <section class="ask" aria-labelledby="ask-heading">
                <h2 id="ask-heading">"Ask for a plot"</h2>
                <form method="get" action=format!("/datasets/{}/draft", summary.content_hash)>
                    <label for="question">"Question about this dataset"</label>
                    <p class="why" id="question-help">"In words, e.g. \"ALT over time by arm\": the draft shows what each word matched, and every choice is yours to confirm."</p>
                    <input id="question" name="question" type="text" required aria-describedby="question-help" />
                    <button type="submit">"Draft the plot"</button>
                    <button type="submit" formaction=format!("/datasets/{}/set", summary.content_hash)>"Draft a figure set (one figure per parameter)"</button>
                </form>
            </section>
            <WarningList warnings />
            <ColumnTable profile />
        </section>
    }
}

/// The profile's warnings grouped for a reviewer, with the parameters whose unit is only in
/// their label.
fn reviewer_warnings(profile: &DatasetProfile) -> Vec<(String, Vec<String>)> {
    let mut warnings = group_warnings(&profile.warnings);
    let label_units: Vec<String> = profile
        .parameters
        .iter()
        .filter(|p| p.unit_source == Some(UnitSource::ParameterLabel))
        .map(|p| p.code.clone())
        .collect();
    if !label_units.is_empty() {
        warnings.push((
            format!(
                "{} parameters have their unit only in the PARAM label (no unit column), e.g. {}",
                label_units.len(),
                label_units
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Vec::new(),
        ));
    }
    warnings
}

/// The reviewer warnings, each with its details to unfold.
#[component]
fn WarningList(warnings: Vec<(String, Vec<String>)>) -> impl IntoView {
    view! {
            <section class="warnings" aria-labelledby="warnings-heading">
                <h2 id="warnings-heading">{format!("Reviewer warnings ({})", warnings.len())}</h2>
                {if warnings.is_empty() {
                    view! { <p role="status">"No warning: nothing in the data needs a reviewer's attention."</p> }.into_any()
                } else {
                    view! {
                        <ul>
                            {warnings.into_iter().map(|(line, details)| view! {
                                <li>
                                    <strong>"Warning: "</strong>{line}
                                    {(!details.is_empty()).then(|| view! {
                                        <details>
                                            <summary>{format!("Each of the {}", details.len())}</summary>
                                            <ul>{details.into_iter().map(|d| view! { <li>{d}</li> }).collect_view()}</ul>
                                        </details>
                                    })}
                                </li>
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }}
            </section>
    }
}

/// Every column in file order: label, type, missing, distinct values and candidate role.
#[component]
fn ColumnTable(profile: DatasetProfile) -> impl IntoView {
    let roles = profile.roles.clone();
    view! {
            <h2>"Columns"</h2>
            <table class="data-table">
                <caption>"Every column, in file order"</caption>
                <thead>
                    <tr>
                        <th scope="col">"Name"</th>
                        <th scope="col">"Label"</th>
                        <th scope="col">"Type"</th>
                        <th scope="col">"Missing"</th>
                        <th scope="col">"Distinct"</th>
                        <th scope="col">"Candidate role"</th>
                    </tr>
                </thead>
                <tbody>
                    {profile
                        .columns
                        .into_iter()
                        .map(|c| {
                            let role = roles.role_of(&c.name).unwrap_or("").to_owned();
                            let type_text = type_in_words(&c);
                            let distinct = if c.distinct_capped {
                                format!("{}+", c.distinct)
                            } else {
                                c.distinct.to_string()
                            };
                            view! {
                                <tr>
                                    <th scope="row"><code>{c.name}</code></th>
                                    <td>{c.label.unwrap_or_default()}</td>
                                    <td>{type_text}</td>
                                    <td>{c.missing}</td>
                                    <td>{distinct}</td>
                                    <td>{role}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
    }
}

/// A column's type with what the file declares about it, e.g. "character (string, length 11)"
/// or "numeric (date, DATE9.)".
fn type_in_words(column: &ColumnProfile) -> String {
    let declared: Vec<String> = [
        column.data_type.clone(),
        column.length.map(|length| format!("length {length}")),
        column.format.clone(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let kind = format!("{:?}", column.kind).to_lowercase();
    if declared.is_empty() {
        kind
    } else {
        format!("{kind} ({})", declared.join(", "))
    }
}

/// How a stored format name reads on a page.
fn format_name(format: &str) -> String {
    match format {
        "csv" => "CSV".to_owned(),
        "xpt" => "SAS XPORT".to_owned(),
        "dataset_json" => "Dataset-JSON".to_owned(),
        other => other.to_uppercase(),
    }
}
