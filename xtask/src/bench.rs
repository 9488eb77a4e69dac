//! `cargo xtask bench`: every comparison run side by side in one run on this machine, then
//! `BENCHMARKS.md` and `benches/batch-scale.svg` written from the measurements.
//!
//! | what | baseline | how |
//! |---|---|---|
//! | SDK call overhead | hand-written reqwest + serde_json, same server, same process | `benches/overhead.rs` |
//! | simulator throughput | Prism (mock of the same spec) and a bare hyper server (the ceiling) | `licensing-sim`, `prism mock`, `bench-load bare-server`, each loaded by `bench-load load` from another process |
//! | batch, client side | bare `serde_json` serialize + parse of the same request and reply | `benches/batch.rs`, no network |
//! | batch, simulator side | a bare handler parsing the same body into the same types | `benches/batch.rs` against `licensing-sim` and `batch --bare-server` |
//! | batch, round trip | bare `serde_json` serialize + parse of the same request | `benches/batch.rs` against `licensing-sim` |
//! | paging | the same stream at a tenth of the size | `benches/paging.rs` against `licensing-sim` |
//! | a hostile reply's peak heap | the reply's size (target ≤ 3×) | `benches/reply.rs` against a server thread of its own |
//! | build cost | targets (≤ 1 s generation, ≤ 10 s rebuild) | `build.rs`'s own timing; with `--build-cost`, debug `cargo build`s timed |
//!
//! Every binary is found where cargo put it (its JSON build messages; `cargo metadata`'s
//! `target_directory` for the rest), so `CARGO_TARGET_DIR` is honoured. `--smoke` builds
//! the debug binaries, starts every server, runs each path once at its smallest size and
//! checks the results, without timing anything or writing a file.

use std::{
    collections::HashMap,
    fmt::Write as _,
    io::{BufRead, BufReader},
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

pub struct Options {
    /// Shorter load phases (for trying the pipeline, not for publishing numbers).
    pub quick: bool,
    /// Also time the debug builds (clean build and rebuild after touching a spec): they
    /// need a second full build, in the dev profile (minutes on two cores).
    pub build_cost: bool,
    /// Set-up and correctness only: debug binaries, smallest sizes, no Prism, no file
    /// written.
    pub smoke: bool,
}

const APP_TOKEN: &str = "sim-app-token";
/// The query string of the read load (`queryEnterprise`); the path comes from the spec.
const QUERY_PARAMS: &str =
    "channelCode=CH01&channelCustomerId=CC-42&defaultCustomer=N&g_nonce={nonce}";
/// The query string of the write load (`allocateShellNums`).
const SHELLNUMS_PARAMS: &str = "g_nonce={nonce}";
/// The benchmark binaries (`benches/*.rs`).
const BENCHES: [&str; 4] = ["overhead", "batch", "paging", "reply"];
/// Employees the paging benchmark adds to one enterprise, at most.
const PAGING_MEMBERS: &str = "100000";

pub fn run(root: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let mut report = Report::default();
    step(if options.smoke {
        "benchmark set-up check (--smoke)"
    } else {
        "benchmarks"
    });

    // Prism comes from npm: fetched while cargo builds (network and disk, little CPU).
    let prism = if options.smoke {
        None
    } else {
        PrismInstall::start(&target_dir(root)?)?
    };
    let bins = Binaries::build(root, options.smoke)?;

    step("1. SDK call overhead");
    let overhead = bench_json(&bins, "overhead", options.smoke, &[])?;
    report.overhead(&overhead);

    step("2. simulator throughput");
    if let Some(install) = prism {
        install.wait()?;
    }
    throughput(root, &bins, options, &mut report)?;

    step("3. batch order: client side, simulator side, round trip");
    let sim = Server::licensing_sim(&bins, &[])?;
    let batch = bench_json(
        &bins,
        "batch",
        options.smoke,
        &[("LICENSING_SIM_URL", sim.url.clone())],
    )?;
    drop(sim);
    report.batch(&batch);

    step("4. paging");
    // One seed makes every employee: past the simulator's default bounds for seeds.
    let sim = Server::licensing_sim(
        &bins,
        &[
            "--trial-member-limit",
            PAGING_MEMBERS,
            "--max-seed-records",
            "1000000",
            "--max-seed-bytes",
            "268435456",
        ],
    )?;
    let paging = bench_json(
        &bins,
        "paging",
        options.smoke,
        &[("LICENSING_SIM_URL", sim.url.clone())],
    )?;
    drop(sim);
    report.paging(&paging);

    step("5. a hostile reply's peak heap");
    let reply = bench_json(&bins, "reply", options.smoke, &[])?;
    report.reply(&reply);

    if options.smoke {
        eprintln!(
            "\nsmoke run passed in {:.0} s: every benchmark path ran once (no file written)",
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    chart(root, &batch)?;

    step("6. build cost");
    build_cost(root, &bins.target_dir, options, &mut report)?;

    let mut text = report.render(started.elapsed());
    // A section measured by its own job (`cargo xtask partner-build`) is kept as it is.
    if let Ok(old) = std::fs::read_to_string(root.join("BENCHMARKS.md"))
        && let Some(section) = crate::partner_build::existing_section(&old)
    {
        text = crate::partner_build::replace_section(&text, &format!("{section}\n"));
    }
    std::fs::write(root.join("BENCHMARKS.md"), &text)?;
    println!("\n{text}");
    Ok(())
}

fn step(what: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let at = START.get_or_init(Instant::now).elapsed().as_secs();
    eprintln!("\n==> [{at} s] {what}");
}

// ------------------------------------------------------------------------- binaries

/// Where cargo put what the benchmark runs.
struct Binaries {
    target_dir: PathBuf,
    sim: PathBuf,
    /// The load generator and the bare hyper server (`bench-load`).
    load: PathBuf,
    benches: HashMap<String, PathBuf>,
}

impl Binaries {
    /// Builds the simulator and the benchmarks in one cargo invocation (one feature set:
    /// every dependency compiled once) and reads their paths from cargo's JSON messages.
    /// The full run builds with the `bench` profile (release), the smoke run debug
    /// binaries.
    fn build(root: &Path, smoke: bool) -> Result<Self> {
        let target_dir = target_dir(root)?;
        let profile = if smoke { "dev" } else { "bench" };
        step(&format!(
            "building licensing-sim, bench-load and the benchmarks ({profile} profile) in {}",
            target_dir.display()
        ));
        let mut args = vec![
            "build",
            "--profile",
            profile,
            "--message-format=json-render-diagnostics",
            "-p",
            "licensing-sdk",
            "-p",
            "licensing-sim",
            "--bin",
            "licensing-sim",
            "-p",
            "bench-load",
            "--bin",
            "bench-load",
        ];
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
        let load = found(&mut bins, "bench-load")?;
        for bench in BENCHES {
            if !benches.contains_key(bench) {
                bail!("cargo reported no executable for the `{bench}` benchmark");
            }
        }
        eprintln!("using {} (licensing-sim)", sim.display());
        eprintln!("using {} (load generator, bare server)", load.display());
        for bench in BENCHES {
            eprintln!("using {} (bench {bench})", benches[bench].display());
        }
        Ok(Self {
            target_dir,
            sim,
            load,
            benches,
        })
    }
}

/// Cargo's target directory for this workspace (`CARGO_TARGET_DIR`, a configured
/// `build.target-dir`, or `target/`).
fn target_dir(root: &Path) -> Result<PathBuf> {
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
fn bench_json(bins: &Binaries, name: &str, smoke: bool, env: &[(&str, String)]) -> Result<Value> {
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

// ------------------------------------------------------------------------- servers

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("{what} exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!("{what} did not listen on port {port} within 60 s")
}

impl Server {
    /// `licensing-sim` as a user starts it (default settings), plus `extra` flags.
    fn licensing_sim(bins: &Binaries, extra: &[&str]) -> Result<Self> {
        let mut child = Command::new(&bins.sim)
            .args(["--addr", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", bins.sim.display()))?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .with_context(|| format!("unexpected first line from licensing-sim: {line:?}"))?
            .to_string();
        Ok(Self { child, url })
    }

    fn bare(bins: &Binaries) -> Result<Self> {
        let port = free_port()?;
        let mut child = Command::new(&bins.load)
            .args(["bare-server", "--port", &port.to_string()])
            .spawn()
            .context("starting the bare server")?;
        wait_for_port(port, &mut child, "bare server")?;
        Ok(Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }

    fn prism(root: &Path, bins: &Binaries) -> Result<Self> {
        // `run` has it installed while cargo builds; anything else installs it here.
        if let Some(install) = PrismInstall::start(&bins.target_dir)? {
            install.wait()?;
        }
        let bin = PrismInstall::bin(&bins.target_dir);
        let port = free_port()?;
        let mut child = Command::new(bin)
            .args([
                "mock",
                "spec/order.yaml",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .current_dir(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting prism")?;
        wait_for_port(port, &mut child, "prism")?;
        Ok(Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }
}

/// `npm install` of Prism into the target directory, running in the background.
struct PrismInstall {
    npm: Child,
}

impl PrismInstall {
    fn prefix(target_dir: &Path) -> PathBuf {
        target_dir.join("bench-node")
    }

    fn bin(target_dir: &Path) -> PathBuf {
        Self::prefix(target_dir).join("node_modules/.bin/prism")
    }

    /// Starts the install; `None` when Prism is installed already.
    fn start(target_dir: &Path) -> Result<Option<Self>> {
        if Self::bin(target_dir).exists() {
            return Ok(None);
        }
        let prefix = Self::prefix(target_dir);
        eprintln!("installing @stoplight/prism-cli into {}", prefix.display());
        let npm = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg("@stoplight/prism-cli@5")
            .stdin(Stdio::null())
            .spawn()
            .context("running npm (Node.js and npm are needed for the Prism comparison)")?;
        Ok(Some(Self { npm }))
    }

    fn wait(mut self) -> Result<()> {
        if !self.npm.wait()?.success() {
            bail!("npm could not install @stoplight/prism-cli; the Prism comparison needs it");
        }
        Ok(())
    }
}

// ------------------------------------------------------------------------- throughput

#[derive(Clone, Copy)]
enum Endpoint {
    Read,
    Write,
}

/// `bench-load load` on `endpoint` of each server in `urls`, in turn in slices of
/// [`SLICE_MS`], `seconds` each; one summary per server, in order.
fn load(
    root: &Path,
    bins: &Binaries,
    urls: &[&str],
    endpoint: Endpoint,
    seconds: u64,
) -> Result<Vec<Value>> {
    let (id, params, body) = match endpoint {
        Endpoint::Read => ("queryEnterprise", QUERY_PARAMS, None),
        Endpoint::Write => ("allocateShellNums", SHELLNUMS_PARAMS, Some(r#"{"size":1}"#)),
    };
    let (method, path) = crate::spec::operation(root, id)?;
    let path = format!("{path}?{params}");
    let (method, path) = (method.as_str(), path.as_str());
    let mut cmd = Command::new(&bins.load);
    cmd.args([
        "load",
        "--method",
        method,
        "--seconds",
        &seconds.to_string(),
        "--slice-ms",
        &SLICE_MS.to_string(),
        "--concurrency",
        "16",
    ]);
    for url in urls {
        cmd.arg("--url").arg(format!("{url}{path}"));
    }
    cmd.args(["--header", &format!("authorization: Bearer {APP_TOKEN}")])
        .args(["--header", "content-type: application/json"]);
    if let Some(body) = body {
        cmd.args(["--body", body]);
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .context("running the load generator")?;
    if !out.status.success() {
        bail!("load generator failed");
    }
    Ok(match serde_json::from_slice(&out.stdout)? {
        Value::Array(all) => all,
        one => vec![one],
    })
}

/// How long the load generator stays on one server before the next one's turn.
const SLICE_MS: u64 = 100;

/// Every server runs at once (an idle one costs nothing) and they are loaded in turn, in
/// short rounds: each round loads every server once, so a ratio compares runs seconds
/// apart, and a machine that slows down for a while (shared CPUs do) spoils one round,
/// not one server's whole measurement. Ratios are the median of the rounds' ratios.
fn throughput(root: &Path, bins: &Binaries, options: &Options, report: &mut Report) -> Result<()> {
    let (rounds, seconds) = match (options.smoke, options.quick) {
        (true, _) => (1, 1),
        (false, true) => (2, 1),
        (false, false) => (5, 2),
    };
    let sim = Server::licensing_sim(bins, &[])?;
    let bare = Server::bare(bins)?;
    let prism = if options.smoke {
        None
    } else {
        Some(Server::prism(root, bins)?)
    };
    bind_customer(&sim.url)?;
    let mut results = serde_json::Map::new();
    for (label, endpoint) in [("read", Endpoint::Read), ("write", Endpoint::Write)] {
        // A short warm-up lets every server open connections and fill caches.
        if !options.smoke {
            let mut urls = vec![sim.url.as_str(), bare.url.as_str()];
            urls.extend(prism.iter().map(|p| p.url.as_str()));
            load(root, bins, &urls, endpoint, 1)?;
        }
        let (mut ours, mut bare_runs, mut prism_runs) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            // The simulator and the bare server take turns, slice by slice; every other
            // round the bare server starts.
            let sim_first = round % 2 == 0;
            let urls = if sim_first {
                [sim.url.as_str(), bare.url.as_str()]
            } else {
                [bare.url.as_str(), sim.url.as_str()]
            };
            let got = load(root, bins, &urls, endpoint, seconds)?;
            let [first, second] = <[Value; 2]>::try_from(got)
                .map_err(|got| anyhow::anyhow!("{} load results, not 2", got.len()))?;
            let (s, b) = if sim_first {
                (first, second)
            } else {
                (second, first)
            };
            let mut measured = vec![("licensing-sim", s), ("bare hyper", b)];
            // Prism runs on its own: a server taking turns with it meets the work Prism's
            // runtime leaves behind after its slices (the simulator was about 10% slower
            // after Prism than after the bare server).
            if let Some(prism) = &prism {
                let got = load(root, bins, &[prism.url.as_str()], endpoint, seconds)?;
                measured.push(("prism", got.into_iter().next().unwrap_or_default()));
            }
            for (name, r) in &measured {
                eprintln!("{name} {label}, round {}: {r}", round + 1);
                if options.smoke && (r["requests"] == 0 || r["errors"] != 0) {
                    bail!("{name} {label}: the load run failed: {r}");
                }
            }
            let mut measured = measured.into_iter().map(|(_, r)| r);
            ours.extend(measured.next());
            bare_runs.extend(measured.next());
            prism_runs.extend(measured.next());
        }
        let rounds_of = |rs: &[Value]| rs.iter().map(|r| f(&r["rps"]).round()).collect::<Vec<_>>();
        for (name, runs) in [
            ("licensing-sim", &ours),
            ("bare hyper", &bare_runs),
            ("prism", &prism_runs),
        ] {
            let pick = |key: &str| median(runs.iter().map(|r| f(&r[key])).collect());
            let sum = |key: &str| runs.iter().map(|r| f(&r[key])).sum::<f64>();
            // Each round's simulator run against the other's in the same round.
            let ratio = median(
                ours.iter()
                    .zip(runs)
                    .map(|(s, o)| f(&s["rps"]) / f(&o["rps"]))
                    .collect(),
            );
            results.insert(
                format!("{name}/{label}"),
                json!({
                    "rps": pick("rps"), "p99_us": pick("p99_us"),
                    "requests": sum("requests"), "errors": sum("errors"),
                    "sim_ratio": ratio,
                    "rounds": rounds_of(runs),
                }),
            );
        }
    }
    report.throughput(&Value::Object(results), rounds, seconds);
    Ok(())
}

/// The median (the mean of the middle two for an even count).
fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len().is_multiple_of(2) {
        (xs[mid - 1] + xs[mid]) / 2.0
    } else {
        xs[mid]
    }
}

/// The read endpoint answers a real customer list, not an empty one.
fn bind_customer(url: &str) -> Result<()> {
    let body = json!({
        "channelCode": "CH01", "channelCustomerId": "CC-42", "customerName": "Acme Robotics",
        "branchName": "North", "enterpriseName": "Acme Robotics", "passwordMobile": "13800000000"
    });
    let url = format!(
        "{url}/order/api/order/v1/enterprise/user/bind?g_nonce=bench-setup-{}",
        std::process::id()
    );
    let reply = post_json(&url, &body)?;
    if reply["code"] != 0 {
        bail!("could not bind the benchmark customer: {reply}");
    }
    Ok(())
}

/// One JSON POST with the benchmark's token over a connection of its own (HTTP/1.1,
/// `Connection: close`); the reply body as JSON. Only for set-up calls, so std's sockets
/// are enough.
fn post_json(url: &str, body: &Value) -> Result<Value> {
    use std::io::{Read, Write};
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("not an http:// URL: {url}"))?;
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let body = body.to_string();
    let mut stream =
        std::net::TcpStream::connect(host).with_context(|| format!("connecting to {host}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "POST {target} HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {APP_TOKEN}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    // A set-up reply is a few hundred bytes; anything past 1 MiB is not one.
    let mut reply = Vec::new();
    stream.take(1 << 20).read_to_end(&mut reply)?;
    let text = String::from_utf8(reply).context("a reply that is not UTF-8")?;
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .with_context(|| format!("no complete reply from {url}: {text:?}"))?;
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .with_context(|| format!("a reply without content-length from {url}: {head}"))?;
    let body = rest
        .get(..length)
        .with_context(|| format!("a reply shorter than its content-length from {url}"))?;
    Ok(serde_json::from_str(body)?)
}

// ------------------------------------------------------------------------- build cost

/// Generation time, read from the benchmark build (the build script and the generator
/// it runs are built alike in every profile: unoptimized). With `--build-cost`, also the
/// debug builds: a clean build of the crate in a directory of its own, then its rebuild
/// there after touching a spec. They are a second full build of every dependency, in the
/// dev profile: about two more minutes on two cores.
fn build_cost(
    root: &Path,
    target_dir: &Path,
    options: &Options,
    report: &mut Report,
) -> Result<()> {
    let generation = newest_generation_ms(&target_dir.join("release/build"))?;
    if !options.build_cost {
        report.build(generation, None);
        return Ok(());
    }
    let dir = target_dir.join("bench-clean");
    let build = || -> Result<Duration> {
        let t = Instant::now();
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet"])
            .env("CARGO_TARGET_DIR", &dir)
            .current_dir(root)
            .status()
            .context("running cargo build")?;
        if !status.success() {
            bail!("cargo build failed (target directory {})", dir.display());
        }
        Ok(t.elapsed())
    };
    let _ = std::fs::remove_dir_all(&dir);
    let clean = build()?;
    let spec = root.join("spec/order.yaml");
    let text = std::fs::read(&spec)?;
    std::fs::write(&spec, &text)?; // a touch: new mtime, same content
    let rebuild = build()?;
    let _ = std::fs::remove_dir_all(&dir);
    report.build(generation, Some((rebuild, clean)));
    Ok(())
}

/// The SDK's `build.rs` writes how long generation took; the newest such file is the last
/// build's. (The simulator's build script generates its admin client and writes one too.)
fn newest_generation_ms(build_dir: &Path) -> Result<u64> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in
        std::fs::read_dir(build_dir).with_context(|| format!("reading {}", build_dir.display()))?
    {
        let entry = entry?;
        if !entry
            .file_name()
            .to_string_lossy()
            .starts_with("licensing-sdk-")
        {
            continue;
        }
        let file = entry.path().join("out/generation-ms.txt");
        if let Ok(meta) = file.metadata() {
            let modified = meta.modified()?;
            if newest.as_ref().is_none_or(|(t, _)| modified > *t) {
                newest = Some((modified, file));
            }
        }
    }
    let (_, file) =
        newest.with_context(|| format!("no generation-ms.txt under {}", build_dir.display()))?;
    Ok(std::fs::read_to_string(file)?.trim().parse()?)
}

// ------------------------------------------------------------------------- chart

fn chart(root: &Path, batch: &Value) -> Result<()> {
    use plotters::prelude::*;
    let rows = batch["sizes"].as_array().context("batch sizes")?;
    // Milliseconds per size; sizes without a measurement (refused) are left out.
    let points = |part: &str, key: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .filter_map(|r| Some((r["orders"].as_f64()?, r[part][key].as_f64()? / 1000.0)))
            .collect()
    };
    let series = [
        (
            "round trip: SDK → simulator → SDK",
            points("round_trip", "sdk_us"),
            RED,
        ),
        (
            "time in the simulator (HTTP, one connection)",
            points("sim", "sim_us"),
            MAGENTA,
        ),
        (
            "client side: the SDK's own work",
            points("client", "sdk_us"),
            GREEN,
        ),
        (
            "floor: serde_json serialize + parse of the request",
            points("round_trip", "floor_us"),
            BLUE,
        ),
    ];
    let all = || series.iter().flat_map(|s| s.1.iter());
    let max_x = all().map(|p| p.0).fold(1.0, f64::max);
    let min_y = all().map(|p| p.1).fold(f64::INFINITY, f64::min).max(1e-4);
    let max_y = all().map(|p| p.1).fold(0.001, f64::max);
    let path = root.join("benches/batch-scale.svg");
    let area = SVGBackend::new(&path, (760, 460)).into_drawing_area();
    area.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&area)
        .caption("batchOrder cost by number of orders", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (5.0..max_x * 1.6).log_scale(),
            (min_y / 2.0..max_y * 2.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| thousands(*x))
        .x_desc("orders in the batch (log)")
        .y_desc("milliseconds (log)")
        .draw()?;
    for (label, data, color) in &series {
        let color = *color;
        chart
            .draw_series(LineSeries::new(data.iter().copied(), color.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        chart.draw_series(data.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    area.present()?;
    Ok(())
}

// ------------------------------------------------------------------------- report

#[derive(Default)]
struct Report {
    rows: Vec<[String; 6]>,
    notes: Vec<String>,
    met: usize,
    missed: Vec<String>,
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn kib(bytes: f64) -> String {
    if bytes.is_nan() {
        "—".into()
    } else if bytes >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", bytes / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", bytes / 1024.0)
    }
}

fn ms(us: f64) -> String {
    if us.is_nan() {
        "—".into()
    } else if us >= 1000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

/// `1.84×`, or `—` when nothing was measured.
fn times(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.2}×")
    } else {
        "—".into()
    }
}

fn thousands(n: f64) -> String {
    let n = n as u64;
    if n >= 1000 {
        format!("{},{:03}", n / 1000, n % 1000)
    } else {
        n.to_string()
    }
}

impl Report {
    fn row(
        &mut self,
        what: String,
        baseline: String,
        ours: String,
        ratio: String,
        target: String,
        command: &str,
    ) {
        self.rows
            .push([what, baseline, ours, ratio, target, format!("`{command}`")]);
    }

    /// `≤ 1.3×: met` or `**missed**`, counted for the summary; a NaN value (nothing
    /// measured) misses.
    fn target(&mut self, what: &str, rule: &str, ok: bool) -> String {
        if ok {
            self.met += 1;
            format!("{rule}: met")
        } else {
            self.missed.push(format!("{what} ({rule})"));
            format!("{rule}: **missed**")
        }
    }

    fn overhead(&mut self, o: &Value) {
        for (key, label) in [
            (
                "get_list",
                "GET with a list reply (queryEnterprise, 20 items)",
            ),
            ("post_body", "POST with a body (bindEnterprise)"),
            (
                "get_list_https",
                "HTTPS GET with a list reply (queryEnterprise, 20 items)",
            ),
            ("post_body_https", "HTTPS POST with a body (bindEnterprise)"),
        ] {
            let r = &o[key];
            for (stat, name, limit) in [("median", "median", 1.02), ("p99", "p99", 1.05)] {
                let (hand, sdk, ratio) = (
                    f(&r[format!("hand_{stat}_us")]),
                    f(&r[format!("sdk_{stat}_us")]),
                    f(&r[format!("ratio_{stat}")]),
                );
                let spread = &r[format!("ratio_{stat}_spread")];
                let what = format!("SDK overhead, {label}, {name} per call");
                let target = self.target(&what, &format!("≤ {limit}"), ratio <= limit);
                self.row(
                    what,
                    format!("{hand:.1} µs (hand-written)"),
                    format!("{sdk:.1} µs"),
                    format!(
                        "{ratio:.3} ({:.3}–{:.3} over {} blocks)",
                        f(&spread[0]),
                        f(&spread[1]),
                        r["blocks"]
                    ),
                    target,
                    "cargo bench --bench overhead",
                );
            }
        }
    }

    fn throughput(&mut self, t: &Value, rounds: usize, seconds: u64) {
        for (label, what) in [
            ("read", "read `enterprise/user/query`"),
            ("write", "write `shellnums`"),
        ] {
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
            let target = self.target(&name, "≥ 30×", vs_prism >= 30.0);
            self.row(
                name,
                format!(
                    "{:.0} req/s, p99 {:.2} ms (Prism)",
                    f(&prism["rps"]),
                    f(&prism["p99_us"]) / 1000.0
                ),
                format!("{s:.0} req/s, p99 {:.2} ms", f(&sim["p99_us"]) / 1000.0),
                format!("{vs_prism:.1}×"),
                target,
                "cargo xtask bench",
            );
            let name = format!("simulator throughput, {what}, vs bare hyper");
            let target = self.target(&name, "≥ 85%", vs_bare >= 0.85);
            self.row(
                name,
                format!(
                    "{:.0} req/s, p99 {:.2} ms (fixed body)",
                    f(&bare["rps"]),
                    f(&bare["p99_us"]) / 1000.0
                ),
                format!("{s:.0} req/s, p99 {:.2} ms", f(&sim["p99_us"]) / 1000.0),
                format!("{:.0}%", 100.0 * vs_bare),
                target,
                "cargo xtask bench",
            );
            self.notes.push(format!(
                "Throughput, {label}, req/s by round: licensing-sim {}; bare hyper {}; Prism {}.",
                rounds_of(sim, "rounds"),
                rounds_of(bare, "rounds"),
                rounds_of(prism, "rounds")
            ));
            for (name, r) in [
                ("licensing-sim", sim),
                ("prism", prism),
                ("bare hyper", bare),
            ] {
                if f(&r["errors"]) > 0.0 {
                    self.notes.push(format!(
                        "{name} {label}: {} of {} responses were not HTTP 200/299",
                        r["errors"], r["requests"]
                    ));
                }
            }
        }
        self.notes.push(format!(
            "Throughput: the three servers run at once. Per endpoint, after a warm-up of 1 s each, {rounds} rounds; in each, `licensing-sim` and the bare server are loaded for {seconds} s each, taking turns in slices of {SLICE_MS} ms within one `bench-load load` process (so both meet the machine as it is then; the bare server starts every other round), then Prism for {seconds} s on its own (a server taking turns with Prism met the work Prism's runtime left behind after its slices). A server's req/s is the mean over its slices of its connections' rates, each connection's over its own time in the slice (from the slice's start to its last answer). A ratio is the median of the rounds' ratios, req/s and p99 the medians. Load: 16 concurrent keep-alive connections per server (one worker thread), every request with a fresh `g_nonce`; `licensing-sim` with its default settings (journal on)."
        ));
    }

    fn batch(&mut self, b: &Value) {
        let rows = b["sizes"].as_array().cloned().unwrap_or_default();
        let refused = |r: &Value| r["refused"].as_str().map(str::to_string);
        // Client side: the SDK's own work against bare serde.
        for r in &rows {
            let n = f(&r["orders"]);
            let c = &r["client"];
            let (floor, sdk) = (f(&c["floor_us"]), f(&c["sdk_us"]));
            let payload = f(&r["payload_bytes"]);
            let what = format!(
                "batchOrder client side, {} orders ({} request, {} reply{})",
                thousands(n),
                kib(payload),
                kib(f(&r["reply_bytes"])),
                if r["reply"] == "synthesized" {
                    ", synthesized"
                } else {
                    ""
                }
            );
            let target = self.target(&what, "≤ 1.3×", sdk / floor <= 1.3);
            self.row(
                what,
                format!("{} (serde_json to_vec + from_slice)", ms(floor)),
                format!(
                    "{} (build, validate, serialize, decode); heap {:.2}× payload",
                    ms(sdk),
                    f(&c["sdk_peak_bytes"]) / payload
                ),
                times(sdk / floor),
                target,
                "cargo xtask bench",
            );
        }
        // Simulator side: no target of its own; it says where round-trip time goes.
        for r in &rows {
            let n = f(&r["orders"]);
            let s = &r["sim"];
            let (bare, sim) = (f(&s["bare_us"]), f(&s["sim_us"]));
            let ours = match refused(r) {
                Some(why) => format!("refused: {why}"),
                None => format!("{} ({:.2} µs/order)", ms(sim), sim / n),
            };
            self.row(
                format!(
                    "batchOrder simulator side, {} orders (request sent to reply received)",
                    thousands(n)
                ),
                format!("{} ({:.2} µs/order, bare handler)", ms(bare), bare / n),
                ours,
                times(sim / bare),
                "— (where the round trip's time goes)".into(),
                "cargo xtask bench",
            );
        }
        // Round trip: time (target at 10,000 and more), then the client's heap.
        for r in &rows {
            let n = f(&r["orders"]);
            let t = &r["round_trip"];
            let (floor, ours) = (f(&t["floor_us"]), f(&t["sdk_us"]));
            let what = format!(
                "batchOrder round trip, {} orders ({} payload), time",
                thousands(n),
                kib(f(&r["payload_bytes"]))
            );
            let target = self.target(&what, "≤ 1.25×", ours / floor <= 1.25);
            let ours = match refused(r) {
                Some(_) => "not measured: the simulator refused the batch".to_string(),
                None => format!("{} (SDK → sim → SDK)", ms(ours)),
            };
            self.row(
                what,
                format!("{} (serialize + parse)", ms(floor)),
                ours,
                times(f(&t["sdk_us"]) / floor),
                target,
                "cargo xtask bench",
            );
        }
        for r in &rows {
            let n = f(&r["orders"]);
            let payload = f(&r["payload_bytes"]);
            let peak = f(&r["round_trip"]["sdk_peak_bytes"]);
            let what = format!(
                "batchOrder round trip, {} orders, peak client heap",
                thousands(n)
            );
            let target = self.target(&what, "≤ 1.3× payload", peak / payload <= 1.3);
            let ours = match refused(r) {
                Some(_) => "not measured (refused)".to_string(),
                None => kib(peak),
            };
            self.row(
                what,
                format!("{} payload", kib(payload)),
                ours,
                format!("{} payload", times(peak / payload)),
                target,
                "cargo xtask bench",
            );
        }
        let per = |r: &Value| f(&r["round_trip"]["sdk_us"]) / f(&r["orders"]);
        let at = |n: f64| rows.iter().find(|r| f(&r["orders"]) == n);
        if let (Some(a), Some(z)) = (at(1_000.0), rows.last()) {
            let nz = thousands(f(&z["orders"]));
            let what =
                format!("batchOrder linearity: round-trip cost per order, {nz} vs 1,000 orders");
            // The 1,000-order runs made around the largest size's when the bench made
            // them; else the two sizes' own medians, minutes apart.
            let flanked = &z["linearity"];
            let (small, large, ratio) = if flanked.is_object() {
                (
                    f(&flanked["us_per_order_at_1000"]),
                    f(&flanked["us_per_order"]),
                    f(&flanked["ratio"]),
                )
            } else {
                (per(a), per(z), per(z) / per(a))
            };
            let target = self.target(&what, "≤ 1.2", ratio <= 1.2);
            let ours = if large.is_nan() {
                format!("not measured at {nz}")
            } else {
                format!("{large:.1} µs/order at {nz}")
            };
            self.row(
                what,
                format!("{small:.1} µs/order at 1,000"),
                ours,
                if ratio.is_nan() {
                    "—".into()
                } else {
                    format!("{ratio:.2}")
                },
                target,
                "cargo xtask bench",
            );
            if flanked.is_object() {
                self.notes.push(format!(
                    "Linearity: {} round trips of 1,000 orders run before the first and after every measured {nz}-order \
                     round trip, so both sizes meet the machine as it is then (its speed drifts within a minute); the \
                     ratio is the median cost per order of the {nz}-order round trips over that of these 1,000-order ones.",
                    flanked["runs_at_1000"]
                ));
            }
        }
        let runs: Vec<String> = rows
            .iter()
            .map(|r| format!("{} at {}", r["runs"], thousands(f(&r["orders"]))))
            .collect();
        self.notes.push(format!(
            "Batch: each order has one asset with one product (one feature) and a package with a nested package. \
             Client side: the SDK's steps for one call, without the network (`benches/batch.rs`, `sdk_client_side`): the request \
             given to `.body()` becomes the operation's builder, is converted back, checked (`Validate`) and serialized once \
             (`runtime::PreparedBody`), and its bytes go into a `reqwest::Request`; the simulator's reply \
             (captured at the same size) is decoded through `ResponseValue::from_response` and the envelope; no network. \
             Its floor serializes the same request and parses the same reply into plain structs; both sides drop the \
             request and its bytes (the SDK owns the request given to `.body()`); they take turns going first, each \
             with a copy of the request made just before its turn. \
             Simulator side: the same bytes posted over one keep-alive HTTP/1.1 connection to `licensing-sim` and to a bare \
             handler in its own process that parses the body into the same generated `BatchOrderRequest` and answers a \
             reply of the same shape and length. Round trip: the SDK's `batch_order()` against `licensing-sim`. \
             Every batch meets an empty simulator (admin reset before each). Peak heap: the client's heap growth from \
             handing over the request to the decoded reply, counted by a global allocator (reallocations counted by their \
             change in size). Medians of {} runs per measurement (three times as many for the client side), after one \
             warm-up run.",
            runs.join(", ")
        ));
        for r in rows.iter().filter(|r| refused(r).is_some()) {
            self.notes.push(format!(
                "The simulator refused the {}-order batch ({}): its simulator-side and round-trip rows are not measured, and its client-side row decodes a reply synthesized in the simulator's format.",
                thousands(f(&r["orders"])),
                refused(r).unwrap_or_default()
            ));
        }
    }

    fn reply(&mut self, r: &Value) {
        let what = format!(
            "listVirtualAssets reply of {} ({} values in `assetLimits`), peak client heap",
            kib(f(&r["reply_bytes"])),
            thousands(f(&r["values"]))
        );
        let ratio = f(&r["ratio"]);
        let target = self.target(&what, "≤ 3× reply", ratio <= 3.0);
        self.row(
            what,
            format!("{} reply", kib(f(&r["reply_bytes"]))),
            format!(
                "{} ({})",
                kib(f(&r["peak_bytes"])),
                r["outcome"].as_str().unwrap_or_default()
            ),
            format!("{ratio:.2}× reply"),
            target,
            "cargo xtask bench",
        );
        self.notes.push(
            "Hostile reply: `listVirtualAssets` answered by a thread of the benchmark's process with a body made before \
             the measurement (the spec's example asset, its `assetLimits` holding 30 million `1`s: 60 MB, under the \
             default 64 MiB bound); peak heap is the client's growth during the call, counted by a global allocator. \
             The SDK reads fields whose shape the documents do not show against a bound of `MAX_OPAQUE_VALUES` values \
             per reply, so this reply ends with a decode error naming the field."
                .into(),
        );
    }

    fn paging(&mut self, p: &Value) {
        let rows = p["sizes"].as_array().cloned().unwrap_or_default();
        for r in &rows {
            let n = f(&r["employees"]);
            self.row(
                format!(
                    "`list_members().stream()`, {} employees (pages of {})",
                    thousands(n),
                    r["page_size"]
                ),
                format!("{} per page on the wire", kib(f(&r["page_bytes"]))),
                format!(
                    "{:.2} µs/item, peak heap {} (median of {} runs)",
                    f(&r["us_per_item"]),
                    kib(f(&r["peak_bytes"])),
                    r["runs"]
                ),
                "—".into(),
                "—".into(),
                "cargo xtask bench",
            );
        }
        if let (Some(a), Some(z)) = (rows.first(), rows.last())
            && rows.len() > 1
        {
            let (na, nz) = (thousands(f(&a["employees"])), thousands(f(&z["employees"])));
            let what = format!("paging peak client heap, {nz} vs {na} employees");
            let ratio = f(&z["peak_bytes"]) / f(&a["peak_bytes"]);
            let target = self.target(&what, "≤ 1.2", ratio <= 1.2);
            self.row(
                what,
                format!("{} at {na}", kib(f(&a["peak_bytes"]))),
                format!("{} at {nz}", kib(f(&z["peak_bytes"]))),
                format!("{ratio:.2}"),
                target,
                "cargo xtask bench",
            );
            let ratio = f(&z["us_per_item"]) / f(&a["us_per_item"]);
            let what = format!("paging time per item, {nz} vs {na} employees");
            let target = self.target(&what, "≤ 1.1", ratio <= 1.1);
            self.row(
                what,
                format!("{:.2} µs/item at {na}", f(&a["us_per_item"])),
                format!("{:.2} µs/item at {nz}", f(&z["us_per_item"])),
                format!("{ratio:.2}"),
                target,
                "cargo xtask bench",
            );
        }
        self.notes.push(
            "Paging: one enterprise seeded through the admin API (`POST /__sandbox/v1/seed`) after a reset, in \
             `licensing-sim --trial-member-limit 100000`; the stream's items are counted, not kept; time per item is the \
             whole stream's (every page requested, decoded and yielded) over its items; peak heap is the client's growth \
             during the stream. Up to 3 runs per size, fewer once a size has taken 30 s."
                .into(),
        );
    }

    /// The build rows; `debug` holds the rebuild and the clean build when measured.
    fn build(&mut self, generation_ms: u64, debug: Option<(Duration, Duration)>) {
        let what = "build.rs generation (parse, transform, generate, format both specs)";
        let target = self.target(what, "≤ 1 s", generation_ms <= 1000);
        self.row(
            what.into(),
            "—".into(),
            format!("{generation_ms} ms"),
            "—".into(),
            target,
            "cargo xtask bench",
        );
        let Some((rebuild, clean)) = debug else {
            self.notes.push(
                "The debug builds (the rebuild after touching a spec, target ≤ 10 s, and the \
                 clean build) are timed only on request, `cargo xtask bench --build-cost`: they \
                 need a second full build of every dependency, in the dev profile, about two \
                 more minutes on two cores."
                    .into(),
            );
            return;
        };
        let what = "rebuild after touching spec/order.yaml";
        let target = self.target(what, "≤ 10 s", rebuild.as_secs_f64() <= 10.0);
        self.row(
            what.into(),
            "—".into(),
            format!("{:.1} s", rebuild.as_secs_f64()),
            "—".into(),
            target,
            "touch spec/order.yaml && cargo build",
        );
        self.row(
            "clean build of the crate (debug, default features)".into(),
            "—".into(),
            format!("{:.0} s", clean.as_secs_f64()),
            "—".into(),
            "—".into(),
            "cargo clean && cargo build",
        );
    }

    fn render(&self, elapsed: Duration) -> String {
        let mut s = String::new();
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        let _ = writeln!(s, "# Benchmarks\n");
        let _ = writeln!(
            s,
            "Measured by `cargo xtask bench` on a {cores}-core machine, every comparison in one run \
             ({:.0} s in all, building included). Ratios compare ours with the baseline measured in the same run; absolute \
             numbers depend on the machine. Regenerate with `cargo xtask bench`.\n",
            elapsed.as_secs_f64()
        );
        if self.missed.is_empty() {
            let _ = writeln!(s, "Targets: all {} met.\n", self.met);
        } else {
            let _ = writeln!(
                s,
                "Targets: {} met, {} missed:\n",
                self.met,
                self.missed.len()
            );
            for m in &self.missed {
                let _ = writeln!(s, "- {m}");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s, "| what | baseline | ours | ratio | target | reproduce |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", r.join(" | "));
        }
        let _ = writeln!(
            s,
            "\n![batch cost against order count: round trip, simulator, client side and the serde floor](benches/batch-scale.svg)\n"
        );
        for n in &self.notes {
            let _ = writeln!(s, "- {n}");
        }
        s
    }
}
