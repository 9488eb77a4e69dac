//! The simulator's throughput against the mock and stub servers and bare hyper.

use serde_json::Value;

use super::Report;
use crate::results::Throughput;
use crate::stats::f;

/// The loaded endpoints: the label of their results and their name in the document.
pub(super) const ENDPOINTS: [(&str, &str); 2] = [
    ("read", "read `enterprise/user/query`"),
    ("write", "write `shellnums`"),
];

impl Report<'_> {
    pub(super) fn throughput(&mut self, tp: &Throughput) {
        for (label, what) in ENDPOINTS {
            self.throughput_rows(tp, label, what);
        }
        if tp.oha_rounds > 0 {
            self.load_tools(tp);
        }
        self.throughput_notes(tp);
    }

    /// One endpoint's rows, and its rounds' rates in a note.
    fn throughput_rows(&mut self, tp: &Throughput, label: &str, what: &str) {
        let (t, rounds) = (&tp.results, tp.rounds);
        let sim = &t[format!("licensing-sim/{label}")];
        let prism = &t[format!("prism/{label}")];
        let bare = &t[format!("bare hyper/{label}")];
        let s = f(&sim["rps"]);
        let rounds_of = |r: &Value, key: &str| {
            r[key]
                .as_array()
                .map(|rs| {
                    rs.iter()
                        .map(|x| format!("{:.0}", f(x)))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
                .join(", ")
        };
        let (vs_prism, vs_bare) = (f(&prism["sim_ratio"]), f(&bare["sim_ratio"]));
        let name = format!("simulator throughput, {what}, vs Prism");
        let target = self.judge("throughput.vs_prism", &name, vs_prism);
        self.row(
            name,
            format!(
                "{:.0} req/s, p99 {:.2} ms (Prism)",
                f(&prism["rps"]),
                f(&prism["p99_us"]) / 1000.0
            ),
            format!("{s:.0} req/s, p99 {:.2} ms", f(&sim["p99_us"]) / 1000.0),
            format!(
                "{vs_prism:.1}× ({:.1}–{:.1}× over {rounds} rounds)",
                f(&prism["sim_ratio_range"][0]),
                f(&prism["sim_ratio_range"][1])
            ),
            target,
            "cargo xtask bench",
        );
        let name = format!("simulator throughput, {what}, vs bare hyper");
        let target = self.judge("throughput.vs_bare", &name, vs_bare);
        self.row(
            name,
            format!(
                "{:.0} req/s, p99 {:.2} ms (fixed body)",
                f(&bare["rps"]),
                f(&bare["p99_us"]) / 1000.0
            ),
            format!("{s:.0} req/s, p99 {:.2} ms", f(&sim["p99_us"]) / 1000.0),
            format!(
                "{:.0}% ({:.0}–{:.0}% over {rounds} rounds)",
                100.0 * vs_bare,
                100.0 * f(&bare["sim_ratio_range"][0]),
                100.0 * f(&bare["sim_ratio_range"][1])
            ),
            target,
            "cargo xtask bench",
        );
        // The stub servers: reported, no target.
        let figures = |r: &Value| {
            format!(
                "{:.0} req/s, p50 {:.2} ms, p99 {:.2} ms",
                f(&r["rps"]),
                f(&r["p50_us"]) / 1000.0,
                f(&r["p99_us"]) / 1000.0
            )
        };
        let peers = [
            ("wiremock", "WireMock", &tp.versions.wiremock),
            ("mockoon", "Mockoon", &tp.versions.mockoon),
        ];
        for (key, name, version) in peers {
            let r = &t[format!("{key}/{label}")];
            if r.is_null() {
                continue;
            }
            self.row(
                format!("simulator throughput, {what}, vs {name}"),
                format!("{} ({name} {version})", figures(r)),
                figures(sim),
                format!(
                    "{:.1}× ({:.1}–{:.1}× over {} rounds)",
                    f(&r["sim_ratio"]),
                    f(&r["sim_ratio_range"][0]),
                    f(&r["sim_ratio_range"][1]),
                    rounds
                ),
                "— (reported)".into(),
                "cargo xtask bench",
            );
        }
        let peer_rounds: String = peers
            .iter()
            .filter(|(key, _, _)| !t[format!("{key}/{label}")].is_null())
            .map(|(key, name, _)| {
                format!(
                    "; {name} {}",
                    rounds_of(&t[format!("{key}/{label}")], "rounds")
                )
            })
            .collect();
        self.notes.push(format!(
            "Throughput, {label}, req/s by round: licensing-sim {}; bare hyper {}; Prism {}{peer_rounds}.",
            rounds_of(sim, "rounds"),
            rounds_of(bare, "rounds"),
            rounds_of(prism, "rounds")
        ));
        let wiremock = &t[format!("wiremock/{label}")];
        let mockoon = &t[format!("mockoon/{label}")];
        for (name, r) in [
            ("licensing-sim", sim),
            ("prism", prism),
            ("bare hyper", bare),
            ("WireMock", wiremock),
            ("Mockoon", mockoon),
        ] {
            if f(&r["errors"]) > 0.0 {
                self.notes.push(format!(
                    "{name} {label}: {} of {} responses were not HTTP 200/299",
                    r["errors"], r["requests"]
                ));
            }
        }
    }

    /// How the servers were set up, warmed up and loaded.
    fn throughput_notes(&mut self, tp: &Throughput) {
        let (t, warm_up) = (&tp.results, &tp.warm_up);
        let runtimes = &t["runtimes"];
        if runtimes.is_object() {
            self.notes.push(format!(
                "Stub servers: WireMock {} (npm `wiremock`, its standalone jar run by `java -jar` on {}, the JVM's \
                 default settings) with `--no-request-journal` and `--disable-request-logging`, the two settings WireMock \
                 documents for long runs and performance testing (its journal otherwise keeps every request for \
                 verification, a heap that grows through the run); Mockoon CLI {} (npm `@mockoon/cli`, `mockoon-cli \
                 start`, on Node.js {}) with `--disable-log-to-file` (each transaction is still logged, to stdout, which \
                 the benchmark discards), its routes with templating off (the bodies are literal examples: templating \
                 would only add a Handlebars pass per request). Their stubs are written from `spec/order.yaml` on every \
                 run (WireMock's `mappings/*.json`, Mockoon's environment file): per operation its method and path \
                 (WireMock's `urlPath`, so the query string, with its fresh `g_nonce`, takes no part in matching), and \
                 the HTTP status, content type and example of its success reply (the schema's `example`, as Prism \
                 answers). Before any load, each was checked to answer both requests with that status and body. Each \
                 is loaded on its own after Prism, as Prism is; a ratio is the simulator's rate over the stub \
                 server's, the median of the rounds' ratios with their range.",
                tp.versions.wiremock,
                runtimes["java"].as_str().unwrap_or("Java"),
                tp.versions.mockoon,
                runtimes["node"].as_str().unwrap_or_default(),
            ));
        }
        // How long each server loaded on its own took to level off, per endpoint.
        let warm_ups: Vec<String> = ["read", "write"]
            .iter()
            .map(|label| {
                let each: Vec<String> = [
                    ("prism", "Prism"),
                    ("wiremock", "WireMock"),
                    ("mockoon", "Mockoon"),
                ]
                .iter()
                .filter_map(|(key, shown)| {
                    let runs = t[format!("warmup/{key}/{label}")].as_u64()?;
                    Some(format!("{shown} {runs} s"))
                })
                .collect();
                format!("{label}: {}", each.join(", "))
            })
            .collect();
        self.notes.push(format!(
            "Throughput: the five servers run at once. Per endpoint, Prism, WireMock and Mockoon are first warmed up, each on its own, in runs of 1 s by oha until their rate levels off: at least {} runs, at most {}, ending after {} runs in a row none more than 5% faster than the fastest before it (a JVM compiles WireMock's path over seconds of load; {}), then `licensing-sim` and the bare server for 1 s each; then {} rounds; in each, `licensing-sim` and the bare server are loaded for {} s each, taking turns in slices of {} ms within one `bench-load load` process (so both meet the machine as it is then; the bare server starts every other round), then Prism, WireMock and Mockoon for {} s each, by `bench-load` too (a ratio's two rates come from one generator), one after the other, each on its own (a server taking turns with Prism met the work Prism's runtime left behind after its slices). A server's req/s is the mean over its slices of its connections' rates, each connection's over its own time in the slice (from the slice's start to its last answer). A ratio is the median of the rounds' ratios, req/s and p99 the medians. Load: 16 concurrent keep-alive connections per server (one worker thread), every request with a fresh `g_nonce`; `licensing-sim` with its default settings (journal on).",
            warm_up.min,
            warm_up.max,
            warm_up.patience,
            warm_ups.join("; "),
            tp.rounds,
            tp.seconds,
            tp.slice_ms,
            tp.seconds,
        ));
    }
}
