//! A fresh sandbox per test: how long a test waits for a stub server of its own, from
//! the moment it asks for one to the first request answered, and to a seeded state.
//!
//! * `licensing_sandbox` (Python) and `startSandbox` (Node), installed from the packages of
//!   `<target>/dist` (`licensing-clients dist --binaries`, from the binaries this run
//!   built) into a venv and an npm project of their own, each timed inside a driver
//!   process that stays up across rounds, as a test process would: `Sandbox.start()`
//!   and `startSandbox()` return once the simulator answered a request and its state is
//!   checkpointed; with the `demo` seed, once that seed is loaded too.
//! * WireMock's standalone jar and Prism, started as the throughput comparison starts
//!   them, timed here from the spawn to the first answer: WireMock with an empty
//!   `mappings/` (any answer counts, a 404 included), and with the stubs of the two
//!   loaded operations (their example answered); Prism serves the spec's examples from
//!   the start, so its one time is its first example answered and stands for both.
//!
//! The rounds run every side in turn, so that the machine's drift falls on all of them;
//! the ratios are per round.

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::http::request;
use crate::lab::Lab;
use crate::load::Endpoint;
use crate::peers::{self, WIREMOCK_VERSION};
use crate::servers::{free_port, prism_command};

/// Rounds of every side: a full run's, a quick one's (a smoke run does one).
const ROUNDS: usize = 10;
const QUICK_ROUNDS: usize = 3;
/// The longest a side may take to answer before the run fails.
const START_LIMIT: Duration = Duration::from_secs(60);

/// The Python driver: for each line on stdin (`-` or a seed name), `Sandbox.start` timed,
/// then stopped; prints the seconds.
const PYTHON_DRIVER: &str = r#"import sys, time
from licensing_sandbox import Sandbox
for line in sys.stdin:
    seed = line.strip()
    began = time.perf_counter()
    sandbox = Sandbox.start(seed=None if seed == "-" else seed)
    took = time.perf_counter() - began
    sandbox.stop()
    print(took, flush=True)
"#;

/// The Node driver, the same with `startSandbox`.
const NODE_DRIVER: &str = r#"import { createInterface } from "node:readline";
import { startSandbox } from "licensing-sandbox";
for await (const line of createInterface({ input: process.stdin })) {
  const seed = line.trim();
  const began = performance.now();
  const sandbox = await startSandbox(seed === "-" ? {} : { seed });
  const took = (performance.now() - began) / 1000;
  await sandbox.stop();
  console.log(took);
}
"#;

/// Every side's seconds, round by round: `{rounds, python: {first, seeded}, node: {…},
/// wiremock: {first, seeded}, prism: {first}, versions}` (no WireMock or Prism in a smoke
/// run).
pub fn measure(lab: &Lab) -> Result<Value> {
    let smoke = lab.options.smoke;
    let rounds = match (smoke, lab.options.quick) {
        (true, _) => 1,
        (false, true) => QUICK_ROUNDS,
        (false, false) => ROUNDS,
    };
    let dir = lab.bins.target_dir.join("bench-fresh");
    let dist = packages(lab)?;
    let (mut python, mut node) = install(&dist, &dir)?;
    let wiremock_roots = if smoke {
        None
    } else {
        let (read, _, _) = Endpoint::Read.request();
        let (write, _, _) = Endpoint::Write.request();
        Some((
            peers::wiremock_root(&lab.specs, &[], &dir.join("wiremock-empty"))?,
            peers::wiremock_root(&lab.specs, &[read, write], &dir.join("wiremock-stubs"))?,
        ))
    };
    let mut sides: Vec<(&str, &str, Vec<f64>)> = Vec::new();
    let mut record = |side: &'static str, phase: &'static str, seconds: f64| {
        match sides.iter_mut().find(|(s, p, _)| *s == side && *p == phase) {
            Some((_, _, runs)) => runs.push(seconds),
            None => sides.push((side, phase, vec![seconds])),
        }
        eprintln!("{side} {phase}: {seconds:.3} s");
    };
    for round in 1..=rounds {
        eprintln!("round {round} of {rounds}");
        for (phase, seed) in [("first", "-"), ("seeded", "demo")] {
            record("python", phase, python.time(seed)?);
            record("node", phase, node.time(seed)?);
        }
        if let Some((empty, stubs)) = &wiremock_roots {
            record("wiremock", "first", wiremock(lab, empty, false)?);
            record("wiremock", "seeded", wiremock(lab, stubs, true)?);
            record("prism", "first", prism(lab)?);
        }
    }
    python.end()?;
    node.end()?;
    let mut out = serde_json::Map::new();
    for (side, phase, runs) in sides {
        out.entry(side)
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .context("a side's record")?
            .insert(phase.into(), json!(runs));
    }
    out.insert("rounds".into(), json!(rounds));
    out.insert(
        "versions".into(),
        json!({
            "python": version("python3", "--version"),
            "node": version("node", "--version"),
            "wiremock": WIREMOCK_VERSION,
            "java": if smoke { String::new() } else { peers::java_version()? },
        }),
    );
    Ok(Value::Object(out))
}

/// The packages of `<target>/dist`, built from this run's binaries by `licensing-clients
/// dist --binaries` (the smoke run takes them as they are when they are there: CI's
/// check made them from its test build).
fn packages(lab: &Lab) -> Result<PathBuf> {
    let dist = lab.bins.target_dir.join("dist");
    if lab.options.smoke && sandbox_wheel(&dist).is_ok() {
        eprintln!("the packages of {}, as they are", dist.display());
        return Ok(dist);
    }
    let binaries = lab.bins.sim.parent().context("the simulator's directory")?;
    let status = Command::new(env!("CARGO"))
        .args([
            "run",
            "--locked",
            "-q",
            "-p",
            "licensing-clients",
            "--",
            "dist",
        ])
        .arg("--binaries")
        .arg(binaries)
        .current_dir(lab.root)
        .status()
        .context("running licensing-clients dist")?;
    if !status.success() {
        bail!(
            "licensing-clients dist --binaries {} failed",
            binaries.display()
        );
    }
    Ok(dist)
}

fn sandbox_wheel(dist: &Path) -> Result<PathBuf> {
    package(dist, "licensing_sandbox-", ".whl")
}

/// The one file of `dist` named `prefix…suffix` (the version between them).
fn package(dist: &Path, prefix: &str, suffix: &str) -> Result<PathBuf> {
    let found: Vec<PathBuf> = std::fs::read_dir(dist)
        .with_context(|| format!("reading {}", dist.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(prefix)?.strip_suffix(suffix))
                .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
        })
        .collect();
    match <[PathBuf; 1]>::try_from(found) {
        Ok([one]) => Ok(one),
        Err(found) => bail!(
            "expected one {prefix}*{suffix} in {}, found {}",
            dist.display(),
            found.len()
        ),
    }
}

/// A fresh venv with the wheel (and licensing-client, its dependency) and a fresh npm
/// project with the tarballs, from `dist` alone; their drivers started.
fn install(dist: &Path, dir: &Path) -> Result<(Driver, Driver)> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let venv = dir.join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    let python = venv.join("bin").join("python");
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--no-index", "--find-links"])
        .arg(dist)
        .arg("--find-links")
        .arg(dist.join("wheelhouse"))
        .arg(sandbox_wheel(dist)?))?;
    let project = dir.join("node");
    std::fs::create_dir_all(&project)?;
    std::fs::write(
        project.join("package.json"),
        "{\"name\": \"bench-fresh\", \"private\": true, \"type\": \"module\"}\n",
    )?;
    let mut npm = Command::new("npm");
    npm.args([
        "install",
        "--offline",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]);
    for name in [
        "licensing-sandbox-linux-x64-",
        "licensing-sandbox-",
        "licensing-client-",
    ] {
        npm.arg(package(dist, name, ".tgz")?);
    }
    run(npm.current_dir(&project))?;
    std::fs::write(dir.join("driver.py"), PYTHON_DRIVER)?;
    std::fs::write(project.join("driver.mjs"), NODE_DRIVER)?;
    let python = Driver::start(Command::new(python).arg(dir.join("driver.py")), "Python")?;
    let node = Driver::start(
        Command::new("node").arg("driver.mjs").current_dir(&project),
        "Node",
    )?;
    Ok((python, node))
}

/// A driver process: a seed name in, the seconds its sandbox took out.
struct Driver {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    what: &'static str,
}

impl Driver {
    fn start(command: &mut Command, what: &'static str) -> Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting the {what} driver"))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().context("the driver's stdout")?);
        Ok(Self {
            child,
            stdin,
            stdout,
            what,
        })
    }

    fn time(&mut self, seed: &str) -> Result<f64> {
        let stdin = self.stdin.as_mut().context("the driver's stdin")?;
        writeln!(stdin, "{seed}")?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        line.trim()
            .parse()
            .with_context(|| format!("the {} driver answered {line:?}, not seconds", self.what))
    }

    /// Closes its stdin, which ends it, and checks it ended well.
    fn end(mut self) -> Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        if !status.success() {
            bail!("the {} driver ended with {status}", self.what);
        }
        Ok(())
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// WireMock's jar on `root`, timed from the spawn to its first answer to the read
/// endpoint's request: any answer, or (`stubbed`) the stub's.
fn wiremock(lab: &Lab, root: &Path, stubbed: bool) -> Result<f64> {
    let port = free_port()?;
    let command = peers::wiremock_command(&lab.bins.target_dir, root, port)?;
    until_answered(command, port, "WireMock", lab, stubbed)
}

/// Prism on the order spec, timed from the spawn to its first example answered.
fn prism(lab: &Lab) -> Result<f64> {
    let port = free_port()?;
    let command = prism_command(lab.root, &lab.bins.target_dir, port);
    until_answered(command, port, "Prism", lab, true)
}

/// Spawns `command` and polls the read endpoint every 5 ms until it answers (with HTTP
/// 200 when `success`); the seconds from the spawn, the process killed after.
fn until_answered(
    mut command: Command,
    port: u16,
    what: &str,
    lab: &Lab,
    success: bool,
) -> Result<f64> {
    let (id, params, _) = Endpoint::Read.request();
    let (method, path) = lab.operation(id)?;
    let target = format!("{path}?{}", params.replace("{nonce}", "bench-fresh"));
    let url = format!("127.0.0.1:{port}");
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {what}"))?;
    let outcome = loop {
        match request(&format!("http://{url}"), &method, &target, None) {
            Ok((status, _, _)) if !success || status == 200 => {
                break Ok(started.elapsed().as_secs_f64());
            }
            _ if started.elapsed() > START_LIMIT => {
                break Err(anyhow::anyhow!(
                    "{what} did not answer {method} {target} within {} s",
                    START_LIMIT.as_secs()
                ));
            }
            _ => {}
        }
        if let Some(status) = child.try_wait()? {
            break Err(anyhow::anyhow!("{what} exited early: {status}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

fn run(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("running {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(())
}

fn version(program: &str, flag: &str) -> String {
    Command::new(program)
        .arg(flag)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}
