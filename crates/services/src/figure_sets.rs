//! Figure sets as use cases: draft the same boxplot for every parameter of a dataset with one
//! set of shared answers (each parameter's unit and records-per-subject rule its own), confirm
//! them together (one revision per parameter, then the set that links them), Run all, and the
//! set's page (each figure's status and what the viewer may do about it).
//!
//! Every figure goes through the single-figure path (`drafts::answer_draft`, the execution
//! service's materialize, `runs::start_run`, `approvals::sign`): a set adds no second way to
//! make, run or sign a revision.

use crate::database::on_database;
use std::sync::Arc;

use super::{
    confirm::ConfirmError,
    datasets::LoadedDataset,
    drafts::{answer_draft, preview, AnsweredDraft},
    error::ReadError,
    execution::{ExecutionService, UploadInfo},
    revisions::{revision_detail, RevisionSources},
    runs::{start_run, RunContext, StartRunError},
};
use adamviz_engine::ingest::table::Table;
use adamviz_evidence::actor::Actor;
use adamviz_model::{
    account::Account,
    confirmation::AllowedAnswers,
    dataset::DatasetSummary,
    digest::Sha256Digest,
    draft::{DraftAnswers, FieldError},
    figure_set::{
        MemberAnswerMap, MemberAnswers, MemberDraft, SetMember, SetSummary, SharedAnswer,
    },
    ids::{FigureSetId, RevisionId},
    matcher::MatchError,
    profile::DatasetProfile,
    revision::RevisionStatus,
    spec::PlotSpec,
};
use adamviz_store::figure_sets::{get_set, insert_set, new_set_id, StoredSet};

/// The questions each parameter answers for itself; every other question is shared.
pub const PER_PARAMETER: &[&str] = &["parameter", "unit", "records_per_subject_visit", "title"];

/// A set's draft: the shared answers as applied, and each parameter's draft.
#[derive(Debug, Clone)]
pub struct SetDraft {
    /// The shared answers as applied (the per-parameter ones cleared).
    pub shared_answers: DraftAnswers,
    /// The shared questions with their answers, in words.
    pub shared: Vec<SharedAnswer>,
    /// What is wrong with the shared answers.
    pub shared_errors: Vec<FieldError>,
    /// Every parameter with numbers in the value variable, in code order.
    pub members: Vec<MemberDraft>,
    /// The confirmed spec of every included parameter whose answers hold.
    pub confirmed: Vec<(String, PlotSpec)>,
}

/// Drafts `question` on `table` for every parameter: `shared` are the single-figure form's
/// answers (none: the proposals), `members` the set form's per-parameter answers. A parameter
/// whose code looks derived is left out unless the form ticks it.
pub fn draft_set(
    question: &str,
    profile: &DatasetProfile,
    table: &Table,
    content_hash: Sha256Digest,
    shared: Option<&DraftAnswers>,
    members: &MemberAnswerMap,
) -> Result<SetDraft, MatchError> {
    let base = answer_draft(question, profile, table, content_hash, shared)?;
    let shared_answers = shared_part(&base.answers);
    let shared_errors: Vec<FieldError> = base
        .errors
        .iter()
        .filter(|e| !PER_PARAMETER.contains(&e.question.as_str()))
        .cloned()
        .collect();
    let mut drafts = Vec::new();
    let mut confirmed = Vec::new();
    let categories = parameter_categories(table, profile);
    let asked_for = category_in_question(question, &categories);
    for parameter in profile
        .parameters
        .iter()
        .filter(|p| p.has_values_in(&base.spec.value_column))
    {
        let answers = members.get(&parameter.code);
        let own_categories = categories.get(&parameter.code);
        // Ticked unless derived-looking or outside the category the question names.
        let in_category = asked_for
            .as_ref()
            .is_none_or(|asked| own_categories.is_some_and(|c| c.contains(asked)));
        let included = MemberAnswers::included(answers, !parameter.derived_looking && in_category);
        let label = parameter.labels.first().cloned().unwrap_or_default();
        let mut member = MemberDraft {
            code: parameter.code.clone(),
            label,
            category: own_categories.map(|c| c.iter().cloned().collect::<Vec<_>>().join(", ")),
            derived_looking: parameter.derived_looking,
            included,
            unit: String::new(),
            records_per_subject_visit: String::new(),
            record_options: Vec::new(),
            errors: Vec::new(),
            preview: None,
        };
        if included {
            let own = member_answers(&shared_answers, &parameter.code, answers);
            let answered = answer_draft(question, profile, table, content_hash, Some(&own))?;
            fill_member(&mut member, &answered, table);
            if let (true, Some(spec)) = (shared_errors.is_empty(), answered.confirmed) {
                if member.errors.is_empty() {
                    confirmed.push((parameter.code.clone(), spec));
                }
            }
        }
        drafts.push(member);
    }
    Ok(SetDraft {
        shared: shared_words(&base, &shared_answers),
        shared_answers,
        shared_errors,
        members: drafts,
        confirmed,
    })
}

/// The columns that name a parameter's category, most telling first.
const CATEGORY_COLUMNS: [&str; 3] = ["PARCAT1", "PARCAT2", "PARCAT3"];

/// Each parameter code's categories (the first of PARCAT1, PARCAT2, PARCAT3 the table has).
pub fn parameter_categories(
    table: &Table,
    profile: &DatasetProfile,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use adamviz_engine::ingest::table::ColumnData;
    let mut categories: std::collections::BTreeMap<_, std::collections::BTreeSet<String>> =
        Default::default();
    let text = |name: &str| match table.column(name).map(|c| &c.data) {
        Some(ColumnData::Character(values)) => Some(values),
        _ => None,
    };
    let codes = profile.roles.parameter_code.first().and_then(|c| text(c));
    let category = CATEGORY_COLUMNS.iter().find_map(|name| text(name));
    let (Some(codes), Some(category)) = (codes, category) else {
        return categories;
    };
    for row in 0..table.row_count {
        if let (Some(code), Some(value)) = (codes.get(row), category.get(row)) {
            let value = value.trim();
            if !value.is_empty() {
                categories
                    .entry(code.trim().to_owned())
                    .or_default()
                    .insert(value.to_owned());
            }
        }
    }
    categories
}

/// The category the question names ("all chemistry parameters"): one whose every word is a
/// word of the question, case aside.
pub fn category_in_question(
    question: &str,
    categories: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<String> {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let asked = words(question);
    let all: std::collections::BTreeSet<&String> = categories.values().flatten().collect();
    all.into_iter()
        .find(|category| {
            let own = words(category);
            !own.is_empty() && own.iter().all(|w| asked.contains(w))
        })
        .cloned()
}

/// `answers` without the per-parameter ones.
fn shared_part(answers: &DraftAnswers) -> DraftAnswers {
    DraftAnswers {
        parameter: None,
        unit: None,
        records_per_subject_visit: None,
        title: None,
        ..answers.clone()
    }
}

/// The answers of parameter `code`: the shared ones, the code, and its own unit and records
/// rule when the form gave them (else the parameter's own unit and the rule proposed for it).
pub fn member_answers(
    shared: &DraftAnswers,
    code: &str,
    own: Option<&MemberAnswers>,
) -> DraftAnswers {
    let given =
        |value: Option<&String>| value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    DraftAnswers {
        parameter: Some(code.to_owned()),
        unit: own.and_then(|o| given(o.unit.as_ref())),
        records_per_subject_visit: own.and_then(|o| given(o.records_per_subject_visit.as_ref())),
        title: None,
        ..shared.clone()
    }
}

/// The parameter's answers, record choices, errors and preview from its draft.
fn fill_member(member: &mut MemberDraft, answered: &AnsweredDraft, table: &Table) {
    member.unit = answered.answers.unit.clone().unwrap_or_default();
    member.records_per_subject_visit = answered
        .answers
        .records_per_subject_visit
        .clone()
        .unwrap_or_default();
    member.record_options = answered
        .questions
        .iter()
        .find(|q| q.id == "records_per_subject_visit")
        .and_then(|q| match &q.allowed {
            AllowedAnswers::RecordChoice { options } => Some(options.clone()),
            _ => None,
        })
        .unwrap_or_default();
    member.errors = answered
        .errors
        .iter()
        .filter(|e| PER_PARAMETER.contains(&e.question.as_str()))
        .cloned()
        .collect();
    if let Some(spec) = &answered.confirmed {
        match preview(spec, table) {
            Ok(drawn) => member.preview = Some(drawn),
            Err(error) => member.errors.push(FieldError {
                question: "general".to_owned(),
                message: error.to_string(),
            }),
        }
    }
}

/// The shared questions, as the base draft asks them, with the shared answers in words.
fn shared_words(base: &AnsweredDraft, shared: &DraftAnswers) -> Vec<SharedAnswer> {
    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.join(", ")
        }
    };
    base.questions
        .iter()
        .filter(|q| !PER_PARAMETER.contains(&q.id.as_str()))
        .map(|q| {
            let answer = match q.id.as_str() {
                "filters" if shared.filters.values().all(Vec::is_empty) => "none".to_owned(),
                "filters" => shared
                    .filters
                    .iter()
                    .filter(|(_, values)| !values.is_empty())
                    .map(|(column, values)| format!("{column} = {}", values.join(" or ")))
                    .collect::<Vec<_>>()
                    .join("; "),
                "treatment_variable" => shared.treatment_variable.clone().unwrap_or_default(),
                "treatment_levels" => list(&shared.treatment_levels),
                "value_variable" => shared.value_variable.clone().unwrap_or_default(),
                "visit_variable" => shared.visit_variable.clone().unwrap_or_default(),
                "visits" => list(&shared.visits),
                "y_scale" => shared.y_scale.clone().unwrap_or_default(),
                "low_n_threshold" => shared.low_n_threshold.clone().unwrap_or_default(),
                "low_n_action" => shared.low_n_action.clone().unwrap_or_default(),
                _ => q.proposed.clone().unwrap_or_default(),
            };
            SharedAnswer {
                question: q.question.clone(),
                answer,
            }
        })
        .collect()
}

/// What confirming a set did.
#[derive(Debug)]
pub enum SetConfirmed {
    /// Every included figure confirmed: the set made, with its revisions in parameter order.
    Created(StoredSet),
    /// Something does not hold; nothing was written. Per parameter code (`shared` for the
    /// shared answers), what is wrong.
    Refused(Vec<(String, FieldError)>),
}

/// What a set confirmation is asked.
#[derive(Debug, Clone)]
pub struct SetRequest {
    /// The question.
    pub question: String,
    /// The shared answers (none: the proposals).
    pub shared: Option<DraftAnswers>,
    /// Per parameter, the set form's answers.
    pub members: MemberAnswerMap,
    /// The set this one re-runs on a newer data cut: each figure revises the earlier set's
    /// figure of the same parameter.
    pub revises: Option<FigureSetId>,
}

/// Confirms a set: every included parameter's answers must hold (else nothing is written),
/// then each figure becomes a revision through the single-figure path and the set is stored
/// with them in parameter order.
pub async fn confirm_set(
    execution: &ExecutionService,
    dataset: &DatasetSummary,
    loaded: Arc<LoadedDataset>,
    request: SetRequest,
    actor: &Actor,
    created_at: String,
) -> Result<SetConfirmed, ConfirmError> {
    let digest = Sha256Digest::try_from(dataset.content_hash.clone())
        .map_err(|_| ConfirmError::DatasetHash(dataset.content_hash.clone()))?;
    let drafted = {
        let (loaded, request) = (Arc::clone(&loaded), request.clone());
        tokio::task::spawn_blocking(move || {
            draft_set(
                &request.question,
                &loaded.profile,
                &loaded.table,
                digest,
                request.shared.as_ref(),
                &request.members,
            )
        })
        .await??
    };
    let refusals = refusals(&drafted);
    if !refusals.is_empty() {
        return Ok(SetConfirmed::Refused(refusals));
    }
    let upload = UploadInfo {
        content_hash: digest,
        classification: dataset.classification.clone(),
        file_name: dataset.file_name.clone(),
        size: dataset.size,
    };
    let earlier = match &request.revises {
        Some(id) => Some(
            stored_set(execution.database(), id)
                .await?
                .ok_or_else(|| ConfirmError::NoSet(id.clone()))?,
        ),
        None => None,
    };
    let parent_of = |code: &str| {
        earlier.as_ref().and_then(|set| {
            set.members
                .iter()
                .find(|(parameter, _)| parameter == code)
                .map(|(_, id)| id.clone())
        })
    };
    let mut members = Vec::with_capacity(drafted.confirmed.len());
    for (code, spec) in &drafted.confirmed {
        let made = execution
            .materialize_revising(
                spec,
                Arc::clone(&loaded.table),
                &upload,
                actor,
                parent_of(code),
            )
            .await?;
        members.push((code.clone(), made.revision.id));
    }
    let set = StoredSet {
        id: new_set_id(),
        dataset_hash: dataset.content_hash.clone(),
        question: request.question,
        shared_answers: serde_json::to_string(&drafted.shared_answers)?,
        created_by: actor.account_id,
        created_by_name: actor.account_name.clone(),
        created_at,
        members,
        revises: request.revises,
    };
    let stored = set.clone();
    on_database(execution.database(), move |connection| {
        let transaction = connection.transaction()?;
        insert_set(&transaction, &stored)?;
        transaction.commit()?;
        Ok::<_, adamviz_store::db::DbError>(())
    })
    .await?;
    Ok(SetConfirmed::Created(set))
}

/// Why a drafted set cannot be confirmed: shared errors, a set with no figure, or an included
/// parameter with an open or wrong answer.
fn refusals(drafted: &SetDraft) -> Vec<(String, FieldError)> {
    let mut refusals: Vec<(String, FieldError)> = drafted
        .shared_errors
        .iter()
        .map(|e| ("shared".to_owned(), e.clone()))
        .collect();
    if drafted.members.iter().all(|m| !m.included) {
        refusals.push((
            "shared".to_owned(),
            FieldError {
                question: "general".to_owned(),
                message: "tick at least one parameter: the set has no figure".to_owned(),
            },
        ));
    }
    for member in drafted.members.iter().filter(|m| m.included) {
        for error in &member.errors {
            refusals.push((member.code.clone(), error.clone()));
        }
        let confirmed = drafted
            .confirmed
            .iter()
            .any(|(code, _)| *code == member.code);
        if member.errors.is_empty() && !confirmed && drafted.shared_errors.is_empty() {
            refusals.push((
                member.code.clone(),
                FieldError {
                    question: "general".to_owned(),
                    message: "its answers do not confirm".to_owned(),
                },
            ));
        }
    }
    refusals
}

/// Set `id` as stored, or `None`.
pub async fn stored_set(
    database: &adamviz_store::db::Database,
    id: &FigureSetId,
) -> Result<Option<StoredSet>, ReadError> {
    let key = id.clone();
    on_database(database, move |connection| get_set(connection, &key)).await
}

/// Queues a run for every figure of set `id` that is Draft with no run under way (a failed one
/// runs again): the same `start_run` as a revision's Run button, one idempotency key per figure
/// derived from `key`. How many were queued or joined.
pub async fn run_all(
    context: &RunContext,
    set: &StoredSet,
    key: &str,
    actor: &Actor,
) -> Result<usize, StartRunError> {
    let mut queued = 0;
    for (position, (_, revision)) in set.members.iter().enumerate() {
        match start_run(
            context,
            revision,
            &format!("{key}-{position}"),
            actor.clone(),
        )
        .await
        {
            Ok(_) => queued += 1,
            Err(StartRunError::NotDraft { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(queued)
}

/// Set `set` as `viewer` sees its page (each figure read as its own page reads it).
pub async fn set_members(
    sources: &RevisionSources,
    set: &StoredSet,
    viewer: &Account,
) -> Result<Vec<SetMember>, ReadError> {
    let mut members = Vec::with_capacity(set.members.len());
    for (parameter, id) in &set.members {
        let Some(detail) = revision_detail(sources, id, viewer).await? else {
            continue;
        };
        let last_decision = detail.signatures.last().map(|s| match &s.meaning {
            Some(meaning) => format!("Approved by {} ({meaning})", s.printed_name),
            None => format!(
                "Changes requested by {}: {}",
                s.printed_name,
                s.comment.clone().unwrap_or_default()
            ),
        });
        let changes = match &detail.parent {
            Some(parent) if !detail.statistics.is_empty() => {
                changes_against(sources, parent, &detail, viewer).await?
            }
            _ => None,
        };
        members.push(SetMember {
            parameter: parameter.clone(),
            summary: detail.summary,
            run: detail.run,
            review: detail.review,
            last_decision,
            parent: detail.parent,
            changes,
        });
    }
    Ok(members)
}

/// What changed per cell from revision `parent` to `detail`, once both have statistics.
async fn changes_against(
    sources: &RevisionSources,
    parent: &str,
    detail: &adamviz_model::revision::RevisionDetail,
    viewer: &Account,
) -> Result<Option<String>, ReadError> {
    let Ok(parent_id) = RevisionId::parse(parent) else {
        return Ok(None);
    };
    Ok(revision_detail(sources, &parent_id, viewer)
        .await?
        .filter(|p| !p.statistics.is_empty())
        .map(|p| super::history::compare(&p, detail).describe_changes()))
}

/// Each figure's own answers (unit, records rule) as the set form sends them: what a re-run of
/// the set on a newer data cut starts from.
pub async fn member_answers_of(
    database: &adamviz_store::db::Database,
    set: &StoredSet,
) -> Result<MemberAnswerMap, ReadError> {
    let mut members = MemberAnswerMap::new();
    for (code, id) in &set.members {
        let key = id.clone();
        let Some(revision) = on_database(database, move |connection| {
            adamviz_store::repository::get_revision(connection, &key)
        })
        .await?
        else {
            continue;
        };
        let spec = super::runs::stored_spec(database, &revision.spec_hash).await?;
        let answers = super::drafts::answers_of(&spec);
        members.insert(
            code.clone(),
            MemberAnswers {
                listed: Some("1".to_owned()),
                include: Some("1".to_owned()),
                unit: answers.unit,
                records_per_subject_visit: answers.records_per_subject_visit,
            },
        );
    }
    Ok(members)
}

/// Whether any figure of `members` could still be run by an author.
pub fn any_to_run(members: &[SetMember]) -> bool {
    members
        .iter()
        .any(|m| m.summary.status == RevisionStatus::Draft && !m.run.is_moving())
}

/// The counts of `members`.
pub fn summary_of(members: &[SetMember]) -> SetSummary {
    SetSummary::of(members)
}

/// The revisions of `set`, in parameter order.
pub fn revisions_of(set: &StoredSet) -> Vec<RevisionId> {
    set.members.iter().map(|(_, id)| id.clone()).collect()
}
