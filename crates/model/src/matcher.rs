//! The question matcher's findings as the pages show them: each decision with the words that
//! took it, and why no draft could be proposed. The matcher itself is the engine's
//! (`question::matcher`).

use serde::{Deserialize, Serialize};

/// One decision the matcher took, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchNote {
    /// The spec field decided, e.g. `parameter`.
    pub field: String,
    /// The words of the question that decided it; empty when a default was taken.
    pub words: Vec<String>,
    /// What was chosen, e.g. `PARAMCD = ALT (Alanine Aminotransferase (U/L))`; `no proposal`
    /// when the question stays open.
    pub chosen: String,
    /// Why, in words: which word matched what, which order was used, or why nothing was proposed.
    pub why: String,
}

/// Why no draft could be proposed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    /// The dataset lacks a column the plot cannot do without.
    #[error("the dataset has no {role} column (looked for {looked_for}); it cannot be plotted as a boxplot by visit and treatment")]
    MissingRole {
        /// The role, e.g. `treatment`.
        role: &'static str,
        /// The names looked for.
        looked_for: &'static str,
    },
    /// The question is empty.
    #[error("the question is empty: say what to plot, e.g. \"ALT over time by arm\"")]
    EmptyQuestion,
}
