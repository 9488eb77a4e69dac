//! oha, the established load generator: the throughput figures measured again by an
//! outside tool, and the warm-up of the servers loaded on their own (one server per run is
//! what oha does).

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::APP_TOKEN;
use crate::lab::Lab;
use crate::load::{Endpoint, LOAD_CONNECTIONS};
use crate::results::WarmUp;
use crate::stats::f;

/// Rounds of oha runs per endpoint (each server once per round).
pub const OHA_ROUNDS: usize = 3;

/// Warm-up runs of 1 s, on one server alone: at least `min`, at most `max`, ending once
/// `patience` runs in a row were none more than 5% faster than the fastest before them.
/// WireMock's JVM keeps compiling for some 20 s of load, with runs a third slower than
/// the best between its gains on a busy machine: a shorter patience stops it half-way.
pub const WARM_UP: WarmUp = WarmUp {
    min: 10,
    max: 40,
    patience: 5,
};

/// [`WARM_UP`] for `--quick`, which tries the pipeline.
pub const WARM_UP_QUICK: WarmUp = WarmUp {
    min: 3,
    max: 10,
    patience: 2,
};

/// oha, the established load generator the throughput figures are checked with (its
/// oha's version, pinned (its default features: it does not build without a TLS
/// library).
pub const OHA_VERSION: &str = "1.16.0";

/// `cargo install` of oha into the target directory, running in the background; its
/// build directory is removed once it is installed.
pub struct OhaInstall {
    cargo: Child,
    build_dir: PathBuf,
}

impl OhaInstall {
    fn root(target_dir: &Path) -> PathBuf {
        target_dir.join("bench-tools")
    }

    pub fn bin(target_dir: &Path) -> PathBuf {
        Self::root(target_dir).join("bin/oha")
    }

    /// Starts the install; `None` when this version is installed already.
    pub fn start(target_dir: &Path) -> Result<Option<Self>> {
        let bin = Self::bin(target_dir);
        let installed = Command::new(&bin).arg("--version").output().is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout).trim() == format!("oha {OHA_VERSION}")
        });
        if installed {
            return Ok(None);
        }
        let root = Self::root(target_dir);
        let build_dir = root.join("build");
        eprintln!("installing oha {OHA_VERSION} into {}", root.display());
        let cargo = Command::new(env!("CARGO"))
            .args(["install", "--quiet", "--locked", "--force"])
            .args(["--version", &format!("={OHA_VERSION}"), "--root"])
            .arg(&root)
            .arg("oha")
            .env("CARGO_TARGET_DIR", &build_dir)
            // Outside the workspace: its configuration is not oha's.
            .current_dir(target_dir)
            .stdin(Stdio::null())
            .spawn()
            .context("running cargo install oha")?;
        Ok(Some(Self { cargo, build_dir }))
    }

    pub fn wait(mut self) -> Result<()> {
        if !self.cargo.wait()?.success() {
            bail!(
                "cargo could not install oha {OHA_VERSION}; the load-generator cross-check needs it"
            );
        }
        let _ = std::fs::remove_dir_all(&self.build_dir);
        Ok(())
    }
}

/// Loads `endpoint` of the server at `url` alone with oha, in runs of 1 s, until its rate
/// levels off (see [`WARM_UP`]); the runs it took.
pub fn warm_up(lab: &Lab, url: &str, endpoint: Endpoint, rule: &WarmUp) -> Result<usize> {
    let oha = OhaInstall::bin(&lab.bins.target_dir);
    let (mut best, mut flat) = (0.0_f64, 0);
    for run in 1..=rule.max {
        let rps = f(&oha_load(lab, &oha, url, endpoint, 1)?["rps"]);
        if rps > best * 1.05 {
            flat = 0;
        } else {
            flat += 1;
        }
        best = best.max(rps);
        if run >= rule.min && flat >= rule.patience {
            return Ok(run);
        }
    }
    Ok(rule.max)
}

/// The regular expression oha draws each request's URL from (`--rand-regex-url`): `url`
/// with every `{nonce}` a fresh 32-digit hexadecimal `g_nonce` and the rest taken
/// literally (oha itself takes dots literally).
fn oha_url_pattern(url: &str) -> String {
    let mut pattern = String::with_capacity(url.len() + 16);
    for (i, part) in url.split("{nonce}").enumerate() {
        if i > 0 {
            pattern.push_str("[0-9a-f]{32}");
        }
        for c in part.chars() {
            if "\\+*?()|[]{}^$".contains(c) {
                pattern.push('\\');
            }
            pattern.push(c);
        }
    }
    pattern
}

/// One oha run on `endpoint` of the server at `base`: 16 connections on one worker
/// thread, `seconds` long, as `bench-load` loads it; every request with a fresh
/// `g_nonce`. Returns `{rps, p50_us, p99_us, requests, non_200}`: `rps` counts the
/// answers received (oha's own figure also counts the requests cut off at the end).
pub fn oha_load(
    lab: &Lab,
    oha: &Path,
    base: &str,
    endpoint: Endpoint,
    seconds: u64,
) -> Result<Value> {
    let (id, params, body) = endpoint.request();
    let (method, path) = lab.operation(id)?;
    let mut cmd = Command::new(oha);
    cmd.args(["--no-tui", "--output-format", "json", "--rand-regex-url"])
        .args([
            "-z",
            &format!("{seconds}s"),
            "-c",
            &LOAD_CONNECTIONS.to_string(),
            "--worker-threads",
            "1",
        ])
        .args(["-m", &method])
        .args(["-H", &format!("authorization: Bearer {APP_TOKEN}")])
        .args(["-H", "content-type: application/json"]);
    if let Some(body) = body {
        cmd.args(["-d", body]);
    }
    cmd.arg(oha_url_pattern(&format!("{base}{path}?{params}")));
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("running oha")?;
    if !out.status.success() {
        bail!("oha failed ({})", out.status);
    }
    let r: Value = serde_json::from_slice(&out.stdout).context("oha's JSON summary")?;
    let statuses = r["statusCodeDistribution"]
        .as_object()
        .context("oha's JSON without statusCodeDistribution")?;
    let answered: u64 = statuses.values().filter_map(Value::as_u64).sum();
    let ok = statuses.get("200").and_then(Value::as_u64).unwrap_or(0);
    let us = |p: &str| f(&r["latencyPercentiles"][p]) * 1e6;
    Ok(json!({
        "rps": answered as f64 / f(&r["summary"]["total"]),
        "p50_us": us("p50"), "p99_us": us("p99"),
        "requests": answered, "non_200": answered - ok,
    }))
}

#[cfg(test)]
mod tests {
    use super::oha_url_pattern;

    #[test]
    fn the_nonce_is_drawn_and_the_rest_taken_literally() {
        assert_eq!(
            oha_url_pattern("http://127.0.0.1:1/a?x=(1)&g_nonce={nonce}"),
            r"http://127.0.0.1:1/a\?x=\(1\)&g_nonce=[0-9a-f]{32}"
        );
        assert_eq!(oha_url_pattern("http://h/b"), "http://h/b");
    }
}
