//! The snapshot part of `adamviz-bench ingest`: the throughput of the canonical snapshot hash
//! against plain SHA-256 of the same bytes.

use super::*;

/// Throughput of the snapshot hash on the ALT snapshot of the larger copy, against raw SHA-256
/// of the same canonical bytes.
pub(super) fn bench_snapshot(
    big: &Table,
    content_hash: Sha256Digest,
    out: &mut impl Write,
    targets: &mut Vec<String>,
) -> anyhow::Result<()> {
    let profile = profile_table(big, content_hash, DEFAULT_LOW_N_THRESHOLD);
    let spec = confirm_proposal("ALT over time by arm", &profile, big, content_hash)
        .map_err(|refused| anyhow::anyhow!("on the larger copy: {refused}"))?;
    let snapshot = take_snapshot(&spec, big)?;
    let mut canonical = Vec::new();
    write_canonical(&snapshot, &mut canonical)?;
    // Seven interleaved windows per figure, medians reported: on this VM the rate of the
    // two-thread pipeline swings with where the scheduler puts the threads.
    let (mut canonical_rates, mut encoding_rates, mut raw_rates) = (vec![], vec![], vec![]);
    for _ in 0..7 {
        canonical_rates.push(throughput(canonical.len(), || {
            std::hint::black_box(snapshot_hash(std::hint::black_box(&snapshot)));
        }));
        encoding_rates.push(throughput(canonical.len(), || {
            write_canonical(std::hint::black_box(&snapshot), &mut std::io::sink())
                .expect("writing to a sink never fails");
        }));
        raw_rates.push(throughput(canonical.len(), || {
            std::hint::black_box(Sha256::digest(std::hint::black_box(&canonical)));
        }));
    }
    let spread = |rates: &[f64]| {
        let lowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = rates.iter().copied().fold(0.0, f64::max);
        format!("{:.0}–{:.0}", lowest / 1e6, highest / 1e6)
    };
    let canonical_spread = spread(&canonical_rates);
    let canonical_rate = median(canonical_rates);
    let encoding_rate = median(encoding_rates);
    let raw_rate = median(raw_rates);
    let ratio = canonical_rate / raw_rate;
    writeln!(
        out,
        "\nsnapshot hash (ALT, {} records, {} canonical; medians of 7 windows): snapshot_hash {:.0} MB/s (range {canonical_spread}; encoding alone {:.0} MB/s); raw SHA-256 of the same bytes {:.0} MB/s; ratio {:.2}",
        snapshot.rows.len(),
        megabytes(canonical.len() as f64),
        canonical_rate / 1e6,
        encoding_rate / 1e6,
        raw_rate / 1e6,
        ratio
    )?;
    targets.push(format!(
        "snapshot hash throughput {ratio:.2}× raw SHA-256 (target ≥ 0.5×: {})",
        verdict(ratio >= 0.5)
    ));
    Ok(())
}

/// Calls `call` until 0.3 s have passed; returns bytes per second.
fn throughput(bytes_per_call: usize, mut call: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut calls = 0u64;
    while calls < 3 || start.elapsed() < Duration::from_millis(300) {
        call();
        calls += 1;
    }
    (bytes_per_call as f64 * calls as f64) / start.elapsed().as_secs_f64()
}
