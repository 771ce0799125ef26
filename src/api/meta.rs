//! What the footer says of this installation: the version, the source commit it was built from
//! and the fingerprint of the key that signs its evidence bundles (an auditor compares it with
//! the key a bundle names). Logged-in accounts only: an anonymous visitor learns neither the
//! exact build (which known flaws apply) nor the key.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::api::error::AppError;

/// This installation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallationInfo {
    /// The package version.
    pub version: String,
    /// The source commit (40 hex digits) or `unknown`.
    pub source_commit: String,
    /// `sha256:` and the SHA-256 of the signing key's public key, when the server has one.
    pub key_fingerprint: Option<String>,
}

/// The installation's version, source and signing-key fingerprint (logged in).
#[server(prefix = "/api", endpoint = "meta/installation")]
pub async fn installation() -> Result<InstallationInfo, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        current_account().await?;
        let context = context()?;
        Ok(InstallationInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            source_commit: adamviz_services::provenance::SOURCE_COMMIT.to_owned(),
            key_fingerprint: context.services.key_fingerprint(),
        })
    })
    .await
}
