//! Accounts on a real SQLite file: Argon2id hashes, logins with lockout on a test clock, the
//! rules the database keeps (names, roles, no deletes) and the append-only security log.

use adamviz_model::account::Role;
use adamviz_services::accounts::{
    self, create_account, disable_account, hash_password, login, password_matches, set_password,
    set_roles, LoginError,
};
use adamviz_store::db::Database;
use chrono::{DateTime, Duration, Utc};

fn at(minutes: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-04T09:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
        + Duration::minutes(minutes)
}

fn database() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open_in(dir.path()).unwrap();
    (dir, database)
}

const PASSWORD: &str = "correct horse battery";

#[test]
fn argon2id_hashes_round_trip_with_a_salt_of_their_own() {
    let first = hash_password(PASSWORD).unwrap();
    let second = hash_password(PASSWORD).unwrap();
    assert!(
        first.starts_with("$argon2id$v=19$m=19456,t=6,p=1$"),
        "{first}"
    );
    assert_ne!(first, second, "a random salt per password");
    assert!(password_matches(PASSWORD, &first));
    assert!(!password_matches("correct horse battery!", &first));
    assert!(!password_matches(PASSWORD, "not a hash"));
}

#[test]
fn accounts_follow_the_rules_and_never_store_the_password() {
    let (_dir, database) = database();
    let mut connection = database.connection().unwrap();
    let author = create_account(
        &mut connection,
        "ada",
        PASSWORD,
        &[Role::Reviewer, Role::Author],
        adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
        &adamviz_services::accounts::Operator::setup(),
        None,
        at(0),
    )
    .unwrap();
    assert_eq!(author.roles, [Role::Author, Role::Reviewer]);
    for (name, password, roles, expected) in [
        (
            "ADA",
            PASSWORD,
            vec![Role::Author],
            "there is already an account named \"ADA\"",
        ),
        (
            "bob",
            "short",
            vec![Role::Author],
            "password: a password has at least 12 characters",
        ),
        (
            "bob smith",
            PASSWORD,
            vec![Role::Author],
            "name \"bob smith\": a name uses letters, digits, '.', '_' and '-' only",
        ),
        (
            "bob",
            PASSWORD,
            vec![],
            "an account needs at least one role: author, reviewer or admin",
        ),
    ] {
        let error = create_account(
            &mut connection,
            name,
            password,
            &roles,
            adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
            &adamviz_services::accounts::Operator::setup(),
            None,
            at(0),
        )
        .unwrap_err();
        assert_eq!(error.to_string(), expected);
    }
    let stored: String = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT group_concat(password_hash) FROM accounts",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!stored.contains(PASSWORD));
    // The database keeps the rules too.
    for sql in [
        "DELETE FROM accounts",
        "INSERT INTO account_roles VALUES (1, 'superuser')",
        "INSERT INTO accounts (name, password_hash, created_at) VALUES ('eve', 'plain', 'x')",
        "INSERT INTO accounts (name, password_hash, created_at) VALUES ('e ve', '$argon2id$x', 'x')",
    ] {
        assert!(connection.as_sqlite().unwrap().execute(sql, []).is_err(), "{sql} was accepted");
    }
    disable_account(
        &mut connection,
        "ada",
        &adamviz_services::accounts::Operator::command_line(),
        None,
        at(1),
    )
    .unwrap();
    assert!(connection
        .as_sqlite()
        .unwrap()
        .execute("UPDATE accounts SET disabled = 0", [])
        .is_err());
}

#[test]
fn five_failed_logins_lock_a_name_for_fifteen_minutes_whether_or_not_it_exists() {
    let (_dir, database) = database();
    let mut connection = database.connection().unwrap();
    create_account(
        &mut connection,
        "ada",
        PASSWORD,
        &[Role::Author],
        adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
        &adamviz_services::accounts::Operator::setup(),
        None,
        at(0),
    )
    .unwrap();
    assert_eq!(
        login(&connection, "ada", PASSWORD, Some("10.0.0.1"), at(1))
            .unwrap()
            .name,
        "ada"
    );
    for name in ["ada", "nobody"] {
        for attempt in 1..=4 {
            let error = login(&connection, name, "wrong password!", None, at(2)).unwrap_err();
            assert!(
                matches!(error, LoginError::Invalid),
                "{name} attempt {attempt}: {error}"
            );
        }
        let error = login(&connection, name, "wrong password!", None, at(3)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "too many failed logins for this name: it is locked for 15 minutes (until 2026-12-04T09:18:00.000000Z)"
        );
    }
    // Locked: even the right password is refused, until the lockout ends.
    assert!(matches!(
        login(&connection, "ada", PASSWORD, None, at(17)),
        Err(LoginError::Locked { .. })
    ));
    assert_eq!(
        login(&connection, "ada", PASSWORD, None, at(19))
            .unwrap()
            .name,
        "ada"
    );
    // Failures spread over more than the window do not lock.
    for minute in [20, 26, 32, 38, 44, 50] {
        assert!(matches!(
            login(&connection, "ada", "wrong password!", None, at(minute)),
            Err(LoginError::Invalid)
        ));
    }
    // A disabled account cannot log in, with the same answer as a wrong password.
    disable_account(
        &mut connection,
        "ada",
        &adamviz_services::accounts::Operator::command_line(),
        None,
        at(60),
    )
    .unwrap();
    assert!(matches!(
        login(&connection, "ada", PASSWORD, None, at(61)),
        Err(LoginError::Invalid)
    ));
    // A name's case does not matter, for accounts and for lockouts.
    create_account(
        &mut connection,
        "Grace",
        PASSWORD,
        &[Role::Reviewer],
        adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
        &adamviz_services::accounts::Operator::setup(),
        None,
        at(70),
    )
    .unwrap();
    assert_eq!(
        login(&connection, "grace", PASSWORD, None, at(71))
            .unwrap()
            .name,
        "Grace"
    );
}

#[test]
fn the_last_active_admin_stays_and_impossible_names_write_nothing() {
    let (_dir, database) = database();
    let mut connection = database.connection().unwrap();
    create_account(
        &mut connection,
        "root",
        PASSWORD,
        &[Role::Admin],
        adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
        &adamviz_services::accounts::Operator::setup(),
        None,
        at(0),
    )
    .unwrap();
    for error in [
        disable_account(
            &mut connection,
            "root",
            &adamviz_services::accounts::Operator::command_line(),
            None,
            at(1),
        )
        .unwrap_err(),
        set_roles(
            &mut connection,
            "root",
            &[Role::Author],
            &adamviz_services::accounts::Operator::command_line(),
            None,
            at(1),
        )
        .unwrap_err(),
    ] {
        assert_eq!(
            error.to_string(),
            "\"root\" is the last active admin: make another account admin first"
        );
    }
    create_account(
        &mut connection,
        "second",
        PASSWORD,
        &[Role::Admin],
        adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
        &adamviz_services::accounts::Operator::setup(),
        None,
        at(2),
    )
    .unwrap();
    set_roles(
        &mut connection,
        "root",
        &[Role::Author],
        &adamviz_services::accounts::Operator::command_line(),
        None,
        at(3),
    )
    .unwrap();
    assert!(disable_account(
        &mut connection,
        "second",
        &adamviz_services::accounts::Operator::command_line(),
        None,
        at(4)
    )
    .is_err());
    // A name no account can have: refused before anything is written.
    let huge = "x".repeat(100_000);
    let before: i64 = connection
        .as_sqlite()
        .unwrap()
        .query_row("SELECT count(*) FROM security_events", [], |r| r.get(0))
        .unwrap();
    for name in [huge.as_str(), "two words", ""] {
        assert!(matches!(
            login(&connection, name, PASSWORD, None, at(5)),
            Err(LoginError::Invalid)
        ));
    }
    let after: i64 = connection
        .as_sqlite()
        .unwrap()
        .query_row("SELECT count(*) FROM security_events", [], |r| r.get(0))
        .unwrap();
    assert_eq!(before, after);
}

#[test]
fn every_account_change_is_a_security_event_and_the_log_is_append_only() {
    let (_dir, database) = database();
    let mut connection = database.connection().unwrap();
    let admin = create_account(
        &mut connection,
        "root",
        PASSWORD,
        &[Role::Admin],
        adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
        &adamviz_services::accounts::Operator::setup(),
        None,
        at(0),
    )
    .unwrap();
    create_account(
        &mut connection,
        "ada",
        PASSWORD,
        &[Role::Author],
        adamviz_services::accounts::PasswordOrigin::ChosenByOwner,
        &adamviz_services::accounts::Operator::setup(),
        Some("10.0.0.2"),
        at(1),
    )
    .unwrap();
    set_roles(
        &mut connection,
        "ada",
        &[Role::Author, Role::Reviewer],
        &adamviz_services::accounts::Operator::command_line(),
        None,
        at(2),
    )
    .unwrap();
    set_password(
        &mut connection,
        "ada",
        "another long password",
        adamviz_services::accounts::PasswordOrigin::temporary_for(at(3), 72),
        &adamviz_services::accounts::Operator::account(&admin),
        None,
        at(3),
    )
    .unwrap();
    login(
        &connection,
        "ada",
        "another long password",
        Some("10.0.0.3"),
        at(4),
    )
    .unwrap();
    let _ = login(
        &connection,
        "ada",
        "wrong password!",
        Some("10.0.0.3"),
        at(5),
    );
    disable_account(
        &mut connection,
        "ada",
        &adamviz_services::accounts::Operator::account(&admin),
        None,
        at(6),
    )
    .unwrap();
    let mut statement = connection
        .as_sqlite().unwrap().prepare("SELECT event, account_name, outcome, coalesce(detail, ''), coalesce(remote_addr, '') FROM security_events ORDER BY seq")
        .unwrap();
    let events: Vec<(String, String, String, String, String)> = statement
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e.0.as_str(), e.2.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("account_created", "success"),
            ("account_created", "success"),
            ("roles_changed", "success"),
            ("password_changed", "success"),
            ("login", "success"),
            ("login", "failure"),
            ("account_disabled", "success"),
        ]
    );
    assert_eq!(events[2].3, "author -> author,reviewer");
    assert_eq!(events[4].4, "10.0.0.3");
    let everything = format!("{events:?}");
    assert!(
        !everything.contains("another long password") && !everything.contains("wrong password!")
    );
    for sql in [
        "UPDATE security_events SET outcome = 'success'",
        "DELETE FROM security_events",
    ] {
        let error = connection
            .as_sqlite()
            .unwrap()
            .execute(sql, [])
            .unwrap_err();
        assert!(
            error.to_string().contains("security_events is append-only"),
            "{error}"
        );
    }
    assert_eq!(accounts::account_count(&connection).unwrap(), 2);
}
