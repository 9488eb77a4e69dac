//! Bulk submit: the command line against the SDK called directly, on the same file.

use std::{
    process::{Command, Stdio},
    time::Instant,
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::APP_TOKEN;
use crate::http::post_json;
use crate::lab::Lab;
use crate::servers::Server;
/// Orders in the bulk comparison's file.
const BULK_ORDERS: usize = 10_000;
/// The command line's defaults (`cli/src/bulk.rs`), given to both sides explicitly.
const BULK_BATCH: usize = 500;
const BULK_CONCURRENCY: usize = 4;
/// Repetitions of the pair (each side once), each side first in every other one. A run
/// takes about 0.15 s, so one pair's ratio moves by a fifth with the machine's jitter;
/// 25 pairs (about 8 s with the simulators' starts) give a median that holds still.
const BULK_REPS: usize = 25;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BulkSide {
    /// `licensing orders submit FILE`.
    Cli,
    /// `benches/bulk.rs`: the same file sent through the SDK by a program of its own.
    Sdk,
}

/// `n` asset numbers allocated on the simulator at `url` (a `new_buy` order needs
/// allocated numbers), in calls of at most 1,000.
fn allocate(lab: &Lab, url: &str, n: usize) -> Result<Vec<String>> {
    let (_, path) = lab.operation("allocateShellNums")?;
    let mut numbers = Vec::with_capacity(n);
    while numbers.len() < n {
        let size = (n - numbers.len()).min(1000);
        let reply = post_json(
            &format!(
                "{url}{path}?g_nonce=bench-allocate-{}-{}",
                std::process::id(),
                numbers.len()
            ),
            &json!({ "size": size }),
        )?;
        let got = reply["data"]
            .as_array()
            .filter(|d| reply["code"] == 0 && d.len() == size)
            .with_context(|| format!("allocating {size} asset numbers: {reply}"))?;
        numbers.extend(got.iter().map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }));
    }
    Ok(numbers)
}

/// The command line and the SDK called directly submit the same file of orders, each
/// to a simulator started fresh for it (the demo seed, then the file's asset numbers
/// allocated, which a fresh simulator hands out alike), in the same batches with the
/// same concurrency. Each run is one process, timed from its start to its exit; the
/// sides take turns going first. Every order must come back `ok`.
pub fn measure(lab: &Lab) -> Result<Value> {
    let (bins, options) = (&lab.bins, lab.options);
    let (orders, batch, reps) = match (options.smoke, options.quick) {
        (true, _) => (100, 20, 1),
        (false, true) => (BULK_ORDERS, BULK_BATCH, 3),
        (false, false) => (BULK_ORDERS, BULK_BATCH, BULK_REPS),
    };
    let dir = bins.target_dir.join("bench-bulk");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("orders.jsonl");
    let results = dir.join("orders.results.jsonl");
    let fresh_sim = || Server::licensing_sim(bins, &["--seed", "demo"]);
    let numbers = allocate(lab, &fresh_sim()?.url, orders)?;
    // The orders of the command line's own bulk test (and of the command line guide's session).
    licensing_test_support::orders::write(&file, &numbers)
        .with_context(|| format!("writing {}", file.display()))?;
    let (mut cli_s, mut sdk_s) = (Vec::new(), Vec::new());
    let (mut cli_cpu, mut sdk_cpu) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        let sides = if rep % 2 == 0 {
            [BulkSide::Cli, BulkSide::Sdk]
        } else {
            [BulkSide::Sdk, BulkSide::Cli]
        };
        for side in sides {
            let sim = fresh_sim()?;
            if allocate(lab, &sim.url, orders)? != numbers {
                bail!("a fresh licensing-sim handed out other asset numbers than the first one");
            }
            let mut cmd = match side {
                BulkSide::Cli => {
                    let _ = std::fs::remove_file(&results);
                    let mut cmd = Command::new(&bins.cli);
                    cmd.args(["orders", "submit"])
                        .arg(&file)
                        .arg("--results")
                        .arg(&results);
                    cmd
                }
                BulkSide::Sdk => {
                    let mut cmd = Command::new(&bins.benches["bulk"]);
                    cmd.arg("--bench").arg(&file);
                    cmd
                }
            };
            cmd.args(["--channel-code", "CH01", "--app-key", "APP_KEY"])
                .args(["--order-id-prefix", "bench"])
                .args(["--batch-size", &batch.to_string()])
                .args(["--concurrency", &BULK_CONCURRENCY.to_string()]);
            // Both read the SDK's variables, and only the ones set here.
            for (name, _) in std::env::vars() {
                if name.starts_with("LICENSING_") {
                    cmd.env_remove(name);
                }
            }
            cmd.env("LICENSING_ORDER_URL", &sim.url)
                .env("LICENSING_APP_TOKEN", APP_TOKEN)
                .env("LICENSING_CONFIG_DIR", &dir)
                .stdin(Stdio::null())
                .stderr(Stdio::inherit());
            let cpu_before = children_cpu_s();
            let started = Instant::now();
            let out = cmd
                .output()
                .with_context(|| format!("running the {side:?} side of the bulk comparison"))?;
            let took = started.elapsed().as_secs_f64();
            // The side is the only child reaped meanwhile (its simulator is reaped below).
            let cpu = children_cpu_s() - cpu_before;
            drop(sim);
            if !out.status.success() {
                bail!(
                    "the {side:?} side of the bulk comparison failed ({})",
                    out.status
                );
            }
            let ok = match side {
                BulkSide::Cli => std::fs::read_to_string(&results)
                    .with_context(|| format!("reading {}", results.display()))?
                    .lines()
                    .filter(|l| {
                        serde_json::from_str::<Value>(l).is_ok_and(|r| r["outcome"] == "ok")
                    })
                    .count(),
                BulkSide::Sdk => {
                    let line = String::from_utf8(out.stdout)?;
                    let tally: Value = serde_json::from_str(line.trim())
                        .with_context(|| format!("the SDK side printed {line:?}"))?;
                    tally["ok"].as_u64().unwrap_or(0) as usize
                }
            };
            if ok != orders {
                bail!("the {side:?} side of the bulk comparison: {ok} of {orders} orders ok");
            }
            eprintln!(
                "bulk {side:?}, run {}: {orders} orders in {took:.3} s",
                rep + 1
            );
            match side {
                BulkSide::Cli => (cli_s.push(took), cli_cpu.push(cpu)),
                BulkSide::Sdk => (sdk_s.push(took), sdk_cpu.push(cpu)),
            };
        }
    }
    Ok(json!({
        "orders": orders, "batch_size": batch, "concurrency": BULK_CONCURRENCY,
        "cli_s": cli_s, "sdk_s": sdk_s, "cli_cpu_s": cli_cpu, "sdk_cpu_s": sdk_cpu,
    }))
}

/// CPU time (user and system, seconds) of this process's children reaped so far.
#[cfg(unix)]
#[allow(unsafe_code)] // `getrusage`: libc's call; rustix, in the build, has no wrapper for it
fn children_cpu_s() -> f64 {
    // SAFETY: `getrusage` writes the struct it is given, nothing else; all zeroes is a
    // valid `rusage` (integers and `timeval`s of integers).
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Not measured off Unix.
#[cfg(not(unix))]
fn children_cpu_s() -> f64 {
    f64::NAN
}
