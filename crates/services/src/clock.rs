//! The time the use cases record: now, and its canonical UTC text (as the ledger writes times,
//! sortable as text).

use chrono::{DateTime, Utc};

/// The current time.
pub fn now() -> DateTime<Utc> {
    DateTime::<Utc>::from(std::time::SystemTime::now())
}

/// Canonical UTC text of `time` (as the ledger writes times: sortable as text).
pub fn timestamp(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}
