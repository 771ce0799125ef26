//! The draft form's answers as signals, and the lists' items in their order.

use leptos::prelude::*;

use std::collections::BTreeMap;

use adamviz_model::{
    confirmation::{AllowedAnswers, ConfirmationQuestion},
    draft::DraftAnswers,
};

/// Items of an ordered question: the kept ones in their order, then the others.
pub(super) fn ordered_items(kept: &[String], all: &[String]) -> Vec<(String, bool)> {
    let mut items: Vec<(String, bool)> = kept.iter().map(|k| (k.clone(), true)).collect();
    items.extend(
        all.iter()
            .filter(|item| !kept.contains(item))
            .map(|item| (item.clone(), false)),
    );
    items
}

pub(super) fn items_of(questions: &[ConfirmationQuestion], id: &str) -> Vec<String> {
    questions
        .iter()
        .find(|q| q.id == id)
        .and_then(|q| match &q.allowed {
            AllowedAnswers::OrderedSubsetOf { items } => Some(items.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The form's answers as signals.
#[derive(Clone, Copy)]
pub(super) struct AnswerSignals {
    pub(super) parameter: RwSignal<String>,
    pub(super) filters: RwSignal<BTreeMap<String, Vec<String>>>,
    pub(super) treatment_variable: RwSignal<String>,
    pub(super) levels: RwSignal<Vec<(String, bool)>>,
    pub(super) levels_of: RwSignal<String>,
    pub(super) value_variable: RwSignal<String>,
    pub(super) visit_variable: RwSignal<String>,
    pub(super) visits: RwSignal<Vec<(String, bool)>>,
    pub(super) visits_of: RwSignal<String>,
    pub(super) records: RwSignal<String>,
    pub(super) y_scale: RwSignal<String>,
    pub(super) unit: RwSignal<String>,
    pub(super) unit_touched: RwSignal<bool>,
    pub(super) threshold: RwSignal<String>,
    pub(super) action: RwSignal<String>,
    pub(super) title: RwSignal<String>,
    pub(super) title_touched: RwSignal<bool>,
}

impl AnswerSignals {
    pub(super) fn new(answers: &DraftAnswers, questions: &[ConfirmationQuestion]) -> Self {
        let text = |value: &Option<String>| RwSignal::new(value.clone().unwrap_or_default());
        Self {
            parameter: text(&answers.parameter),
            filters: RwSignal::new(answers.filters.clone()),
            treatment_variable: text(&answers.treatment_variable),
            levels: RwSignal::new(ordered_items(
                &answers.treatment_levels,
                &items_of(questions, "treatment_levels"),
            )),
            levels_of: text(&answers.levels_of),
            value_variable: text(&answers.value_variable),
            visit_variable: text(&answers.visit_variable),
            visits: RwSignal::new(ordered_items(
                &answers.visits,
                &items_of(questions, "visits"),
            )),
            visits_of: text(&answers.visits_of),
            records: text(&answers.records_per_subject_visit),
            y_scale: text(&answers.y_scale),
            unit: text(&answers.unit),
            unit_touched: RwSignal::new(false),
            threshold: text(&answers.low_n_threshold),
            action: text(&answers.low_n_action),
            title: text(&answers.title),
            title_touched: RwSignal::new(false),
        }
    }

    /// The answers to send. A unit or title the user has not touched is left to the server,
    /// so one derived from the parameter follows a new parameter.
    pub(super) fn answers(&self) -> DraftAnswers {
        let kept = |list: RwSignal<Vec<(String, bool)>>| {
            list.get()
                .into_iter()
                .filter(|(_, keep)| *keep)
                .map(|(item, _)| item)
                .collect()
        };
        let some = |s: RwSignal<String>| Some(s.get()).filter(|v| !v.is_empty());
        DraftAnswers {
            parameter: some(self.parameter),
            filters: self.filters.get(),
            treatment_variable: some(self.treatment_variable),
            treatment_levels: kept(self.levels),
            levels_of: some(self.levels_of),
            value_variable: some(self.value_variable),
            visit_variable: some(self.visit_variable),
            visits: kept(self.visits),
            visits_of: some(self.visits_of),
            records_per_subject_visit: some(self.records),
            y_scale: some(self.y_scale),
            unit: if self.unit_touched.get() {
                some(self.unit)
            } else {
                None
            },
            low_n_threshold: some(self.threshold),
            low_n_action: some(self.action),
            title: if self.title_touched.get() {
                some(self.title)
            } else {
                None
            },
        }
    }

    /// Takes what the server settled that the user did not choose here: lists reset for a new
    /// variable, a newly asked record question's proposal, a derived unit or title.
    pub(super) fn follow(&self, settled: &DraftAnswers, questions: &[ConfirmationQuestion]) {
        let set = |signal: RwSignal<String>, value: &Option<String>| {
            let value = value.clone().unwrap_or_default();
            if signal.get_untracked() != value {
                signal.set(value);
            }
        };
        if settled.levels_of.clone().unwrap_or_default() != self.levels_of.get_untracked() {
            self.levels.set(ordered_items(
                &settled.treatment_levels,
                &items_of(questions, "treatment_levels"),
            ));
            set(self.levels_of, &settled.levels_of);
        }
        if settled.visits_of.clone().unwrap_or_default() != self.visits_of.get_untracked() {
            self.visits.set(ordered_items(
                &settled.visits,
                &items_of(questions, "visits"),
            ));
            set(self.visits_of, &settled.visits_of);
        }
        set(self.records, &settled.records_per_subject_visit);
        if !self.unit_touched.get_untracked() {
            set(self.unit, &settled.unit);
        }
        if !self.title_touched.get_untracked() {
            set(self.title, &settled.title);
        }
    }
}

pub(super) fn signal_for(signals: &AnswerSignals, id: &str) -> Option<RwSignal<String>> {
    Some(match id {
        "parameter" => signals.parameter,
        "treatment_variable" => signals.treatment_variable,
        "value_variable" => signals.value_variable,
        "visit_variable" => signals.visit_variable,
        "records_per_subject_visit" => signals.records,
        "y_scale" => signals.y_scale,
        "unit" => signals.unit,
        "low_n_threshold" => signals.threshold,
        "low_n_action" => signals.action,
        "title" => signals.title,
        _ => return None,
    })
}
