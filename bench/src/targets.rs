//! The targets the figures are judged against, one table. A run records the table in its
//! results, and the document judges by the recorded targets: a record rendered again
//! says what its run was held to. A target the record lacks (added since) is taken from
//! this table.

use serde::{Deserialize, Serialize};

/// Which side of its limit a figure must be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    AtMost,
    AtLeast,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Which rows it judges.
    pub key: String,
    pub bound: Bound,
    /// In the unit of the figure it judges (a ratio, bytes, seconds, milliseconds).
    pub limit: f64,
    /// As the document writes it (`≤ 1.3×`).
    pub shown: String,
}

impl Target {
    /// The figure meets the target; NaN (nothing measured) misses.
    pub fn met_by(&self, value: f64) -> bool {
        match self.bound {
            Bound::AtMost => value <= self.limit,
            Bound::AtLeast => value >= self.limit,
        }
    }
}

/// Every target: key, bound, limit, as shown.
const TABLE: [(&str, Bound, f64, &str); 21] = [
    ("overhead.median", Bound::AtMost, 1.02, "≤ 1.02"),
    ("overhead.p99", Bound::AtMost, 1.05, "≤ 1.05"),
    ("throughput.vs_prism", Bound::AtLeast, 30.0, "≥ 30×"),
    // By `bench-load` and by oha alike.
    ("throughput.vs_bare", Bound::AtLeast, 0.9, "≥ 90%"),
    ("batch.client", Bound::AtMost, 1.3, "≤ 1.3×"),
    ("batch.sim", Bound::AtMost, 1.2, "≤ 1.2×"),
    ("batch.round_trip", Bound::AtMost, 1.25, "≤ 1.25×"),
    ("batch.heap", Bound::AtMost, 1.3, "≤ 1.3× payload"),
    ("batch.linearity", Bound::AtMost, 1.2, "≤ 1.2"),
    ("paging.heap", Bound::AtMost, 1.2, "≤ 1.2"),
    ("paging.time", Bound::AtMost, 1.1, "≤ 1.1"),
    ("reply.heap", Bound::AtMost, 3.0, "≤ 3× reply"),
    ("bulk.throughput", Bound::AtLeast, 0.9, "≥ 0.9×"),
    ("proxy.vs_forwarder", Bound::AtLeast, 0.85, "≥ 0.85×"),
    ("seed.seconds", Bound::AtMost, 2.0, "≤ 2 s"),
    (
        "seed.peak_bytes",
        Bound::AtMost,
        150.0 * 1_048_576.0,
        "≤ 150 MB",
    ),
    ("tenants.throughput", Bound::AtLeast, 0.9, "≥ 0.9×"),
    ("tenants.seed_seconds", Bound::AtMost, 2.0, "≤ 2 s"),
    (
        "tenants.seed_peak_bytes",
        Bound::AtMost,
        150.0 * 1_048_576.0,
        "≤ 150 MB",
    ),
    ("build.generation_ms", Bound::AtMost, 1000.0, "≤ 1 s"),
    ("build.rebuild_s", Bound::AtMost, 10.0, "≤ 10 s"),
];

/// The table, as a run records it.
pub fn all() -> Vec<Target> {
    TABLE
        .iter()
        .map(|&(key, bound, limit, shown)| Target {
            key: key.into(),
            bound,
            limit,
            shown: shown.into(),
        })
        .collect()
}

/// The target `key`: the recorded one, else this table's.
pub fn find(recorded: &[Target], key: &str) -> Option<Target> {
    recorded
        .iter()
        .find(|t| t.key == key)
        .cloned()
        .or_else(|| all().into_iter().find(|t| t.key == key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_target_wins_and_nothing_measured_misses() {
        let mut recorded = all();
        recorded[0].limit = 2.0;
        assert!(find(&recorded, "overhead.median").unwrap().met_by(1.5));
        assert!(!find(&all(), "overhead.median").unwrap().met_by(1.5));
        // Added since the record: this table's.
        assert_eq!(
            find(&[], "paging.time"),
            all().into_iter().find(|t| t.key == "paging.time")
        );
        assert!(find(&[], "no.such").is_none());
        for target in all() {
            assert!(!target.met_by(f64::NAN), "{}", target.key);
        }
        let least = find(&[], "throughput.vs_bare").unwrap();
        assert!(least.met_by(0.9) && !least.met_by(0.89));
    }
}
