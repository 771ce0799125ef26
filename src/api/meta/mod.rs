//! What the footer says of this installation: the version, the source commit it was built from
//! and the fingerprint of the key that signs its evidence bundles (public: an auditor compares
//! it with the key a bundle names).

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

/// The installation's version, source and signing-key fingerprint.
#[server(prefix = "/api", endpoint = "meta/installation")]
pub async fn installation() -> Result<InstallationInfo, AppError> {
    use crate::api::boundary::*;
    boundary(async move {
        let context = context()?;
        Ok(InstallationInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            source_commit: crate::provenance::SOURCE_COMMIT.to_owned(),
            key_fingerprint: context.key.as_ref().map(|k| k.fingerprint()),
        })
    })
    .await
}
