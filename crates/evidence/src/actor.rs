//! Who acted, as evidence records name it: a logged-in account (`web`), a local user of the
//! server's machine running the command line (`command_line`, named by the operating system),
//! or adamviz itself (`system`, e.g. ending attempts a crash left active).

use serde::{Deserialize, Serialize};

use adamviz_model::account::Account;

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

    /// The operating-system user running this command line, from the process's real uid
    /// (never `$USER` or `$LOGNAME`, which whoever starts the process sets at will).
    pub fn command_line() -> Self {
        Self {
            via: ActorVia::CommandLine,
            account_id: None,
            account_name: real_user_name(),
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

/// The name of the process's real user, from the password database (`getuid` →
/// `getpwuid_r`), or `uid N` when the database has no entry for it. The environment plays no
/// part: `USER=nobody adamviz run …` is still run by its real user.
pub fn real_user_name() -> String {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: passwd is plain data that getpwuid_r fills in.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call: the buffer for its stated length, the
    // entry and the result pointer for writing.
    let status = unsafe {
        libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() || entry.pw_name.is_null() {
        return format!("uid {uid}");
    }
    // SAFETY: on success pw_name points at a NUL-terminated string inside `buffer`.
    let name = unsafe { std::ffi::CStr::from_ptr(entry.pw_name) };
    match name.to_str() {
        Ok(name) if !name.is_empty() => name.to_owned(),
        _ => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::real_user_name;

    #[test]
    fn the_command_line_user_is_the_password_database_name_of_the_real_uid() {
        // `id -un` prints the password database's name for the real uid, whatever USER says.
        let expected = std::process::Command::new("id")
            .arg("-un")
            .env("USER", "nobody")
            .env("LOGNAME", "nobody")
            .output()
            .unwrap();
        let expected = String::from_utf8(expected.stdout)
            .unwrap()
            .trim()
            .to_owned();
        assert!(!expected.is_empty());
        assert_eq!(real_user_name(), expected);
    }
}
