//! Server configuration: the site settings from `Leptos.toml` (the same table cargo-leptos reads
//! from Cargo.toml), overridden by command-line flags, plus the data directory.

use std::{
    io,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use leptos::config::{errors::LeptosConfigError, get_config_from_str, LeptosOptions};

/// What `adamviz serve` needs to start.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Site settings (address, site root, output name), with the command-line overrides applied.
    pub leptos_options: LeptosOptions,
    /// Absolute path of the directory that holds all state.
    pub data_dir: PathBuf,
    /// The R sandbox's isolation policy.
    pub isolation: adamviz_engine::runner::sandbox::IsolationPolicy,
    /// The URL people reach the server at (`--public-url`), when it is not the bound address:
    /// its origin is the only one state-changing requests may come from, and an `https` one
    /// makes the session cookie `Secure`.
    pub public_url: Option<String>,
    /// The reverse proxies whose forwarding headers name the client (`--trusted-proxy`).
    pub trusted_proxies: crate::client_address::TrustedProxies,
    /// Session lifetimes.
    pub sessions: adamviz::api::boundary::SessionSettings,
    /// Uploads larger than this are refused while they stream (`--upload-limit`).
    pub upload_limit: u64,
    /// How long a password an administrator sets works (`--temporary-password-hours`).
    pub temporary_password_hours: i64,
    /// The run queue: how many runners this server starts (`--runners`), leases and retries.
    pub queue: adamviz_services::runs::QueueSettings,
    /// Where the database is (`--database`).
    pub database: crate::locations::DatabaseArgs,
    /// Where the objects of record live (`--objects`).
    pub objects: crate::locations::ObjectsArgs,
}

/// Why the server could not be configured.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The site settings file could not be read.
    #[error("cannot read the site settings file {path} (run adamviz from the project directory or pass --site-config)")]
    ReadSiteSettings {
        /// The file that was looked for.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: io::Error,
    },
    /// The site settings file was read but is not a valid `[package.metadata.leptos]` table.
    #[error("the site settings file {path} is not valid")]
    ParseSiteSettings {
        /// The file that was parsed.
        path: PathBuf,
        /// What the parser said.
        #[source]
        source: LeptosConfigError,
    },
    /// The data directory could not be created or is not a directory.
    #[error("cannot use the data directory {path}")]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: io::Error,
    },
}

impl ServeConfig {
    /// Reads the site settings at `site_config`, applies `addr` if given, and creates the data
    /// directory if it does not exist yet.
    pub fn load(
        site_config: &Path,
        addr: Option<SocketAddr>,
        data_dir: PathBuf,
    ) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(site_config).map_err(|source| {
            ConfigError::ReadSiteSettings {
                path: site_config.to_path_buf(),
                source,
            }
        })?;
        let mut leptos_options =
            get_config_from_str(&text).map_err(|source| ConfigError::ParseSiteSettings {
                path: site_config.to_path_buf(),
                source,
            })?;
        if let Some(addr) = addr {
            leptos_options.site_addr = addr;
        }
        let data_dir = prepare_data_dir(data_dir)?;
        Ok(Self {
            leptos_options,
            data_dir,
            public_url: None,
            trusted_proxies: crate::client_address::TrustedProxies::none(),
            sessions: adamviz::api::boundary::SessionSettings::default(),
            upload_limit: adamviz_services::upload::DEFAULT_UPLOAD_LIMIT,
            temporary_password_hours: adamviz_services::accounts::DEFAULT_TEMPORARY_PASSWORD_HOURS,
            queue: adamviz_services::runs::QueueSettings::default(),
            database: crate::locations::DatabaseArgs::default(),
            objects: crate::locations::ObjectsArgs::default(),
            isolation: Default::default(),
        })
    }
}

/// Creates the data directory on first start (0700) and returns its absolute path; in an
/// existing one, takes away what group and others may read, with a warning for each change
/// (it holds sessions and password hashes).
fn prepare_data_dir(path: PathBuf) -> Result<PathBuf, ConfigError> {
    let data_dir_error = |source| ConfigError::DataDir {
        path: path.clone(),
        source,
    };
    adamviz_store::private_files::create_private_dir_all(&path).map_err(data_dir_error)?;
    let path = std::fs::canonicalize(&path).map_err(data_dir_error)?;
    let tightened =
        adamviz_store::private_files::tighten(&path).map_err(|source| ConfigError::DataDir {
            path: path.clone(),
            source,
        })?;
    for entry in &tightened {
        tracing::warn!(
            path = %entry.path.display(),
            was = format!("{:o}", entry.was),
            "group or others could read this file of the data directory: made private to the service"
        );
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE_SETTINGS: &str = r#"
[package.metadata.leptos]
output-name = "adamviz"
site-root = "target/site"
site-pkg-dir = "pkg"
site-addr = "127.0.0.1:3000"
reload-port = 3001
"#;

    #[test]
    fn loads_site_settings_applies_the_address_and_creates_the_data_dir() {
        let temp = tempfile::tempdir().unwrap();
        let settings = temp.path().join("Leptos.toml");
        std::fs::write(&settings, SITE_SETTINGS).unwrap();
        let data_dir = temp.path().join("nested").join("adamviz-data");

        let config = ServeConfig::load(
            &settings,
            Some("127.0.0.1:4999".parse().unwrap()),
            data_dir.clone(),
        )
        .expect("loads");

        assert_eq!(config.leptos_options.site_addr.port(), 4999);
        assert_eq!(&*config.leptos_options.output_name, "adamviz");
        assert!(data_dir.is_dir(), "the data directory is created");
        assert!(config.data_dir.is_absolute());
    }

    #[test]
    fn without_an_address_the_site_settings_decide() {
        let temp = tempfile::tempdir().unwrap();
        let settings = temp.path().join("Leptos.toml");
        std::fs::write(&settings, SITE_SETTINGS).unwrap();
        let config = ServeConfig::load(&settings, None, temp.path().join("d")).unwrap();
        assert_eq!(
            config.leptos_options.site_addr,
            "127.0.0.1:3000".parse().unwrap()
        );
    }

    #[test]
    fn a_missing_settings_file_names_the_file() {
        let temp = tempfile::tempdir().unwrap();
        let missing = temp.path().join("Leptos.toml");
        let err = ServeConfig::load(&missing, None, temp.path().join("d")).unwrap_err();
        assert!(
            matches!(err, ConfigError::ReadSiteSettings { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains(&missing.display().to_string()));
        assert!(
            !temp.path().join("d").exists(),
            "nothing is created on a failed start"
        );
    }

    #[test]
    fn a_data_dir_that_is_a_file_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let settings = temp.path().join("Leptos.toml");
        std::fs::write(&settings, SITE_SETTINGS).unwrap();
        let file = temp.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let err = ServeConfig::load(&settings, None, file.clone()).unwrap_err();
        assert!(
            matches!(err, ConfigError::DataDir { ref path, .. } if path == &file),
            "{err:?}"
        );
    }
}
