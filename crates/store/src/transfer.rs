//! Moving an installation's rows from its SQLite file into an empty PostgreSQL database
//! (`adamviz migrate`): every table, in an order its references allow, each row as it is.
//!
//! The ledger's records go in through PostgreSQL's own insert rule, in chain order, so each is
//! linked to the head and given its position there exactly as an append would be: a record
//! that does not link is refused and nothing is kept. The other tables hold rows in their final
//! state, which the row rules (written for one change at a time) would refuse; their rules are
//! set aside for this transaction only (`ALTER TABLE … DISABLE TRIGGER USER`, undone before the
//! commit, and never seen by another session), and the caller audits the result in the same
//! transaction before committing: the rows replayed against the records, every approval against
//! the accounts.

use crate::sql::{Dialect, Sql, SqlError, SqlValue};

/// The tables, in an order their references allow (an account before its roles, an upload
/// before its spec, a revision before its attempts), and the column their rows are read in
/// order of (the order they were written).
const TABLES: &[&str] = &[
    "evidence_ledger",
    "accounts",
    "account_role_history",
    "account_roles",
    "sessions",
    "security_events",
    "login_failure_windows",
    "uploads",
    "datasets",
    "specs",
    "revisions",
    "attempts",
    "artifact_bundles",
    "run_queue",
    "figure_sets",
    "figure_set_members",
];

/// Why rows could not be moved.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// A statement failed on either side.
    #[error(transparent)]
    Sql(#[from] SqlError),
    /// The target already holds an installation's rows.
    #[error("the target database is not empty ({table} has {rows} rows): adamviz migrate moves an installation into an empty database only")]
    NotEmpty {
        /// The first table found with rows.
        table: &'static str,
        /// How many.
        rows: i64,
    },
    /// The source and the target disagree on a table's columns.
    #[error(
        "table {table}: column {column} of the SQLite database has no place in PostgreSQL's schema"
    )]
    Column {
        /// The table.
        table: &'static str,
        /// The column.
        column: String,
    },
    /// A wrong pair of databases.
    #[error("rows move from SQLite to PostgreSQL")]
    Direction,
}

/// What was moved: each table with its row count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// (table, rows) in the order they were moved.
    pub tables: Vec<(&'static str, u64)>,
}

/// Refuses a target that holds any row of an installation.
pub fn check_empty(target: &impl Sql) -> Result<(), TransferError> {
    for table in TABLES {
        let rows: i64 = target
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])?
            .get(0)?;
        if rows > 0 {
            return Err(TransferError::NotEmpty { table, rows });
        }
    }
    Ok(())
}

/// One column of a target table.
struct TargetColumn {
    name: String,
    bytes: bool,
    identity: bool,
    always_generated: bool,
}

fn target_columns(target: &impl Sql, table: &str) -> Result<Vec<TargetColumn>, SqlError> {
    target
        .query(
            "SELECT column_name, data_type, is_identity, coalesce(identity_generation, '')
             FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = ?1
             ORDER BY ordinal_position",
            crate::sql_params![table],
        )?
        .iter()
        .map(|row| {
            Ok(TargetColumn {
                name: row.get(0)?,
                bytes: row.get::<String>(1)? == "bytea",
                identity: row.get::<String>(2)? == "YES",
                always_generated: row.get::<String>(3)? == "ALWAYS",
            })
        })
        .collect()
}

/// Copies every row of `source` (an installation's SQLite database) into `target` (a
/// transaction on an empty PostgreSQL database with adamviz's schema), table by table.
pub fn copy_rows(source: &impl Sql, target: &impl Sql) -> Result<Moved, TransferError> {
    if source.dialect() != Dialect::Sqlite || target.dialect() != Dialect::Postgres {
        return Err(TransferError::Direction);
    }
    let mut moved = Vec::new();
    for &table in TABLES {
        let source_columns: Vec<String> = source
            .query(
                "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
                crate::sql_params![table],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect::<Result<_, _>>()?;
        let columns = target_columns(target, table)?;
        if let Some(column) = source_columns
            .iter()
            .find(|name| !columns.iter().any(|c| &c.name == *name))
        {
            return Err(TransferError::Column {
                table,
                column: column.clone(),
            });
        }
        // The ledger's position is given by its insert rule; a column PostgreSQL alone has
        // (a generated sequence) is generated in the order the rows are inserted.
        let copied: Vec<&TargetColumn> = columns
            .iter()
            .filter(|c| source_columns.contains(&c.name))
            .filter(|c| !(table == "evidence_ledger" && c.name == "seq"))
            .collect();
        let names = copied
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let without_rowid: bool = source
            .query_one(
                "SELECT wr FROM pragma_table_list WHERE name = ?1 AND schema = 'main'",
                crate::sql_params![table],
            )?
            .get(0)?;
        let order = match (table, without_rowid) {
            ("evidence_ledger", _) => "ORDER BY seq",
            (_, false) => "ORDER BY rowid",
            (_, true) => "",
        };
        let rows = source.query(&format!("SELECT {names} FROM {table} {order}"), &[])?;
        if table != "evidence_ledger" {
            target.execute(&format!("ALTER TABLE {table} DISABLE TRIGGER USER"), &[])?;
        }
        let overriding = if copied.iter().any(|c| c.always_generated) {
            "OVERRIDING SYSTEM VALUE"
        } else {
            ""
        };
        let placeholders = (1..=copied.len())
            .map(|n| format!("?{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let insert = format!("INSERT INTO {table} ({names}) {overriding} VALUES ({placeholders})");
        for row in &rows {
            let values: Vec<SqlValue> = row
                .0
                .iter()
                .zip(&copied)
                .map(|(value, column)| match value {
                    // SQLite keeps what it was given; PostgreSQL's column says bytes.
                    SqlValue::Text(text) if column.bytes => {
                        SqlValue::Blob(text.clone().into_bytes())
                    }
                    other => other.clone(),
                })
                .collect();
            target.execute(&insert, &values)?;
        }
        if table != "evidence_ledger" {
            target.execute(&format!("ALTER TABLE {table} ENABLE TRIGGER USER"), &[])?;
        }
        // Generated columns given their values here continue after them.
        for column in columns
            .iter()
            .filter(|c| c.identity && copied.iter().any(|k| k.name == c.name))
        {
            target.query_one(
                &format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', '{0}'), \
                     coalesce((SELECT max({0}) FROM {table}), 0) + 1, false)",
                    column.name
                ),
                &[],
            )?;
        }
        moved.push((table, rows.len() as u64));
    }
    Ok(Moved { tables: moved })
}

/// The number of rows of each table, for comparing two databases after a move.
pub fn row_counts(connection: &impl Sql) -> Result<Vec<(&'static str, u64)>, SqlError> {
    TABLES
        .iter()
        .map(|&table| {
            let rows: i64 = connection
                .query_one(&format!("SELECT count(*) FROM {table}"), &[])?
                .get(0)?;
            Ok((table, rows as u64))
        })
        .collect()
}
