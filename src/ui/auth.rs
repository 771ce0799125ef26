//! The login page, the first-start setup page, the Change password page, and the account menu
//! of the page header.

use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_location, use_query_map};

use crate::api::{
    auth::{ChangePassword, Login, Setup},
    error::AppError,
};
use adamviz_model::account::Account;

/// Log in with name and password; afterwards back to the page that sent here.
#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    let next = move || query.read().get("next").unwrap_or_default();
    let error = move || login.value().get().and_then(Result::err);
    view! {
        <Title text="Log in" />
        <section class="section narrow">
            <h1>"Log in"</h1>
            <ActionForm action=login>
                <input type="hidden" name="next" value=next />
                <div class="field">
                    <label for="login-name">"Name"</label>
                    <input id="login-name" name="name" autocomplete="username" required />
                </div>
                <div class="field">
                    <label for="login-password">"Password"</label>
                    <input
                        id="login-password"
                        name="password"
                        type="password"
                        autocomplete="current-password"
                        required
                    />
                </div>
                <p class="form-error" role="alert" aria-live="assertive">
                    {move || error().map(|e| e.to_string())}
                </p>
                <button type="submit" disabled=move || login.pending().get()>
                    "Log in"
                </button>
            </ActionForm>
        </section>
    }
}

/// Creates the first admin with the one-time link `adamviz serve` printed.
#[component]
pub fn SetupPage() -> impl IntoView {
    let setup = ServerAction::<Setup>::new();
    let query = use_query_map();
    let token = move || query.read().get("token").unwrap_or_default();
    let error = move || setup.value().get().and_then(Result::err);
    let about = move |field: &'static str| move || error().and_then(|e| e.about(field));
    let general = move || {
        error()
            .filter(|e| !matches!(e, AppError::Invalid { .. }))
            .map(|e| e.to_string())
    };
    view! {
        <Title text="Set up adamviz" />
        <section class="section narrow">
            <h1>"Set up adamviz"</h1>
            <p>
                "There is no account yet. Create the first administrator; it then creates the "
                "accounts of authors and reviewers."
            </p>
            <ActionForm action=setup>
                <input type="hidden" name="token" value=token />
                <div class="field">
                    <label for="setup-name">"Administrator name"</label>
                    <input id="setup-name" name="name" autocomplete="username" required aria-describedby="setup-name-error" />
                    <p id="setup-name-error" class="field-error" role="alert">{about("name")}</p>
                </div>
                <div class="field">
                    <label for="setup-password">"Password (at least 12 characters)"</label>
                    <input id="setup-password" name="password" type="password" autocomplete="new-password" required aria-describedby="setup-password-error" />
                    <p id="setup-password-error" class="field-error" role="alert">{about("password")}</p>
                </div>
                <div class="field">
                    <label for="setup-password-again">"Password again"</label>
                    <input id="setup-password-again" name="password_again" type="password" autocomplete="new-password" required aria-describedby="setup-again-error" />
                    <p id="setup-again-error" class="field-error" role="alert">{about("password_again")}</p>
                </div>
                <p class="form-error" role="alert">{general}</p>
                <button type="submit" disabled=move || setup.pending().get()>
                    "Create the administrator"
                </button>
            </ActionForm>
        </section>
    }
}

/// Change your own password: the current one (a temporary one an administrator set, too), the
/// new one twice. After a login with a temporary password every page leads here first.
#[component]
pub fn ChangePasswordPage() -> impl IntoView {
    let change = ServerAction::<ChangePassword>::new();
    let query = use_query_map();
    let required = move || query.read().get("required").is_some();
    let error = move || change.value().get().and_then(Result::err);
    let about = move |field: &'static str| move || error().and_then(|e| e.about(field));
    let general = move || {
        error()
            .filter(|e| !matches!(e, AppError::Invalid { .. }))
            .map(|e| e.to_string())
    };
    view! {
        <Title text="Change password" />
        <section class="section narrow">
            <h1>"Change password"</h1>
            <Show when=required>
                <p class="notice" role="status">
                    "Your password was set by an administrator. Choose your own before you "
                    "continue: nothing else works until you do, and only you will know it."
                </p>
            </Show>
            <p>
                "A new password ends every other session of your account. Your signatures "
                "record when you last chose your password."
            </p>
            <ActionForm action=change>
                <div class="field">
                    <label for="current-password">"Current password"</label>
                    <input id="current-password" name="current_password" type="password" autocomplete="current-password" required aria-describedby="current-password-error" />
                    <p id="current-password-error" class="field-error" role="alert">{about("current_password")}</p>
                </div>
                <div class="field">
                    <label for="new-password">"New password"</label>
                    <input id="new-password" name="new_password" type="password" autocomplete="new-password" required aria-describedby="new-password-hint new-password-error" />
                    <p id="new-password-hint" class="hint">"At least 12 characters, not the current one."</p>
                    <p id="new-password-error" class="field-error" role="alert">{about("new_password")}</p>
                </div>
                <div class="field">
                    <label for="new-password-again">"New password again"</label>
                    <input id="new-password-again" name="new_password_again" type="password" autocomplete="new-password" required aria-describedby="new-password-again-error" />
                    <p id="new-password-again-error" class="field-error" role="alert">{about("new_password_again")}</p>
                </div>
                <p class="form-error" role="alert">{general}</p>
                <button type="submit" disabled=move || change.pending().get()>
                    "Change password"
                </button>
            </ActionForm>
        </section>
    }
}

/// The logged-in account (asked again at every navigation, so the header follows logins and
/// logouts).
pub fn use_account() -> Resource<Option<Account>> {
    let location = use_location();
    // Blocking: the server waits for it before sending the page, so the header (navigation,
    // account menu, logout) is in the HTML itself and works before (or without) the wasm.
    Resource::new_blocking(
        move || location.pathname.get(),
        |_| async move { crate::api::auth::whoami().await.ok().flatten() },
    )
}

/// Name and roles of the logged-in account, and the logout button. Logout is a plain form
/// post, not an action: it must leave the page entirely, so nothing private stays in the
/// browser's page history.
#[component]
pub fn AccountMenu(account: Account) -> impl IntoView {
    let roles = account
        .roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <div class="account-menu" aria-label="Account">
            <span class="account-name">{account.name.clone()}</span>
            <span class="account-roles">" (" {roles} ")"</span>
            <a href="/account/password">"Change password"</a>
            <form method="post" action="/api/auth/logout">
                <button type="submit">"Log out"</button>
            </form>
        </div>
    }
}
