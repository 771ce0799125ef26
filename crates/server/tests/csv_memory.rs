//! The CSV reader's limits hold before memory is taken: a header of millions of names and a
//! quote that is never closed are refused with a record's worth of memory at most, not memory
//! in proportion to the file. Peak memory is the process's (VmHWM, reset before each read), so
//! this binary holds this one test and nothing runs beside it.
#![cfg(target_os = "linux")]

use adamviz_engine::ingest::csv::{read_csv, CsvError, MAX_COLUMNS, MAX_RECORD_BYTES};

/// Peak resident memory of this process so far, in bytes.
fn peak_resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("a VmHWM line");
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("VmHWM in kB");
    kib * 1024
}

/// How much the peak resident memory grows while `read` runs (the peak is reset first, so
/// memory the input itself took does not count).
fn peak_growth<T>(read: impl FnOnce() -> T) -> (T, u64) {
    // Writing 5 to clear_refs resets VmHWM to the current resident size (Linux 4.0 and later).
    std::fs::write("/proc/self/clear_refs", "5").expect("VmHWM can be reset");
    let before = peak_resident_bytes();
    let result = read();
    (result, peak_resident_bytes().saturating_sub(before))
}

const BOUND: u64 = 64 << 20;

/// Before: the header's names were all kept (a `String` each, 24 bytes even when empty) before
/// their number was checked, about 400 MB for 16 million empty names; a quote never closed made
/// the reader copy the rest of the file into one record before its length was checked.
#[test]
fn csv_limits_are_checked_before_memory_is_taken() {
    let names = 16 << 20;
    let mut many_names = ",".repeat(names - 1);
    many_names.push_str("\n1\n");
    let (refused, growth) = peak_growth(|| read_csv(many_names.as_bytes()));
    assert_eq!(
        refused.unwrap_err(),
        CsvError::TooManyColumns {
            found: names,
            limit: MAX_COLUMNS,
        }
    );
    assert!(
        growth < BOUND,
        "refusing {names} names took {growth} bytes more"
    );
    drop(many_names);

    let mut unclosed = String::from("USUBJID,NOTE\nS1,\"");
    unclosed.push_str(&"x\n".repeat(48 << 20));
    let (refused, growth) = peak_growth(|| read_csv(unclosed.as_bytes()));
    assert_eq!(
        refused.unwrap_err(),
        CsvError::RecordTooLong {
            line: 2,
            limit: MAX_RECORD_BYTES,
        }
    );
    assert!(
        growth < BOUND,
        "refusing a {} MB file with a quote never closed took {growth} bytes more",
        unclosed.len() >> 20
    );
}
