//! The conformance proxy's cost: `licensing-proxy` in front of a simulator against that
//! simulator direct, beside the two ceilings any proxy here meets.

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use crate::http::bind_customer;
use crate::lab::Lab;
use crate::load::{Endpoint, LOAD_CONNECTIONS, SLICE_MS, load, load_with};
use crate::servers::Server;
use crate::stats::{f, median, range, spread_of};

/// The ways to the simulator the proxy comparison loads, in the order of their results:
/// direct, through a TCP forwarder, through `licensing-proxy`, through a bare HTTP proxy.
const WAYS: [&str; 4] = ["direct", "forwarder", "proxy", "http_proxy"];

/// `licensing-proxy` in front of a simulator against that simulator direct, on both
/// endpoints, with a bare TCP forwarder in front of the same simulator as the ceiling any
/// proxy reaches on this machine (the same two sockets per request, no HTTP read), and a
/// bare HTTP proxy as the ceiling of any proxy that reads the exchanges as HTTP (hyper on
/// both sides, bodies read whole, nothing checked). In each round the four are loaded in
/// turn, in slices, within one `bench-load load` process (so
/// all meet the machine as it is then), first with the throughput comparison's
/// connections, then with one connection for the latency the proxy adds. Every reply must
/// be a success and the proxy's report empty: a faithful upstream's traffic takes the
/// proxy's common path, the one measured.
pub fn measure(lab: &Lab) -> Result<Value> {
    let (bins, options) = (&lab.bins, lab.options);
    let (rounds, seconds) = match (options.smoke, options.quick) {
        (true, _) => (1, 1),
        (false, true) => (2, 1),
        (false, false) => (5, 2),
    };
    let sim = Server::licensing_sim(bins, &[])?;
    let report_file = bins.target_dir.join("bench-proxy-deviations.jsonl");
    let _ = std::fs::remove_file(&report_file);
    let report_arg = report_file
        .to_str()
        .context("the target directory's path is not UTF-8")?;
    let proxy = Server::proxy(bins, &sim.url, &["--report", report_arg])?;
    let forwarder = Server::forwarder(bins, &sim.url)?;
    let http_proxy = Server::http_proxy(bins, &sim.url)?;
    bind_customer(&sim.url)?;
    let servers = [&sim, &forwarder, &proxy, &http_proxy];
    let mut results = Map::new();
    for (label, endpoint) in Endpoint::BOTH {
        if !options.smoke {
            let urls: Vec<&str> = servers.iter().map(|s| s.url.as_str()).collect();
            load(lab, &urls, endpoint, 1)?;
        }
        // Per way, its runs with many connections and with one.
        let mut loaded: [Vec<Value>; WAYS.len()] = Default::default();
        let mut single: [Vec<Value>; WAYS.len()] = Default::default();
        for round in 0..rounds {
            // Each way starts a round in turn.
            let order: Vec<usize> = (0..WAYS.len()).map(|i| (i + round) % WAYS.len()).collect();
            let urls: Vec<&str> = order.iter().map(|&i| servers[i].url.as_str()).collect();
            for (connections, into) in [(LOAD_CONNECTIONS, &mut loaded), (1, &mut single)] {
                let got = load_with(lab, &urls, endpoint, seconds, connections)?;
                if got.len() != WAYS.len() {
                    bail!("{} load results, not {}", got.len(), WAYS.len());
                }
                for (&i, r) in order.iter().zip(got) {
                    eprintln!(
                        "proxy comparison, {label}, round {}, {connections} connection(s), {}: {r}",
                        round + 1,
                        WAYS[i]
                    );
                    if r["requests"] == 0 || r["errors"] != 0 {
                        bail!("{} {label}: the load run failed: {r}", WAYS[i]);
                    }
                    into[i].push(r);
                }
            }
        }
        results.insert(
            label.to_string(),
            summarize(&loaded, &single, rounds, seconds),
        );
    }
    let deviations = std::fs::read_to_string(&report_file)
        .unwrap_or_default()
        .lines()
        .count();
    if deviations != 0 {
        bail!(
            "the proxy reported {deviations} deviation(s) of the simulator's replies ({}): \
             the benchmark measures its path for faithful traffic",
            report_file.display()
        );
    }
    Ok(Value::Object(results))
}

/// One endpoint's runs summed up: per way its medians, and round by round the rates'
/// ratios and the latency one connection meets, with their ranges.
fn summarize(
    loaded: &[Vec<Value>; WAYS.len()],
    single: &[Vec<Value>; WAYS.len()],
    rounds: usize,
    seconds: u64,
) -> Value {
    let of = |runs: &[Value], key: &str| median(runs.iter().map(|r| f(&r[key])).collect());
    // Round by round: `a`'s rate over `b`'s, their median and range.
    let ratio = |a: usize, b: usize| {
        let ratios: Vec<f64> = loaded[a]
            .iter()
            .zip(&loaded[b])
            .map(|(x, y)| f(&x["rps"]) / f(&y["rps"]))
            .collect();
        json!({ "median": median(ratios.clone()), "range": range(&ratios) })
    };
    let added_by = |way: usize| -> Vec<f64> {
        single[way]
            .iter()
            .zip(&single[0])
            .map(|(p, d)| f(&p["p50_us"]) - f(&d["p50_us"]))
            .collect()
    };
    let added = added_by(2);
    // The same for the bare HTTP proxy: what reading HTTP on the way adds by itself.
    let (http_med, http_lo, http_hi, _) = spread_of(added_by(3));
    // The same rounds as a ratio: the machine's own wake-up latency moves both.
    let (med, lo, hi, _) = spread_of(
        single[2]
            .iter()
            .zip(&single[0])
            .map(|(p, d)| f(&p["p50_us"]) / f(&d["p50_us"]))
            .collect(),
    );
    let through_over_direct = json!({ "median": med, "range": [lo, hi] });
    let mut entry = json!({
        "proxy_vs_direct": ratio(2, 0),
        "forwarder_vs_direct": ratio(1, 0),
        "proxy_vs_forwarder": ratio(2, 1),
        "http_proxy_vs_forwarder": ratio(3, 1),
        "proxy_vs_http_proxy": ratio(2, 3),
        "added_p50_us": median(added.clone()),
        "added_p50_us_range": range(&added),
        "through_over_direct_p50": through_over_direct,
        "http_proxy_added_p50_us": { "median": http_med, "range": [http_lo, http_hi] },
        "rounds": rounds, "seconds": seconds,
        "slice_ms": SLICE_MS, "connections": LOAD_CONNECTIONS,
    });
    for (i, way) in WAYS.iter().enumerate() {
        entry[*way] = json!({
            "rps": of(&loaded[i], "rps"), "p99_us": of(&loaded[i], "p99_us"),
            "p50_us_single": of(&single[i], "p50_us"),
        });
    }
    entry
}
