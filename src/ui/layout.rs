//! The frame every page sits in: header with the section navigation, main area, footer.
//! It also carries the hydration marker that browser tests wait for.

use leptos::prelude::*;
use leptos_router::components::A;

use super::auth::{use_account, AccountMenu};
use adamviz_model::account::Role;

/// One entry of the section navigation.
struct Section {
    href: &'static str,
    label: &'static str,
}

/// The sections of the application, in navigation order.
const SECTIONS: [Section; 3] = [
    Section {
        href: "/datasets",
        label: "Datasets",
    },
    Section {
        href: "/revisions",
        label: "Revisions",
    },
    Section {
        href: "/evidence",
        label: "Evidence",
    },
];

/// Page frame. `data-hydrated` is `false` in the server's HTML and becomes `true` once the
/// browser has hydrated the page: effects run only in the browser, so the attribute proves it.
#[component]
pub fn Layout(children: Children) -> impl IntoView {
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    let account = use_account();
    // Only for a logged-in account (the server refuses anyone else): on the login page the
    // footer names no build and no key.
    let installation = Resource::new(
        || (),
        move |_| async move {
            account.await?;
            crate::api::meta::installation().await.ok()
        },
    );

    view! {
        <div id="app" data-hydrated=move || if hydrated.get() { "true" } else { "false" }>
            <header class="site-header">
                <A href="/" attr:class="brand">
                    <span class="brand-mark" aria-hidden="true">"◧"</span>
                    "adamviz"
                </A>
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        account.await.map(|account| {
                            let admin = account.has(Role::Admin);
                            view! {
                                <nav aria-label="Sections">
                                    <ul>
                                        {SECTIONS
                                            .iter()
                                            .map(|section| {
                                                view! {
                                                    <li>
                                                        <A href=section.href>{section.label}</A>
                                                    </li>
                                                }
                                            })
                                            .collect_view()}
                                        {admin.then(|| view! {
                                            <li>
                                                <A href="/admin/accounts">"Accounts"</A>
                                            </li>
                                        })}
                                    </ul>
                                </nav>
                                <AccountMenu account />
                            }
                        })
                    })}
                </Transition>
            </header>
            <main class="site-main">{children()}</main>
            <footer class="site-footer">
                "adamviz " {env!("CARGO_PKG_VERSION")}
                " · governed clinical-trial plots · data classification: synthetic or de-identified only"
                <Transition fallback=|| ()>
                    {move || Suspend::new(async move {
                        installation.await.map(|info| {
                            let commit: String = info.source_commit.chars().take(12).collect();
                            view! {
                                <p class="installation">
                                    {format!("source {commit}")}
                                    {info.key_fingerprint.map(|f| view! {
                                        " · evidence signing key " <code>{f}</code>
                                    })}
                                </p>
                            }
                        })
                    })}
                </Transition>
            </footer>
        </div>
    }
}
