//! The profile of an uploaded dataset, as the UI and the CLI show it: columns, candidate roles,
//! per-parameter units and the warnings a reviewer must see. Computed by `crate::ingest::profile`.

use serde::{Deserialize, Serialize};

use super::digest::Sha256Digest;

/// Records in a cell below this many subjects are "low N" unless a spec says otherwise.
pub const DEFAULT_LOW_N_THRESHOLD: usize = 5;

/// At most this many distinct values are counted per column; the count says when it is capped.
pub const DISTINCT_CAP: usize = 1000;

/// At most this many examples are listed in one warning; the warning also gives the full count.
pub const EXAMPLE_CAP: usize = 10;

/// Everything adamviz learned from a dataset before any question is asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetProfile {
    /// SHA-256 of the uploaded bytes.
    pub content_hash: Sha256Digest,
    /// `csv` or `xpt`.
    pub source_format: String,
    /// Dataset name (XPT member name), if any.
    pub dataset_name: Option<String>,
    /// Dataset label, if any.
    pub dataset_label: Option<String>,
    /// Number of records.
    pub row_count: usize,
    /// One entry per column, in file order.
    pub columns: Vec<ColumnProfile>,
    /// Which columns can play which part in a plot.
    pub roles: CandidateRoles,
    /// One entry per parameter code, sorted by code.
    pub parameters: Vec<ParameterProfile>,
    /// The levels of each treatment candidate, in their natural order.
    pub treatment_levels: Vec<LevelsOf>,
    /// The visits of each visit candidate, in order.
    pub visit_levels: Vec<VisitsOf>,
    /// Data facts a reviewer must see.
    pub warnings: Vec<ProfileWarning>,
}

/// Numeric or character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnKind {
    /// Numbers.
    Numeric,
    /// Text.
    Character,
}

/// One column's facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnProfile {
    /// Name as in the file.
    pub name: String,
    /// SAS label, if any.
    pub label: Option<String>,
    /// Numeric or character.
    pub kind: ColumnKind,
    /// SAS display format, if any.
    pub format: Option<String>,
    /// The length the file declares: a SAS character variable's, or Dataset-JSON's `length`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<usize>,
    /// The data type the file declares (Dataset-JSON's `dataType`; other formats declare none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<String>,
    /// `date`, `datetime` or `time` when the format says the number is one.
    pub temporal: Option<String>,
    /// Missing cells.
    pub missing: usize,
    /// Distinct non-missing values, counted up to [`DISTINCT_CAP`].
    pub distinct: usize,
    /// True when `distinct` stopped at the cap.
    pub distinct_capped: bool,
    /// Smallest value (numeric columns).
    pub min: Option<f64>,
    /// Largest value (numeric columns).
    pub max: Option<f64>,
    /// Up to [`EXAMPLE_CAP`] distinct values in order of first appearance, as text (dates ISO 8601).
    pub examples: Vec<String>,
}

/// A visit label column and the numeric column that orders it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisitCandidate {
    /// The label column, e.g. AVISIT.
    pub label: String,
    /// Its order column, e.g. AVISITN, if present.
    pub order: Option<String>,
}

/// Candidate columns for each role, best first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateRoles {
    /// Subject identifier (USUBJID, SUBJID).
    pub subject: Vec<String>,
    /// Treatment (TRTA, TRT01A, TRTP, ARM, ACTARM …).
    pub treatment: Vec<String>,
    /// Visits with their order variables.
    pub visit: Vec<VisitCandidate>,
    /// Parameter code (PARAMCD).
    pub parameter_code: Vec<String>,
    /// Parameter label (PARAM).
    pub parameter_label: Vec<String>,
    /// Numeric analysis values (AVAL, CHG, PCHG, BASE).
    pub value: Vec<String>,
    /// Unit columns (AVALU …).
    pub unit: Vec<String>,
    /// Population flags (SAFFL, ITTFL …: subject level).
    pub population_flags: Vec<String>,
    /// Record flags (ANL01FL, ABLFL …: record level).
    pub record_flags: Vec<String>,
}

impl CandidateRoles {
    /// The role a column may play, in words, if any.
    pub fn role_of(&self, column: &str) -> Option<&'static str> {
        let is = |names: &[String]| names.iter().any(|n| n == column);
        if is(&self.subject) {
            Some("subject")
        } else if is(&self.treatment) {
            Some("treatment")
        } else if self.visit.iter().any(|v| v.label == column) {
            Some("visit")
        } else if self
            .visit
            .iter()
            .any(|v| v.order.as_deref() == Some(column))
        {
            Some("visit order")
        } else if is(&self.parameter_code) {
            Some("parameter code")
        } else if is(&self.parameter_label) {
            Some("parameter label")
        } else if is(&self.value) {
            Some("value")
        } else if is(&self.unit) {
            Some("unit")
        } else if is(&self.population_flags) {
            Some("population flag")
        } else if is(&self.record_flags) {
            Some("record flag")
        } else {
            None
        }
    }
}

/// The levels of one treatment column, in the order proposed for the panels: by the numeric
/// companion column (TRTA by TRTAN); else by a related order variable that matches the labels
/// one to one (TRT01AN, ARMN, …); else placebo or control first and doses ascending when the
/// labels carry doses; else in order of first appearance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelsOf {
    /// The column.
    pub column: String,
    /// The numeric column that ordered the levels (its own or a related one), if any.
    pub order_column: Option<String>,
    /// The levels.
    pub levels: Vec<String>,
    /// Which rule chose the order, in words: "levels ordered by TRT01AN, which matches TRTA's
    /// labels one to one", "levels with Placebo first, then doses ascending (54 mg, 81 mg) …".
    #[serde(default)]
    pub order_why: String,
}

/// One visit label with its order value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisitLevel {
    /// The blank-trimmed label.
    pub label: String,
    /// Its (smallest) order value, if any record has one.
    pub order: Option<f64>,
    /// Records with this label.
    pub records: usize,
}

/// The visits of one visit column: ordered by order value, then label; unordered last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisitsOf {
    /// The label column.
    pub column: String,
    /// The order column, if any.
    pub order_column: Option<String>,
    /// The visits.
    pub visits: Vec<VisitLevel>,
}

/// Where a parameter's unit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitSource {
    /// A unit column such as AVALU.
    Column,
    /// The trailing "(unit)" of the parameter label.
    ParameterLabel,
}

/// One parameter (PARAMCD value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParameterProfile {
    /// The code, e.g. `ALT`.
    pub code: String,
    /// Its label(s), e.g. `Alanine Aminotransferase (U/L)`; several mean inconsistent data.
    pub labels: Vec<String>,
    /// Records with this code.
    pub records: usize,
    /// The distinct units found, sorted.
    pub units: Vec<String>,
    /// Where the units came from.
    pub unit_source: Option<UnitSource>,
    /// True for codes that look derived (a `_` prefix in the CDISC pilot).
    pub derived_looking: bool,
    /// Non-missing numbers in each numeric value column (AVAL, CHG …) among its records; a
    /// parameter with none in a column cannot be plotted from it.
    pub values: std::collections::BTreeMap<String, usize>,
}

impl ParameterProfile {
    /// Whether `value_column` holds at least one number for this parameter.
    pub fn has_values_in(&self, value_column: &str) -> bool {
        self.values.get(value_column).is_some_and(|n| *n > 0)
    }
}

/// A data fact a reviewer must see, with the values or rows concerned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ProfileWarning {
    /// Visit labels with leading or trailing blanks.
    PaddedVisitLabels {
        /// The label column.
        column: String,
        /// Records concerned.
        records: usize,
        /// Some of the padded values, quoted as stored.
        examples: Vec<String>,
    },
    /// Visit labels whose records have no order value.
    VisitsWithoutOrder {
        /// The label column.
        column: String,
        /// The order column.
        order_column: String,
        /// Records concerned.
        records: usize,
        /// Labels concerned.
        examples: Vec<String>,
    },
    /// One visit label with several order values.
    VisitLabelWithSeveralOrders {
        /// The label column.
        column: String,
        /// The label.
        label: String,
        /// Its order values.
        orders: Vec<f64>,
    },
    /// One order value with several visit labels (e.g. "End of Treatment" sharing a number).
    OrderWithSeveralVisitLabels {
        /// The order column.
        order_column: String,
        /// The order value.
        order: f64,
        /// Its labels.
        labels: Vec<String>,
    },
    /// A parameter recorded in more than one unit.
    MixedUnits {
        /// The parameter code.
        parameter: String,
        /// The units.
        units: Vec<String>,
    },
    /// Several records for one subject, visit and parameter.
    SeveralRecordsPerSubjectVisit {
        /// The parameter code.
        parameter: String,
        /// Subject × visit combinations with more than one record.
        combinations: usize,
        /// Some of them, as "subject / visit (n records)".
        examples: Vec<String>,
    },
    /// Filtering on this flag = "Y" would remove every baseline record.
    FlagRemovesBaseline {
        /// The flag column, e.g. ANL01FL.
        flag: String,
        /// The baseline flag column, e.g. ABLFL.
        baseline_flag: String,
        /// Baseline records that the filter would drop.
        baseline_records: usize,
    },
    /// Treatment × visit cells with fewer subjects than the threshold.
    LowNCells {
        /// The parameter code.
        parameter: String,
        /// The threshold used.
        threshold: usize,
        /// Cells below it.
        cells: usize,
        /// Some of them, as "treatment / visit: n".
        examples: Vec<String>,
    },
    /// Parameter codes that look derived rather than measured.
    DerivedLookingParameters {
        /// The codes.
        codes: Vec<String>,
    },
    /// The file is SAS XPORT version 8, which regulators do not take yet.
    XportVersion8,
}

impl std::fmt::Display for ProfileWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |items: &[String]| items.join(", ");
        match self {
            Self::PaddedVisitLabels { column, records, examples } => write!(
                f,
                "{column}: {records} records have visit labels with leading or trailing blanks, e.g. {}",
                list(examples)
            ),
            Self::VisitsWithoutOrder { column, order_column, records, examples } => write!(
                f,
                "{column}: {records} records have no {order_column} to order their visit: {}",
                list(examples)
            ),
            Self::VisitLabelWithSeveralOrders { column, label, orders } => write!(
                f,
                "{column}: visit {label:?} has several order values: {}",
                orders.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", ")
            ),
            Self::OrderWithSeveralVisitLabels { order_column, order, labels } => write!(
                f,
                "{order_column} = {order} is shared by several visits: {}",
                list(labels)
            ),
            Self::MixedUnits { parameter, units } => {
                write!(f, "parameter {parameter} is recorded in several units: {}", list(units))
            }
            Self::SeveralRecordsPerSubjectVisit { parameter, combinations, examples } => write!(
                f,
                "parameter {parameter}: {combinations} subject × visit combinations have several records, e.g. {}",
                list(examples)
            ),
            Self::FlagRemovesBaseline { flag, baseline_flag, baseline_records } => write!(
                f,
                "filtering on {flag} = \"Y\" would remove all {baseline_records} baseline records ({baseline_flag} = \"Y\")"
            ),
            Self::LowNCells { parameter, threshold, cells, examples } => write!(
                f,
                "parameter {parameter}: {cells} treatment × visit cells have fewer than {threshold} subjects, e.g. {}",
                list(examples)
            ),
            Self::XportVersion8 => f.write_str(
                "the file is SAS XPORT version 8 (long names and labels): submissions to FDA and PMDA still expect XPORT version 5",
            ),
            Self::DerivedLookingParameters { codes } => write!(
                f,
                "{} parameter codes look derived (\"_\" prefix): {}",
                codes.len(),
                list(codes)
            ),
        }
    }
}
