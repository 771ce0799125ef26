//! Accounts as the pages and the evidence see them: roles, an account's public facts (never
//! its password or hash), and the rules for names and passwords. Shared with the browser.

use serde::{Deserialize, Serialize};

/// At least this many characters in a password.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// What an account may do. One account may hold several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Uploads datasets, confirms specs, runs them.
    Author,
    /// Reads everything; approves (later).
    Reviewer,
    /// Manages accounts; reads everything.
    Admin,
}

impl Role {
    /// Every role, in the order pages list them.
    pub const ALL: [Role; 3] = [Role::Author, Role::Reviewer, Role::Admin];

    /// `author`, `reviewer` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Author => "author",
            Role::Reviewer => "reviewer",
            Role::Admin => "admin",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that names no role.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a role: author, reviewer or admin")]
pub struct UnknownRole(pub String);

impl std::str::FromStr for Role {
    type Err = UnknownRole;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == text)
            .ok_or_else(|| UnknownRole(text.to_owned()))
    }
}

/// An account's public facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its roles, sorted.
    pub roles: Vec<Role>,
    /// Disabled accounts cannot log in.
    pub disabled: bool,
    /// When it was created (canonical UTC).
    pub created_at: String,
    /// Its password was set by someone else (an administrator, the command line): the owner
    /// must choose their own before anything else works.
    #[serde(default)]
    pub password_change_required: bool,
    /// When a temporary password stops working (canonical UTC).
    #[serde(default)]
    pub password_expires_at: Option<String>,
    /// When the owner last chose the password (canonical UTC); none while it never did.
    #[serde(default)]
    pub password_set_by_owner_at: Option<String>,
}

impl Account {
    /// Whether the account holds `role`.
    pub fn has(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }

    /// Whether the account holds any of `roles`.
    pub fn has_any(&self, roles: &[Role]) -> bool {
        roles.iter().any(|role| self.has(*role))
    }
}

/// A change of an account's password since its owner's previous login, as the owner is told
/// of it at the next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasswordChangeNotice {
    /// When (canonical UTC).
    pub at: String,
    /// Who set it: an administrator's account name, `command line: <user>`, or the account's
    /// own name.
    pub by: String,
    /// Whether the account itself made the change (in a session of its own).
    pub by_owner: bool,
    /// The address the change came from, when the web was used.
    pub remote_addr: Option<String>,
}

/// A rule of accounts that a name, a password or a set of roles breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccountRuleError {
    /// Admin together with author or reviewer.
    #[error(
        "separation of duties: the admin role manages accounts only and cannot be held \
         together with author or reviewer (make a second account)"
    )]
    AdminWithOtherRoles,
    /// A name too short or too long.
    #[error("a name has 1 to 64 characters")]
    NameLength,
    /// A name with other characters.
    #[error("a name uses letters, digits, '.', '_' and '-' only")]
    NameCharacters,
    /// A password too short.
    #[error("a password has at least {MIN_PASSWORD_CHARS} characters")]
    PasswordTooShort,
}

/// Separation of duties: the admin role manages accounts only, so it is never held together
/// with author or reviewer.
pub fn check_duties(roles: &[Role]) -> Result<(), AccountRuleError> {
    if roles.contains(&Role::Admin) && roles.iter().any(|role| *role != Role::Admin) {
        return Err(AccountRuleError::AdminWithOtherRoles);
    }
    Ok(())
}

/// Why a name cannot be an account name.
pub fn check_name(name: &str) -> Result<(), AccountRuleError> {
    if name.is_empty() || name.len() > 64 {
        return Err(AccountRuleError::NameLength);
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(AccountRuleError::NameCharacters);
    }
    Ok(())
}

/// Why a password is not allowed.
pub fn check_password(password: &str) -> Result<(), AccountRuleError> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(AccountRuleError::PasswordTooShort);
    }
    Ok(())
}
