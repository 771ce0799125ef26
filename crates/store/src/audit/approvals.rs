//! The audit's approval pass: every `approval` record replayed against the accounts it names.
//! The chain proves a record was not changed after it was appended; it cannot prove the record
//! was made by the signing path. Someone with write access to the database (triggers dropped or
//! not) can append a well-formed approval by a ghost, a non-reviewer, or the author. So each
//! approval must agree with what the database knows independently of the record:
//!
//! 1. `SIGNER_UNKNOWN`: an account with the signer's id exists, under the signer's name;
//! 2. `NOT_REVIEWER_AT_SIGNING`: the role history shows the reviewer role held at `signed_at`;
//! 3. `ADMIN_AT_SIGNING`: it shows no admin role held then (separation of duties);
//! 4. `SIGNER_IS_AUTHOR`: the signer did not create the revision (four eyes, as the creation
//!    record names its author: account id, or the command-line user's name);
//! 5. `NO_SIGNING_EVENT`: the security log has the `signing` success the signing path writes in
//!    the same transaction: same account, same time, same revision.

use serde_json::Value;

use crate::sql::{Sql, SqlError};
use crate::sql_params;
use adamviz_model::account::Role;

/// An approval the database does not back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalProblem {
    /// The record's position in the ledger.
    pub seq: i64,
    /// The revision it signs.
    pub revision_id: String,
    /// The failed step's code (`SIGNER_UNKNOWN`, `NOT_REVIEWER_AT_SIGNING`, …).
    pub code: &'static str,
    /// What disagrees.
    pub detail: String,
}

fn text(value: &Value) -> String {
    value.as_str().map(str::to_owned).unwrap_or_default()
}

/// Whether account `id` held `role` at `at`: its latest history row for that role at or before
/// `at` is a grant.
fn held_at(connection: &impl Sql, id: i64, role: Role, at: &str) -> Result<bool, SqlError> {
    let latest: Option<String> = connection
        .query_opt(
            "SELECT change FROM account_role_history
             WHERE account_id = ?1 AND role = ?2 AND at <= ?3
             ORDER BY seq DESC LIMIT 1",
            sql_params![id, role.as_str(), at],
        )?
        .map(|row| row.get(0))
        .transpose()?;
    Ok(latest.as_deref() == Some("granted"))
}

/// Replays every approval record against the accounts, the role history, the revision's
/// creation record and the security log.
pub fn audit_approvals(connection: &impl Sql) -> Result<Vec<ApprovalProblem>, SqlError> {
    let approvals: Vec<(i64, Vec<u8>)> = connection
        .query(
            "SELECT seq, record FROM evidence_ledger WHERE kind = 'approval' ORDER BY seq",
            &[],
        )?
        .iter()
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .collect::<Result<_, SqlError>>()?;
    let mut problems = Vec::new();
    for (seq, bytes) in approvals {
        let record: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let approval = Approval {
            revision_id: text(&record["revision_id"]),
            signer_id: record["signer"]["account_id"].as_i64().unwrap_or(-1),
            signer_name: text(&record["signer"]["account_name"]),
            signed_at: text(&record["signed_at"]),
        };
        let found = approval.problems(connection)?;
        problems.extend(found.into_iter().map(|(code, detail)| ApprovalProblem {
            seq,
            revision_id: approval.revision_id.clone(),
            code,
            detail,
        }));
    }
    Ok(problems)
}

/// What an approval record says: which revision, who signed, when.
struct Approval {
    revision_id: String,
    signer_id: i64,
    signer_name: String,
    signed_at: String,
}

impl Approval {
    /// The record's problems against the database, as (code, detail).
    fn problems(&self, connection: &impl Sql) -> Result<Vec<(&'static str, String)>, SqlError> {
        let Approval {
            revision_id,
            signer_id,
            signer_name,
            signed_at,
        } = self;
        let mut problems = Vec::new();
        // 1. The account exists under that name (nothing else can be judged without it).
        if let Some(unknown) = self.unknown_signer(connection)? {
            problems.push(("SIGNER_UNKNOWN", unknown));
            return Ok(problems);
        }
        // 2. The reviewer role was held at signed_at.
        if !held_at(connection, *signer_id, Role::Reviewer, signed_at)? {
            problems.push((
                "NOT_REVIEWER_AT_SIGNING",
                format!("the role history shows no reviewer role held by {signer_name:?} at {signed_at}"),
            ));
        }
        // 3. No admin role then.
        if held_at(connection, *signer_id, Role::Admin, signed_at)? {
            problems.push((
                "ADMIN_AT_SIGNING",
                format!("{signer_name:?} held the admin role at {signed_at}: an account that manages accounts does not sign"),
            ));
        }
        // 4. Not the revision's creator.
        match creator_of(connection, revision_id)? {
            Some((id, name))
                if id == Some(*signer_id) || name.eq_ignore_ascii_case(signer_name) =>
            {
                problems.push((
                    "SIGNER_IS_AUTHOR",
                    format!("{signer_name:?} created revision {revision_id} and signed it"),
                ))
            }
            Some(_) => {}
            None => problems.push((
                "SIGNER_IS_AUTHOR",
                format!("revision {revision_id} has no creation record naming its author"),
            )),
        }
        // 5. The signing path's security event.
        if !self.signing_event_exists(connection)? {
            problems.push((
                "NO_SIGNING_EVENT",
                format!("the security log has no successful signing by {signer_name:?} of {revision_id} at {signed_at}"),
            ));
        }
        Ok(problems)
    }

    /// Why the signer is not an account of that name, if it is not.
    fn unknown_signer(&self, connection: &impl Sql) -> Result<Option<String>, SqlError> {
        let (signer_id, signer_name) = (self.signer_id, &self.signer_name);
        let stored_name: Option<String> = connection
            .query_opt(
                "SELECT name FROM accounts WHERE id = ?1",
                sql_params![signer_id],
            )?
            .map(|row| row.get(0))
            .transpose()?;
        Ok(match stored_name {
            None => Some(format!(
                "no account has the signer's id {signer_id} ({signer_name:?})"
            )),
            Some(name) if !name.eq_ignore_ascii_case(signer_name) => Some(format!(
                "account {signer_id} is named {name:?}, the record says {signer_name:?}"
            )),
            Some(_) => None,
        })
    }

    /// Whether the security log holds the successful signing this record came from.
    fn signing_event_exists(&self, connection: &impl Sql) -> Result<bool, SqlError> {
        connection
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM security_events
                            WHERE event = 'signing' AND outcome = 'success'
                              AND account_id = ?1 AND at = ?2 AND detail LIKE ?3 ESCAPE '\\')",
                sql_params![
                    self.signer_id,
                    self.signed_at.as_str(),
                    format!(
                        "{}: %",
                        self.revision_id.replace('%', "\\%").replace('_', "\\_")
                    )
                ],
            )?
            .get(0)
    }
}

/// The creator of revision `revision_id` as its creation record names it (account id, name).
fn creator_of(
    connection: &impl Sql,
    revision_id: &str,
) -> Result<Option<(Option<i64>, String)>, SqlError> {
    Ok(crate::signatures::creation_actor(connection, revision_id)?
        .map(|(account, name)| (account, name.unwrap_or_default())))
}

/// A signature made soon after someone other than the signer set the signer's password: not
/// a failure (an owner may have asked for the reset), but the sign of an administrator's
/// takeover, so a reviewer should look at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetFinding {
    /// The approval record's position in the ledger.
    pub seq: i64,
    /// The revision it signs.
    pub revision_id: String,
    /// The signer's account name.
    pub signer: String,
    /// When it was signed.
    pub signed_at: String,
    /// When the password was set by someone else.
    pub reset_at: String,
    /// Who set it.
    pub reset_by: String,
    /// Minutes from the reset to the signature.
    pub minutes_after: i64,
}

/// Every approval signed within `window_hours` after a reset of the signer's password by someone
/// else (an administrator, the command line), from the security log, so that records written
/// before `approval-v3` (which names the reset itself) are covered too.
pub fn signatures_after_reset(
    connection: &impl Sql,
    window_hours: u32,
) -> Result<Vec<ResetFinding>, SqlError> {
    let window = chrono::Duration::hours(i64::from(window_hours));
    let approvals: Vec<(i64, Vec<u8>)> = connection
        .query(
            "SELECT seq, record FROM evidence_ledger WHERE kind = 'approval' ORDER BY seq",
            &[],
        )?
        .iter()
        .map(|row| Ok((row.get(0)?, row.get(1)?)))
        .collect::<Result<_, SqlError>>()?;
    let mut findings = Vec::new();
    for (seq, bytes) in approvals {
        let record: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let signed_at = text(&record["signed_at"]);
        let Some(signer_id) = record["signer"]["account_id"].as_i64() else {
            continue;
        };
        let Ok(signed) = chrono::DateTime::parse_from_rfc3339(&signed_at) else {
            continue;
        };
        let since = (signed.with_timezone(&chrono::Utc) - window)
            .format("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string();
        let reset = connection.query_opt(
            "SELECT at, COALESCE(actor_name, 'unknown') FROM security_events
             WHERE event = 'password_changed' AND outcome = 'success' AND account_id = ?1
               AND (actor_id IS NULL OR actor_id <> ?1) AND at <= ?2 AND at >= ?3
             ORDER BY seq DESC LIMIT 1",
            sql_params![signer_id, signed_at.as_str(), since.as_str()],
        )?;
        if let Some(row) = reset {
            let reset_at: String = row.get(0)?;
            let minutes_after = chrono::DateTime::parse_from_rfc3339(&reset_at)
                .map_or(0, |reset| (signed - reset).num_minutes().max(0));
            findings.push(ResetFinding {
                seq,
                revision_id: text(&record["revision_id"]),
                signer: text(&record["signer"]["account_name"]),
                signed_at: signed_at.clone(),
                reset_at,
                reset_by: row.get(1)?,
                minutes_after,
            });
        }
    }
    Ok(findings)
}
