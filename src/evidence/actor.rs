//! Who acted, as evidence records name it: a logged-in account (`web`), a local user of the
//! server's machine running the command line (`command_line`, named by the operating system),
//! or adamviz itself (`system`, e.g. ending attempts a crash left active).

use serde::{Deserialize, Serialize};

use crate::domain::account::Account;

/// How the actor reached adamviz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActorVia {
    /// A logged-in account in the browser.
    Web,
    /// The command line on the server's machine.
    CommandLine,
    /// adamviz itself.
    System,
}

/// The actor of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Actor {
    /// How.
    pub via: ActorVia,
    /// The account's id (web only).
    pub account_id: Option<i64>,
    /// The account's name, the operating-system user, or `adamviz`.
    pub account_name: String,
}

impl Actor {
    /// A logged-in account.
    pub fn web(account: &Account) -> Self {
        Self {
            via: ActorVia::Web,
            account_id: Some(account.id),
            account_name: account.name.clone(),
        }
    }

    /// The operating-system user running this command line.
    pub fn command_line() -> Self {
        let user = ["USER", "LOGNAME"]
            .iter()
            .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
            // SAFETY: getuid has no preconditions and cannot fail.
            .unwrap_or_else(|| format!("uid {}", unsafe { libc::getuid() }));
        Self {
            via: ActorVia::CommandLine,
            account_id: None,
            account_name: user,
        }
    }

    /// adamviz itself.
    pub fn system() -> Self {
        Self {
            via: ActorVia::System,
            account_id: None,
            account_name: "adamviz".to_owned(),
        }
    }
}
