//! The boxplot statistics computed by adamviz itself, independently of R: per treatment × visit
//! cell n, subjects, missing, mean, SD, median, quartiles by R's type 7, min, max and the low-N
//! flag. The verifier compares them with the statistics the R script reported (automated double
//! programming), so each follows R's definition, including its order of operations where that
//! matters for the last digits.

use serde::{Deserialize, Serialize};

/// Statistics of one cell, named as in the script's statistics JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStatistics {
    /// Treatment level.
    pub treatment: String,
    /// Visit label.
    pub visit: String,
    /// Non-missing values.
    pub n: usize,
    /// Distinct subjects among the records with a value.
    pub n_subjects: usize,
    /// Records without a value.
    pub n_missing: usize,
    /// Arithmetic mean (`None` when n = 0).
    pub mean: Option<f64>,
    /// Sample standard deviation, denominator n − 1 (`None` when n < 2).
    pub sd: Option<f64>,
    /// Median.
    pub median: Option<f64>,
    /// First quartile (type 7).
    pub q1: Option<f64>,
    /// Third quartile (type 7).
    pub q3: Option<f64>,
    /// Smallest value.
    pub min: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
    /// Fewer subjects than the threshold.
    pub low_n: bool,
}

/// R's `quantile(x, p, type = 7)` of sorted, non-empty `sorted`: with h = 1 + (n − 1)p, the
/// value `(1 − f)·x[⌊h⌋] + f·x[⌈h⌉]` where f = h − ⌊h⌋, written as R writes it.
pub fn quantile_type7(sorted: &[f64], probability: f64) -> f64 {
    let n = sorted.len();
    let index = 1.0 + (n.saturating_sub(1)) as f64 * probability;
    let lo = index.floor();
    let hi = index.ceil();
    let below = sorted[lo as usize - 1];
    let above = sorted[hi as usize - 1];
    if index > lo && above != below {
        let h = index - lo;
        (1.0 - h) * below + h * above
    } else {
        below
    }
}

/// R's `mean` of doubles: the sum divided by n, then refined by the mean of the residuals
/// (R accumulates in long double; a second pass recovers most of that precision here).
pub fn mean_like_r(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let first = values.iter().sum::<f64>() / n;
    let residual = values.iter().map(|v| v - first).sum::<f64>() / n;
    first + residual
}

/// R's `sd`: the square root of the two-pass sample variance.
pub fn sd_like_r(values: &[f64]) -> f64 {
    let mean = mean_like_r(values);
    let squares: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    (squares / (values.len() - 1) as f64).sqrt()
}

/// Statistics of one cell from its records' values (`None`: missing) and subjects.
pub fn cell_statistics(
    treatment: &str,
    visit: &str,
    records: &[(Option<f64>, &str)],
    low_n_threshold: usize,
) -> CellStatistics {
    let mut present: Vec<f64> = records.iter().filter_map(|(value, _)| *value).collect();
    let mut subjects: Vec<&str> = records
        .iter()
        .filter(|(value, _)| value.is_some())
        .map(|(_, subject)| *subject)
        .collect();
    subjects.sort_unstable();
    subjects.dedup();
    let n = present.len();
    let mean = (n > 0).then(|| mean_like_r(&present));
    let sd = (n > 1).then(|| sd_like_r(&present));
    present.sort_by(f64::total_cmp);
    let quartile = |p: f64| (n > 0).then(|| quantile_type7(&present, p));
    CellStatistics {
        treatment: treatment.to_owned(),
        visit: visit.to_owned(),
        n,
        n_subjects: subjects.len(),
        n_missing: records.len() - n,
        mean,
        sd,
        median: quartile(0.5),
        q1: quartile(0.25),
        q3: quartile(0.75),
        min: present.first().copied(),
        max: present.last().copied(),
        low_n: subjects.len() < low_n_threshold,
    }
}

/// Whether `a` and `b` agree to a relative tolerance (both missing also agree).
pub fn agree(a: Option<f64>, b: Option<f64>, relative_tolerance: f64) -> bool {
    agree_at_scale(a, b, relative_tolerance, 0.0)
}

/// Whether `a` and `b` agree to a tolerance relative to the larger of them and `scale` (the
/// largest magnitude among the values they were computed from). A mean of values that nearly
/// cancel is near zero, but its rounding error is as large as the values summed: two correct
/// sums in another order give e.g. -8.1e-18 and -4.5e-18 for values of magnitude 3, which agree
/// at that scale and would not relative to themselves.
pub fn agree_at_scale(a: Option<f64>, b: Option<f64>, relative_tolerance: f64, scale: f64) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a == b || (a - b).abs() <= relative_tolerance * a.abs().max(b.abs()).max(scale.abs())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type7_quartiles_match_r() {
        // R: quantile(c(1, 2, 4, 7, 11), c(.25, .5, .75), type = 7) → 2 4 7
        let x = [1.0, 2.0, 4.0, 7.0, 11.0];
        assert_eq!(quantile_type7(&x, 0.25), 2.0);
        assert_eq!(quantile_type7(&x, 0.5), 4.0);
        // R: quantile(c(3, 5, 8, 13), .25, type = 7) → 4.5; .75 → 9.25
        let y = [3.0, 5.0, 8.0, 13.0];
        assert_eq!(quantile_type7(&y, 0.25), 4.5);
        assert_eq!(quantile_type7(&y, 0.75), 9.25);
        assert_eq!(quantile_type7(&[42.0], 0.75), 42.0);
    }

    #[test]
    fn a_cell_counts_subjects_and_missing_values() {
        let records = [
            (Some(3.0), "A"),
            (Some(5.0), "B"),
            (None, "C"),
            (Some(8.0), "B"),
            (Some(13.0), "D"),
        ];
        let cell = cell_statistics("Placebo", "Week 2", &records, 4);
        assert_eq!((cell.n, cell.n_subjects, cell.n_missing), (4, 3, 1));
        assert!(cell.low_n);
        assert_eq!(cell.mean, Some(7.25));
        // R: sd(c(3, 5, 8, 13)) = 4.349329
        assert!(agree(cell.sd, Some(4.349_329_450_233_296), 1e-12));
        assert_eq!(
            (cell.median, cell.min, cell.max),
            (Some(6.5), Some(3.0), Some(13.0))
        );
        let empty = cell_statistics("Placebo", "Week 4", &[(None, "A")], 1);
        assert_eq!(
            (empty.n, empty.mean, empty.sd, empty.median),
            (0, None, None, None)
        );
        assert!(empty.low_n);
    }

    #[test]
    fn agreement_is_relative() {
        assert!(agree(Some(1e12), Some(1e12 + 1.0), 1e-9));
        assert!(!agree(Some(1.0), Some(1.0 + 1e-8), 1e-9));
        assert!(!agree(Some(1.0), None, 1e-9));
        assert!(agree(None, None, 1e-9));
        // A mean near zero of values of magnitude 3: the rounding of two summation orders.
        let (ours, theirs) = (
            Some(-8.058_070_340_021_298e-18),
            Some(-4.479_328_814_228_418_5e-18),
        );
        assert!(!agree(ours, theirs, 1e-9));
        assert!(agree_at_scale(ours, theirs, 1e-9, 3.0));
        assert!(!agree_at_scale(Some(0.0), Some(1e-6), 1e-9, 3.0));
        assert!(!agree_at_scale(Some(1.0), Some(1.0 + 1e-8), 1e-9, 1.0));
    }
}
