//! The database's own rules on PostgreSQL (crates/store/src/postgres/0001_schema.sql), against a
//! real server (a throwaway cluster per test), with raw SQL as an insider would write it:
//! - the evidence ledger is append-only (UPDATE, DELETE, TRUNCATE refused);
//! - a record links to the head of the chain, so no fork can be written, and several
//!   connections appending at once under the chain's advisory lock build one straight chain;
//!   appenders that skip the lock are refused by the database rather than forking it;
//! - a revision is inserted only after its `created` record; it moves Draft → Verified only
//!   with its attempt, verification, bundle and lifecycle records; Verified → Approved only with
//!   an approval by a reviewer who did not make it (four eyes in the database);
//! - the other append-only tables and the role rules hold.

#[path = "support/postgres.rs"]
mod postgres;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio_postgres::{Client, GenericClient, NoTls};

const SCHEMA: &str = include_str!("../../store/src/postgres/0001_schema.sql");
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

async fn connect(server: &postgres::Postgres) -> Client {
    let (client, connection) = tokio_postgres::connect(&server.url(), NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

async fn with_schema() -> (postgres::Postgres, Client) {
    let server = postgres::Postgres::start();
    let client = connect(&server).await;
    client.batch_execute(SCHEMA).await.unwrap();
    (server, client)
}

/// The database's message for a refused statement.
fn refusal(error: tokio_postgres::Error) -> String {
    error
        .as_db_error()
        .map(|db| db.message().to_owned())
        .unwrap_or_else(|| error.to_string())
}

fn hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

async fn head(client: &impl GenericClient) -> String {
    client
        .query_opt(
            "SELECT record_hash FROM evidence_ledger ORDER BY seq DESC LIMIT 1",
            &[],
        )
        .await
        .unwrap()
        .map(|row| row.get(0))
        .unwrap_or_else(|| GENESIS.to_owned())
}

/// Appends `record` as the store does: the chain's lock, the head, the insert.
async fn append(client: &impl GenericClient, kind: &str, record: &Value) -> Result<String, String> {
    let bytes = serde_json::to_vec(record).unwrap();
    let record_hash = hash(&bytes);
    client
        .execute(
            "SELECT pg_advisory_xact_lock(adamviz_chain_lock_key())",
            &[],
        )
        .await
        .map_err(refusal)?;
    let previous = head(client).await;
    client
        .execute(
            "INSERT INTO evidence_ledger (kind, record_hash, previous_hash, record, appended_at)
             VALUES ($1, $2, $3, $4, '2026-12-06T00:00:00Z')",
            &[&kind, &record_hash, &previous, &bytes],
        )
        .await
        .map_err(refusal)?;
    Ok(record_hash)
}

/// Checks the chain is one straight line from the genesis hash; its length.
async fn chain_length(client: &Client) -> usize {
    let rows = client
        .query(
            "SELECT record_hash, previous_hash FROM evidence_ledger ORDER BY seq",
            &[],
        )
        .await
        .unwrap();
    let mut expected = GENESIS.to_owned();
    for row in &rows {
        let (record, previous): (String, String) = (row.get(0), row.get(1));
        assert_eq!(previous, expected, "the chain forks or breaks at {record}");
        expected = record;
    }
    rows.len()
}

#[tokio::test]
async fn the_ledger_is_append_only_and_links_to_its_head() {
    let (_server, client) = with_schema().await;
    let first = append(&client, "note", &json!({"n": 1})).await.unwrap();
    append(&client, "note", &json!({"n": 2})).await.unwrap();
    for (statement, expected) in [
        (
            "UPDATE evidence_ledger SET kind = 'other'",
            "append-only: UPDATE refused",
        ),
        ("DELETE FROM evidence_ledger", "append-only: DELETE refused"),
        (
            "TRUNCATE evidence_ledger CASCADE",
            "append-only: TRUNCATE refused",
        ),
    ] {
        let error = client.execute(statement, &[]).await.unwrap_err();
        assert!(refusal(error).contains(expected), "{statement}");
    }
    // A record naming anything but the head (here the first record: a fork) is refused.
    let bytes = br#"{"n":3}"#.to_vec();
    let error = client
        .execute(
            "INSERT INTO evidence_ledger (kind, record_hash, previous_hash, record, appended_at)
             VALUES ('note', $1, $2, $3, 'now')",
            &[&hash(&bytes), &first, &bytes],
        )
        .await
        .unwrap_err();
    assert!(
        refusal(error).contains("must link to the head of the chain"),
        "a fork is refused"
    );
    assert_eq!(chain_length(&client).await, 2);
}

#[tokio::test]
async fn connections_appending_at_once_build_one_straight_chain() {
    let (server, client) = with_schema().await;
    const WRITERS: usize = 8;
    const EACH: usize = 25;
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let mut connection = connect(&server).await;
        tasks.push(tokio::spawn(async move {
            for n in 0..EACH {
                let transaction = connection.transaction().await.unwrap();
                append(&transaction, "note", &json!({"writer": writer, "n": n}))
                    .await
                    .unwrap();
                transaction.commit().await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(chain_length(&client).await, WRITERS * EACH);
}

/// An appender that reads the head without the lock races the others: the database refuses
/// its insert when another committed first (it retries), and the chain never forks.
#[tokio::test]
async fn appenders_that_skip_the_lock_are_refused_not_forked() {
    let (server, client) = with_schema().await;
    const WRITERS: usize = 6;
    const EACH: usize = 15;
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let mut connection = connect(&server).await;
        tasks.push(tokio::spawn(async move {
            let mut refused = 0;
            for n in 0..EACH {
                loop {
                    let transaction = connection.transaction().await.unwrap();
                    let previous = head(&transaction).await;
                    let bytes = serde_json::to_vec(&json!({"writer": writer, "n": n})).unwrap();
                    tokio::task::yield_now().await;
                    let inserted = transaction
                        .execute(
                            "INSERT INTO evidence_ledger
                               (kind, record_hash, previous_hash, record, appended_at)
                             VALUES ('note', $1, $2, $3, 'now')",
                            &[&hash(&bytes), &previous, &bytes],
                        )
                        .await;
                    match inserted {
                        Ok(_) => {
                            transaction.commit().await.unwrap();
                            break;
                        }
                        Err(error) => {
                            assert!(
                                refusal(error).contains("must link to the head"),
                                "only the link rule refuses"
                            );
                            refused += 1;
                        }
                    }
                }
            }
            refused
        }));
    }
    let mut refused = 0;
    for task in tasks {
        refused += task.await.unwrap();
    }
    assert_eq!(chain_length(&client).await, WRITERS * EACH);
    println!("{refused} racing inserts refused");
}

const SPEC: &str = "5555555555555555555555555555555555555555555555555555555555555555";
const UPLOAD: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const SCRIPT: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const SNAPSHOT: &str = "3333333333333333333333333333333333333333333333333333333333333333";
const PNG: &str = "4444444444444444444444444444444444444444444444444444444444444444";
const FINGERPRINT: &str = "6666666666666666666666666666666666666666666666666666666666666666";
const REVISION: &str = "rev-0123456789abcdef0123456789abcdef";
const ATTEMPT: &str = "att-0123456789abcdef0123456789abcdef";

async fn exec(client: &Client, statement: &str) -> Result<u64, String> {
    client.execute(statement, &[]).await.map_err(refusal)
}

/// A Draft revision made by `ann` (account 1), the rows and records the rules ask for.
async fn draft_revision(client: &Client) {
    exec(
        client,
        &format!(
            "INSERT INTO uploads VALUES ('{UPLOAD}', 'synthetic', 'adlb.xpt', 10, 'now');
             "
        ),
    )
    .await
    .unwrap();
    exec(
        client,
        &format!("INSERT INTO specs VALUES ('{SPEC}', '{UPLOAD}', '\\x7b7d', 'now')"),
    )
    .await
    .unwrap();
    let insert = format!(
        "INSERT INTO revisions (id, spec_hash, status, version, script_hash, snapshot_id,
                                snapshot_hash, created_at, author_name)
         VALUES ('{REVISION}', '{SPEC}', 'draft', 1, '{SCRIPT}', '{SNAPSHOT}', '{SNAPSHOT}',
                 'now', 'ann')"
    );
    let refused = exec(client, &insert).await.unwrap_err();
    assert!(
        refused.contains("after its revision_lifecycle created record"),
        "{refused}"
    );
    append(
        client,
        "revision_lifecycle",
        &json!({"revision_id": REVISION, "event": "created", "to_status": "draft",
                "version": 1, "spec_hash": SPEC, "parent_revision_id": null,
                "actor": {"account_id": 1, "account_name": "ann"}}),
    )
    .await
    .unwrap();
    exec(client, &insert).await.unwrap();
}

/// Takes the Draft revision to Verified (version 2) through its attempt, verification, bundle
/// and lifecycle records.
async fn verify_revision(client: &Client) {
    let promote = format!(
        "UPDATE revisions SET status = 'verified', version = 2,
             pending_image_hash = '{PNG}', pending_analytical_hash = 'stats'
         WHERE id = '{REVISION}'"
    );
    let refused = exec(client, &promote).await.unwrap_err();
    assert!(
        refused.contains("changes only from draft to verified"),
        "{refused}"
    );

    append(
        client,
        "execution_attempt",
        &json!({"attempt_id": ATTEMPT, "revision_id": REVISION, "event": "started",
                "fingerprint": FINGERPRINT, "captured_version": 1}),
    )
    .await
    .unwrap();
    exec(
        client,
        &format!(
            "INSERT INTO attempts (id, revision_id, fingerprint, captured_version, state,
                                   started_at, owner, lease_until)
             VALUES ('{ATTEMPT}', '{REVISION}', '{FINGERPRINT}', 1, 'active', 'now', 'host/1',
                     'later')"
        ),
    )
    .await
    .unwrap();
    let verification = append(
        client,
        "execution_verification",
        &json!({"passed": true, "revision_id": REVISION, "attempt_id": ATTEMPT}),
    )
    .await
    .unwrap();
    let artifact = |sha: &str| json!({"sha256": sha});
    let bundle = append(
        client,
        "artifact_bundle",
        &json!({"revision_id": REVISION, "attempt_id": ATTEMPT,
                "verification_hash": verification,
                "artifacts": {"script": artifact(SCRIPT), "plot": artifact(PNG),
                              "statistics": artifact(FINGERPRINT),
                              "environment": artifact(UPLOAD),
                              "snapshot": artifact(SNAPSHOT)}}),
    )
    .await
    .unwrap();
    exec(
        client,
        &format!(
            "INSERT INTO artifact_bundles VALUES ('{REVISION}', '{ATTEMPT}', '{SCRIPT}', '{PNG}',
                 '{FINGERPRINT}', '{SNAPSHOT}', '{verification}', 'now', '{UPLOAD}', '{bundle}')"
        ),
    )
    .await
    .unwrap();
    append(
        client,
        "execution_attempt",
        &json!({"attempt_id": ATTEMPT, "event": "succeeded"}),
    )
    .await
    .unwrap();
    exec(
        client,
        &format!(
            "UPDATE attempts SET state = 'succeeded', ended_at = 'now' WHERE id = '{ATTEMPT}'"
        ),
    )
    .await
    .unwrap();
    append(
        client,
        "revision_lifecycle",
        &json!({"revision_id": REVISION, "event": "verified", "version": 2,
                "bundle_hash": bundle}),
    )
    .await
    .unwrap();
    exec(client, &promote).await.unwrap();
    let refused = exec(
        client,
        &format!("UPDATE attempts SET reason = 'x' WHERE id = '{ATTEMPT}'"),
    )
    .await
    .unwrap_err();
    assert!(
        refused.contains("a terminal attempt cannot change"),
        "{refused}"
    );
}

/// Appends an approval of version 2 by `signer` and its `approved` lifecycle record; the SQL
/// that promotes the revision.
async fn approval_by(client: &Client, account_id: i64, name: &str) -> String {
    let approval = append(
        client,
        "approval",
        &json!({"revision_id": REVISION, "decision": "approved", "revision_version": 2,
                "signer": {"account_id": account_id, "account_name": name,
                           "roles": ["reviewer"]}}),
    )
    .await
    .unwrap();
    append(
        client,
        "revision_lifecycle",
        &json!({"revision_id": REVISION, "event": "approved", "version": 3,
                "approval_hash": approval}),
    )
    .await
    .unwrap();
    format!("UPDATE revisions SET status = 'approved', version = 3 WHERE id = '{REVISION}'")
}

#[tokio::test]
async fn a_revision_moves_only_along_its_edges_and_is_approved_only_by_someone_else() {
    let (_server, client) = with_schema().await;
    draft_revision(&client).await;
    verify_revision(&client).await;

    // The author signing, under another case of the name or by account id: refused.
    let promote = approval_by(&client, 1, "ANN").await;
    let refused = exec(&client, &promote).await.unwrap_err();
    assert!(
        refused.contains("by someone other than its author"),
        "{refused}"
    );
    let promote = approval_by(&client, 7, "bob").await;
    exec(&client, &promote).await.unwrap();

    for (statement, expected) in [
        (
            format!("UPDATE revisions SET script_hash = '{PNG}', version = 4"),
            "nothing else of it changes",
        ),
        (
            "UPDATE revisions SET status = 'draft'".to_owned(),
            "version on by one",
        ),
        (
            "DELETE FROM revisions".to_owned(),
            "a revision is never deleted",
        ),
        (
            "DELETE FROM artifact_bundles".to_owned(),
            "cannot be removed",
        ),
        ("DELETE FROM attempts".to_owned(), "never deleted"),
        ("DELETE FROM uploads".to_owned(), "never deleted"),
    ] {
        let refused = exec(&client, &statement).await.unwrap_err();
        assert!(refused.contains(expected), "{statement}: {refused}");
    }
}

#[tokio::test]
async fn accounts_roles_and_the_security_log_keep_their_rules() {
    let (_server, client) = with_schema().await;
    exec(
        &client,
        "INSERT INTO accounts (id, name, password_hash, created_at, password_temporary,
                               password_set_at, password_set_by_owner_at)
         VALUES (1, 'Ann', '$argon2id$v=19$x', 'now', 0, 't1', 't1')",
    )
    .await
    .unwrap();
    let duplicate = exec(
        &client,
        "INSERT INTO accounts (id, name, password_hash, created_at, password_temporary,
                               password_set_at, password_expires_at)
         VALUES (2, 'ANN', '$argon2id$v=19$y', 'now', 1, 't1', 't9')",
    )
    .await
    .unwrap_err();
    assert!(
        duplicate.contains("duplicate key"),
        "names are unique whatever the case"
    );
    let refused = exec(&client, "INSERT INTO account_roles VALUES (1, 'reviewer')")
        .await
        .unwrap_err();
    assert!(refused.contains("only with its grant"), "{refused}");
    exec(
        &client,
        "INSERT INTO account_role_history (account_id, role, change, at, actor_name)
         VALUES (1, 'reviewer', 'granted', 'now', 'admin'), (1, 'admin', 'granted', 'now', 'x')",
    )
    .await
    .unwrap();
    exec(&client, "INSERT INTO account_roles VALUES (1, 'reviewer')")
        .await
        .unwrap();
    let refused = exec(&client, "INSERT INTO account_roles VALUES (1, 'admin')")
        .await
        .unwrap_err();
    assert!(refused.contains("separation of duties"), "{refused}");
    let refused = exec(&client, "DELETE FROM account_roles")
        .await
        .unwrap_err();
    assert!(refused.contains("only with its revocation"), "{refused}");
    let refused = exec(&client, "DELETE FROM accounts").await.unwrap_err();
    assert!(refused.contains("never deleted"), "{refused}");
    exec(&client, "UPDATE accounts SET disabled = 1")
        .await
        .unwrap();
    let refused = exec(&client, "UPDATE accounts SET disabled = 0")
        .await
        .unwrap_err();
    assert!(refused.contains("cannot be enabled again"), "{refused}");
    let refused = exec(
        &client,
        "UPDATE accounts SET password_hash = '$argon2id$new', password_set_at = 't2'",
    )
    .await
    .unwrap_err();
    assert!(refused.contains("owner's own"), "{refused}");

    exec(
        &client,
        "INSERT INTO security_events (at, event, account_name, outcome)
         VALUES ('t1', 'login', 'mallory', 'failure'), ('t1', 'login', 'ann', 'success')",
    )
    .await
    .unwrap();
    exec(
        &client,
        "UPDATE security_events SET repeat_count = 2, last_at = 't2'
         WHERE outcome = 'failure'",
    )
    .await
    .unwrap();
    let refused = exec(
        &client,
        "UPDATE security_events SET detail = 'edited' WHERE outcome = 'success'",
    )
    .await
    .unwrap_err();
    assert!(refused.contains("append-only"), "{refused}");
    let refused = exec(&client, "DELETE FROM security_events")
        .await
        .unwrap_err();
    assert!(refused.contains("append-only"), "{refused}");
}
