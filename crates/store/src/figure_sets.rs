//! Figure sets in the database (tables `figure_sets` and `figure_set_members`, SQLite and
//! PostgreSQL alike): a set and its members are written once, in one transaction, after every
//! member's revision exists; neither is ever changed or deleted (the tables' rules refuse it).

use crate::sql::{Sql, SqlError};
use crate::sql_params;
use adamviz_model::ids::{FigureSetId, RevisionId};

/// A new set id: 16 bytes from the system's random source.
pub fn new_set_id() -> FigureSetId {
    let revision = crate::repository::new_revision_id();
    // The revision id's 32 random hex digits under the set's prefix.
    let hex = &revision.as_str()["rev-".len()..];
    FigureSetId::parse(&format!("set-{hex}")).expect("32 hex digits")
}

/// A set as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSet {
    /// `set-…`.
    pub id: FigureSetId,
    /// The dataset the figures were drafted on.
    pub dataset_hash: String,
    /// The question.
    pub question: String,
    /// The shared answers, as JSON.
    pub shared_answers: String,
    /// Who made it (account id, when made in the web).
    pub created_by: Option<i64>,
    /// Who made it (name).
    pub created_by_name: String,
    /// When (canonical UTC).
    pub created_at: String,
    /// (parameter code, revision id), in position order.
    pub members: Vec<(String, RevisionId)>,
    /// The set this one re-runs on a newer data cut.
    pub revises: Option<FigureSetId>,
}

/// Stores `set` and its members (in `transaction`, after the members' revisions).
pub fn insert_set(connection: &impl Sql, set: &StoredSet) -> Result<(), SqlError> {
    connection.execute(
        "INSERT INTO figure_sets (id, dataset_hash, question, shared_answers, created_by,
                                  created_by_name, created_at, revises)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        sql_params![
            set.id.to_string(),
            set.dataset_hash.clone(),
            set.question.clone(),
            set.shared_answers.clone(),
            set.created_by,
            set.created_by_name.clone(),
            set.created_at.clone(),
            set.revises.as_ref().map(|r| r.to_string())
        ],
    )?;
    for (position, (parameter, revision)) in set.members.iter().enumerate() {
        connection.execute(
            "INSERT INTO figure_set_members (set_id, position, parameter, revision_id)
             VALUES (?1, ?2, ?3, ?4)",
            sql_params![
                set.id.to_string(),
                position as i64,
                parameter.clone(),
                revision.to_string()
            ],
        )?;
    }
    Ok(())
}

/// Set `id` with its members, if it exists.
pub fn get_set(connection: &impl Sql, id: &FigureSetId) -> Result<Option<StoredSet>, SqlError> {
    let Some(row) = connection.query_opt(
        "SELECT dataset_hash, question, shared_answers, created_by, created_by_name, created_at,
                revises
         FROM figure_sets WHERE id = ?1",
        sql_params![id.to_string()],
    )?
    else {
        return Ok(None);
    };
    let members = connection
        .query(
            "SELECT parameter, revision_id FROM figure_set_members
             WHERE set_id = ?1 ORDER BY position",
            sql_params![id.to_string()],
        )?
        .into_iter()
        .map(|member| {
            let revision: String = member.get(1)?;
            let revision = RevisionId::parse(&revision).map_err(|e| SqlError::Unreadable {
                column: 1,
                detail: e.to_string(),
            })?;
            Ok((member.get(0)?, revision))
        })
        .collect::<Result<_, SqlError>>()?;
    Ok(Some(StoredSet {
        id: id.clone(),
        dataset_hash: row.get(0)?,
        question: row.get(1)?,
        shared_answers: row.get(2)?,
        created_by: row.get(3)?,
        created_by_name: row.get(4)?,
        created_at: row.get(5)?,
        members,
        revises: row
            .get::<Option<String>>(6)?
            .and_then(|text| FigureSetId::parse(&text).ok()),
    }))
}

/// The sets revision `id` belongs to, oldest first.
pub fn sets_of_revision(
    connection: &impl Sql,
    id: &RevisionId,
) -> Result<Vec<FigureSetId>, SqlError> {
    connection
        .query(
            "SELECT m.set_id FROM figure_set_members m JOIN figure_sets s ON s.id = m.set_id
             WHERE m.revision_id = ?1 ORDER BY s.created_at, s.id",
            sql_params![id.to_string()],
        )?
        .into_iter()
        .map(|row| {
            let text: String = row.get(0)?;
            FigureSetId::parse(&text).map_err(|e| SqlError::Unreadable {
                column: 0,
                detail: e.to_string(),
            })
        })
        .collect()
}
