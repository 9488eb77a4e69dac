//! The conformance proxy against the simulator direct and the two bare ceilings.

use serde_json::Value;

use super::Report;
use super::throughput::ENDPOINTS;
use crate::stats::f;

impl Report<'_> {
    pub(super) fn proxy(&mut self, p: &Value) {
        let range = |r: &Value| {
            format!(
                "{:.2}× ({:.2}–{:.2})",
                f(&r["median"]),
                f(&r["range"][0]),
                f(&r["range"][1])
            )
        };
        for (label, what) in ENDPOINTS {
            let r = &p[label];
            let (direct, forwarder, proxy) = (&r["direct"], &r["forwarder"], &r["proxy"]);
            let rate = |w: &Value| {
                format!(
                    "{:.0} req/s, p99 {:.2} ms",
                    f(&w["rps"]),
                    f(&w["p99_us"]) / 1000.0
                )
            };
            let name = format!(
                "conformance proxy throughput, {what}, through `licensing-proxy` vs the simulator direct"
            );
            self.row(
                name,
                format!("{} (direct)", rate(direct)),
                rate(proxy),
                range(&r["proxy_vs_direct"]),
                "— (reported: the 0.5× target is retired, the forwarder itself reaches about that)"
                    .into(),
                "cargo xtask bench",
            );
            self.row(
                format!(
                    "conformance proxy throughput, {what}, a bare TCP forwarder vs the simulator direct (the ceiling)"
                ),
                format!("{} (direct)", rate(direct)),
                format!("{} (forwarder)", rate(forwarder)),
                range(&r["forwarder_vs_direct"]),
                "— (what any proxy here can reach)".into(),
                "cargo xtask bench",
            );
            let name = format!(
                "conformance proxy throughput, {what}, `licensing-proxy` vs the bare TCP forwarder"
            );
            let target = self.judge(
                "proxy.vs_forwarder",
                &name,
                f(&r["proxy_vs_forwarder"]["median"]),
            );
            self.row(
                name,
                format!("{} (forwarder)", rate(forwarder)),
                rate(proxy),
                range(&r["proxy_vs_forwarder"]),
                target,
                "cargo xtask bench",
            );
            let http_proxy = &r["http_proxy"];
            self.row(
                format!(
                    "conformance proxy throughput, {what}, a bare HTTP proxy vs the bare TCP forwarder (the ceiling of a proxy that reads HTTP)"
                ),
                format!("{} (forwarder)", rate(forwarder)),
                format!("{} (bare HTTP proxy)", rate(http_proxy)),
                range(&r["http_proxy_vs_forwarder"]),
                "— (what a proxy that reads every exchange as HTTP and checks nothing reaches here)"
                    .into(),
                "cargo xtask bench",
            );
            self.row(
                format!(
                    "conformance proxy throughput, {what}, `licensing-proxy` vs the bare HTTP proxy"
                ),
                format!("{} (bare HTTP proxy)", rate(http_proxy)),
                rate(proxy),
                range(&r["proxy_vs_http_proxy"]),
                "— (reported: what the checks, the bounds and the report cost)".into(),
                "cargo xtask bench",
            );
            self.row(
                format!("conformance proxy, added median latency, {what}, one connection"),
                format!("{:.0} µs (direct)", f(&direct["p50_us_single"])),
                format!("{:.0} µs (through the proxy)", f(&proxy["p50_us_single"])),
                match r["added_p50_us_range"].as_array() {
                    Some(range) if range.len() == 2 => {
                        let over = &r["through_over_direct_p50"];
                        let http = &r["http_proxy_added_p50_us"];
                        format!(
                            "+{:.0} µs (+{:.0} to +{:.0} µs over {} rounds); {:.2}× direct ({:.2}–{:.2}×); \
                             the bare HTTP proxy in the same rounds: +{:.0} µs (+{:.0} to +{:.0} µs)",
                            f(&r["added_p50_us"]),
                            f(&range[0]),
                            f(&range[1]),
                            r["rounds"],
                            f(&over["median"]),
                            f(&over["range"][0]),
                            f(&over["range"][1]),
                            f(&http["median"]),
                            f(&http["range"][0]),
                            f(&http["range"][1]),
                        )
                    }
                    _ => format!("+{:.0} µs", f(&r["added_p50_us"])),
                },
                "— (reported)".into(),
                "cargo xtask bench",
            );
        }
        let r = &p["read"];
        self.notes.push(format!(
            "Conformance proxy: `licensing-proxy --upstream URL` (release build, its default settings and a report \
             file) in front of a `licensing-sim` with its default settings, against that simulator direct and through \
             `bench-load bare-forwarder`, a TCP forwarder that copies bytes both ways over one upstream connection per \
             client connection (the same four socket reads and writes per request as the proxy, no HTTP parsed: the \
             ceiling of any proxy on this machine), and through `bench-load bare-http-proxy`, which reads each request \
             and reply as HTTP/1.1 with hyper on both sides (bodies read whole, one upstream connection per client \
             connection, driven by the exchange as the proxy drives its own) and checks nothing: the ceiling of any \
             proxy that reads HTTP, as a conformance proxy must. Per endpoint, after a warm-up of 1 s, {} rounds; in \
             each, the four are loaded for {} s each, taking turns in slices of {} ms within one `bench-load load` process \
             (each starts a round in turn), first with {} keep-alive connections each (req/s, p99; a \
             ratio is the median of the rounds' ratios, with their range), then with one connection each (the median \
             latencies, and the median of the rounds' differences and of their ratios: a latency on one connection is \
             mostly the wake-ups of the processes it passes through, which move with the machine, the direct one \
             with them). The proxy checks every request and reply against \
             the documents; every reply was a success and its report stayed empty (the traffic is faithful). The \
             proxy or forwarder, the simulator and the load generator share the machine's cores.",
            r["rounds"], r["seconds"], r["slice_ms"], r["connections"]
        ));
    }
}
