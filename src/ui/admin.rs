//! The accounts page (admins): every account with its roles and status, a form to create one,
//! and per account a role change and a disable button.

use crate::ui::components::Loaded;
use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;

use crate::api::admin::{
    list_accounts, CreateAccount, DisableAccount, SetRoles, SetTemporaryPassword,
};
use adamviz_model::account::{Account, Role};

/// One checkbox per role, named as the server functions expect.
#[component]
fn RoleBoxes(prefix: String, #[prop(default = Vec::new())] ticked: Vec<Role>) -> impl IntoView {
    Role::ALL
        .into_iter()
        .map(|role| {
            let id = format!("{prefix}-{}", role.as_str());
            let label_for = id.clone();
            view! {
                <label for=label_for class="checkbox">
                    <input type="checkbox" id=id name=role.as_str() value="on" checked=ticked.contains(&role) />
                    {role.as_str()}
                </label>
            }
        })
        .collect_view()
}

/// The accounts page.
#[component]
pub fn AccountsPage() -> impl IntoView {
    let create = ServerAction::<CreateAccount>::new();
    let set_roles = ServerAction::<SetRoles>::new();
    let disable = ServerAction::<DisableAccount>::new();
    let reset = ServerAction::<SetTemporaryPassword>::new();
    let accounts = Resource::new(
        move || {
            (
                create.version().get(),
                set_roles.version().get(),
                disable.version().get(),
                reset.version().get(),
            )
        },
        |_| list_accounts(),
    );
    let create_error = move || create.value().get().and_then(Result::err);
    let about = move |field: &'static str| move || create_error().and_then(|e| e.about(field));
    let general = move || {
        create_error()
            .filter(|e| e.about("name").is_none() && e.about("password").is_none())
            .map(|e| e.to_string())
    };
    let row_error = move || {
        set_roles
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| disable.value().get().and_then(Result::err))
            .or_else(|| reset.value().get().and_then(Result::err))
            .map(|e| e.to_string())
    };
    view! {
        <Title text="Accounts" />
        <section class="section">
            <h1>"Accounts"</h1>
            <p class="purpose">
                "Who may use adamviz and in which roles: authors upload, confirm and run; "
                "reviewers read everything and approve; admins manage accounts and nothing "
                "else (the admin role is never held with author or reviewer). Accounts are "
                "disabled, never deleted: the evidence names them. A password you set is "
                "temporary: its owner must replace it with their own at the first login, so "
                "that nobody but the signer knows a password that signs."
            </p>
            <p class="form-error" role="alert">{row_error}</p>
            <Loaded resource=accounts loading="Loading accounts…" let:list>
                <AccountTable accounts=list set_roles disable reset />
            </Loaded>
            <h2>"Create an account"</h2>
            <ActionForm action=create>
                <div class="field">
                    <label for="new-name">"Name"</label>
                    <input id="new-name" name="name" required autocomplete="off" aria-describedby="new-name-error" />
                    <p id="new-name-error" class="field-error" role="alert">{about("name")}</p>
                </div>
                <div class="field">
                    <label for="new-password">"Temporary password (at least 12 characters)"</label>
                    <input id="new-password" name="password" type="password" required autocomplete="new-password" aria-describedby="new-password-hint new-password-error" />
                    <p id="new-password-hint" class="hint">"Its owner must choose their own at the first login; it stops working after the configured time (72 hours unless the server says otherwise)."</p>
                    <p id="new-password-error" class="field-error" role="alert">{about("password")}</p>
                </div>
                <fieldset>
                    <legend>"Roles"</legend>
                    <RoleBoxes prefix="new-role".to_owned() />
                </fieldset>
                <p class="form-error" role="alert">{general}</p>
                <button type="submit">"Create account"</button>
            </ActionForm>
        </section>
    }
}

#[component]
fn AccountTable(
    accounts: Vec<Account>,
    set_roles: ServerAction<SetRoles>,
    disable: ServerAction<DisableAccount>,
    reset: ServerAction<SetTemporaryPassword>,
) -> impl IntoView {
    view! {
        <table class="accounts">
            <caption>"Every account"</caption>
            <thead>
                <tr>
                    <th scope="col">"Name"</th>
                    <th scope="col">"Roles"</th>
                    <th scope="col">"Status"</th>
                    <th scope="col">"Created"</th>
                    <th scope="col">"Change"</th>
                </tr>
            </thead>
            <tbody>
                {accounts
                    .into_iter()
                    .map(|account| {
                        let roles = account.roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
                        let prefix = format!("roles-{}", account.name);
                        let (name_for_roles, name_for_disable) = (account.name.clone(), account.name.clone());
                        let save_label = format!("Save roles of {}", account.name);
                        let disable_label = format!("Disable {}", account.name);
                        let name_for_reset = account.name.clone();
                        let reset_id = format!("reset-{}", account.name);
                        let reset_for = reset_id.clone();
                        let reset_field = format!("Temporary password for {}", account.name);
                        let reset_label = format!("Set temporary password for {}", account.name);
                        let status = match (account.disabled, account.password_change_required) {
                            (true, _) => "disabled".to_owned(),
                            (false, true) => format!(
                                "active; temporary password (until {})",
                                account.password_expires_at.clone().unwrap_or_else(|| "changed".to_owned())
                            ),
                            (false, false) => "active".to_owned(),
                        };
                        let combined = account.roles.contains(&Role::Admin) && account.roles.len() > 1;
                        let ticked = account.roles.clone();
                        view! {
                            <tr>
                                <th scope="row">{account.name.clone()}</th>
                                <td>
                                    {roles}
                                    {combined.then(|| view! { <strong class="warning">" — admin with other roles: split them (separation of duties); it cannot sign"</strong> })}
                                </td>
                                <td>{status}</td>
                                <td>{account.created_at.clone()}</td>
                                <td>
                                    {(!account.disabled).then(move || view! {
                                        <ActionForm action=set_roles>
                                            <input type="hidden" name="name" value=name_for_roles />
                                            <RoleBoxes prefix=prefix ticked=ticked />
                                            <button type="submit">{save_label}</button>
                                        </ActionForm>
                                        <ActionForm action=reset>
                                            <input type="hidden" name="name" value=name_for_reset />
                                            <label for=reset_for>{reset_field}</label>
                                            <input id=reset_id name="password" type="password" required autocomplete="new-password" />
                                            <button type="submit">{reset_label}</button>
                                        </ActionForm>
                                        <ActionForm action=disable>
                                            <input type="hidden" name="name" value=name_for_disable />
                                            <button type="submit">{disable_label}</button>
                                        </ActionForm>
                                    })}
                                </td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}
