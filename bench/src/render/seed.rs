//! Seeding a large state with a state file.

use serde_json::Value;

use super::format::{kib, thousands};
use crate::stats::{f, median};

use super::Report;

impl Report<'_> {
    pub(super) fn seed(&mut self, s: &Value) {
        let spread = |xs: &[f64], unit: &dyn Fn(f64) -> String| {
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!(
                "{} ({}–{} over {} runs)",
                unit(median(xs.to_vec())),
                unit(lo),
                unit(hi),
                xs.len()
            )
        };
        let secs = |x: f64| format!("{x:.2} s");
        let mb = |x: f64| format!("{:.0} MB", x / 1_048_576.0);
        for (name, label) in [
            (
                "assets",
                "assets (50 enterprises × 1,000, one product each)",
            ),
            ("employees", "employees (50 enterprises × 2,000)"),
        ] {
            let r = &s[name];
            let count = if name == "assets" {
                f(&r["assets"])
            } else {
                f(&r["employees"])
            };
            let what = format!("seed of {} {label}, with a state file", thousands(count));
            let seconds: Vec<f64> = r["seconds"]
                .as_array()
                .into_iter()
                .flatten()
                .map(f)
                .collect();
            let peaks: Vec<f64> = r["peak_bytes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(f)
                .collect();
            let t = median(seconds.clone());
            let target = self.judge("seed.seconds", &format!("{what}, time to listening"), t);
            self.row(
                format!("{what}, time to listening"),
                format!("{} seed", kib(f(&r["seed_bytes"]))),
                spread(&seconds, &secs),
                "—".into(),
                target,
                "cargo xtask bench --only seed",
            );
            let p = median(peaks.clone());
            let target = self.judge(
                "seed.peak_bytes",
                &format!("{what}, peak resident memory"),
                p,
            );
            self.row(
                format!("{what}, peak resident memory"),
                format!("{} seed", kib(f(&r["seed_bytes"]))),
                spread(&peaks, &mb),
                "—".into(),
                target,
                "cargo xtask bench --only seed",
            );
        }
        self.notes.push(
            "Seeds: `licensing-sim --seed FILE --state-file STATE` (release build, its default settings, the seed \
             bounds raised by `--max-seed-records`, `--max-seed-bytes` and `--trial-member-limit`), a fresh state \
             file each run: the time is from the process's start to its `listening on` line (the seed is created \
             through the services' own operations, each logged and synced, and the log compacted into the state \
             file), the peak its resident set's high-water mark (`VmHWM`) read just before it is stopped. The \
             employee seed is held to the asset seed's bounds. Medians of 3 runs, with their range."
                .into(),
        );
    }
}
