//! Tenants of one simulator.

use serde_json::Value;

use super::Report;
use super::format::{kib, ms, thousands, times_over};
use crate::stats::{f, median, range, spread_of};

/// The numbers of a JSON array (none for anything else).
fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().into_iter().flatten().map(f).collect()
}

/// The `q` quantile of `xs` (nearest rank); NaN for none.
fn quantile(mut xs: Vec<f64>, q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

/// `12.3 MB (11.0–13.1 MB over 3 runs)` of byte figures.
fn mb_spread(xs: &[f64]) -> String {
    let mb = |x: f64| format!("{:.1} MB", x / 1_048_576.0);
    let [lo, hi] = range(xs);
    if xs.len() > 1 {
        format!(
            "{} ({}–{} over {} runs)",
            mb(median(xs.to_vec())),
            mb(lo),
            mb(hi),
            xs.len()
        )
    } else {
        mb(median(xs.to_vec()))
    }
}

const COMMAND: &str = "cargo xtask bench --only tenants";

impl Report<'_> {
    pub(super) fn tenants(&mut self, t: &Value) {
        self.tenant_creation(&t["creation"]);
        self.tenant_memory(&t["memory"]);
        self.tenant_throughput(&t["throughput"]);
        self.tenant_seed(&t["seed"]);
        self.notes.push(
            "Tenants: one release `licensing-sim` with its admin API behind a token, every admin call on a \
             connection of its own as a test fixture makes it. Creation: 200 tenants one after another, each \
             deleted before the next, so each meets the same registry; the time is the client's, from connecting \
             to the reply. Memory: a fresh simulator's resident set (`VmRSS`), read again after 200 tenants were \
             created and the allocator's purge delay passed, divided by 200; 3 runs on fresh simulators. \
             Throughput: two simulators, one holding a single tenant and one holding that tenant among 1,000 \
             live others, both tenants' prefixes loaded in turn by `bench-load` with their own tokens (16 \
             connections, slices of 100 ms), the median of 5 rounds' ratios. Seed: the seed section's 50,000-asset \
             seed posted to the admin API's `seed` operation with `--state-file`, into the default tenant of one \
             fresh simulator and into a new tenant of another; the time is the call's, the peak the process's \
             `VmHWM` read after it; 3 runs each."
                .into(),
        );
    }

    fn tenant_creation(&mut self, c: &Value) {
        for (kind, label) in [("empty", "empty"), ("demo", "seeded with `demo`")] {
            let us: Vec<f64> = numbers(&c[kind]["seconds"])
                .into_iter()
                .map(|s| s * 1e6)
                .collect();
            let n = us.len();
            for (stat, q) in [("median", 0.5), ("p99", 0.99)] {
                self.row(
                    format!("tenant creation, {label}, {stat} per call"),
                    "—".into(),
                    format!("{} (over {n} creations)", ms(quantile(us.clone(), q))),
                    "—".into(),
                    "— (reported)".into(),
                    COMMAND,
                );
            }
        }
    }

    fn tenant_memory(&mut self, m: &Value) {
        for (kind, label) in [
            ("empty", "an idle empty tenant"),
            ("demo", "a `demo`-seeded tenant"),
        ] {
            let per = numbers(&m[kind]["bytes_per_tenant"]);
            let idle = numbers(&m[kind]["idle_simulator_bytes"]);
            let ratios: Vec<f64> = per.iter().zip(&idle).map(|(p, i)| p / i).collect();
            let ratio = if ratios.is_empty() {
                "—".into()
            } else {
                let (med, lo, hi, n) = spread_of(ratios);
                format!(
                    "{:.2}% of the idle process ({:.2}–{:.2}% over {n} runs)",
                    med * 100.0,
                    lo * 100.0,
                    hi * 100.0
                )
            };
            let [lo, hi] = range(&per);
            self.row(
                format!("memory of {label}, resident per tenant"),
                format!("{} (the idle simulator, resident)", mb_spread(&idle)),
                format!("{} ({}–{})", kib(median(per.clone())), kib(lo), kib(hi)),
                ratio,
                "— (reported)".into(),
                COMMAND,
            );
        }
    }

    fn tenant_throughput(&mut self, t: &Value) {
        let live = f(&t["live"]);
        for (label, what) in [
            ("read", "read `enterprise/user/query`"),
            ("write", "write `shellnums`"),
        ] {
            let r = &t["results"][label];
            let rps = |side: &str| -> Vec<f64> {
                r[side]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| f(&s["rps"]))
                    .collect()
            };
            let (one, crowded) = (rps("one_tenant"), rps("with_live_tenants"));
            let ratios: Vec<f64> = crowded.iter().zip(&one).map(|(c, o)| c / o).collect();
            let what = format!(
                "tenant throughput, {what}, beside {} live tenants vs alone",
                thousands(live)
            );
            let (ratio, shown) = if ratios.is_empty() {
                (f64::NAN, "—".into())
            } else {
                let (med, lo, hi, n) = spread_of(ratios);
                (med, times_over(med, lo, hi, n, "rounds"))
            };
            let target = self.judge("tenants.throughput", &what, ratio);
            self.row(
                what,
                format!("{:.0} req/s (one tenant alone)", median(one)),
                format!("{:.0} req/s", median(crowded)),
                shown,
                target,
                COMMAND,
            );
        }
    }

    fn tenant_seed(&mut self, s: &Value) {
        let assets = thousands(f(&s["assets"]));
        let sides = &s["sides"];
        let secs = |xs: &[f64]| {
            let [lo, hi] = range(xs);
            format!(
                "{:.2} s ({lo:.2}–{hi:.2} s over {} runs)",
                median(xs.to_vec()),
                xs.len()
            )
        };
        let (dt, tt) = (
            numbers(&sides["default"]["seconds"]),
            numbers(&sides["tenant"]["seconds"]),
        );
        let what = format!("seed of {assets} assets into a tenant, with a state file, time");
        let target = self.judge("tenants.seed_seconds", &what, median(tt.clone()));
        self.row(
            what,
            format!("{} (the default tenant)", secs(&dt)),
            secs(&tt),
            ratio_of(&tt, &dt),
            target,
            COMMAND,
        );
        let (dp, tp) = (
            numbers(&sides["default"]["peak_bytes"]),
            numbers(&sides["tenant"]["peak_bytes"]),
        );
        let what = format!(
            "seed of {assets} assets into a tenant, with a state file, peak resident memory"
        );
        let target = self.judge("tenants.seed_peak_bytes", &what, median(tp.clone()));
        self.row(
            what,
            format!("{} (the default tenant)", mb_spread(&dp)),
            mb_spread(&tp),
            ratio_of(&tp, &dp),
            target,
            COMMAND,
        );
    }
}

/// The median of run-by-run ratios `num[i] / den[i]`, with its range.
fn ratio_of(num: &[f64], den: &[f64]) -> String {
    let ratios: Vec<f64> = num.iter().zip(den).map(|(a, b)| a / b).collect();
    if ratios.is_empty() {
        return "—".into();
    }
    let (med, lo, hi, n) = spread_of(ratios);
    times_over(med, lo, hi, n, "runs")
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn quantiles_by_nearest_rank() {
        let xs: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(quantile(xs.clone(), 0.5), 100.0);
        assert_eq!(quantile(xs.clone(), 0.99), 198.0);
        assert_eq!(quantile(vec![7.0], 0.99), 7.0);
        assert!(quantile(Vec::new(), 0.5).is_nan());
    }
}
