//! Building what the lab runs, and finding it where cargo put it.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::progress::step;

/// The benchmark binaries (the SDK's `benches/`).
pub const BENCHES: [&str; 5] = ["overhead", "batch", "paging", "reply", "bulk"];

/// The binaries the lab runs: package, binary and the features it needs. `bin` is
/// licensing-sim's binary feature (no other package here has one of that name;
/// `licensing-sim/bin` would name its dev-dependency on itself instead).
const BINS: [(&str, &str, Option<&str>); 4] = [
    ("licensing-sim", "licensing-sim", Some("bin")),
    ("licensing-proxy", "licensing-proxy", None),
    ("bench-load", "bench-load", None),
    ("licensing-cli", "licensing", None),
];

/// Where cargo put what the benchmark runs.
pub struct Binaries {
    pub target_dir: PathBuf,
    pub sim: PathBuf,
    /// The conformance proxy (`licensing-proxy`).
    pub proxy: PathBuf,
    /// The load generator and the bare hyper server (`bench-load`).
    pub load: PathBuf,
    /// The command line (`licensing`).
    pub cli: PathBuf,
    pub benches: HashMap<String, PathBuf>,
}

impl Binaries {
    /// Builds the simulator, the command line and the benchmarks in one cargo invocation (one feature set:
    /// every dependency compiled once) and reads their paths from cargo's JSON messages.
    /// The full run builds with the `bench` profile (release) and only the packages it
    /// runs, so that no test's dev-dependency turns a feature on in what is measured. The
    /// smoke run builds debug binaries with the whole workspace selected: the features
    /// `cargo test --workspace` unifies, so that after the tests (as in CI) it reuses
    /// every crate they compiled instead of compiling them all again under the
    /// packages' own features.
    pub fn build(root: &Path, smoke: bool) -> Result<Self> {
        let target_dir = target_dir(root)?;
        let profile = if smoke { "dev" } else { "bench" };
        step(&format!(
            "building licensing-sim, licensing-proxy, bench-load, licensing and the benchmarks ({profile} profile) in {}",
            target_dir.display()
        ));
        let mut args = vec![
            "build",
            "--profile",
            profile,
            "--message-format=json-render-diagnostics",
        ];
        if smoke {
            args.push("--workspace");
        } else {
            args.extend(["-p", "licensing-sdk"]);
        }
        for (package, bin, features) in BINS {
            if !smoke {
                args.extend(["-p", package]);
            }
            args.extend(["--bin", bin]);
            args.extend(features.into_iter().flat_map(|f| ["--features", f]));
        }
        for bench in BENCHES {
            args.extend(["--bench", bench]);
        }
        let out = Command::new(env!("CARGO"))
            .args(&args)
            .current_dir(root)
            .stderr(Stdio::inherit())
            .output()
            .context("running cargo build")?;
        if !out.status.success() {
            bail!("cargo {} failed", args.join(" "));
        }
        let mut bins = HashMap::new();
        let mut benches = HashMap::new();
        for line in out.stdout.split(|b| *b == b'\n') {
            let Ok(message) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if message["reason"] != "compiler-artifact" {
                continue;
            }
            let (Some(name), Some(exe)) = (
                message["target"]["name"].as_str(),
                message["executable"].as_str(),
            ) else {
                continue;
            };
            let kinds = message["target"]["kind"].as_array().cloned();
            let is = |k: &str| kinds.iter().flatten().any(|x| x == k);
            if is("bench") {
                benches.insert(name.to_string(), PathBuf::from(exe));
            } else if is("bin") {
                bins.insert(name.to_string(), PathBuf::from(exe));
            }
        }
        let found = |map: &mut HashMap<String, PathBuf>, name: &str| {
            map.remove(name)
                .with_context(|| format!("cargo reported no executable for `{name}`"))
        };
        let sim = found(&mut bins, "licensing-sim")?;
        let proxy = found(&mut bins, "licensing-proxy")?;
        let load = found(&mut bins, "bench-load")?;
        let cli = found(&mut bins, "licensing")?;
        for bench in BENCHES {
            if !benches.contains_key(bench) {
                bail!("cargo reported no executable for the `{bench}` benchmark");
            }
        }
        eprintln!("using {} (licensing-sim)", sim.display());
        eprintln!("using {} (licensing-proxy)", proxy.display());
        eprintln!("using {} (load generator, bare server)", load.display());
        eprintln!("using {} (command line)", cli.display());
        for bench in BENCHES {
            eprintln!("using {} (bench {bench})", benches[bench].display());
        }
        Ok(Self {
            target_dir,
            sim,
            proxy,
            load,
            cli,
            benches,
        })
    }
}

/// Cargo's target directory for this workspace (`CARGO_TARGET_DIR`, a configured
/// `build.target-dir`, or `target/`).
pub fn target_dir(root: &Path) -> Result<PathBuf> {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed");
    }
    let meta: Value = serde_json::from_slice(&out.stdout)?;
    Ok(PathBuf::from(
        meta["target_directory"]
            .as_str()
            .context("cargo metadata without target_directory")?,
    ))
}

/// Runs a benchmark binary (`--bench`: full measurement; without it, the smoke run) that
/// prints one JSON object on its last stdout line.
pub fn bench_json(
    bins: &Binaries,
    name: &str,
    smoke: bool,
    env: &[(&str, String)],
) -> Result<Value> {
    let exe = &bins.benches[name];
    let mut cmd = Command::new(exe);
    if !smoke {
        cmd.arg("--bench");
    }
    cmd.stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    if !out.status.success() {
        bail!("the {name} benchmark failed ({})", out.status);
    }
    let stdout = String::from_utf8(out.stdout)?;
    let line = stdout
        .lines()
        .rfind(|l| l.starts_with('{'))
        .context("bench printed no JSON")?;
    Ok(serde_json::from_str(line)?)
}
