//! Signatures only the signer can make, tried as an insider would: the administrator who sets a
//! password, the admin who would also review, the database writer who appends a ghost approval.
//! Each attack is a test named after it (docs/security.md's attack table lists them), with real
//! SQLite, objects and R.

#[path = "support/flow_server.rs"]
mod flow_server;

use adamviz_evidence::{
    actor::Actor,
    approval::{ApprovalRecord, Decision, Signature, SignatureMeaning, Signer},
};
use adamviz_model::{
    account::{Account, Role},
    digest::Sha256Digest,
    ids::RevisionId,
};
use adamviz_services::{
    accounts::{
        change_own_password, create_account, login, now, role_grant_at, set_password, set_roles,
        timestamp, AccountError, LoginError, Operator, PasswordChange, PasswordChangeError,
        PasswordOrigin,
    },
    approvals::{evidence_head, sign, SignError, SignRequest},
};
use adamviz_store::{audit::audit, ledger::append_evidence};
use chrono::{DateTime, Duration, Utc};
use flow_server::*;

const OWN: &str = "a password only its owner knows";
const TEMPORARY: &str = "the admin typed this one";

fn admin(server: &Server) -> Account {
    let mut connection = server.database.connection().unwrap();
    create_account(
        &mut connection,
        "ada",
        OWN,
        &[Role::Admin],
        PasswordOrigin::ChosenByOwner,
        &Operator::setup(),
        None,
        now(),
    )
    .unwrap()
}

fn approve(id: &RevisionId, password: &str) -> SignRequest {
    SignRequest {
        revision_id: id.clone(),
        decision: Decision::Approved,
        meaning: Some(SignatureMeaning::Approved),
        comment: None,
        password: password.to_owned(),
        evidence_head_seen: None,
        user_name: None,
    }
}

fn at(base: DateTime<Utc>, hours: i64) -> DateTime<Utc> {
    base + Duration::hours(hours)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_the_admin_signs_with_a_password_it_set() {
    let mut server = server(1);
    let ada = admin(&server);
    let ann = server.account_with("ann", OWN, &[Role::Author]);
    server.actor = Actor::web(&ann);
    let id = server.verified("admin-set-password").await;
    let mut connection = server.database.connection().unwrap();
    let t0 = now();
    // The admin creates the reviewer with a password the admin knows.
    let rex = create_account(
        &mut connection,
        "rex",
        TEMPORARY,
        &[Role::Reviewer],
        PasswordOrigin::temporary_for(t0, 72),
        &Operator::account(&ada),
        None,
        t0,
    )
    .unwrap();
    assert!(rex.password_change_required);
    assert_eq!(rex.password_set_by_owner_at, None);
    // The admin (or anyone told the password) logs in as rex: the account must change it first,
    // and it cannot sign with it.
    let logged_in = login(&connection, "rex", TEMPORARY, None, t0).unwrap();
    assert!(logged_in.password_change_required);
    let refused = sign(&mut connection, &rex, &approve(&id, TEMPORARY), None, t0).unwrap_err();
    assert!(matches!(refused, SignError::PasswordNotOwn), "{refused:?}");
    // Rex chooses his own: refused without the current one, when equal to it, when the two
    // differ, when too short — each naming its field.
    let change = |current: &str, new: &str, again: &str| PasswordChange {
        current_password: current.to_owned(),
        new_password: new.to_owned(),
        new_password_again: again.to_owned(),
    };
    let refused = |connection: &mut adamviz_store::db::Connection, c: PasswordChange| {
        change_own_password(connection, rex.id, &c, None, None, t0).unwrap_err()
    };
    let wrong = refused(&mut connection, change("not it at all!", OWN, OWN));
    assert!(matches!(wrong, PasswordChangeError::WrongCurrent));
    assert_eq!(wrong.field(), "current_password");
    let same = refused(&mut connection, change(TEMPORARY, TEMPORARY, TEMPORARY));
    assert!(matches!(same, PasswordChangeError::Unchanged), "{same}");
    let differ = refused(
        &mut connection,
        change(TEMPORARY, OWN, "something else entirely"),
    );
    assert_eq!(differ.field(), "new_password_again");
    let short = refused(&mut connection, change(TEMPORARY, "short", "short"));
    assert_eq!(short.field(), "new_password");
    let chosen_at = at(t0, 1);
    let rex = change_own_password(
        &mut connection,
        rex.id,
        &change(TEMPORARY, OWN, OWN),
        None,
        None,
        chosen_at,
    )
    .unwrap();
    assert!(!rex.password_change_required);
    assert_eq!(
        rex.password_set_by_owner_at.as_deref(),
        Some(timestamp(chosen_at).as_str())
    );
    // The admin's password is gone; the owner's signs, and the record says when it was chosen
    // and under whose grant the reviewer role was held.
    assert!(matches!(
        login(&connection, "rex", TEMPORARY, None, at(t0, 2)).unwrap_err(),
        LoginError::Invalid
    ));
    let signed = sign(&mut connection, &rex, &approve(&id, OWN), None, at(t0, 2)).unwrap();
    let record: serde_json::Value = {
        let bytes: Vec<u8> = connection
            .as_sqlite()
            .unwrap()
            .query_row(
                "SELECT record FROM evidence_ledger WHERE record_hash = ?1",
                [signed.approval_hash.to_hex()],
                |row| row.get(0),
            )
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    };
    assert_eq!(record["schema_version"], "approval-v3");
    assert_eq!(record["signer"]["password_chosen_at"], timestamp(chosen_at));
    // Nobody but rex ever set this password after the account was made: no reset to show.
    assert!(
        record["signer"].get("password_reset_at").is_none(),
        "{record}"
    );
    assert_eq!(record["signer"]["reviewer_granted_at"], timestamp(t0));
    assert_eq!(record["signer"]["reviewer_granted_by"], "ada");
    // An admin reset makes it temporary again (the owner's last choice is kept as a fact).
    let rex = set_password(
        &mut connection,
        "rex",
        "the admin's second one",
        PasswordOrigin::temporary_for(at(t0, 3), 72),
        &Operator::account(&ada),
        None,
        at(t0, 3),
    )
    .unwrap();
    assert!(rex.password_change_required);
    assert_eq!(
        rex.password_set_by_owner_at.as_deref(),
        Some(timestamp(chosen_at).as_str())
    );
    let report = audit(&connection, &server.objects).unwrap();
    assert!(report.approval_problems.is_empty(), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_an_admin_reset_then_a_signature_is_shown_everywhere() {
    let mut server = server(1);
    let ada = admin(&server);
    let ann = server.account_with("ann", OWN, &[Role::Author]);
    let rex = server.account_with("rex", OWN, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let id = server.verified("admin-reset-then-sign").await;
    let mut connection = server.database.connection().unwrap();
    let t0 = now();
    login(&connection, "rex", OWN, Some("10.0.0.3"), at(t0, -48)).unwrap();
    // The admin resets rex's password, logs in as rex, chooses a new one and signs as rex:
    // every check of the signing path passes, as it would for rex.
    set_password(
        &mut connection,
        "rex",
        TEMPORARY,
        PasswordOrigin::temporary_for(t0, 72),
        &Operator::account(&ada),
        Some("10.0.0.9"),
        t0,
    )
    .unwrap();
    let minutes = |m: i64| t0 + Duration::minutes(m);
    login(&connection, "rex", TEMPORARY, Some("10.0.0.9"), minutes(1)).unwrap();
    let takeover = "the admin's choice for rex";
    let change = PasswordChange {
        current_password: TEMPORARY.to_owned(),
        new_password: takeover.to_owned(),
        new_password_again: takeover.to_owned(),
    };
    change_own_password(
        &mut connection,
        rex.id,
        &change,
        None,
        Some("10.0.0.9"),
        minutes(2),
    )
    .unwrap();
    let signed = sign(
        &mut connection,
        &rex,
        &approve(&id, takeover),
        Some("10.0.0.9"),
        minutes(40),
    )
    .unwrap();
    // The approval record names the reset: when, and by whom.
    let bytes: Vec<u8> = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT record FROM evidence_ledger WHERE record_hash = ?1",
            [signed.approval_hash.to_hex()],
            |row| row.get(0),
        )
        .unwrap();
    let record: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(record["schema_version"], "approval-v3");
    assert_eq!(record["signer"]["password_reset_at"], timestamp(t0));
    assert_eq!(record["signer"]["password_reset_by"], "ada");
    // The revision page's signature says it beside the signature.
    let views = adamviz_services::approvals::signatures_of(&connection, &id).unwrap();
    assert_eq!(views[0].password_reset_by.as_deref(), Some("ada"));
    assert_eq!(views[0].password_reset_at, Some(timestamp(t0)));
    // The evidence bundle (its README and the validator's words) says it too.
    let summary = adamviz_evidence::summary::record_summary(&record);
    assert!(
        summary.contains("last set by someone else: ada"),
        "{summary}"
    );
    // `ledger verify` passes (nothing is forged) and lists the signature as a finding to
    // review: signed 40 minutes after someone else set the signer's password.
    let data_dir = server._dir.path().join("data");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args(["ledger", "verify", "--data-dir"])
        .arg(&data_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("findings to review: 1 signature(s) made within 72 h after someone else set the signer's password"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "rex signed at {}, 0 h 40 min after ada set their password",
            timestamp(minutes(40))
        )),
        "{stdout}"
    );
    let narrow = std::process::Command::new(env!("CARGO_BIN_EXE_adamviz"))
        .args([
            "ledger",
            "verify",
            "--reset-window-hours",
            "1",
            "--data-dir",
        ])
        .arg(&data_dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&narrow.stdout).contains("findings to review: 1 "));
    // Rex, at his next login, is told: the reset by ada, and the change made in his name.
    let notices =
        adamviz_services::accounts::password_change_notices(&connection, rex.id, minutes(60 * 24))
            .unwrap();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert_eq!(
        (notices[0].by.as_str(), notices[0].by_owner),
        ("ada", false)
    );
    assert_eq!(notices[0].at, timestamp(t0));
    assert!(notices[1].by_owner);
    assert_eq!(notices[1].remote_addr.as_deref(), Some("10.0.0.9"));
    // An account whose owner alone changed the password hears nothing.
    let quiet =
        adamviz_services::accounts::password_change_notices(&connection, ann.id, t0).unwrap();
    assert!(quiet.is_empty(), "{quiet:?}");
}

#[test]
fn a_temporary_password_expires_and_the_owners_own_does_not() {
    let server = server(1);
    let ada = admin(&server);
    let mut connection = server.database.connection().unwrap();
    let t0 = now();
    create_account(
        &mut connection,
        "tess",
        TEMPORARY,
        &[Role::Author],
        PasswordOrigin::temporary_for(t0, 72),
        &Operator::account(&ada),
        None,
        t0,
    )
    .unwrap();
    assert!(login(&connection, "tess", TEMPORARY, None, at(t0, 71)).is_ok());
    match login(&connection, "tess", TEMPORARY, None, at(t0, 72)).unwrap_err() {
        LoginError::TemporaryPasswordExpired { at: expired } => {
            assert_eq!(expired, timestamp(at(t0, 72)))
        }
        other => panic!("{other}"),
    }
    // The wrong password still says only that it is wrong (nothing about expiry).
    assert!(matches!(
        login(&connection, "tess", "not the password!", None, at(t0, 73)).unwrap_err(),
        LoginError::Invalid
    ));
    // The owner's own password never expires.
    assert!(login(&connection, "ada", OWN, None, at(t0, 10_000)).is_ok());
}

/// A session row as tower-sessions stores it, holding `account_id`.
fn session_row(connection: &rusqlite::Connection, id: &str, account_id: i64) {
    connection
        .execute(
            "INSERT INTO sessions (id, data, expiry_unix) VALUES (?1, ?2, 99999999999)",
            rusqlite::params![id, format!("{{\"account_id\":{account_id}}}")],
        )
        .unwrap();
}

fn sessions(connection: &rusqlite::Connection) -> Vec<String> {
    let mut statement = connection
        .prepare("SELECT id FROM sessions ORDER BY id")
        .unwrap();
    let rows = statement.query_map([], |row| row.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn a_password_change_ends_every_other_session_and_a_reset_ends_them_all() {
    let server = server(1);
    let ada = admin(&server);
    let ann = server.account_with("ann", OWN, &[Role::Author]);
    let mut connection = server.database.connection().unwrap();
    for id in ["ann-laptop", "ann-phone", "ann-stolen"] {
        session_row(connection.as_sqlite().unwrap(), id, ann.id);
    }
    session_row(connection.as_sqlite().unwrap(), "ada-desk", ada.id);
    change_own_password(
        &mut connection,
        ann.id,
        &PasswordChange {
            current_password: OWN.to_owned(),
            new_password: "ann's brand new password".to_owned(),
            new_password_again: "ann's brand new password".to_owned(),
        },
        Some("ann-laptop"),
        None,
        now(),
    )
    .unwrap();
    assert_eq!(
        sessions(connection.as_sqlite().unwrap()),
        ["ada-desk", "ann-laptop"]
    );
    // A reset from the command line (before this change it left the sessions alive).
    set_password(
        &mut connection,
        "ann",
        "a temporary reset password",
        PasswordOrigin::temporary_for(now(), 72),
        &Operator::command_line(),
        None,
        now(),
    )
    .unwrap();
    assert_eq!(sessions(connection.as_sqlite().unwrap()), ["ada-desk"]);
    let detail: String = connection
        .as_sqlite()
        .unwrap()
        .query_row(
            "SELECT detail || ' / ' || actor_name FROM security_events
             WHERE event = 'password_changed' ORDER BY seq DESC LIMIT 1",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(detail.contains("1 session(s) ended"), "{detail}");
    assert!(detail.contains("command line: "), "{detail}");
}

#[test]
fn attack_an_admin_also_holds_the_reviewer_role() {
    let server = server(1);
    let ada = admin(&server);
    let mut connection = server.database.connection().unwrap();
    let refused = create_account(
        &mut connection,
        "both",
        OWN,
        &[Role::Admin, Role::Reviewer],
        PasswordOrigin::ChosenByOwner,
        &Operator::account(&ada),
        None,
        now(),
    )
    .unwrap_err();
    assert!(matches!(refused, AccountError::Duties(_)), "{refused}");
    let rex = server.account_with("rex", OWN, &[Role::Reviewer]);
    let refused = set_roles(
        &mut connection,
        "rex",
        &[Role::Reviewer, Role::Admin],
        &Operator::account(&ada),
        None,
        now(),
    )
    .unwrap_err();
    assert!(matches!(refused, AccountError::Duties(_)), "{refused}");
    let refused = set_roles(
        &mut connection,
        "ada",
        &[Role::Admin, Role::Author],
        &Operator::account(&ada),
        None,
        now(),
    )
    .unwrap_err();
    assert!(matches!(refused, AccountError::Duties(_)), "{refused}");
    // The database itself refuses, even with a history row written first.
    connection
        .as_sqlite()
        .unwrap()
        .execute(
            "INSERT INTO account_role_history (account_id, role, change, at, actor_name)
             VALUES (?1, 'admin', 'granted', '2026-12-04T00:00:00Z', 'sql')",
            [rex.id],
        )
        .unwrap();
    let error = connection
        .as_sqlite()
        .unwrap()
        .execute(
            "INSERT INTO account_roles (account_id, role) VALUES (?1, 'admin')",
            [rex.id],
        )
        .unwrap_err();
    assert!(
        error.to_string().contains("separation of duties"),
        "{error}"
    );
    // And a role never goes in without its history row.
    let error = connection
        .as_sqlite()
        .unwrap()
        .execute(
            "INSERT INTO account_roles (account_id, role) VALUES (?1, 'author')",
            [rex.id],
        )
        .unwrap_err();
    assert!(
        error.to_string().contains("account_role_history"),
        "{error}"
    );
    // A move from reviewer to admin (revoke, then grant) is allowed, and recorded.
    let moved = set_roles(
        &mut connection,
        "rex",
        &[Role::Admin],
        &Operator::account(&ada),
        None,
        now(),
    )
    .unwrap();
    assert_eq!(moved.roles, [Role::Admin]);
    let history: Vec<(String, String, String)> = {
        let mut statement = connection
            .as_sqlite()
            .unwrap()
            .prepare(
                "SELECT role, change, actor_name FROM account_role_history
                 WHERE account_id = ?1 ORDER BY seq",
            )
            .unwrap();
        let rows = statement
            .query_map([rex.id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    };
    let history: Vec<(&str, &str, &str)> = history
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        history,
        [
            ("reviewer", "granted", "first-start setup"),
            ("admin", "granted", "sql"),
            ("reviewer", "revoked", "ada"),
            ("admin", "granted", "ada"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_a_legacy_admin_reviewer_cannot_sign() {
    // Accounts that held both before migration 8 keep them until an admin splits them: they
    // cannot sign.
    let mut server = server(1);
    let ann = server.account_with("ann", OWN, &[Role::Author]);
    let old = server.account_with("old", OWN, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let id = server.verified("legacy-admin").await;
    let mut connection = server.database.connection().unwrap();
    connection
        .as_sqlite()
        .unwrap()
        .execute_batch("DROP TRIGGER account_roles_admin_alone")
        .unwrap();
    connection
        .as_sqlite()
        .unwrap()
        .execute(
            "INSERT INTO account_role_history (account_id, role, change, at, actor_name)
             VALUES (?1, 'admin', 'granted', '2026-12-04T00:00:00Z', 'before migration 8')",
            [old.id],
        )
        .unwrap();
    connection
        .as_sqlite()
        .unwrap()
        .execute(
            "INSERT INTO account_roles (account_id, role) VALUES (?1, 'admin')",
            [old.id],
        )
        .unwrap();
    let refused = sign(&mut connection, &old, &approve(&id, OWN), None, now()).unwrap_err();
    assert!(matches!(refused, SignError::AdminCannotSign), "{refused:?}");
}

/// A well-formed approval record appended straight to the ledger, as someone with write access
/// to the database could: `signer` signs revision `id` at `at`.
fn ghost_approval(
    connection: &mut rusqlite::Connection,
    id: &RevisionId,
    signer: Signer,
    at: DateTime<Utc>,
) -> Sha256Digest {
    let head = evidence_head(connection, id).unwrap().unwrap();
    let transaction = connection.transaction().unwrap();
    let record = append_evidence(
        &transaction,
        ApprovalRecord::new(
            Signature {
                revision_id: id.clone(),
                revision_version: 2,
                decision: Decision::Approved,
                meaning: Some(SignatureMeaning::Approved),
                comment: None,
                signer,
                evidence_head: Sha256Digest::try_from(head).unwrap(),
            },
            timestamp(at),
        ),
    )
    .unwrap();
    let hash = *record.record_hash();
    transaction.commit().unwrap();
    hash
}

fn signer(id: i64, name: &str) -> Signer {
    Signer {
        account_id: id,
        account_name: name.to_owned(),
        printed_name: name.to_owned(),
        roles: vec!["reviewer".to_owned()],
        password_chosen_at: Some("2026-12-01T00:00:00.000000Z".to_owned()),
        password_reset_at: None,
        password_reset_by: None,
        reviewer_granted_at: Some("2026-12-01T00:00:00.000000Z".to_owned()),
        reviewer_granted_by: Some("ada".to_owned()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_ghost_approvals_appended_to_the_database_fail_the_audit() {
    let mut server = server(1);
    let ada = admin(&server);
    let ann = server.account_with("ann", OWN, &[Role::Author]);
    let rex = server.account_with("rex", OWN, &[Role::Reviewer]);
    let quinn = server.account_with("quinn", OWN, &[Role::Reviewer]);
    server.actor = Actor::web(&ann);
    let id = server.verified("ghost-approvals").await;
    let mut connection = server.database.connection().unwrap();
    // A real signature first: the audit backs it.
    sign(&mut connection, &quinn, &approve(&id, OWN), None, now()).unwrap();
    let report = audit(&connection, &server.objects).unwrap();
    assert!(report.passed(), "{report:?}");
    assert_eq!(report.approvals, 1);
    let later = now() + Duration::minutes(1);
    let seq = |connection: &rusqlite::Connection, hash: &Sha256Digest| -> i64 {
        connection
            .query_row(
                "SELECT seq FROM evidence_ledger WHERE record_hash = ?1",
                [hash.to_hex()],
                |row| row.get(0),
            )
            .unwrap()
    };
    // 1. A signer that does not exist.
    let ghost = ghost_approval(
        connection.as_sqlite_mut().unwrap(),
        &id,
        signer(999, "ghost"),
        later,
    );
    // 2. An account that was never a reviewer (the admin), with no signing event.
    let by_admin = ghost_approval(
        connection.as_sqlite_mut().unwrap(),
        &id,
        signer(ada.id, "ada"),
        later,
    );
    // 3. The author, made reviewer afterwards, signing her own revision.
    set_roles(
        &mut connection,
        "ann",
        &[Role::Author, Role::Reviewer],
        &Operator::account(&ada),
        None,
        now(),
    )
    .unwrap();
    let by_author = ghost_approval(
        connection.as_sqlite_mut().unwrap(),
        &id,
        signer(ann.id, "ann"),
        later,
    );
    // 4. A real reviewer who never signed (no signing event; the password never re-entered).
    let unsigned = ghost_approval(
        connection.as_sqlite_mut().unwrap(),
        &id,
        signer(rex.id, "rex"),
        later,
    );
    // 5. A reviewer role granted only after the signing time it claims.
    let late_role = {
        let early = now() - Duration::days(1);
        ghost_approval(
            connection.as_sqlite_mut().unwrap(),
            &id,
            signer(rex.id, "rex"),
            early,
        )
    };
    // The triggers dropped, the revision promoted by hand on the strength of a ghost.
    connection
        .as_sqlite()
        .unwrap()
        .execute_batch("DROP TRIGGER revisions_change_only_by_promotion")
        .unwrap();
    connection
        .as_sqlite()
        .unwrap()
        .execute(
            "UPDATE revisions SET status = 'approved', version = version + 1 WHERE id = ?1",
            [id.as_str()],
        )
        .unwrap();

    let report = audit(&connection, &server.objects).unwrap();
    assert!(!report.passed());
    let mut found: Vec<(i64, &str)> = report
        .approval_problems
        .iter()
        .map(|problem| (problem.seq, problem.code))
        .collect();
    found.sort();
    let mut expected = vec![
        (
            seq(connection.as_sqlite().unwrap(), &ghost),
            "SIGNER_UNKNOWN",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &by_admin),
            "ADMIN_AT_SIGNING",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &by_admin),
            "NOT_REVIEWER_AT_SIGNING",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &by_admin),
            "NO_SIGNING_EVENT",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &by_author),
            "SIGNER_IS_AUTHOR",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &by_author),
            "NO_SIGNING_EVENT",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &unsigned),
            "NO_SIGNING_EVENT",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &late_role),
            "NOT_REVIEWER_AT_SIGNING",
        ),
        (
            seq(connection.as_sqlite().unwrap(), &late_role),
            "NO_SIGNING_EVENT",
        ),
    ];
    expected.sort();
    assert_eq!(found, expected, "{:#?}", report.approval_problems);
    // The grant the real signature was made under is on record.
    let grant = role_grant_at(&connection, quinn.id, Role::Reviewer, &timestamp(later))
        .unwrap()
        .unwrap();
    assert_eq!(grant.by, "first-start setup");
}
