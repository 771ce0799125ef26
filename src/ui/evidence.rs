//! The Evidence section, for the auditor: the revisions that have evidence bundles (Approved,
//! then Verified, newest first) with their signer and a download each, and how to check a
//! bundle offline against this installation's signing key, obtained out of band.

use crate::ui::components::Loaded;
use leptos::prelude::*;
use leptos_meta::Title;

use super::{review::utc_time, revisions::StatusBadge};
use crate::api::{meta::installation, revisions::revision_history};
use adamviz_model::revision::{HistoryPage, HistoryQuery};

fn retained(status: &'static str) -> HistoryQuery {
    HistoryQuery {
        status: Some(status.to_owned()),
        ..HistoryQuery::default()
    }
}

#[component]
fn BundleTable(page: HistoryPage, caption: &'static str, status: &'static str) -> impl IntoView {
    if page.rows.is_empty() {
        return view! { <p>{format!("No revision is {status} yet.")}</p> }.into_any();
    }
    let more = (page.total > page.rows.len()).then(|| {
        view! {
            <p>
                <a href=format!("/revisions?status={status}")>{format!("All {} {status} revisions in the history", page.total)}</a>
            </p>
        }
    });
    view! {
        <div class="table-scroll" tabindex="0" role="region" aria-label=caption>
        <table class="data-table">
            <caption>{caption}</caption>
            <thead>
                <tr>
                    <th scope="col">"Title"</th>
                    <th scope="col">"Status"</th>
                    <th scope="col">"Version"</th>
                    <th scope="col">"Dataset"</th>
                    <th scope="col">"Author"</th>
                    <th scope="col">"Approver"</th>
                    <th scope="col">"Created"</th>
                    <th scope="col">"Bundle"</th>
                </tr>
            </thead>
            <tbody>
                {page.rows.iter().map(|r| view! {
                    <tr>
                        <th scope="row"><a href=format!("/revisions/{}", r.id)>{r.title.clone()}</a></th>
                        <td><StatusBadge status=r.status /></td>
                        <td>{r.version}</td>
                        <td>{r.dataset_name.clone()}</td>
                        <td>{r.author.clone()}</td>
                        <td>{r.approver.clone().unwrap_or_else(|| "—".to_owned())}</td>
                        <td>{utc_time(&r.created_at)}</td>
                        <td>
                            <a href=format!("/api/revisions/{}/evidence", r.id) download=format!("evidence-{}.zip", r.id)>
                                {format!("Download evidence of {}", r.id.chars().take(16).collect::<String>())}
                            </a>
                        </td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        </div>
        {more}
    }
    .into_any()
}

/// The evidence bundles and how to check them.
#[component]
pub fn EvidencePage() -> impl IntoView {
    let approved = Resource::new(|| (), |_| revision_history(retained("approved")));
    let verified = Resource::new(|| (), |_| revision_history(retained("verified")));
    let info = Resource::new(|| (), |_| installation());
    view! {
        <Title text="Evidence" />
        <section class="section evidence-section">
            <h1>"Evidence"</h1>
            <p class="purpose">"Every Verified or Approved revision has an evidence bundle: its records, artifacts, schemas and a manifest signed by this installation's key, to download and check offline."</p>
            <h2>"Checking a bundle"</h2>
            <p>
                "A bundle that checks out without a trusted key proves only that it agrees with itself: anyone can make such a bundle and sign it with a key of their own. "
                "Only its signature under this installation's public key proves where it came from. Get that key out of band, not from the bundle and not from this server alone: "
                "ask the installation's administrator, who runs " <code>"adamviz key show"</code> " on the server, for the public key, and compare its fingerprint through a second channel (a signed document, a call)."
            </p>
            <p>"Save the key (64 hex digits, or what " <code>"adamviz key show"</code> " prints) as " <code>"installation-key.pub"</code> ", then, with the adamviz binary, no server and no database:"</p>
            <pre tabindex="0"><code>"adamviz evidence validate evidence-rev-….zip --trusted-key installation-key.pub [--replay] [--repository PATH]"</code></pre>
            <p>
                "Exit 0 is PASS: every check holds and the manifest is signed by the key you trusted. "
                "Exit 3 is CONSISTENT, ORIGIN NOT PROVEN: every check holds but no " <code>"--trusted-key"</code> " was given. "
                "Exit 5 is FAIL; exit 2 a bad invocation or an archive refused before any check. The report names every failure with its code and path. "
                <code>"--replay"</code> " re-runs, in the sandbox, the script the validator compiles itself from the bundle's spec, never the bundle's own script."
            </p>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    info.await.ok().and_then(|i| i.key_fingerprint).map(|fingerprint| view! {
                        <p>
                            "This installation signs bundles with the key " <code>{fingerprint}</code>
                            ". This page comes from the server whose bundles you are checking, so it is one channel only: compare the fingerprint with the one you obtained out of band; the report's check 12 prints the fingerprint it verified."
                        </p>
                    })
                })}
            </Suspense>
            <h2>"Approved revisions"</h2>
            <Loaded resource=approved loading="Loading…" let:page>
                <BundleTable page caption="Approved revisions, newest first" status="approved" />
            </Loaded>
            <h2>"Verified revisions awaiting approval"</h2>
            <Loaded resource=verified loading="Loading…" let:page>
                <BundleTable page caption="Verified revisions, newest first" status="verified" />
            </Loaded>
        </section>
    }
}
