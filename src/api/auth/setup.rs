//! `setup`: creates the first admin with the one-time setup token, logs it in and goes home.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::establish;
use crate::api::error::AppError;

/// Creates the first admin with the one-time setup token, logs it in and goes home.
#[server(prefix = "/api", endpoint = "auth/setup")]
pub async fn setup(
    token: String,
    name: String,
    password: String,
    password_again: String,
) -> Result<(), AppError> {
    use crate::api::boundary::*;
    use adamviz_model::account::{check_name, check_password};
    use adamviz_services::accounts::AccountError;
    boundary(async move {
        let context = context()?;
        if !context.setup.open_for(&token, &context.services).await {
            return Err(AppError::NotFound("setup link".to_owned()));
        }
        check_name(&name).map_err(|m| AppError::invalid("name", m.to_string()))?;
        check_password(&password).map_err(|m| AppError::invalid("password", m.to_string()))?;
        if password != password_again {
            return Err(AppError::invalid(
                "password_again",
                "the two passwords differ",
            ));
        }
        if !context.setup.take(&token) {
            return Err(AppError::NotFound("setup link".to_owned()));
        }
        let remote = remote_addr().await;
        let account = context
            .services
            .create_first_admin(name, password, remote)
            .await
            .map_err(|error| {
                use_case_error(error, |error| match error {
                    AccountError::Database(error) => internal(error),
                    AccountError::SetupDone => {
                        context.setup.revoke();
                        AppError::NotFound("setup link".to_owned())
                    }
                    other => AppError::invalid("name", other.to_string()),
                })
            })?;
        establish(&session().await?, account.id).await?;
        leptos_axum::redirect("/");
        Ok(())
    })
    .await
}
