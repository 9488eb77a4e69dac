//! The few statistics the lab reports: medians, ranges and paired ratios.

use serde_json::Value;

/// A JSON number as `f64`; NaN for anything else (nothing measured).
pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The median (the mean of the middle two for an even count); NaN for none.
pub fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len().is_multiple_of(2) {
        (xs[mid - 1] + xs[mid]) / 2.0
    } else {
        xs[mid]
    }
}

/// The smallest and the largest of `xs` (infinite for none).
pub fn range(xs: &[f64]) -> [f64; 2] {
    [
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ]
}

/// The median (the upper of the middle two), smallest and largest of `values`, and
/// how many.
pub fn spread_of(mut values: Vec<f64>) -> (f64, f64, f64, usize) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[n / 2], values[0], values[n - 1], n)
}

/// The median of paired runs' ratios `num[i] / den[i]` (each run's two sides measured
/// back to back), their smallest and largest, and how many; `None` when the runs were
/// not recorded pair by pair.
pub fn paired(num: &Value, den: &Value) -> Option<(f64, f64, f64, usize)> {
    let (num, den) = (num.as_array()?, den.as_array()?);
    if num.is_empty() || num.len() != den.len() {
        return None;
    }
    let ratios: Vec<f64> = num.iter().zip(den).map(|(a, b)| f(a) / f(b)).collect();
    Some(spread_of(ratios))
}

#[cfg(test)]
mod tests {
    use super::{median, paired, range, spread_of};
    use serde_json::json;

    #[test]
    fn paired_runs_give_the_median_of_their_ratios_and_its_range() {
        let (med, lo, hi, n) = paired(&json!([2.0, 4.0, 9.0]), &json!([1.0, 2.0, 3.0])).unwrap();
        assert_eq!((med, lo, hi, n), (2.0, 2.0, 3.0, 3));
        assert_eq!(paired(&json!([1.0, 2.0]), &json!([1.0])), None, "unpaired");
        assert_eq!(paired(&json!([]), &json!([])), None);
        assert_eq!(paired(&json!(null), &json!([1.0])), None, "not recorded");
        assert_eq!(spread_of(vec![3.0, 1.0, 2.0, 4.0]), (3.0, 1.0, 4.0, 4));
    }

    #[test]
    fn medians_and_ranges() {
        assert_eq!(
            median(vec![3.0, 1.0, 2.0, 4.0]),
            2.5,
            "the mean of the middle two"
        );
        assert_eq!(median(vec![5.0, 1.0, 3.0]), 3.0);
        assert!(median(Vec::new()).is_nan());
        assert_eq!(range(&[2.0, 0.5, 9.0]), [0.5, 9.0]);
    }
}
