//! The title and footnotes of a figure's report-ready outputs (PDF and SVG): what a clinical
//! study report needs printed under the figure — the population and filters, the
//! records-per-subject rule, the dataset by name and hash, the script hash, the revision — and
//! the status the figure had when it was drawn. Composed here, once, from the spec and the
//! revision's facts; recorded in the execution request (so a reproduction draws the same
//! words) and drawn by the harness.

use serde::{Deserialize, Serialize};

use adamviz_model::{
    digest::Sha256Digest,
    spec::{PlotSpec, RecordsPerSubjectVisit},
};

/// The words drawn above and below the report-ready figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportText {
    /// The title (the spec's title).
    pub title: String,
    /// The footnotes, one line each, in order.
    pub footnotes: Vec<String>,
}

/// The facts of a revision the footnotes name, beside its spec.
#[derive(Debug, Clone, Copy)]
pub struct ReportFacts<'a> {
    /// The uploaded file's name.
    pub dataset_name: &'a str,
    /// SHA-256 of the uploaded bytes.
    pub dataset_hash: &'a Sha256Digest,
    /// SHA-256 of the compiled script.
    pub script_hash: &'a Sha256Digest,
    /// The revision (`rev-…`).
    pub revision_id: &'a str,
    /// The revision it revises, if any.
    pub parent: Option<&'a str>,
}

/// What the status footnote says. A governed run draws a Draft: whether the figure became
/// Verified, and who approved it, is written in the revision's evidence after the drawing,
/// so the page says so plainly instead of claiming either.
pub const STATUS_WHEN_DRAWN: &str = "Status when drawn: Draft. Whether it was verified and \
approved is recorded in this revision's evidence, not on this page.";

/// The title and footnotes of `spec`'s figure for the revision described by `facts`.
pub fn report_text(spec: &PlotSpec, facts: ReportFacts<'_>) -> ReportText {
    let mut population: Vec<String> = Vec::new();
    if let Some(parameter) = &spec.parameter {
        let label = parameter
            .label
            .as_deref()
            .map(|label| format!(" ({label})"))
            .unwrap_or_default();
        population.push(format!("{} = {}{label}", parameter.column, parameter.value));
    }
    for filter in &spec.filters {
        population.push(format!(
            "{} in {{{}}}",
            filter.column,
            filter.values.join(", ")
        ));
    }
    population.push(format!(
        "{} in {{{}}}",
        spec.treatment.column,
        spec.treatment.levels.join(", ")
    ));
    population.push(format!(
        "{}: {} visits",
        spec.visit.column,
        spec.visit.visits.len()
    ));
    let records = match &spec.records_per_subject_visit {
        Some(RecordsPerSubjectVisit::One) | None => {
            "one record per subject and visit (the selection holds no more)".to_owned()
        }
        Some(RecordsPerSubjectVisit::OneWhere { column, value }) => {
            format!("one record per subject and visit, where {column} = {value:?}")
        }
        Some(RecordsPerSubjectVisit::Every) => {
            "every record kept; a box pools several records of a subject".to_owned()
        }
    };
    let revision = match facts.parent {
        Some(parent) => format!("Revision {} (revises {parent}).", facts.revision_id),
        None => format!("Revision {}.", facts.revision_id),
    };
    ReportText {
        title: spec.title.clone(),
        footnotes: vec![
            format!("Population and filters: {}.", population.join("; ")),
            format!(
                "Value: {}{}. Records per subject and visit: {records}.",
                spec.value_column,
                spec.unit
                    .as_deref()
                    .map(|unit| format!(" ({unit})"))
                    .unwrap_or_default()
            ),
            format!(
                "Dataset: {} (SHA-256 {}).",
                facts.dataset_name, facts.dataset_hash
            ),
            format!("Script SHA-256 {}. {revision}", facts.script_hash),
            STATUS_WHEN_DRAWN.to_owned(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adamviz_model::spec::{
        LowNAction, LowNPolicy, ParameterChoice, RecordFilter, SpecState, TreatmentChoice,
        VisitChoice, VisitOrderSource, YScale,
    };

    fn facts<'a>(hash: &'a Sha256Digest, parent: Option<&'a str>) -> ReportFacts<'a> {
        ReportFacts {
            dataset_name: "adlbc.xpt",
            dataset_hash: hash,
            script_hash: hash,
            revision_id: "rev-00000000000000000000000000000001",
            parent,
        }
    }

    #[test]
    fn footnotes_name_population_rule_dataset_script_revision_and_a_plain_status() {
        let hash = Sha256Digest::from_bytes([7; 32]);
        let spec = PlotSpec {
            state: SpecState::Confirmed,
            dataset_content_hash: hash,
            question: "ALT by visit".to_owned(),
            parameter: Some(ParameterChoice {
                column: "PARAMCD".to_owned(),
                value: "ALT".to_owned(),
                label: Some("Alanine Aminotransferase (U/L)".to_owned()),
            }),
            filters: vec![RecordFilter {
                column: "SAFFL".to_owned(),
                values: vec!["Y".to_owned()],
            }],
            records_per_subject_visit: Some(RecordsPerSubjectVisit::OneWhere {
                column: "DTYPE".to_owned(),
                value: String::new(),
            }),
            treatment: TreatmentChoice {
                column: "TRTA".to_owned(),
                levels: vec!["Placebo".to_owned(), "Xanomeline High Dose".to_owned()],
            },
            value_column: "AVAL".to_owned(),
            subject_column: "USUBJID".to_owned(),
            visit: VisitChoice {
                column: "AVISIT".to_owned(),
                order_source: VisitOrderSource::AsListed,
                visits: vec!["Baseline".to_owned(), "Week 2".to_owned()],
            },
            y_scale: YScale::Fixed,
            unit: Some("U/L".to_owned()),
            low_n: LowNPolicy {
                threshold: 3,
                below: LowNAction::Annotate,
            },
            title: "ALT by visit and treatment".to_owned(),
        };
        let text = report_text(&spec, facts(&hash, Some("rev-parent")));
        assert_eq!(text.title, spec.title);
        let all = text.footnotes.join("\n");
        assert!(
            all.contains("PARAMCD = ALT (Alanine Aminotransferase (U/L))"),
            "{all}"
        );
        assert!(all.contains("SAFFL in {Y}"), "{all}");
        assert!(all.contains("where DTYPE = \"\""), "{all}");
        assert!(
            all.contains(&format!("Dataset: adlbc.xpt (SHA-256 {hash})")),
            "{all}"
        );
        assert!(all.contains(&format!("Script SHA-256 {hash}")), "{all}");
        assert!(all.contains("(revises rev-parent)"), "{all}");
        assert_eq!(text.footnotes.last().unwrap(), STATUS_WHEN_DRAWN);
        assert!(!all.contains("Approved by"), "never claims an approval");
    }
}
