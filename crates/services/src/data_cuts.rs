//! New data cuts: a revision's (or a figure set's) answers carried to a later delivery of its
//! dataset for "Re-run on the new data". Every answer is kept as it was, except a list that no
//! longer fits the new data: the visits when a visit answered is gone or the new data has a
//! visit the earlier data had not; the treatment levels likewise. Such a list is emptied, so the
//! question is open and the person answers it: a new visit or level is never guessed in or out.

use adamviz_model::{data_cut::NewerCut, draft::DraftAnswers, profile::DatasetProfile};
use adamviz_store::{data_cuts::newer_cut, db::Database};

use super::{database::on_database, error::ReadError};

/// The newest later delivery of dataset `content_hash`, if any.
pub async fn newer_cut_of(
    database: &Database,
    content_hash: &str,
) -> Result<Option<NewerCut>, ReadError> {
    let hash = content_hash.to_owned();
    let found = on_database(database, move |connection| newer_cut(connection, &hash)).await?;
    Ok(
        found.map(|(content_hash, file_name, uploaded_at)| NewerCut {
            content_hash,
            file_name,
            uploaded_at,
        }),
    )
}

/// `answers` given on data profiled as `old`, carried to data profiled as `new`: the answers,
/// with each list that no longer fits emptied, and why, per question id.
pub fn carried_answers(
    answers: &DraftAnswers,
    old: &DatasetProfile,
    new: &DatasetProfile,
) -> (DraftAnswers, Vec<(String, String)>) {
    let mut carried = answers.clone();
    let mut opened = Vec::new();
    if let Some(variable) = &answers.visit_variable {
        let labels = |profile: &DatasetProfile| -> Vec<String> {
            profile
                .visit_levels
                .iter()
                .find(|v| v.column == *variable)
                .map(|v| v.visits.iter().map(|l| l.label.clone()).collect())
                .unwrap_or_default()
        };
        if let Some(why) = misfit(&answers.visits, &labels(old), &labels(new), "visit") {
            carried.visits.clear();
            opened.push(("visits".to_owned(), why));
        }
    }
    if let Some(variable) = &answers.treatment_variable {
        let levels = |profile: &DatasetProfile| -> Vec<String> {
            profile
                .treatment_levels
                .iter()
                .find(|l| l.column == *variable)
                .map(|l| l.levels.clone())
                .unwrap_or_default()
        };
        if let Some(why) = misfit(
            &answers.treatment_levels,
            &levels(old),
            &levels(new),
            "treatment level",
        ) {
            carried.treatment_levels.clear();
            opened.push(("treatment_levels".to_owned(), why));
        }
    }
    (carried, opened)
}

/// Why the `answered` list of values (of `old` data) does not fit `new` data: a value answered
/// that the new data lacks, or a value the new data has that the old had not.
fn misfit(answered: &[String], old: &[String], new: &[String], what: &str) -> Option<String> {
    let gone: Vec<&str> = answered
        .iter()
        .filter(|v| !new.contains(v))
        .map(String::as_str)
        .collect();
    let added: Vec<&str> = new
        .iter()
        .filter(|v| !old.contains(v))
        .map(String::as_str)
        .collect();
    let mut why = Vec::new();
    if !gone.is_empty() {
        why.push(format!(
            "the new data has no {what} {}",
            quoted(&gone).join(", ")
        ));
    }
    if !added.is_empty() {
        why.push(format!(
            "the new data has a {what} the earlier answers could not know: {}",
            quoted(&added).join(", ")
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

fn quoted(values: &[&str]) -> Vec<String> {
    values
        .iter()
        .map(|v| format!("\u{201c}{v}\u{201d}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::misfit;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_list_fits_when_every_answer_is_there_and_nothing_is_new() {
        let old = list(&["Baseline", "Week 2", "Week 4"]);
        assert_eq!(misfit(&list(&["Week 2"]), &old, &old, "visit"), None);
        let why = misfit(
            &list(&["Week 4"]),
            &old,
            &list(&["Baseline", "Week 2"]),
            "visit",
        )
        .unwrap();
        assert!(why.contains("no visit \u{201c}Week 4\u{201d}"), "{why}");
        let new = list(&["Baseline", "Week 2", "Week 4", "Week 6"]);
        let why = misfit(&list(&["Baseline"]), &old, &new, "visit").unwrap();
        assert!(
            why.contains("could not know: \u{201c}Week 6\u{201d}"),
            "{why}"
        );
    }
}
