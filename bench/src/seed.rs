//! Seeding a large state: `licensing-sim --seed FILE --state-file STATE` with the seed
//! bounds raised by their flags, timed from the process's start to its `listening on`
//! line, its peak resident memory read from `/proc` (`VmHWM`) before it is stopped.

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Command, Stdio},
    time::Instant,
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// Runs of each seed; the figures are their medians, with their range.
const RUNS: usize = 3;

/// The two seeds: 50 enterprises of 1,000 assets (one product each), and 50 of 2,000
/// employees.
pub(super) const SEEDS: [(&str, usize, usize); 2] = [("assets", 1_000, 0), ("employees", 0, 2_000)];

/// Enterprises in each seed.
pub(super) const ENTERPRISES: usize = 50;

/// A seed of [`ENTERPRISES`] enterprises, each with one customer, `assets` assets of one
/// product and `members` employees, in the seed format.
pub(super) fn document(assets: usize, members: usize) -> Value {
    let enterprises: Vec<Value> = (0..ENTERPRISES)
        .map(|e| {
            json!({
                "name": format!("Enterprise {e}"),
                "crmCustomerId": format!("CRM-{e}"),
                "customers": [{ "channelCode": "CH01", "channelCustomerId": format!("CC-{e}") }],
                "assets": (0..assets).map(|a| json!({
                    "key": format!("e{e}a{a}"),
                    "licenseType": "normal_recover_usbkey",
                    "products": [{ "productUri": "cad", "productName": "CAD Suite", "limitConcurrent": 5 }],
                })).collect::<Vec<_>>(),
                "members": (0..members).map(|m| json!({
                    "userName": format!("u{m}"),
                    "password": "Initial-Pass-1",
                    "name": format!("User {m}"),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "enterprises": enterprises })
}

/// One start of the simulator on `seed` with a fresh state file: seconds until it
/// listens, and its peak resident set in bytes.
fn start_once(sim: &Path, seed: &Path, dir: &Path, smoke: bool) -> Result<(f64, u64)> {
    let state = dir.join("state");
    for name in ["state", "state.log", "state.lock"] {
        let _ = std::fs::remove_file(dir.join(name));
    }
    let started = Instant::now();
    let mut child = Command::new(sim)
        .args(["--addr", "127.0.0.1:0", "--seed"])
        .arg(seed)
        .arg("--state-file")
        .arg(&state)
        .args([
            "--max-seed-records",
            "1000000",
            "--max-seed-bytes",
            "268435456",
            "--trial-member-limit",
            "1000000",
        ])
        .stdout(Stdio::piped())
        .stderr(if smoke {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .spawn()
        .with_context(|| format!("starting {}", sim.display()))?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    let seconds = started.elapsed().as_secs_f64();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
    let _ = child.kill();
    let _ = child.wait();
    if !line.starts_with("listening on ") {
        bail!("licensing-sim did not start on the seed: {line:?}");
    }
    let peak_kib: u64 = status
        .context("reading the simulator's /proc status")?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in the simulator's /proc status")?;
    Ok((seconds, peak_kib * 1024))
}

/// Each seed [`RUNS`] times (once under `--smoke`): `{name: {records, seed_bytes,
/// seconds: [...], peak_bytes: [...]}}`.
pub(super) fn measure(sim: &Path, dir: &Path, smoke: bool) -> Result<Value> {
    std::fs::create_dir_all(dir)?;
    let mut out = serde_json::Map::new();
    for (name, assets, members) in SEEDS {
        let (assets, members) = if smoke {
            (assets / 100, members / 100)
        } else {
            (assets, members)
        };
        let text = serde_json::to_vec(&document(assets, members))?;
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, &text)?;
        let (mut seconds, mut peaks) = (Vec::new(), Vec::new());
        for _ in 0..if smoke { 1 } else { RUNS } {
            let (s, peak) = start_once(sim, &path, dir, smoke)?;
            eprintln!(
                "seed of {name}: ready after {s:.2} s, peak {} MB",
                peak >> 20
            );
            seconds.push(s);
            peaks.push(peak);
        }
        out.insert(
            name.to_string(),
            json!({
                "records": ENTERPRISES * (2 + assets + members),
                "assets": ENTERPRISES * assets,
                "employees": ENTERPRISES * members,
                "seed_bytes": text.len(),
                "seconds": seconds,
                "peak_bytes": peaks,
            }),
        );
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_document_has_the_sizes_asked() {
        let doc = document(3, 2);
        let enterprises = doc["enterprises"].as_array().unwrap();
        assert_eq!(enterprises.len(), ENTERPRISES);
        assert_eq!(enterprises[7]["assets"].as_array().unwrap().len(), 3);
        assert_eq!(enterprises[7]["members"].as_array().unwrap().len(), 2);
        assert_eq!(enterprises[7]["assets"][2]["key"], "e7a2");
        assert_eq!(enterprises[7]["customers"][0]["channelCustomerId"], "CC-7");
    }
}
