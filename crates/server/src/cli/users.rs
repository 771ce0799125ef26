//! `adamviz users add|list|disable|set-password`: accounts from the command line. Passwords
//! are read from the terminal without echo, or from stdin when it is not a terminal; they are
//! never taken as arguments (they would land in the shell history and the process list). A
//! password set here is temporary: its owner must choose their own at the first login, and it
//! stops working after `--temporary-password-hours`. The security log names the operating-system
//! user (from the real uid) who ran the command.

use std::io::IsTerminal;

use anyhow::Context as _;
use clap::Subcommand;

use super::run::DataDirArg;
use adamviz_model::account::{Role, UnknownRole};
use adamviz_services::accounts;

/// `adamviz users …`.
#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create an account (password from the terminal, or stdin when not a terminal).
    Add {
        /// The account name (letters, digits, '.', '_', '-').
        name: String,
        /// A role: author, reviewer or admin (repeatable; admin is never combined with the
        /// others).
        #[arg(long = "role", required = true, value_parser = parse_role)]
        roles: Vec<Role>,
        /// The temporary password stops working this many hours from now.
        #[command(flatten)]
        lifetime: TemporaryLifetime,
        /// The data directory.
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Every account with its roles and whether it is disabled.
    List(DataDirArg),
    /// Disable an account: it cannot log in and its sessions end at once.
    Disable {
        /// The account name.
        name: String,
        /// The data directory.
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Set a new temporary password (from the terminal, or stdin when not a terminal); every
    /// session of the account ends.
    SetPassword {
        /// The account name.
        name: String,
        /// The temporary password stops working this many hours from now.
        #[command(flatten)]
        lifetime: TemporaryLifetime,
        /// The data directory.
        #[command(flatten)]
        data: DataDirArg,
    },
}

/// How long a temporary password works.
#[derive(Debug, Clone, clap::Args)]
pub struct TemporaryLifetime {
    /// Hours until the temporary password stops working.
    #[arg(long = "temporary-password-hours", env = "ADAMVIZ_TEMPORARY_PASSWORD_HOURS", default_value_t = accounts::DEFAULT_TEMPORARY_PASSWORD_HOURS, value_parser = clap::value_parser!(i64).range(1..=24 * 90))]
    pub hours: i64,
}

fn parse_role(text: &str) -> Result<Role, UnknownRole> {
    text.parse()
}

/// The new password: asked twice on a terminal, one line of stdin otherwise.
fn read_new_password() -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("Password (at least 12 characters): ")?;
        let again = rpassword::prompt_password("Password again: ")?;
        anyhow::ensure!(first == again, "the two passwords differ");
        Ok(first)
    } else {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .context("cannot read the password from stdin")?;
        Ok(line.trim_end_matches(['\n', '\r']).to_owned())
    }
}

/// Runs `adamviz users …`.
pub fn run(command: UsersCommand) -> anyhow::Result<()> {
    let now = accounts::now();
    let actor_host = Some("command line");
    let by = accounts::Operator::command_line();
    match command {
        UsersCommand::Add {
            name,
            roles,
            lifetime,
            data,
        } => {
            let password = read_new_password()?;
            let database = data.open()?;
            let mut connection = database.connection()?;
            let account = accounts::create_account(
                &mut connection,
                &name,
                &password,
                &roles,
                accounts::PasswordOrigin::temporary_for(now, lifetime.hours),
                &by,
                actor_host,
                now,
            )?;
            println!(
                "created {} ({}) with a temporary password: it must be replaced at the first login, and stops working at {}",
                account.name,
                roles_text(&account.roles),
                account.password_expires_at.as_deref().unwrap_or("?")
            );
        }
        UsersCommand::List(data) => list(&data)?,
        UsersCommand::Disable { name, data } => {
            let database = data.open()?;
            let mut connection = database.connection()?;
            let account = accounts::disable_account(&mut connection, &name, &by, actor_host, now)?;
            println!("disabled {}; its sessions are ended", account.name);
        }
        UsersCommand::SetPassword {
            name,
            lifetime,
            data,
        } => {
            let password = read_new_password()?;
            let database = data.open()?;
            let mut connection = database.connection()?;
            let account = accounts::set_password(
                &mut connection,
                &name,
                &password,
                accounts::PasswordOrigin::temporary_for(now, lifetime.hours),
                &by,
                actor_host,
                now,
            )?;
            println!(
                "temporary password set for {}: every session of the account ended; it must be replaced at the next login, and stops working at {}",
                account.name,
                account.password_expires_at.as_deref().unwrap_or("?")
            );
        }
    }
    Ok(())
}

/// `adamviz users list`: one line per account, with its roles and state.
fn list(data: &DataDirArg) -> anyhow::Result<()> {
    let database = data.open()?;
    let connection = database.connection()?;
    for account in accounts::list_accounts(&connection)? {
        println!(
            "{:<24} {:<24} {}{}{}",
            account.name,
            roles_text(&account.roles),
            account.created_at,
            if account.disabled { "  disabled" } else { "" },
            if account.password_change_required {
                "  temporary password"
            } else {
                ""
            }
        );
    }
    Ok(())
}

fn roles_text(roles: &[Role]) -> String {
    roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
