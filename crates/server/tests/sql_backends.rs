//! The store's SQL seam (`store::sql`) on both databases: the same statements, written once with
//! `?N` parameters, give the same values back from SQLite and from a real PostgreSQL; a rule
//! the database refuses reads the same on both; a transaction dropped without commit leaves
//! nothing; PostgreSQL's schema is applied once and a changed one is refused, as SQLite's is.

#[path = "support/postgres.rs"]
mod postgres;

use adamviz_store::{
    db::Database,
    sql::{
        postgres::{migrate, Driver, MigrationError, PgConnection},
        Dialect, Sql, SqlValue,
    },
    sql_params,
};

const UPLOAD: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const SPEC: &str = "5555555555555555555555555555555555555555555555555555555555555555";

/// What the test does on either database, through `Sql` only.
fn same_behaviour(connection: &impl Sql, expected: Dialect) {
    assert_eq!(connection.dialect(), expected);
    assert_eq!(
        connection
            .execute(
                "INSERT INTO uploads (content_hash, classification, file_name, size, stored_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                sql_params![
                    UPLOAD,
                    "synthetic",
                    "adlb 'q?1'.xpt",
                    1234i64,
                    "2026-12-06T00:00:00Z"
                ],
            )
            .unwrap(),
        1
    );
    connection
        .execute(
            "INSERT INTO specs (spec_hash, content_hash, spec, confirmed_at) VALUES (?1, ?2, ?3, ?4)",
            sql_params![SPEC, UPLOAD, vec![0u8, 159, 146, 150, 255], "t"],
        )
        .unwrap();
    let row = connection
        .query_one(
            "SELECT u.file_name, u.size, s.spec, NULL, u.classification = ?1
             FROM uploads u JOIN specs s ON s.content_hash = u.content_hash
             WHERE u.content_hash = ?2",
            sql_params!["synthetic", UPLOAD],
        )
        .unwrap();
    assert_eq!(row.get::<String>(0).unwrap(), "adlb 'q?1'.xpt");
    assert_eq!(row.get::<i64>(1).unwrap(), 1234);
    assert_eq!(
        row.get::<Vec<u8>>(2).unwrap(),
        vec![0u8, 159, 146, 150, 255]
    );
    assert_eq!(row.get::<Option<String>>(3).unwrap(), None);
    assert!(row.get::<bool>(4).unwrap());
    assert!(row.get::<i64>(0).is_err(), "text is not read as an integer");
    assert!(connection
        .query_opt("SELECT 1 FROM uploads WHERE size = ?1", sql_params![5i64])
        .unwrap()
        .is_none());
    let refused = connection.execute("DELETE FROM uploads", &[]).unwrap_err();
    assert_eq!(
        refused.refusal().as_deref(),
        Some("an upload is never deleted"),
        "{refused}"
    );
    let none: Option<i64> = None;
    assert_eq!(
        SqlValue::from(none),
        SqlValue::Null,
        "an absent value is NULL"
    );
}

#[test]
fn sqlite_and_postgresql_answer_the_same_statements_alike() {
    let dir = tempfile::tempdir().unwrap();
    let database = Database::open_in(dir.path()).unwrap();
    let connection = database.connection().unwrap();
    same_behaviour(&connection, Dialect::Sqlite);

    let server = postgres::Postgres::start();
    let connection = PgConnection::connect(&server.url(), Driver::new()).unwrap();
    migrate(&connection).unwrap();
    same_behaviour(&connection, Dialect::Postgres);
}

#[test]
fn a_postgresql_transaction_dropped_without_commit_leaves_nothing() {
    let server = postgres::Postgres::start();
    let connection = PgConnection::connect(&server.url(), Driver::new()).unwrap();
    migrate(&connection).unwrap();
    {
        let transaction = connection.transaction().unwrap();
        transaction
            .execute(
                "INSERT INTO uploads VALUES (?1, 'synthetic', 'f', 1, 't')",
                sql_params![UPLOAD],
            )
            .unwrap();
    }
    let count = connection
        .query_one("SELECT count(*) FROM uploads", &[])
        .unwrap();
    assert_eq!(count.get::<i64>(0).unwrap(), 0);
    let transaction = connection.transaction().unwrap();
    transaction
        .execute(
            "INSERT INTO uploads VALUES (?1, 'synthetic', 'f', 1, 't')",
            sql_params![UPLOAD],
        )
        .unwrap();
    transaction.commit().unwrap();
    let count = connection
        .query_one("SELECT count(*) FROM uploads", &[])
        .unwrap();
    assert_eq!(count.get::<i64>(0).unwrap(), 1);
}

#[test]
fn the_postgresql_schema_is_applied_once_and_a_changed_one_is_refused() {
    let server = postgres::Postgres::start();
    // Two nodes starting at once: each migration applied exactly once.
    let url = server.url();
    let starts: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let connection = PgConnection::connect(&url, Driver::new()).unwrap();
                migrate(&connection)
            })
        })
        .collect();
    for start in starts {
        start.join().unwrap().unwrap();
    }
    let connection = PgConnection::connect(&url, Driver::new()).unwrap();
    let applied = connection
        .query_one("SELECT count(*) FROM schema_migrations", &[])
        .unwrap();
    // Each migration once: the schema, Dataset-JSON as a dataset format, figure sets.
    assert_eq!(applied.get::<i64>(0).unwrap(), 3);
    let recorded: String = connection
        .query_one(
            "SELECT sha256 FROM schema_migrations WHERE version = 1",
            &[],
        )
        .unwrap()
        .get(0)
        .unwrap();
    connection
        .execute(
            "UPDATE schema_migrations SET sha256 = 'edited' WHERE version = 1",
            &[],
        )
        .unwrap();
    let error = migrate(&connection).unwrap_err();
    assert!(
        matches!(error, MigrationError::Changed { version: 1, .. }),
        "{error}"
    );
    connection
        .execute(
            "UPDATE schema_migrations SET sha256 = ?1 WHERE version = 1",
            sql_params![recorded],
        )
        .unwrap();
    migrate(&connection).unwrap();
    connection
        .execute(
            "INSERT INTO schema_migrations VALUES (99, 'future', 'x', 't')",
            &[],
        )
        .unwrap();
    let error = migrate(&connection).unwrap_err();
    assert!(
        matches!(error, MigrationError::Unknown { version: 99 }),
        "{error}"
    );
}

mod ledger_on_postgres {
    use super::*;
    use adamviz_store::ledger::{append_record, verify_ledger, LedgerProblem};
    use serde_json::json;

    fn body(n: usize) -> serde_json::Map<String, serde_json::Value> {
        json!({"note": n, "revision_id": format!("rev-{n:032x}")})
            .as_object()
            .unwrap()
            .clone()
    }

    /// The ledger's own code (append, verify) on PostgreSQL, from several threads at once; then
    /// the raw edits an insider with the table's triggers disabled could make, each found.
    #[test]
    fn appends_from_several_threads_verify_and_raw_edits_are_found() {
        let server = postgres::Postgres::start();
        let url = server.url();
        let first = PgConnection::connect(&url, Driver::new()).unwrap();
        migrate(&first).unwrap();
        let driver = Driver::new();
        let threads: Vec<_> = (0..4)
            .map(|writer| {
                let (url, driver) = (url.clone(), driver.clone());
                std::thread::spawn(move || {
                    let connection = PgConnection::connect(&url, driver).unwrap();
                    for n in 0..10 {
                        let transaction = connection.transaction().unwrap();
                        append_record(&transaction, "note", body(writer * 100 + n)).unwrap();
                        transaction.commit().unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let report = verify_ledger(&first).unwrap();
        assert_eq!((report.records, report.first_break), (40, None));
        let revision = adamviz_model::ids::RevisionId::parse(&format!("rev-{:032x}", 102)).unwrap();
        let about = adamviz_store::ledger::records_about(&first, &revision).unwrap();
        assert_eq!(about.len(), 1);

        // An insider edits a record's bytes (its triggers disabled): found at that record.
        first
            .batch_execute(
                "ALTER TABLE evidence_ledger DISABLE TRIGGER USER;
                 UPDATE evidence_ledger SET record = convert_to(
                     replace(convert_from(record, 'UTF8'), '\"note\":', '\"nope\":'), 'UTF8')
                 WHERE seq = 17;",
            )
            .unwrap();
        let report = verify_ledger(&first).unwrap();
        let broken = report.first_break.unwrap();
        assert_eq!(broken.seq, 17, "{broken}");
        assert!(
            matches!(broken.problem, LedgerProblem::SelfHashMismatch { .. }),
            "{broken}"
        );

        // A new cluster, whose tail an insider deletes.
        drop(first);
        let server = postgres::Postgres::start();
        let connection = PgConnection::connect(&server.url(), Driver::new()).unwrap();
        migrate(&connection).unwrap();
        for n in 0..5 {
            let transaction = connection.transaction().unwrap();
            append_record(&transaction, "note", body(n)).unwrap();
            transaction.commit().unwrap();
        }
        connection
            .batch_execute(
                "ALTER TABLE evidence_ledger DISABLE TRIGGER USER;
                 DELETE FROM evidence_ledger WHERE seq >= 4;",
            )
            .unwrap();
        let report = verify_ledger(&connection).unwrap();
        let broken = report.first_break.unwrap();
        assert_eq!(
            (broken.seq, broken.problem),
            (4, LedgerProblem::Gap { from: 4, to: 5 }),
            "a deleted tail is found"
        );
    }

    /// A rolled-back append leaves no gap: positions are given under the chain's lock.
    #[test]
    fn a_rolled_back_append_leaves_no_gap() {
        let server = postgres::Postgres::start();
        let connection = PgConnection::connect(&server.url(), Driver::new()).unwrap();
        migrate(&connection).unwrap();
        for n in 0..3 {
            let transaction = connection.transaction().unwrap();
            append_record(&transaction, "note", body(n)).unwrap();
            if n != 1 {
                transaction.commit().unwrap();
            }
        }
        let report = verify_ledger(&connection).unwrap();
        assert_eq!((report.records, report.first_break), (2, None));
    }
}

#[test]
fn a_postgresql_database_from_before_dataset_json_keeps_its_datasets() {
    let server = postgres::Postgres::start();
    let connection = PgConnection::connect(&server.url(), Driver::new()).unwrap();
    migrate(&connection).unwrap();
    // Back to the schema before migration 2, with a dataset row in it.
    connection
        .batch_execute(
            "DELETE FROM schema_migrations WHERE version = 2;
             ALTER TABLE datasets DROP CONSTRAINT datasets_format_check;
             ALTER TABLE datasets ADD CONSTRAINT datasets_format_check
                 CHECK (format IN ('csv', 'xpt'));",
        )
        .unwrap();
    let insert = |format: &str, hash: char| {
        connection.execute(
            "INSERT INTO datasets (content_hash, file_name, format, classification, row_count,
                 column_count, dataset_name, size, uploaded_by, uploaded_by_name, uploaded_at)
             VALUES (?1, 'adlbc.xpt', ?2, 'deidentified', 74264, 46, 'ADLBC', 34190640, NULL,
                 'migrated', '2026-12-01T00:00:00Z')",
            sql_params![hash.to_string().repeat(64), format.to_owned()],
        )
    };
    insert("xpt", 'a').unwrap();
    assert!(
        insert("dataset_json", 'b').is_err(),
        "the old rule refuses it"
    );
    migrate(&connection).unwrap();
    let kept: String = connection
        .query_one("SELECT format FROM datasets", &[])
        .unwrap()
        .get(0)
        .unwrap();
    assert_eq!(kept, "xpt");
    insert("dataset_json", 'b').unwrap();
    assert!(insert("parquet", 'c').is_err());
    assert!(connection
        .execute("UPDATE datasets SET row_count = 1", &[])
        .is_err());
}
