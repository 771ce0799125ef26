//! From a question in words to a confirmed spec, in one place: the deterministic `matcher`
//! (question + profile → draft spec with notes), the `confirmation` questions (asked, and each
//! answer applied), `draft` (the matcher's draft settled against the records: visits without
//! values, the record question and its proposal), `records` (the rows a spec selects and the
//! "Which record per subject and visit?" analysis), and `confirm` (a spec checked against the
//! data before it may run).

pub mod confirm;
pub mod confirmation;
pub mod draft;
pub mod matcher;
pub mod records;
