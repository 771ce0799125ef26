//! From a question in words to a confirmed spec, in one place: the deterministic `matcher`
//! (question + profile → draft spec with notes), the `confirmation` questions, the typed
//! `answer`s (read once from their text, then applied), `draft` (the matcher's draft settled against the records: visits without
//! values, the record question and its proposal), `records` (the rows a spec selects and the
//! "Which record per subject and visit?" analysis), and `confirm` (a spec checked against the
//! data before it may run).

pub mod answer;
pub mod confirm;
pub mod confirmation;
pub mod draft;
pub mod matcher;
pub mod records;
