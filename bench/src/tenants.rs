//! Tenants of one simulator: creating one (empty, and seeded with `demo`), what a live
//! tenant holds in memory, the throughput of one tenant's prefix with 1,000 others live
//! against the same with none, and a 50,000-asset seed loaded into a tenant with a state
//! file against the same seed loaded into the default tenant.
//!
//! Every call goes through the admin API over loopback, one connection per call, as a test
//! fixture makes them: a creation's time is the client's, from connecting to the reply.

use std::{path::Path, time::Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::cargo::Binaries;
use crate::http::request_as;
use crate::lab::Lab;
use crate::load::{Endpoint, LOAD_CONNECTIONS, load_as};
use crate::seed;
use crate::servers::Server;

/// The simulator's own admin token in these runs.
const ADMIN: &str = "bench-admin-token";

/// Tenants created (and deleted) one after another for the creation figures.
const CREATIONS: usize = 200;

/// Tenants created on a fresh simulator for the memory figures, per run.
const MEMORY_TENANTS: usize = 200;

/// Runs of the memory and seed measurements, each on a fresh simulator.
const RUNS: usize = 3;

/// Live tenants beside the loaded one in the throughput comparison.
pub(crate) const LIVE_TENANTS: usize = 1_000;

/// The largest admin reply read: a 50,000-asset seed's name-to-id map is a few MiB.
const MAX_REPLY: u64 = 64 << 20;

/// A tenant as the admin API created it: its base URL and tokens.
struct Tenant {
    id: String,
    url: String,
    app: String,
    admin: String,
}

/// `POST /__sandbox/v1/tenants` with `spec`: the tenant, and the call's seconds.
fn create(sim: &str, spec: &Value) -> Result<(Tenant, f64)> {
    let body = spec.to_string();
    let started = Instant::now();
    let (status, _, reply) = request_as(
        sim,
        "POST",
        "/__sandbox/v1/tenants",
        Some(&body),
        ADMIN,
        MAX_REPLY,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let reply: Value = serde_json::from_slice(&reply).context("the tenant reply is not JSON")?;
    if status != 201 && status != 200 {
        bail!("creating a tenant answered {status}: {reply}");
    }
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .with_context(|| format!("the tenant reply lacks a field: {reply}"))
    };
    Ok((
        Tenant {
            id: text(&reply["id"])?,
            url: text(&reply["url"])?,
            app: text(&reply["tokens"]["app"])?,
            admin: text(&reply["tokens"]["admin"])?,
        },
        seconds,
    ))
}

fn delete(sim: &str, id: &str) -> Result<()> {
    let target = format!("/__sandbox/v1/tenants/{id}");
    let (status, _, reply) = request_as(sim, "DELETE", &target, None, ADMIN, MAX_REPLY)?;
    if !(200..300).contains(&status) {
        bail!(
            "deleting tenant {id} answered {status}: {}",
            String::from_utf8_lossy(&reply)
        );
    }
    Ok(())
}

/// A field of the simulator's `/proc` status (`VmRSS`, `VmHWM`), in bytes.
fn proc_bytes(sim: &Server, field: &str) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", sim.pid()))
        .context("reading the simulator's /proc status")?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in the simulator's /proc status"))?;
    Ok(kib * 1024.0)
}

/// The simulator with its admin API behind [`ADMIN`], room for the live tenants, plus
/// `extra` flags.
fn simulator(bins: &Binaries, extra: &[&str]) -> Result<Server> {
    simulator_for(bins, LIVE_TENANTS + 10, extra)
}

/// [`simulator`] with room for `tenants` tenants: each tenant's share of the memory
/// bounds (records, journal, `g_nonce`s) is the simulator's divided by that.
fn simulator_for(bins: &Binaries, tenants: usize, extra: &[&str]) -> Result<Server> {
    let max = tenants.to_string();
    let mut args = vec!["--admin-token", ADMIN, "--max-tenants", max.as_str()];
    args.extend_from_slice(extra);
    Server::licensing_sim(bins, &args)
}

/// Creation: `CREATIONS` tenants created one after another (each deleted before the
/// next, so every creation meets the same registry), empty and `demo`-seeded; each
/// call's seconds.
fn creations(bins: &Binaries, count: usize) -> Result<Value> {
    let sim = simulator(bins, &[])?;
    let mut out = serde_json::Map::new();
    for (name, spec) in [
        ("empty", json!({})),
        ("demo", json!({ "seed": "demo", "name": "bench" })),
    ] {
        let mut seconds = Vec::with_capacity(count);
        for _ in 0..count {
            let (tenant, s) = create(&sim.url, &spec)?;
            seconds.push(s);
            delete(&sim.url, &tenant.id)?;
        }
        out.insert(name.into(), json!({ "seconds": seconds }));
    }
    Ok(Value::Object(out))
}

/// Memory: a fresh simulator's resident set, then again after `count` tenants were
/// created (and the allocator's purge delay passed); per run and kind, the bytes per
/// tenant.
fn memory(bins: &Binaries, count: usize, runs: usize) -> Result<Value> {
    let mut out = serde_json::Map::new();
    for (name, spec) in [("empty", json!({})), ("demo", json!({ "seed": "demo" }))] {
        let (mut per_tenant, mut idle) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let sim = simulator(bins, &[])?;
            settle();
            let before = proc_bytes(&sim, "VmRSS")?;
            for _ in 0..count {
                create(&sim.url, &spec)?;
            }
            settle();
            let after = proc_bytes(&sim, "VmRSS")?;
            idle.push(before);
            per_tenant.push((after - before) / count as f64);
        }
        out.insert(
            name.into(),
            json!({ "tenants": count, "bytes_per_tenant": per_tenant, "idle_simulator_bytes": idle }),
        );
    }
    Ok(Value::Object(out))
}

/// Past mimalloc's purge delay (1 s in the simulator's binary), so that the resident set
/// read is what is held, not what was freed a moment ago.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2_500));
}

/// The benchmark's customer bound in `tenant`, as the throughput comparison's read needs.
fn bind(tenant: &Tenant) -> Result<()> {
    let body = json!({
        "channelCode": "CH01", "channelCustomerId": "CC-42", "customerName": "Acme Robotics",
        "branchName": "North", "enterpriseName": "Acme Robotics", "passwordMobile": "13800000000"
    });
    let (host, prefix) = split(&tenant.url)?;
    let target = format!("{prefix}/order/api/order/v1/enterprise/user/bind?g_nonce=bench-bind");
    let (_, _, reply) = request_as(
        &host,
        "POST",
        &target,
        Some(&body.to_string()),
        &tenant.app,
        MAX_REPLY,
    )?;
    let reply: Value = serde_json::from_slice(&reply)?;
    if reply["code"] != 0 {
        bail!("could not bind the benchmark customer in a tenant: {reply}");
    }
    Ok(())
}

/// `http://HOST:PORT/t/ID` as `(http://HOST:PORT, /t/ID)`.
fn split(url: &str) -> Result<(String, String)> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("not an http:// URL: {url}"))?;
    let slash = rest
        .find('/')
        .with_context(|| format!("no prefix in {url}"))?;
    Ok((
        format!("http://{}", &rest[..slash]),
        rest[slash..].to_string(),
    ))
}

/// Throughput: two simulators, each with one tenant bound as the read needs, one of them
/// with `live` tenants more; both tenants' prefixes loaded in turn by `bench-load`
/// (reads, then writes), `rounds` rounds of `seconds`.
fn throughput(lab: &Lab, live: usize, rounds: usize, seconds: u64) -> Result<Value> {
    let alone = simulator(&lab.bins, &[])?;
    let crowded = simulator(&lab.bins, &[])?;
    let (one, _) = create(&alone.url, &json!({}))?;
    for _ in 0..live / 2 {
        create(&crowded.url, &json!({}))?;
    }
    let (loaded, _) = create(&crowded.url, &json!({}))?;
    for _ in live / 2..live {
        create(&crowded.url, &json!({}))?;
    }
    bind(&one)?;
    bind(&loaded)?;
    let urls = [one.url.as_str(), loaded.url.as_str()];
    let tokens = [one.app.as_str(), loaded.app.as_str()];
    let mut out = serde_json::Map::new();
    for (label, endpoint) in Endpoint::BOTH {
        // Connections opened and caches filled before anything is counted.
        load_as(lab, &urls, &tokens, endpoint, 1, LOAD_CONNECTIONS)?;
        let mut runs: [Vec<Value>; 2] = Default::default();
        for _ in 0..rounds {
            let round = load_as(lab, &urls, &tokens, endpoint, seconds, LOAD_CONNECTIONS)?;
            for (side, summary) in runs.iter_mut().zip(round) {
                if summary["errors"].as_u64() != Some(0) {
                    bail!("tenant load {label}: errors in {summary}");
                }
                side.push(summary);
            }
        }
        out.insert(
            label.into(),
            json!({ "one_tenant": runs[0], "with_live_tenants": runs[1] }),
        );
    }
    Ok(json!({ "live": live, "rounds": rounds, "seconds": seconds, "results": out }))
}

/// The asset seed of the seed section (50 enterprises × 1,000 assets), loaded through the
/// admin API with a state file: into the default tenant of one fresh simulator, and into
/// a new tenant of another; per side, each run's seconds of the call and peak resident
/// set.
fn large_seed(bins: &Binaries, dir: &Path, smoke: bool, runs: usize) -> Result<Value> {
    std::fs::create_dir_all(dir)?;
    let (assets, _) = (seed::SEEDS[0].1, seed::SEEDS[0].2);
    let assets = if smoke { assets / 100 } else { assets };
    let text = serde_json::to_string(&seed::document(assets, 0))?;
    let mut out = serde_json::Map::new();
    for side in ["default", "tenant"] {
        let (mut seconds, mut peaks) = (Vec::new(), Vec::new());
        for run in 0..runs {
            let state = dir.join(format!("{side}-{run}"));
            let _ = std::fs::remove_dir_all(&state);
            std::fs::create_dir_all(&state)?;
            let file = state.join("state");
            let file = file.to_str().context("a state path that is not UTF-8")?;
            // One tenant beside the default one: its share of the record bounds is half
            // the simulator's, as large a share as a simulator with tenants gives.
            let sim = simulator_for(
                bins,
                2,
                &[
                    "--state-file",
                    file,
                    "--max-seed-records",
                    "1000000",
                    "--max-seed-bytes",
                    "268435456",
                    "--max-orders",
                    "200000",
                ],
            )?;
            let (host, prefix, token) = if side == "default" {
                (sim.url.clone(), String::new(), ADMIN.to_string())
            } else {
                let (tenant, _) = create(&sim.url, &json!({}))?;
                let (host, prefix) = split(&tenant.url)?;
                (host, prefix, tenant.admin)
            };
            let target = format!("{prefix}/__sandbox/v1/seed");
            let started = Instant::now();
            let (status, _, reply) =
                request_as(&host, "POST", &target, Some(&text), &token, MAX_REPLY)?;
            let s = started.elapsed().as_secs_f64();
            if !(200..300).contains(&status) {
                bail!(
                    "seeding the {side} tenant answered {status}: {}",
                    String::from_utf8_lossy(&reply[..reply.len().min(500)])
                );
            }
            let peak = proc_bytes(&sim, "VmHWM")?;
            eprintln!(
                "seed into the {side}: {s:.2} s, peak {:.0} MB",
                peak / 1_048_576.0
            );
            seconds.push(s);
            peaks.push(peak);
        }
        out.insert(
            side.into(),
            json!({ "seconds": seconds, "peak_bytes": peaks }),
        );
    }
    Ok(json!({
        "assets": seed::ENTERPRISES * assets,
        "seed_bytes": text.len(),
        "sides": out,
    }))
}

/// Every tenant figure: `{creation, memory, throughput, seed}`.
pub fn measure(lab: &Lab) -> Result<Value> {
    let (smoke, quick) = (lab.options.smoke, lab.options.quick);
    let bins = &lab.bins;
    let (creations_n, memory_n, runs) = if smoke {
        (5, 5, 1)
    } else {
        (CREATIONS, MEMORY_TENANTS, RUNS)
    };
    let (live, rounds, seconds) = match (smoke, quick) {
        (true, _) => (10, 1, 1),
        (false, true) => (LIVE_TENANTS, 2, 1),
        (false, false) => (LIVE_TENANTS, 5, 2),
    };
    eprintln!("tenant creation, {creations_n} of each kind");
    let creation = creations(bins, creations_n)?;
    eprintln!("tenant memory, {memory_n} tenants a run");
    let memory = memory(bins, memory_n, runs)?;
    eprintln!("throughput of one tenant with {live} others live");
    let throughput = throughput(lab, live, rounds, seconds)?;
    let dir = bins.target_dir.join("bench-tenants");
    let seed = large_seed(bins, &dir, smoke, runs)?;
    Ok(json!({
        "creation": creation,
        "memory": memory,
        "throughput": throughput,
        "seed": seed,
    }))
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn a_tenant_url_splits_into_origin_and_prefix() {
        let (host, prefix) = split("http://127.0.0.1:9/t/0123abcd").unwrap();
        assert_eq!(host, "http://127.0.0.1:9");
        assert_eq!(prefix, "/t/0123abcd");
        assert!(split("http://127.0.0.1:9").is_err());
        assert!(split("https://x/t/1").is_err());
    }
}
