//! The simulator's throughput against Prism, WireMock, Mockoon and a bare hyper server,
//! each loaded by `bench-load`, then by oha.
//!
//! Every server runs at once (an idle one costs nothing) and they are loaded in turn, in
//! short rounds: each round loads every server once, so a ratio compares runs seconds
//! apart, and a machine that slows down for a while (shared CPUs do) spoils one round,
//! not one server's whole measurement. Ratios are the median of the rounds' ratios.

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

use crate::http::bind_customer;
use crate::lab::Lab;
use crate::load::{Endpoint, SLICE_MS, load};
use crate::oha::{OHA_ROUNDS, OHA_VERSION, OhaInstall, WARM_UP, WARM_UP_QUICK, oha_load, warm_up};
use crate::peers;
use crate::results::{Throughput, Versions};
use crate::servers::Server;
use crate::stats::{f, median, range};

/// The servers of the comparison, in the order of their results: the simulator and the
/// bare server first, then the ones loaded on their own.
struct Servers<'a> {
    names: Vec<&'a str>,
    all: Vec<&'a Server>,
    /// The servers loaded on their own (Prism, WireMock, Mockoon), by result key.
    solo: Vec<(&'a str, &'a Server)>,
}

pub fn measure(lab: &Lab) -> Result<Throughput> {
    let options = lab.options;
    let (rounds, seconds, oha_rounds) = match (options.smoke, options.quick) {
        (true, _) => (1, 1, 0),
        (false, true) => (2, 1, 1),
        (false, false) => (5, 2, OHA_ROUNDS),
    };
    let warm_up_rule = if options.quick {
        WARM_UP_QUICK
    } else {
        WARM_UP
    };
    let sim = Server::licensing_sim(&lab.bins, &[])?;
    let bare = Server::bare(&lab.bins)?;
    let prism = if options.smoke {
        None
    } else {
        Some(Server::prism(lab.root, &lab.bins)?)
    };
    let stub_servers = if options.smoke {
        Vec::new()
    } else {
        stub_servers(lab)?
    };
    let solo: Vec<(&str, &Server)> = prism
        .iter()
        .map(|p| ("prism", p))
        .chain(stub_servers.iter().map(|(peer, s)| (peer.key(), s)))
        .collect();
    let servers = Servers {
        names: ["licensing-sim", "bare hyper"]
            .into_iter()
            .chain(solo.iter().map(|(name, _)| *name))
            .collect(),
        all: [&sim, &bare]
            .into_iter()
            .chain(solo.iter().map(|(_, s)| *s))
            .collect(),
        solo,
    };
    bind_customer(&sim.url)?;
    let mut results = Map::new();
    if !stub_servers.is_empty() {
        results.insert(
            "runtimes".into(),
            json!({ "java": peers::java_version()?, "node": peers::node_version() }),
        );
    }
    for (label, endpoint) in Endpoint::BOTH {
        // The servers loaded on their own are warmed up on their own until their rate
        // levels off (a JVM compiles WireMock's path over seconds of load), then a short
        // warm-up lets the simulator and the bare server open connections and fill caches.
        if !options.smoke {
            for (name, server) in &servers.solo {
                let runs = warm_up(lab, &server.url, endpoint, &warm_up_rule)?;
                eprintln!("{name} {label}: warmed up for {runs} s");
                results.insert(format!("warmup/{name}/{label}"), json!(runs));
            }
            load(lab, &[sim.url.as_str(), bare.url.as_str()], endpoint, 1)?;
        }
        let runs = own_rounds(lab, &servers, (label, endpoint), rounds, seconds)?;
        for (name, server_runs) in servers.names.iter().zip(&runs) {
            results.insert(
                format!("{name}/{label}"),
                summarize_runs(&runs[0], server_runs),
            );
        }
        if options.smoke {
            continue;
        }
        let runs = oha_rounds_of(lab, &servers, (label, endpoint), oha_rounds, seconds)?;
        for (name, server_runs) in servers.names.iter().zip(&runs) {
            results.insert(
                format!("oha/{name}/{label}"),
                summarize_runs(&runs[0], server_runs),
            );
        }
    }
    Ok(Throughput {
        rounds,
        seconds,
        oha_rounds,
        slice_ms: SLICE_MS,
        warm_up: warm_up_rule,
        versions: Versions {
            oha: OHA_VERSION.into(),
            wiremock: peers::WIREMOCK_VERSION.into(),
            mockoon: peers::MOCKOON_VERSION.into(),
        },
        results: Value::Object(results),
    })
}

/// The stub servers, each checked to answer both loaded requests with the spec's example
/// before any load.
fn stub_servers(lab: &Lab) -> Result<Vec<(peers::Peer, Server)>> {
    let probes: Vec<peers::Probe> = Endpoint::BOTH
        .into_iter()
        .map(|(_, endpoint)| {
            let (id, params, body) = endpoint.request();
            let nonce = format!("bench-check-{}-{id}", std::process::id());
            peers::Probe {
                id,
                query: params.replace("{nonce}", &nonce),
                body,
            }
        })
        .collect();
    peers::start(&lab.specs, &lab.bins.target_dir, &probes)
}

/// `rounds` rounds of `bench-load` on every server: per server (in the order of
/// `servers.names`), its rounds.
fn own_rounds(
    lab: &Lab,
    servers: &Servers,
    (label, endpoint): (&str, Endpoint),
    rounds: usize,
    seconds: u64,
) -> Result<Vec<Vec<Value>>> {
    let (sim, bare) = (servers.all[0], servers.all[1]);
    let mut runs: Vec<Vec<Value>> = vec![Vec::new(); servers.names.len()];
    for round in 0..rounds {
        // The simulator and the bare server take turns, slice by slice; every other
        // round the bare server starts.
        let sim_first = round % 2 == 0;
        let urls = if sim_first {
            [sim.url.as_str(), bare.url.as_str()]
        } else {
            [bare.url.as_str(), sim.url.as_str()]
        };
        let got = load(lab, &urls, endpoint, seconds)?;
        let [first, second] = <[Value; 2]>::try_from(got)
            .map_err(|got| anyhow::anyhow!("{} load results, not 2", got.len()))?;
        let (s, b) = if sim_first {
            (first, second)
        } else {
            (second, first)
        };
        let mut measured = vec![s, b];
        // Prism, WireMock and Mockoon run on their own: a server taking turns with
        // Prism met the work its runtime left behind after its slices (the simulator
        // was about 10% slower after Prism than after the bare server), and a JVM or
        // another Node.js process may leave the same. They are loaded by `bench-load`
        // too, as the simulator is: a ratio's two rates come from one generator.
        for (_, server) in &servers.solo {
            let got = load(lab, &[server.url.as_str()], endpoint, seconds)?;
            measured.push(got.into_iter().next().unwrap_or_default());
        }
        for (i, r) in measured.into_iter().enumerate() {
            let name = servers.names[i];
            eprintln!("{name} {label}, round {}: {r}", round + 1);
            if lab.options.smoke && (r["requests"] == 0 || r["errors"] != 0) {
                bail!("{name} {label}: the load run failed: {r}");
            }
            runs[i].push(r);
        }
    }
    Ok(runs)
}

/// The same servers under oha, one server per oha process: the simulator and the bare
/// server take turns going first, then the others in order (as under `bench-load`).
fn oha_rounds_of(
    lab: &Lab,
    servers: &Servers,
    (label, endpoint): (&str, Endpoint),
    rounds: usize,
    seconds: u64,
) -> Result<Vec<Vec<Value>>> {
    let oha = OhaInstall::bin(&lab.bins.target_dir);
    let mut runs: Vec<Vec<Value>> = vec![Vec::new(); servers.names.len()];
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..servers.all.len()).collect();
        if round % 2 == 1 {
            order.swap(0, 1);
        }
        for i in order {
            let r = oha_load(lab, &oha, &servers.all[i].url, endpoint, seconds)?;
            eprintln!(
                "oha: {} {label}, round {}: {r}",
                servers.names[i],
                round + 1
            );
            runs[i].push(r);
        }
    }
    Ok(runs)
}

/// One server's load runs summed up: the medians of its rounds' figures, and of the
/// simulator's rate over this server's round by round (with their range).
fn summarize_runs(ours: &[Value], runs: &[Value]) -> Value {
    let pick = |key: &str| median(runs.iter().map(|r| f(&r[key])).collect());
    let sum = |key: &str| runs.iter().filter_map(|r| r[key].as_f64()).sum::<f64>();
    // Each round's simulator run against the other's in the same round.
    let ratios: Vec<f64> = ours
        .iter()
        .zip(runs)
        .map(|(s, o)| f(&s["rps"]) / f(&o["rps"]))
        .collect();
    json!({
        "rps": pick("rps"), "p50_us": pick("p50_us"), "p99_us": pick("p99_us"),
        "requests": sum("requests"), "errors": sum("errors"), "non_200": sum("non_200"),
        "sim_ratio": median(ratios.clone()), "sim_ratio_range": range(&ratios),
        "rounds": runs.iter().map(|r| f(&r["rps"]).round()).collect::<Vec<_>>(),
    })
}
