//! The throughput figures of `bench-load` beside oha's, in a section of their own.

use std::fmt::Write as _;

use serde_json::Value;

use super::Report;
use super::throughput::ENDPOINTS;
use crate::results::Throughput;
use crate::stats::f;

impl Report<'_> {
    /// The section that sets oha's figures beside the project's generator's.
    pub(super) fn load_tools(&mut self, tp: &Throughput) {
        let (t, oha_rounds, seconds) = (&tp.results, tp.oha_rounds, tp.seconds);
        let (oha_version, slice_ms) = (&tp.versions.oha, tp.slice_ms);
        let figures = |r: &Value| {
            format!(
                "{:.0} req/s, p50 {:.2} ms, p99 {:.2} ms",
                f(&r["rps"]),
                f(&r["p50_us"]) / 1000.0,
                f(&r["p99_us"]) / 1000.0
            )
        };
        let ratio = |r: &Value, percent: bool| {
            let [lo, hi] = [f(&r["sim_ratio_range"][0]), f(&r["sim_ratio_range"][1])];
            if percent {
                format!(
                    "{:.0}% ({:.0}–{:.0}%)",
                    100.0 * f(&r["sim_ratio"]),
                    100.0 * lo,
                    100.0 * hi
                )
            } else {
                format!("{:.1}× ({lo:.1}–{hi:.1}×)", f(&r["sim_ratio"]))
            }
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "## Throughput by two load generators
"
        );
        let _ = writeln!(
            s,
            "The throughput rows above, measured again in the same run by [oha](https://crates.io/crates/oha) \
             {oha_version}, an established HTTP load generator, with the same load: 16 keep-alive connections on one \
             worker thread, the same requests, every request with a fresh `g_nonce` (oha's `--rand-regex-url`, the \
             nonce drawn as 32 hexadecimal digits). oha loads one server per process: {oha_rounds} rounds of {seconds} s \
             per server, the simulator and the bare server taking turns going first, then Prism, WireMock and \
             Mockoon; its req/s counts \
             the answers received over its run's length. Ratios are the medians of the rounds' ratios, with their \
             range.\n"
        );
        let _ = writeln!(
            s,
            "| endpoint | server | own generator (`bench-load`) | oha | oha / own |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|");
        let mut refused = Vec::new();
        let mut oha_rows = Vec::new();
        for (label, endpoint) in ENDPOINTS {
            for (name, shown) in [
                ("licensing-sim", "licensing-sim"),
                ("bare hyper", "bare hyper"),
                ("prism", "Prism"),
                ("wiremock", "WireMock"),
                ("mockoon", "Mockoon"),
            ] {
                let own = &t[format!("{name}/{label}")];
                let oha = &t[format!("oha/{name}/{label}")];
                if own.is_null() {
                    continue;
                }
                let _ = writeln!(
                    s,
                    "| {endpoint} | {shown} | {} | {} | {:.2} |",
                    figures(own),
                    figures(oha),
                    f(&oha["rps"]) / f(&own["rps"])
                );
                if name == "licensing-sim" && f(&oha["non_200"]) > 0.0 {
                    refused.push(format!(
                        "{} of {} {label} answers",
                        oha["non_200"], oha["requests"]
                    ));
                }
            }
            // The simulator against bare hyper by oha carries the same target as by
            // `bench-load`, in the main table.
            let (sim, bare) = (
                &t[format!("oha/licensing-sim/{label}")],
                &t[format!("oha/bare hyper/{label}")],
            );
            if !bare.is_null() {
                let name = format!("simulator throughput, {endpoint}, vs bare hyper, by oha");
                let target = self.judge("throughput.vs_bare", &name, f(&bare["sim_ratio"]));
                oha_rows.push((name, figures(bare), figures(sim), ratio(bare, true), target));
            }
            for (name, shown, percent) in [
                ("bare hyper", "licensing-sim / bare hyper", true),
                ("prism", "licensing-sim / Prism", false),
                ("wiremock", "licensing-sim / WireMock", false),
                ("mockoon", "licensing-sim / Mockoon", false),
            ] {
                let own = &t[format!("{name}/{label}")];
                let oha = &t[format!("oha/{name}/{label}")];
                if own.is_null() {
                    continue;
                }
                let _ = writeln!(
                    s,
                    "| {endpoint} | {shown} | {} | {} | — |",
                    ratio(own, percent),
                    ratio(oha, percent)
                );
            }
        }
        let _ = writeln!(
            s,
            "\n{}",
            if refused.is_empty() {
                "Every answer licensing-sim gave oha was HTTP 200: no request was refused as a replay (a reused \
                 `g_nonce` is answered with HTTP 299, code 13004)."
                    .to_string()
            } else {
                format!(
                    "**Not every answer licensing-sim gave oha was HTTP 200**: {} (a refused request, such as a \
                     reused `g_nonce`, is answered with HTTP 299).",
                    refused.join(", ")
                )
            }
        );
        let _ = writeln!(
            s,
            "\nThe simulator's target against bare hyper (≥ 90%) is set for both generators: the main table has \
             a row by each. They differ in one way: `bench-load` loads the simulator and the bare server in \
             alternating {slice_ms} ms slices from one process, so the two rates in a ratio are measured in the \
             same second of a shared machine; oha measures one server per run, seconds apart from the other's. \
             Each server's req/s and latencies are measured by both."
        );
        self.sections.push(s);
        for (name, bare, sim, ratio, target) in oha_rows {
            self.row(
                name,
                format!("{bare} (bare hyper)"),
                sim,
                ratio,
                target,
                "cargo xtask bench",
            );
        }
    }
}
