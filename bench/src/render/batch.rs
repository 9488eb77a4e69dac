//! The batch order at every size: client side, simulator side, round trip, heap,
//! linearity.

use serde_json::Value;

use super::Report;
use super::format::{kib, ms, thousands, times, times_over};
use crate::stats::{f, paired, spread_of};

/// Why the simulator refused a size, if it did.
fn refused(r: &Value) -> Option<String> {
    r["refused"].as_str().map(str::to_string)
}

impl Report<'_> {
    pub(super) fn batch(&mut self, b: &Value) {
        let rows = b["sizes"].as_array().cloned().unwrap_or_default();
        self.batch_client(&rows);
        self.batch_sim(&rows);
        self.batch_round_trip(&rows);
        self.batch_heap(&rows);
        self.batch_linearity(&rows);
        self.batch_notes(&rows);
    }

    /// Client side: the SDK's own work against bare serde.
    fn batch_client(&mut self, rows: &[Value]) {
        // Client side: the SDK's own work against bare serde.
        for r in rows {
            let n = f(&r["orders"]);
            let c = &r["client"];
            let (floor, sdk) = (f(&c["floor_us"]), f(&c["sdk_us"]));
            let payload = f(&r["payload_bytes"]);
            let what = format!(
                "batchOrder client side, {} orders ({} request, {} reply{})",
                thousands(n),
                kib(payload),
                kib(f(&r["reply_bytes"])),
                if r["reply"] == "synthesized" {
                    ", synthesized"
                } else {
                    ""
                }
            );
            let (ratio, ratio_col) = match paired(&c["sdk_runs_us"], &c["floor_runs_us"]) {
                Some((med, lo, hi, n)) => (med, times_over(med, lo, hi, n, "runs")),
                None => (sdk / floor, times(sdk / floor)),
            };
            let target = self.judge("batch.client", &what, ratio);
            self.row(
                what,
                format!("{} (serde_json to_vec + from_slice)", ms(floor)),
                format!(
                    "{} (build, validate, serialize, decode); heap {:.2}× payload",
                    ms(sdk),
                    f(&c["sdk_peak_bytes"]) / payload
                ),
                ratio_col,
                target,
                "cargo xtask bench",
            );
        }
    }

    /// Simulator side: the simulator against the bare handler.
    fn batch_sim(&mut self, rows: &[Value]) {
        // Simulator side: no target of its own; it says where round-trip time goes.
        for r in rows {
            let n = f(&r["orders"]);
            let s = &r["sim"];
            let (bare, sim) = (f(&s["bare_us"]), f(&s["sim_us"]));
            let (ratio, ratio_col) = match paired(&s["sim_runs_us"], &s["bare_runs_us"]) {
                Some((med, lo, hi, n)) => (med, times_over(med, lo, hi, n, "runs")),
                None => (sim / bare, times(sim / bare)),
            };
            let name = format!(
                "batchOrder simulator side, {} orders (request sent to reply received)",
                thousands(n)
            );
            let (ours, target) = match refused(r) {
                Some(why) => (format!("refused: {why}"), "— (refused)".to_string()),
                // Ten orders is a round trip of a third of a millisecond: no target there.
                None if n < 1000.0 => (
                    format!("{} ({:.2} µs/order)", ms(sim), sim / n),
                    "— (where the round trip's time goes)".to_string(),
                ),
                None => (
                    format!("{} ({:.2} µs/order)", ms(sim), sim / n),
                    self.judge("batch.sim", &name, ratio),
                ),
            };
            self.row(
                name,
                format!("{} ({:.2} µs/order, bare handler)", ms(bare), bare / n),
                ours,
                ratio_col,
                target,
                "cargo xtask bench",
            );
        }
    }

    /// Round trip: time against serialize + parse, and the least a round trip takes.
    fn batch_round_trip(&mut self, rows: &[Value]) {
        // Round trip: time (target at 10,000 and more), then the client's heap.
        for r in rows {
            let n = f(&r["orders"]);
            let t = &r["round_trip"];
            let (floor, ours) = (f(&t["floor_us"]), f(&t["sdk_us"]));
            let what = format!(
                "batchOrder round trip, {} orders ({} payload), time",
                thousands(n),
                kib(f(&r["payload_bytes"]))
            );
            let (ratio, ratio_col) = match paired(&t["sdk_runs_us"], &t["floor_runs_us"]) {
                Some((med, lo, hi, n)) => (med, times_over(med, lo, hi, n, "runs")),
                None => (ours / floor, times(ours / floor)),
            };
            let target = self.judge("batch.round_trip", &what, ratio);
            let ours = match refused(r) {
                Some(_) => "not measured: the simulator refused the batch".to_string(),
                None => format!("{} (SDK → sim → SDK)", ms(ours)),
            };
            self.row(
                what,
                format!("{} (serialize + parse)", ms(floor)),
                ours,
                ratio_col,
                target,
                "cargo xtask bench",
            );
        }
        // The least a round trip takes in this design, against the same floor.
        let bounds: Vec<String> = rows
            .iter()
            .filter(|r| refused(r).is_none())
            .map(|r| {
                let bound = f(&r["client"]["sdk_us"]) + f(&r["sim"]["bare_us"]);
                format!(
                    "{} at {}",
                    times(bound / f(&r["round_trip"]["floor_us"])),
                    thousands(f(&r["orders"]))
                )
            })
            .collect();
        if !bounds.is_empty() {
            self.notes.push(format!(
                "Round trip against its floor: the SDK's client side (its own work, no network) plus the bare \
                 handler's time (the body sent over loopback, parsed into the same generated types, a reply of the same \
                 size sent back and read) is what a round trip takes with a simulator that does nothing but parse, as \
                 long as the client serializes the whole body before sending it (it is validated first, and sent with \
                 its length) and the server reads the whole body before parsing it (its size is bounded first). Over \
                 the serialize + parse floor, in which the two steps follow each other on one core with no network \
                 between them, that sum is {}.",
                bounds.join(", ")
            ));
        }
    }

    /// Round trip: the client's peak heap against the payload.
    fn batch_heap(&mut self, rows: &[Value]) {
        for r in rows {
            let n = f(&r["orders"]);
            let payload = f(&r["payload_bytes"]);
            let peak = f(&r["round_trip"]["sdk_peak_bytes"]);
            let what = format!(
                "batchOrder round trip, {} orders, peak client heap",
                thousands(n)
            );
            let target = self.judge("batch.heap", &what, peak / payload);
            let ours = match refused(r) {
                Some(_) => "not measured (refused)".to_string(),
                None => kib(peak),
            };
            // The largest run's peak is the figure; the smallest says how far runs differ.
            let least = r["round_trip"]["sdk_peak_runs_bytes"]
                .as_array()
                .filter(|runs| runs.len() > 1)
                .map(|runs| runs.iter().map(f).fold(f64::INFINITY, f64::min));
            let ratio = match least {
                Some(least) => format!(
                    "{} payload (runs {:.2}–{:.2}×)",
                    times(peak / payload),
                    least / payload,
                    peak / payload
                ),
                None => format!("{} payload", times(peak / payload)),
            };
            self.row(
                what,
                format!("{} payload", kib(payload)),
                ours,
                ratio,
                target,
                "cargo xtask bench",
            );
        }
    }

    /// Linearity: the largest size's cost per order against 1,000 orders'.
    fn batch_linearity(&mut self, rows: &[Value]) {
        let per = |r: &Value| f(&r["round_trip"]["sdk_us"]) / f(&r["orders"]);
        let at = |n: f64| rows.iter().find(|r| f(&r["orders"]) == n);
        if let (Some(a), Some(z)) = (at(1_000.0), rows.last()) {
            let nz = thousands(f(&z["orders"]));
            let what =
                format!("batchOrder linearity: round-trip cost per order, {nz} vs 1,000 orders");
            // The 1,000-order runs made around the largest size's when the bench made
            // them; else the two sizes' own medians, minutes apart.
            let flanked = &z["linearity"];
            let (small, large, ratio) = if flanked.is_object() {
                (
                    f(&flanked["us_per_order_at_1000"]),
                    f(&flanked["us_per_order"]),
                    f(&flanked["ratio"]),
                )
            } else {
                (per(a), per(z), per(z) / per(a))
            };
            let target = self.judge("batch.linearity", &what, ratio);
            // Each large round trip's cost per order against the 1,000-order median.
            let each: Option<Vec<f64>> = z["round_trip"]["sdk_runs_us"]
                .as_array()
                .filter(|runs| runs.len() > 1 && flanked.is_object())
                .map(|runs| {
                    let n = f(&z["orders"]);
                    runs.iter().map(|t| f(t) / n / small).collect()
                });
            let ratio_col = match each {
                _ if ratio.is_nan() => "—".into(),
                Some(each) => {
                    let (_, lo, hi, n) = spread_of(each);
                    format!("{ratio:.2} ({lo:.2}–{hi:.2} over {n} runs)")
                }
                None => format!("{ratio:.2}"),
            };
            let ours = if large.is_nan() {
                format!("not measured at {nz}")
            } else {
                format!("{large:.1} µs/order at {nz}")
            };
            self.row(
                what,
                format!("{small:.1} µs/order at 1,000"),
                ours,
                ratio_col,
                target,
                "cargo xtask bench",
            );
            if flanked.is_object() {
                self.notes.push(format!(
                    "Linearity: {} round trips of 1,000 orders run before the first and after every measured {nz}-order \
                     round trip, so both sizes meet the machine as it is then (its speed drifts within a minute); the \
                     ratio is the median cost per order of the {nz}-order round trips over that of these 1,000-order ones.",
                    flanked["runs_at_1000"]
                ));
            }
        }
    }

    /// How the batches were made and measured, and any size refused.
    fn batch_notes(&mut self, rows: &[Value]) {
        let runs: Vec<String> = rows
            .iter()
            .map(|r| format!("{} at {}", r["runs"], thousands(f(&r["orders"]))))
            .collect();
        self.notes.push(format!(
            "Batch: each order has one asset with one product (one feature) and a package with a nested package. \
             Client side: the SDK's steps for one call, without the network (`benches/batch`, `client::sdk_client_side`): the request \
             given to `.body()` becomes the operation's builder, is converted back, checked (`Validate`) and serialized once \
             (`__generated::PreparedBody`), and its bytes go into a `reqwest::Request`; the simulator's reply \
             (captured at the same size) is decoded through `ResponseValue::from_response` and the envelope; no network. \
             Its floor serializes the same request and parses the same reply into plain structs; both sides drop the \
             request and its bytes (the SDK owns the request given to `.body()`); they take turns going first, each \
             with a copy of the request made just before its turn. \
             Simulator side: the same bytes posted over one keep-alive HTTP/1.1 connection to `licensing-sim` and to a bare \
             handler in its own process that parses the body into the same generated `BatchOrderRequest` and answers a \
             reply of the same shape and length. Round trip: the SDK's `batch_order()` against `licensing-sim`. \
             Every batch meets an empty simulator (admin reset before each). Peak heap: the client's heap growth from \
             handing over the request to the decoded reply, counted by a global allocator (reallocations counted by their \
             change in size). Medians of {} runs per measurement (three times as many for the client side), after one \
             warm-up run; a ratio is the median of the runs' ratios, each run's two sides measured back to back, with \
             their range.",
            runs.join(", ")
        ));
        for r in rows.iter().filter(|r| refused(r).is_some()) {
            self.notes.push(format!(
                "The simulator refused the {}-order batch ({}): its simulator-side and round-trip rows are not measured, and its client-side row decodes a reply synthesized in the simulator's format.",
                thousands(f(&r["orders"])),
                refused(r).unwrap_or_default()
            ));
        }
    }
}
