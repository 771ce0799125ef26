//! SAS dates, datetimes and times as ISO 8601. SAS stores them as numbers: days (dates) or
//! seconds (datetimes) since 1960-01-01, seconds since midnight (times); the display format
//! attached to the variable says which. The raw number is always kept beside the text.

use chrono::{Duration, NaiveDate, NaiveTime};

/// What a SAS display format says a number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Temporal {
    /// Days since 1960-01-01.
    Date,
    /// Seconds since 1960-01-01T00:00:00.
    Datetime,
    /// Seconds since midnight.
    Time,
}

/// Classifies a format such as `DATE9.`, `E8601DT19.`, `TIME8.`; `None` for other formats.
pub fn temporal_kind(format: &str) -> Option<Temporal> {
    let name: String = format
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
        .to_ascii_uppercase();
    const DATETIME: [&str; 5] = ["DATETIME", "E8601DT", "IS8601DT", "DATEAMPM", "E8601DZ"];
    const TIME: [&str; 5] = ["TIME", "TOD", "E8601TM", "IS8601TM", "HHMM"];
    const DATE: [&str; 12] = [
        "DATE", "YYMMDD", "E8601DA", "IS8601DA", "MMDDYY", "DDMMYY", "MONYY", "WORDDATE",
        "WEEKDATE", "YYMMDDN", "B8601DA", "NLDATE",
    ];
    if DATETIME.contains(&name.as_str()) {
        Some(Temporal::Datetime)
    } else if TIME.contains(&name.as_str()) {
        Some(Temporal::Time)
    } else if DATE.contains(&name.as_str()) {
        Some(Temporal::Date)
    } else {
        None
    }
}

fn sas_epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(1960, 1, 1).expect("valid date")
}

/// ISO 8601 text of a SAS temporal value, or `None` if it is out of range or not whole where it
/// must be (a date with a fraction is shown as a number, not rounded silently).
pub fn to_iso8601(kind: Temporal, value: f64) -> Option<String> {
    if !value.is_finite() {
        return None;
    }
    match kind {
        Temporal::Date => {
            if value.fract() != 0.0 || value.abs() > 3.0e6 {
                return None;
            }
            let date = sas_epoch().checked_add_signed(Duration::days(value as i64))?;
            Some(date.format("%Y-%m-%d").to_string())
        }
        Temporal::Datetime => {
            if value.abs() > 2.5e11 {
                return None;
            }
            let millis = (value * 1000.0).round() as i64;
            let datetime = sas_epoch()
                .and_hms_opt(0, 0, 0)?
                .checked_add_signed(Duration::milliseconds(millis))?;
            let pattern = if millis % 1000 == 0 {
                "%Y-%m-%dT%H:%M:%S"
            } else {
                "%Y-%m-%dT%H:%M:%S%.3f"
            };
            Some(datetime.format(pattern).to_string())
        }
        Temporal::Time => {
            if !(0.0..86400.0).contains(&value) {
                return None;
            }
            let millis = (value * 1000.0).round() as i64;
            let time = NaiveTime::from_hms_opt(0, 0, 0)?
                .overflowing_add_signed(Duration::milliseconds(millis))
                .0;
            Some(time.format("%H:%M:%S").to_string())
        }
    }
}

/// The SAS number of an ISO 8601 date (`2014-01-02`), datetime (`2014-01-02T01:01:01`, with
/// optional fractional seconds) or time (`12:34:56`): the inverse of [`to_iso8601`]. `None` when
/// the text is not a complete value of that kind (a partial date has no SAS number).
pub fn from_iso8601(kind: Temporal, text: &str) -> Option<f64> {
    match kind {
        Temporal::Date => {
            let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
            Some(date.signed_duration_since(sas_epoch()).num_days() as f64)
        }
        Temporal::Datetime => {
            let datetime =
                chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
            let since = datetime.signed_duration_since(sas_epoch().and_hms_opt(0, 0, 0)?);
            Some(since.num_milliseconds() as f64 / 1000.0)
        }
        Temporal::Time => {
            let time = NaiveTime::parse_from_str(text, "%H:%M:%S%.f").ok()?;
            let since = time.signed_duration_since(NaiveTime::from_hms_opt(0, 0, 0)?);
            Some(since.num_milliseconds() as f64 / 1000.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_text_reads_back_to_the_sas_number() {
        for (kind, value) in [
            (Temporal::Date, 19725.0),
            (Temporal::Date, -1.0),
            (Temporal::Datetime, 19725.0 * 86400.0 + 3661.0),
            (Temporal::Datetime, 19725.0 * 86400.0 + 3661.25),
            (Temporal::Time, 45296.0),
        ] {
            let text = to_iso8601(kind, value).unwrap();
            assert_eq!(from_iso8601(kind, &text), Some(value), "{text}");
        }
        assert_eq!(
            from_iso8601(Temporal::Date, "2014-01"),
            None,
            "partial date"
        );
        assert_eq!(from_iso8601(Temporal::Date, "2014-02-30"), None);
        assert_eq!(from_iso8601(Temporal::Time, "25:00:00"), None);
    }

    #[test]
    fn formats_are_classified() {
        assert_eq!(temporal_kind("DATE9."), Some(Temporal::Date));
        assert_eq!(temporal_kind("E8601DT19."), Some(Temporal::Datetime));
        assert_eq!(temporal_kind("TIME8."), Some(Temporal::Time));
        assert_eq!(temporal_kind("8.2"), None);
        assert_eq!(temporal_kind("$200."), None);
    }

    #[test]
    fn known_values_convert() {
        assert_eq!(
            to_iso8601(Temporal::Date, 0.0).as_deref(),
            Some("1960-01-01")
        );
        // 2014-01-02 is 19725 days after 1960-01-01.
        assert_eq!(
            to_iso8601(Temporal::Date, 19725.0).as_deref(),
            Some("2014-01-02")
        );
        assert_eq!(
            to_iso8601(Temporal::Date, -1.0).as_deref(),
            Some("1959-12-31")
        );
        assert_eq!(
            to_iso8601(Temporal::Datetime, 19725.0 * 86400.0 + 3661.0).as_deref(),
            Some("2014-01-02T01:01:01")
        );
        assert_eq!(
            to_iso8601(Temporal::Time, 45296.0).as_deref(),
            Some("12:34:56")
        );
        assert_eq!(
            to_iso8601(Temporal::Date, 1.5),
            None,
            "a fractional date is not a date"
        );
    }
}
