//! Paging at scale: time per item and peak heap, the larger stream against the smaller.

use serde_json::Value;

use super::format::{kib, thousands};
use crate::stats::{f, median, spread_of};

use super::Report;

impl Report<'_> {
    pub(super) fn paging(&mut self, p: &Value) {
        let rows = p["sizes"].as_array().cloned().unwrap_or_default();
        for r in &rows {
            let n = f(&r["employees"]);
            self.row(
                format!(
                    "`list_members().stream()`, {} employees (pages of {})",
                    thousands(n),
                    r["page_size"]
                ),
                format!("{} per page on the wire", kib(f(&r["page_bytes"]))),
                format!(
                    "{:.2} µs/item{} (median of {} streams), peak heap {} (the largest)",
                    f(&r["us_per_item"]),
                    r["runs_us_per_item"]
                        .as_array()
                        .filter(|runs| runs.len() > 1)
                        .map(|runs| {
                            let (_, lo, hi, _) = spread_of(runs.iter().map(f).collect());
                            format!(" ({lo:.2}–{hi:.2})")
                        })
                        .unwrap_or_default(),
                    r["runs"],
                    kib(f(&r["peak_bytes"])),
                ),
                "—".into(),
                "—".into(),
                "cargo xtask bench",
            );
        }
        if let (Some(a), Some(z)) = (rows.first(), rows.last())
            && rows.len() > 1
        {
            let (na, nz) = (thousands(f(&a["employees"])), thousands(f(&z["employees"])));
            // Round by round: the larger stream's figure over the smaller streams' of the
            // same round (`pick`: their median for time, their largest for the peak).
            let by_round = |key: &str, pick: fn(Vec<f64>) -> f64| -> Option<(f64, f64, usize)> {
                let (small, large) = (a[key].as_array()?, z[key].as_array()?);
                let (per_small, per_large) = (
                    f(&a["streams_per_round"]) as usize,
                    f(&z["streams_per_round"]) as usize,
                );
                if per_small == 0 || per_large != 1 || small.len() != per_small * large.len() {
                    return None;
                }
                let ratios: Vec<f64> = large
                    .iter()
                    .zip(small.chunks(per_small))
                    .map(|(l, s)| f(l) / pick(s.iter().map(f).collect()))
                    .collect();
                let (_, lo, hi, n) = spread_of(ratios);
                Some((lo, hi, n))
            };
            let with_rounds = |ratio: f64, rounds: Option<(f64, f64, usize)>| match rounds {
                Some((lo, hi, n)) if n > 1 => {
                    format!("{ratio:.2} (rounds {lo:.2}–{hi:.2}, {n} rounds)")
                }
                _ => format!("{ratio:.2}"),
            };
            let what = format!("paging peak client heap, {nz} vs {na} employees");
            let ratio = f(&z["peak_bytes"]) / f(&a["peak_bytes"]);
            let target = self.judge("paging.heap", &what, ratio);
            self.row(
                what,
                format!("{} at {na}", kib(f(&a["peak_bytes"]))),
                format!("{} at {nz}", kib(f(&z["peak_bytes"]))),
                with_rounds(
                    ratio,
                    by_round("runs_peak_bytes", |v| {
                        v.into_iter().fold(f64::NAN, f64::max)
                    }),
                ),
                target,
                "cargo xtask bench",
            );
            let ratio = f(&z["us_per_item"]) / f(&a["us_per_item"]);
            let what = format!("paging time per item, {nz} vs {na} employees");
            let target = self.judge("paging.time", &what, ratio);
            self.row(
                what,
                format!("{:.2} µs/item at {na}", f(&a["us_per_item"])),
                format!("{:.2} µs/item at {nz}", f(&z["us_per_item"])),
                with_rounds(ratio, by_round("runs_us_per_item", median)),
                target,
                "cargo xtask bench",
            );
        }
        let (rounds, flank) = match rows.first() {
            Some(a) => (
                f(&a["runs"]) / f(&a["streams_per_round"]).max(1.0),
                f(&a["streams_per_round"]),
            ),
            None => (f64::NAN, f64::NAN),
        };
        self.notes.push(format!(
            "Paging: one enterprise per size, all seeded in one call to the admin API (`POST /__sandbox/v1/seed`) after \
             a reset, in `licensing-sim --trial-member-limit 100000`, so every stream meets the same state; the stream's \
             items are counted, not kept; time per item is the whole stream's (every page requested, decoded and yielded) \
             over its items, the median of its streams; peak heap is the client's growth during the stream, the largest. \
             After one unmeasured stream of each size, {rounds:.0} rounds of {flank:.0} streams of the smaller enterprise \
             and one of the larger, so both sizes meet the machine as it is then (a 10,000-item stream lasts some 25 ms) \
             and each side's peak is the largest over as many pages (a page's peak depends on whether its body arrived \
             in one read or in several, joined: the more pages, the higher the largest)."
        ));
    }
}
