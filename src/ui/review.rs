//! The second person and the second run on a revision's page: its lineage (the revision it
//! revises, those that revise it, Revise, Compare), the signatures (name, date and time,
//! meaning), the signing form for reviewers (decision, meaning, comment, password), and the
//! reproductions with the Reproduce button.

use leptos::{form::ActionForm, prelude::*};

use crate::api::revisions::{ReproduceRevision, RerunOnNewerCut, SignRevision};
use adamviz_model::revision::{
    ReproductionView, RevisionDetail, RevisionStatus, SignatureView, SigningAttempt,
};

/// `2026-12-04T10:50:12.123456Z` as `2026-12-04 10:50:12 UTC`.
pub fn utc_time(timestamp: &str) -> String {
    let (date, time) = timestamp.split_once('T').unwrap_or((timestamp, ""));
    let time = time.trim_end_matches('Z');
    let seconds = time.split('.').next().unwrap_or(time);
    format!("{date} {seconds} UTC")
}

fn short(id: &str) -> String {
    id.chars().take(16).collect()
}

/// Where the revision comes from and what came of it.
#[component]
pub fn Lineage(detail: RevisionDetail) -> impl IntoView {
    let id = detail.summary.id.clone();
    let parent = detail.parent.clone();
    let children = detail.children.clone();
    let revise = detail.revise_href.clone();
    view! {
        <section aria-labelledby="lineage-heading" class="lineage">
            <h2 id="lineage-heading">"Lineage"</h2>
            {match parent.clone() {
                Some(parent) => view! {
                    <p>
                        "Revises " <a href=format!("/revisions/{parent}")><code>{short(&parent)}</code></a>
                        " · " <a href=format!("/revisions/compare?a={parent}&b={id}")>"Compare with the revision it revises"</a>
                    </p>
                }.into_any(),
                None => view! { <p>"Revises no earlier revision."</p> }.into_any(),
            }}
            {(!children.is_empty()).then(|| view! {
                <p>
                    "Revised by "
                    {children.iter().map(|child| view! {
                        <a href=format!("/revisions/{child}")><code>{short(child)}</code></a>" "
                    }).collect_view()}
                </p>
            })}
            {revise.clone().map(|href| view! {
                <p>
                    <a class="button" href=href>"Revise"</a>
                    " — start a new draft from these answers; the new revision names this one as its parent and needs its own approval."
                </p>
            })}
            {detail.newer_cut.clone().map(|cut| view! {
                <NewerCut id=id.clone() cut author=revise.is_some() />
            })}
        </section>
    }
}

/// A later delivery of the revision's dataset, and for an author "Re-run on the new data".
#[component]
fn NewerCut(id: String, cut: adamviz_model::data_cut::NewerCut, author: bool) -> impl IntoView {
    let rerun = ServerAction::<RerunOnNewerCut>::new();
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
                {format!(", uploaded {}. This revision was made on the earlier one.", utc_time(&cut.uploaded_at))}
            </p>
            {author.then(|| view! {
                <ActionForm action=rerun attr:aria-label="Re-run on the new data">
                    <input type="hidden" name="revision_id" value=id.clone() />
                    <p class="note">"Opens a draft on the new data with this revision's answers. A question whose answer no longer fits (a visit gone, a visit or level new) is left open for you. Confirming makes a new revision that revises this one; it is run, compared cell by cell with this one, and approved on its own."</p>
                    {move || error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
                    <button type="submit">"Re-run on the new data"</button>
                </ActionForm>
            })}
        </div>
    }
}

fn signature_line(signature: &SignatureView) -> impl IntoView {
    let when = utc_time(&signature.signed_at);
    let who = if signature.printed_name == signature.account_name {
        signature.printed_name.clone()
    } else {
        format!("{} ({})", signature.printed_name, signature.account_name)
    };
    // Under what authority, and with whose password: the reviewer role's grant and when the
    // signer last chose their own password.
    let role = match (
        &signature.reviewer_granted_at,
        &signature.reviewer_granted_by,
    ) {
        (Some(at), Some(by)) => format!("reviewer role granted on {} by {by}", utc_time(at)),
        _ => "reviewer role: no grant on record".to_owned(),
    };
    let password = match &signature.password_chosen_at {
        Some(at) => format!("password last chosen by the signer on {}", utc_time(at)),
        None => {
            "when the signer chose the password is not recorded (signed before adamviz recorded it)"
                .to_owned()
        }
    };
    // A password someone else set shortly before is how an administrator would take a
    // reviewer's place: said beside the signature, for every reader to weigh.
    let reset = match (&signature.password_reset_at, &signature.password_reset_by) {
        (Some(at), Some(by)) => format!(
            "; password last set by someone else: by {by} on {}",
            utc_time(at)
        ),
        _ => String::new(),
    };
    let authority = format!("{role}; {password}{reset}");
    match signature.meaning.clone() {
        Some(meaning) => view! {
            <li class="signature approved">
                <strong>"Approved"</strong>
                {format!(" — signed by {who} on {when}; meaning: {meaning}; version {} signed", signature.revision_version)}
                <br />
                <span class="signature-authority">{authority}</span>
            </li>
        }
        .into_any(),
        None => view! {
            <li class="signature changes">
                <strong>"Changes requested"</strong>
                {format!(" — by {who} on {when}: {}", signature.comment.clone().unwrap_or_default())}
                <br />
                <span class="signature-authority">{authority}</span>
            </li>
        }
        .into_any(),
    }
}

/// The signatures and, for a reviewer who may sign, the signing form.
#[component]
pub fn Signatures(
    detail: RevisionDetail,
    on_signed: std::sync::Arc<dyn Fn() + Send + Sync>,
) -> impl IntoView {
    let sign = ServerAction::<SignRevision>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = sign.value().get() {
            on_signed();
        }
    });
    let error = move || {
        sign.value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    let review = detail.review.clone();
    let id = detail.summary.id.clone();
    let status = detail.summary.status;
    let signatures = detail.signatures.clone();
    view! {
        <section aria-labelledby="signatures-heading" class="signatures">
            <h2 id="signatures-heading">"Signatures"</h2>
            {if signatures.is_empty() {
                view! {
                    <p>{match status {
                        RevisionStatus::Verified => "Not signed yet: a reviewer other than the author approves it with an electronic signature.",
                        RevisionStatus::Approved => "Approved.",
                        _ => "Only a Verified revision can be signed.",
                    }}</p>
                }.into_any()
            } else {
                view! {
                    <ul class="signature-list">
                        {signatures.iter().map(signature_line).collect_view()}
                    </ul>
                }.into_any()
            }}
            {review.sign_note.clone().map(|note| view! { <p class="note" role="note">{note}</p> })}
            <SigningAttempts attempts=detail.signing_attempts.clone() />
            {review.can_sign.then(|| view! {
                <SignForm sign id=id.clone() review=review.clone() return_to=None error=Signal::derive(error) />
            })}
        </section>
    }
}

/// The signing form of one revision: decision, meaning, comment, and the signature's
/// components: the user name and the password for the first signature of a signing session,
/// the password alone for the ones after it (21 CFR 11.200(a)(1)). `return_to` is the page a
/// plain form post goes back to (a figure set's), else the revision's.
#[component]
pub fn SignForm(
    sign: ServerAction<SignRevision>,
    id: String,
    review: adamviz_model::revision::ReviewState,
    return_to: Option<String>,
    error: Signal<Option<String>>,
) -> impl IntoView {
    let (comment_id, user_id, password_id) = (
        format!("sign-comment-{id}"),
        format!("sign-user-{id}"),
        format!("sign-password-{id}"),
    );
    let label = match &return_to {
        Some(_) => format!("Sign revision {id}"),
        None => "Sign this revision".to_owned(),
    };
    let first = review.first_signature_of_session;
    view! {
        <ActionForm action=sign attr:class="sign-form" attr:aria-label=label>
            <input type="hidden" name="revision_id" value=id.clone() />
            <input type="hidden" name="evidence_head" value=review.evidence_head.clone() />
            {return_to.map(|to| view! { <input type="hidden" name="return_to" value=to /> })}
            <fieldset>
                <legend>"Decision"</legend>
                <label><input type="radio" name="decision" value="approved" checked=true />" Approve"</label>
                <label><input type="radio" name="decision" value="changes_requested" />" Request changes"</label>
            </fieldset>
            <fieldset>
                <legend>"Meaning of your signature (to approve)"</legend>
                <label><input type="radio" name="meaning" value="reviewed" />" Reviewed"</label>
                <label><input type="radio" name="meaning" value="approved" />" Approved"</label>
                <label><input type="radio" name="meaning" value="responsible" />" Responsible"</label>
            </fieldset>
            <div class="field">
                <label for=comment_id.clone()>"Comment (required to request changes)"</label>
                <textarea id=comment_id name="comment" rows="3" maxlength="4000"></textarea>
            </div>
            {first.then(|| view! {
                <div class="field">
                    <label for=user_id.clone()>"User name (first signature of this session)"</label>
                    <input id=user_id type="text" name="user_name" autocomplete="username" required=true />
                </div>
            })}
            <div class="field">
                <label for=password_id.clone()>"Password (re-enter it to sign)"</label>
                <input id=password_id type="password" name="password" autocomplete="current-password" required=true />
            </div>
            <p class="note">
                {if first {
                    "This is the first signature of your session: it takes your user name and password. Later signatures in the same session take the password only. "
                } else {
                    "You have signed in this session already: the password alone signs. "
                }}
                "Your signature records your name, the date and time (UTC), its meaning, and the evidence of this revision as you see it now."
            </p>
            {move || error.get().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
            <button type="submit" class="primary" disabled=move || sign.pending().get()>
                {move || if sign.pending().get() { "Signing…" } else { "Sign" }}
            </button>
        </ActionForm>
    }
}

/// Every try at signing this revision, from the security log (nothing when there was none).
#[component]
fn SigningAttempts(attempts: Vec<SigningAttempt>) -> impl IntoView {
    (!attempts.is_empty()).then(|| view! {
        <details class="signing-attempts">
            <summary>{format!("Signing attempts ({}), from the security log", attempts.len())}</summary>
            <ul aria-label="Signing attempts">
                {attempts.iter().map(|a| view! {
                    <li>{format!("{} — {} — {}: {}", utc_time(&a.at), a.account, if a.outcome == "success" { "signed" } else { "refused" }, a.detail)}</li>
                }).collect_view()}
            </ul>
        </details>
    })
}

fn reproduction_line(reproduction: &ReproductionView) -> impl IntoView {
    let when = if reproduction.reproduced_at.is_empty() {
        String::new()
    } else {
        format!(" on {}", utc_time(&reproduction.reproduced_at))
    };
    let detail = if reproduction.outcome == "reproduced" {
        if reproduction.same_environment {
            ": the analytical hash matches; same environment, the image hash matches too".to_owned()
        } else {
            format!(
                ": the analytical hash matches; the environment differs in {}",
                reproduction.environment_differences.join(", ")
            )
        }
    } else {
        format!(": {}", reproduction.failures.join("; "))
    };
    let (class, word) = if reproduction.outcome == "reproduced" {
        ("reproduction reproduced", "Reproduced")
    } else {
        ("reproduction failed", "Not reproduced")
    };
    view! {
        <li class=class>
            <strong>{word}</strong>
            {format!("{when} by {}{detail}", reproduction.by)}
        </li>
    }
}

/// The reproductions and the Reproduce button.
#[component]
pub fn Reproductions(
    detail: RevisionDetail,
    on_reproduced: std::sync::Arc<dyn Fn() + Send + Sync>,
) -> impl IntoView {
    let reproduce = ServerAction::<ReproduceRevision>::new();
    Effect::new(move |_| {
        if let Some(Ok(_)) = reproduce.value().get() {
            on_reproduced();
        }
    });
    let error = move || {
        reproduce
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    let id = detail.summary.id.clone();
    let reproductions = detail.reproductions.clone();
    let retained = matches!(
        detail.summary.status,
        RevisionStatus::Verified | RevisionStatus::Approved
    );
    view! {
        <section aria-labelledby="reproductions-heading" class="reproductions">
            <h2 id="reproductions-heading">"Reproductions"</h2>
            {if reproductions.is_empty() {
                view! { <p>{if retained { "Not reproduced yet." } else { "A Verified or Approved revision can be reproduced." }}</p> }.into_any()
            } else {
                view! { <ul class="reproduction-list">{reproductions.iter().map(reproduction_line).collect_view()}</ul> }.into_any()
            }}
            {detail.review.can_reproduce.then(|| view! {
                <ActionForm action=reproduce attr:aria-label="Reproduce this revision">
                    <input type="hidden" name="revision_id" value=id.clone() />
                    <p class="note">"Runs the retained script on the retained snapshot again in a fresh sandboxed R process and records whether the result is the same."</p>
                    {move || error().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
                    <p role="status" aria-live="polite">{move || if reproduce.pending().get() { "Reproducing…" } else { "" }}</p>
                    <button type="submit" disabled=move || reproduce.pending().get()>"Reproduce"</button>
                </ActionForm>
            })}
        </section>
    }
}
