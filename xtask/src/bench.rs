//! `cargo xtask bench`: every comparison run side by side in one run on this machine, then
//! `BENCHMARKS.md` and `benches/batch-scale.svg` written from the measurements.
//!
//! | what | baseline | how |
//! |---|---|---|
//! | SDK call overhead | hand-written reqwest + serde_json, same server, same process | `benches/overhead.rs` |
//! | simulator throughput | Prism (mock of the same spec), WireMock and Mockoon (stubs written from the spec's examples) and a bare hyper server (the ceiling) | `licensing-sim`, `prism mock`, WireMock's jar, `mockoon-cli start`, `bench-load bare-server`, each loaded by `bench-load load` from another process |
//! | the same, by an outside tool | the figures of `bench-load load` | oha (pinned, installed into the target directory) on the same five servers, same load |
//! | batch, client side | bare `serde_json` serialize + parse of the same request and reply | `benches/batch.rs`, no network |
//! | batch, simulator side | a bare handler parsing the same body into the same types | `benches/batch.rs` against `licensing-sim` and `batch --bare-server` |
//! | batch, round trip | bare `serde_json` serialize + parse of the same request | `benches/batch.rs` against `licensing-sim` |
//! | paging | the same stream at a tenth of the size | `benches/paging.rs` against `licensing-sim` |
//! | a hostile reply's peak heap | the reply's size (target ≤ 3×) | `benches/reply.rs` against a server thread of its own |
//! | bulk submit | the SDK called directly on the same file (`benches/bulk.rs`) | `licensing orders submit`, each side a process against a fresh `licensing-sim` |
//! | conformance proxy | the simulator direct, same load, in turn | `licensing-proxy` in front of `licensing-sim`, both loaded by `bench-load load` |
//! | build cost | targets (≤ 1 s generation, ≤ 10 s rebuild) | `build.rs`'s own timing; with `--build-cost`, debug `cargo build`s timed |
//! | a partner's first build | the same hello world on reqwest + serde | with `--partner-build`: `partner_build.rs`, two cold builds |
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

mod peers;
mod seed;

pub struct Options {
    /// Shorter load phases (for trying the pipeline, not for publishing numbers).
    pub quick: bool,
    /// Also time the debug builds (clean build and rebuild after touching a spec): they
    /// need a second full build, in the dev profile (minutes on two cores).
    pub build_cost: bool,
    /// Set-up and correctness only: debug binaries, smallest sizes, no Prism, no oha, no
    /// file written.
    pub smoke: bool,
    /// Also build a partner's hello world cold, on the SDK and on reqwest + serde (two
    /// full dev builds, about three more minutes on two cores).
    pub partner_build: bool,
    /// Only these sections (of [`SECTIONS`]); every one when empty.
    pub only: Vec<String>,
}

/// The sections of a run, in its order.
pub const SECTIONS: [&str; 9] = [
    "overhead",
    "throughput",
    "batch",
    "paging",
    "reply",
    "bulk",
    "proxy",
    "seed",
    "build",
];

impl Options {
    fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }
}

const APP_TOKEN: &str = "sim-app-token";
/// The query string of the read load (`queryEnterprise`); the path comes from the spec.
const QUERY_PARAMS: &str =
    "channelCode=CH01&channelCustomerId=CC-42&defaultCustomer=N&g_nonce={nonce}";
/// The query string of the write load (`allocateShellNums`).
const SHELLNUMS_PARAMS: &str = "g_nonce={nonce}";
/// The benchmark binaries (`benches/*.rs`).
const BENCHES: [&str; 5] = ["overhead", "batch", "paging", "reply", "bulk"];
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

    // Prism, WireMock and Mockoon come from npm: fetched while cargo builds (network and
    // disk, little CPU). oha comes from crates.io, built once per target directory
    // (minutes, the first time).
    let (prism, stub_servers, oha) = if options.smoke || !options.runs("throughput") {
        (None, None, None)
    } else {
        let target = target_dir(root)?;
        (
            PrismInstall::start(&target)?,
            peers::PeersInstall::start(&target)?,
            OhaInstall::start(&target)?,
        )
    };
    let bins = Binaries::build(root, options.smoke)?;
    if let Some(install) = prism {
        install.wait()?;
    }
    if let Some(install) = stub_servers {
        install.wait(&bins.target_dir)?;
    }
    if let Some(install) = oha {
        install.wait()?;
    }

    if options.runs("overhead") {
        step("1. SDK call overhead");
        let overhead = bench_json(&bins, "overhead", options.smoke, &[])?;
        report.overhead(&overhead);
    }

    if options.runs("throughput") {
        step("2. simulator throughput");
        throughput(root, &bins, options, &mut report)?;
    }

    let mut batch = None;
    if options.runs("batch") {
        step("3. batch order: client side, simulator side, round trip");
        let sim = Server::licensing_sim(&bins, &[])?;
        let measured = bench_json(
            &bins,
            "batch",
            options.smoke,
            &[("LICENSING_SIM_URL", sim.url.clone())],
        )?;
        drop(sim);
        report.batch(&measured);
        batch = Some(measured);
    }

    if options.runs("paging") {
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
    }

    if options.runs("reply") {
        step("5. a hostile reply's peak heap");
        let reply = bench_json(&bins, "reply", options.smoke, &[])?;
        report.reply(&reply);
    }

    if options.runs("bulk") {
        step("6. bulk submit: the command line against the SDK called directly");
        let bulk = bulk(root, &bins, options)?;
        report.bulk(&bulk);
    }

    if options.runs("proxy") {
        step("7. conformance proxy: through the proxy against the simulator direct");
        let proxied = proxy(root, &bins, options)?;
        report.proxy(&proxied);
    }

    if options.runs("seed") {
        step("7b. seeding a large state with a state file");
        let seeded = seed::measure(
            &bins.sim,
            &bins.target_dir.join("bench-seed"),
            options.smoke,
        )?;
        report.seed(&seeded);
    }

    if options.smoke {
        eprintln!(
            "\nsmoke run passed in {:.0} s: every benchmark path ran once (no file written)",
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    // The chart is part of the record: written with BENCHMARKS.md only.
    if let Some(batch) = batch.as_ref().filter(|_| options.only.is_empty()) {
        chart(root, batch)?;
    }

    if options.runs("build") {
        step("8. build cost");
        build_cost(root, &bins.target_dir, options, &mut report)?;
    }

    if !options.only.is_empty() {
        let text = report.render(started.elapsed());
        let path = bins.target_dir.join("bench-only.md");
        std::fs::write(&path, &text)?;
        println!("\n{text}");
        eprintln!(
            "--only {}: written to {}, not to BENCHMARKS.md",
            options.only.join(","),
            path.display()
        );
        return Ok(());
    }

    // A partner's first build: measured here on request, else the section measured
    // before (by `cargo xtask partner-build`, or a run with `--partner-build`) is kept.
    let partner = if options.partner_build {
        step("9. a partner's first build (two cold builds)");
        Some(crate::partner_build::measure(
            root,
            Some(&bins.sim),
            "cargo xtask bench --partner-build",
        )?)
    } else {
        std::fs::read_to_string(root.join("BENCHMARKS.md"))
            .ok()
            .and_then(|old| crate::partner_build::existing_section(&old).map(|s| format!("{s}\n")))
    };
    let mut text = report.render(started.elapsed());
    // What the targets still missed leave, by profile: written by hand where the profiles
    // are taken (`benches/profiles/missed.md`), and kept with the figures it explains.
    if let Ok(missed) = std::fs::read_to_string(root.join("benches/profiles/missed.md")) {
        text = format!("{}\n\n{}\n", text.trim_end(), missed.trim_end());
    }
    if let Some(section) = partner {
        text = crate::partner_build::replace_section(&text, &section);
    }
    std::fs::write(root.join("BENCHMARKS.md"), &text)?;
    println!("\n{text}");
    Ok(())
}

/// The machine the run measured, as far as Linux and the toolchain tell: CPU model, cores,
/// memory, kernel, compiler.
fn machine() -> String {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let field = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpuinfo = read("/proc/cpuinfo");
    let cpu = field(&cpuinfo, "model name").unwrap_or_else(|| "CPU model unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = field(&read("/proc/meminfo"), "MemTotal")
        .and_then(|v| v.trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map_or_else(
            || "memory unknown".into(),
            |kb| format!("{:.0} GiB", kb / 1048576.0),
        );
    let kernel = read("/proc/sys/kernel/osrelease");
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!(
        "{cpu}, {cores} cores available, {memory}, Linux {}, {rustc}",
        kernel.trim()
    )
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
    /// The conformance proxy (`licensing-proxy`).
    proxy: PathBuf,
    /// The load generator and the bare hyper server (`bench-load`).
    load: PathBuf,
    /// The command line (`licensing`).
    cli: PathBuf,
    benches: HashMap<String, PathBuf>,
}

impl Binaries {
    /// Builds the simulator, the command line and the benchmarks in one cargo invocation (one feature set:
    /// every dependency compiled once) and reads their paths from cargo's JSON messages.
    /// The full run builds with the `bench` profile (release), the smoke run debug
    /// binaries.
    fn build(root: &Path, smoke: bool) -> Result<Self> {
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
            "-p",
            "licensing-sdk",
            "-p",
            "licensing-sim",
            // licensing-sim's binary feature (no other package here has one of that name;
            // `licensing-sim/bin` would name its dev-dependency on itself instead).
            "--features",
            "bin",
            "--bin",
            "licensing-sim",
            "-p",
            "licensing-proxy",
            "--bin",
            "licensing-proxy",
            "-p",
            "bench-load",
            "--bin",
            "bench-load",
            "-p",
            "licensing-cli",
            "--bin",
            "licensing",
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
        Self::listening(&bins.sim, &[], extra)
    }

    /// `licensing-proxy --upstream UPSTREAM` with its default settings, plus `extra`.
    fn proxy(bins: &Binaries, upstream: &str, extra: &[&str]) -> Result<Self> {
        Self::listening(&bins.proxy, &["--upstream", upstream], extra)
    }

    /// `exe` (the simulator's binary or the proxy's) with `args` on a free port, once it
    /// prints where it listens.
    fn listening(exe: &Path, args: &[&str], extra: &[&str]) -> Result<Self> {
        let mut child = Command::new(exe)
            .args(args)
            .args(["--addr", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .with_context(|| format!("unexpected first line from {}: {line:?}", exe.display()))?
            .to_string();
        Ok(Self { child, url })
    }

    fn bare(bins: &Binaries) -> Result<Self> {
        Self::bench_load(bins, "bare server", &["bare-server"])
    }

    /// `bench-load bare-forwarder` in front of `upstream` (an `http://` URL).
    fn forwarder(bins: &Binaries, upstream: &str) -> Result<Self> {
        Self::in_front(bins, "bare forwarder", "bare-forwarder", upstream)
    }

    /// `bench-load bare-http-proxy` in front of `upstream` (an `http://` URL).
    fn http_proxy(bins: &Binaries, upstream: &str) -> Result<Self> {
        Self::in_front(bins, "bare HTTP proxy", "bare-http-proxy", upstream)
    }

    /// `bench-load COMMAND --upstream HOST:PORT`, from `upstream` (an `http://` URL).
    fn in_front(bins: &Binaries, what: &str, command: &str, upstream: &str) -> Result<Self> {
        let to = upstream
            .strip_prefix("http://")
            .with_context(|| format!("the {what}'s upstream is not an http:// URL: {upstream}"))?;
        Self::bench_load(bins, what, &[command, "--upstream", to])
    }

    /// A server of `bench-load` (`command`, then `--port` with a free port), once it listens.
    fn bench_load(bins: &Binaries, what: &str, command: &[&str]) -> Result<Self> {
        let port = free_port()?;
        let mut child = Command::new(&bins.load)
            .args(command)
            .args(["--port", &port.to_string()])
            .spawn()
            .with_context(|| format!("starting the {what}"))?;
        wait_for_port(port, &mut child, what)?;
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
        let mut cmd = Command::new(bin);
        cmd.args([
            "mock",
            "spec/order.yaml",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .current_dir(root);
        Self::quiet(cmd, port, "prism")
    }

    /// A peer server started by `cmd` on `port` of 127.0.0.1, its output discarded, once
    /// it accepts connections.
    fn quiet(mut cmd: Command, port: u16, what: &str) -> Result<Self> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        wait_for_port(port, &mut child, what)?;
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

/// oha, the established load generator the throughput figures are checked with (its
/// default features: it does not build without a TLS library).
const OHA_VERSION: &str = "1.16.0";

/// `cargo install` of oha into the target directory, running in the background; its
/// build directory is removed once it is installed.
struct OhaInstall {
    cargo: Child,
    build_dir: PathBuf,
}

impl OhaInstall {
    fn root(target_dir: &Path) -> PathBuf {
        target_dir.join("bench-tools")
    }

    fn bin(target_dir: &Path) -> PathBuf {
        Self::root(target_dir).join("bin/oha")
    }

    /// Starts the install; `None` when this version is installed already.
    fn start(target_dir: &Path) -> Result<Option<Self>> {
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

    fn wait(mut self) -> Result<()> {
        if !self.cargo.wait()?.success() {
            bail!(
                "cargo could not install oha {OHA_VERSION}; the load-generator cross-check needs it"
            );
        }
        let _ = std::fs::remove_dir_all(&self.build_dir);
        Ok(())
    }
}

// ------------------------------------------------------------------------- throughput

#[derive(Clone, Copy)]
enum Endpoint {
    Read,
    Write,
}

impl Endpoint {
    /// The operation, its query string (`{nonce}` for the `g_nonce`) and its body.
    fn request(self) -> (&'static str, &'static str, Option<&'static str>) {
        match self {
            Endpoint::Read => ("queryEnterprise", QUERY_PARAMS, None),
            Endpoint::Write => ("allocateShellNums", SHELLNUMS_PARAMS, Some(r#"{"size":1}"#)),
        }
    }
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
    load_with(root, bins, urls, endpoint, seconds, LOAD_CONNECTIONS)
}

/// Keep-alive connections per server in the throughput comparisons.
const LOAD_CONNECTIONS: usize = 16;

/// [`load`] with `connections` keep-alive connections per server.
fn load_with(
    root: &Path,
    bins: &Binaries,
    urls: &[&str],
    endpoint: Endpoint,
    seconds: u64,
    connections: usize,
) -> Result<Vec<Value>> {
    let (id, params, body) = endpoint.request();
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
        &connections.to_string(),
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

/// Warm-up runs of 1 s, on one server alone: at least `min`, at most `max`, ending once
/// `patience` runs in a row were none more than 5% faster than the fastest before them.
/// WireMock's JVM keeps compiling for some 20 s of load, with runs a third slower than
/// the best between its gains on a busy machine: a shorter patience stops it half-way.
const WARM_UP: WarmUp = WarmUp {
    min: 10,
    max: 40,
    patience: 5,
};

/// [`WARM_UP`] for `--quick`, which tries the pipeline.
const WARM_UP_QUICK: WarmUp = WarmUp {
    min: 3,
    max: 10,
    patience: 2,
};

struct WarmUp {
    min: usize,
    max: usize,
    patience: usize,
}

/// Loads `endpoint` of the server at `url` alone, in runs of 1 s, until its rate levels
/// off (see [`WARM_UP`]); the runs it took.
fn warm_up(
    root: &Path,
    bins: &Binaries,
    url: &str,
    endpoint: Endpoint,
    rule: &WarmUp,
) -> Result<usize> {
    let (mut best, mut flat) = (0.0_f64, 0);
    for run in 1..=rule.max {
        let r = load(root, bins, &[url], endpoint, 1)?
            .into_iter()
            .next()
            .unwrap_or_default();
        let rps = f(&r["rps"]);
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

/// How long the load generator stays on one server before the next one's turn.
const SLICE_MS: u64 = 100;

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
fn oha_load(
    root: &Path,
    oha: &Path,
    base: &str,
    endpoint: Endpoint,
    seconds: u64,
) -> Result<Value> {
    let (id, params, body) = endpoint.request();
    let (method, path) = crate::spec::operation(root, id)?;
    let mut cmd = Command::new(oha);
    cmd.args(["--no-tui", "--output-format", "json", "--rand-regex-url"])
        .args([
            "-z",
            &format!("{seconds}s"),
            "-c",
            "16",
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

/// Every server runs at once (an idle one costs nothing) and they are loaded in turn, in
/// short rounds: each round loads every server once, so a ratio compares runs seconds
/// apart, and a machine that slows down for a while (shared CPUs do) spoils one round,
/// not one server's whole measurement. Ratios are the median of the rounds' ratios.
fn throughput(root: &Path, bins: &Binaries, options: &Options, report: &mut Report) -> Result<()> {
    let (rounds, seconds, oha_rounds) = match (options.smoke, options.quick) {
        (true, _) => (1, 1, 0),
        (false, true) => (2, 1, 1),
        (false, false) => (5, 2, OHA_ROUNDS),
    };
    let warm_up_rule = if options.quick {
        &WARM_UP_QUICK
    } else {
        &WARM_UP
    };
    let sim = Server::licensing_sim(bins, &[])?;
    let bare = Server::bare(bins)?;
    let prism = if options.smoke {
        None
    } else {
        Some(Server::prism(root, bins)?)
    };
    // The stub servers, each checked to answer both loaded requests with the spec's
    // example before any load.
    let stub_servers = if options.smoke {
        Vec::new()
    } else {
        let probes: Vec<peers::Probe> = [Endpoint::Read, Endpoint::Write]
            .into_iter()
            .map(|endpoint| {
                let (id, params, body) = endpoint.request();
                let nonce = format!("bench-check-{}-{id}", std::process::id());
                peers::Probe {
                    id,
                    query: params.replace("{nonce}", &nonce),
                    body,
                }
            })
            .collect();
        peers::start(root, &bins.target_dir, &probes)?
    };
    // The servers loaded on their own, one after the other, by the key of their results.
    let solo: Vec<(&str, &Server)> = prism
        .iter()
        .map(|p| ("prism", p))
        .chain(stub_servers.iter().map(|(peer, s)| (peer.key(), s)))
        .collect();
    let names: Vec<&str> = ["licensing-sim", "bare hyper"]
        .into_iter()
        .chain(solo.iter().map(|(name, _)| *name))
        .collect();
    bind_customer(&sim.url)?;
    let mut results = serde_json::Map::new();
    if !stub_servers.is_empty() {
        results.insert(
            "runtimes".into(),
            json!({ "java": peers::java_version()?, "node": peers::node_version() }),
        );
    }
    for (label, endpoint) in [("read", Endpoint::Read), ("write", Endpoint::Write)] {
        // The servers loaded on their own are warmed up on their own until their rate
        // levels off (a JVM compiles WireMock's path over seconds of load), then a short
        // warm-up lets the simulator and the bare server open connections and fill caches.
        if !options.smoke {
            for (name, server) in &solo {
                let runs = warm_up(root, bins, &server.url, endpoint, warm_up_rule)?;
                eprintln!("{name} {label}: warmed up for {runs} s");
                results.insert(format!("warmup/{name}/{label}"), json!(runs));
            }
            load(
                root,
                bins,
                &[sim.url.as_str(), bare.url.as_str()],
                endpoint,
                1,
            )?;
        }
        // Per server (in the order of `names`), its rounds.
        let mut runs: Vec<Vec<Value>> = vec![Vec::new(); names.len()];
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
            let mut measured = vec![s, b];
            // Prism, WireMock and Mockoon run on their own: a server taking turns with
            // Prism met the work its runtime left behind after its slices (the simulator
            // was about 10% slower after Prism than after the bare server), and a JVM or
            // another Node.js process may leave the same.
            for (_, server) in &solo {
                let got = load(root, bins, &[server.url.as_str()], endpoint, seconds)?;
                measured.push(got.into_iter().next().unwrap_or_default());
            }
            for (i, r) in measured.into_iter().enumerate() {
                let name = names[i];
                eprintln!("{name} {label}, round {}: {r}", round + 1);
                if options.smoke && (r["requests"] == 0 || r["errors"] != 0) {
                    bail!("{name} {label}: the load run failed: {r}");
                }
                runs[i].push(r);
            }
        }
        for (name, server_runs) in names.iter().zip(&runs) {
            results.insert(
                format!("{name}/{label}"),
                summarize_runs(&runs[0], server_runs),
            );
        }

        // The same servers under oha, one server per oha process: the simulator and the
        // bare server take turns going first, then the others in order (as above).
        if options.smoke {
            continue;
        }
        let oha = OhaInstall::bin(&bins.target_dir);
        let mut oha_runs: Vec<Vec<Value>> = vec![Vec::new(); names.len()];
        let servers: Vec<&Server> = [&sim, &bare]
            .into_iter()
            .chain(solo.iter().map(|(_, s)| *s))
            .collect();
        for round in 0..oha_rounds {
            let mut order: Vec<usize> = (0..servers.len()).collect();
            if round % 2 == 1 {
                order.swap(0, 1);
            }
            for i in order {
                let r = oha_load(root, &oha, &servers[i].url, endpoint, seconds)?;
                eprintln!("oha: {} {label}, round {}: {r}", names[i], round + 1);
                oha_runs[i].push(r);
            }
        }
        for (name, runs) in names.iter().zip(&oha_runs) {
            results.insert(
                format!("oha/{name}/{label}"),
                summarize_runs(&oha_runs[0], runs),
            );
        }
    }
    report.throughput(
        &Value::Object(results),
        rounds,
        seconds,
        oha_rounds,
        warm_up_rule,
    );
    Ok(())
}

// ---------------------------------------------------------------------- conformance proxy

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
fn proxy(root: &Path, bins: &Binaries, options: &Options) -> Result<Value> {
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
    let mut results = serde_json::Map::new();
    for (label, endpoint) in [("read", Endpoint::Read), ("write", Endpoint::Write)] {
        if !options.smoke {
            let urls: Vec<&str> = servers.iter().map(|s| s.url.as_str()).collect();
            load(root, bins, &urls, endpoint, 1)?;
        }
        // Per way, its runs with many connections and with one.
        let mut loaded: [Vec<Value>; WAYS.len()] = Default::default();
        let mut single: [Vec<Value>; WAYS.len()] = Default::default();
        for round in 0..rounds {
            // Each way starts a round in turn.
            let order: Vec<usize> = (0..WAYS.len()).map(|i| (i + round) % WAYS.len()).collect();
            let urls: Vec<&str> = order.iter().map(|&i| servers[i].url.as_str()).collect();
            for (connections, into) in [(LOAD_CONNECTIONS, &mut loaded), (1, &mut single)] {
                let got = load_with(root, bins, &urls, endpoint, seconds, connections)?;
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
        let of = |runs: &[Value], key: &str| median(runs.iter().map(|r| f(&r[key])).collect());
        // Round by round: `a`'s rate over `b`'s, their median and range.
        let ratio = |a: usize, b: usize| {
            let ratios: Vec<f64> = loaded[a]
                .iter()
                .zip(&loaded[b])
                .map(|(x, y)| f(&x["rps"]) / f(&y["rps"]))
                .collect();
            json!({
                "median": median(ratios.clone()),
                "range": [
                    ratios.iter().copied().fold(f64::INFINITY, f64::min),
                    ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ],
            })
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
            "added_p50_us_range": [
                added.iter().copied().fold(f64::INFINITY, f64::min),
                added.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ],
            "through_over_direct_p50": through_over_direct,
            "http_proxy_added_p50_us": { "median": http_med, "range": [http_lo, http_hi] },
            "rounds": rounds, "seconds": seconds,
        });
        for (i, way) in WAYS.iter().enumerate() {
            entry[*way] = json!({
                "rps": of(&loaded[i], "rps"), "p99_us": of(&loaded[i], "p99_us"),
                "p50_us_single": of(&single[i], "p50_us"),
            });
        }
        results.insert(label.to_string(), entry);
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

/// Rounds of oha runs per endpoint (each server once per round).
const OHA_ROUNDS: usize = 3;

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
    let range = [
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ];
    json!({
        "rps": pick("rps"), "p50_us": pick("p50_us"), "p99_us": pick("p99_us"),
        "requests": sum("requests"), "errors": sum("errors"), "non_200": sum("non_200"),
        "sim_ratio": median(ratios), "sim_ratio_range": range,
        "rounds": runs.iter().map(|r| f(&r["rps"]).round()).collect::<Vec<_>>(),
    })
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

// ------------------------------------------------------------------------- bulk submit

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
fn allocate(root: &Path, url: &str, n: usize) -> Result<Vec<String>> {
    let (_, path) = crate::spec::operation(root, "allocateShellNums")?;
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
fn bulk(root: &Path, bins: &Binaries, options: &Options) -> Result<Value> {
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
    let numbers = allocate(root, &fresh_sim()?.url, orders)?;
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
            if allocate(root, &sim.url, orders)? != numbers {
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
    let generation = generation_ms(root)?;
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

/// How long the SDK's `build.rs` takes to generate both clients: the generator it calls,
/// run here on both specs, the median of 5 runs. The figure the build script writes
/// (`generation-ms.txt`) is taken while a fresh clone's bench installs its tools beside
/// the build: it read 1,002 ms where a quiet run reads under half that. This process runs
/// the generator as a build script does, built without optimization (the dev profile here;
/// build scripts and their dependencies in every profile).
/// The generator's time for both specs, in ms: the median of 5 runs, the fastest and the
/// slowest.
fn generation_ms(root: &Path) -> Result<[u64; 3]> {
    let texts = ["order", "member"].map(|name| {
        let file = format!("spec/{name}.yaml");
        let text = std::fs::read_to_string(root.join(&file));
        (name, file, text)
    });
    let mut services = Vec::new();
    for (name, file, text) in &texts {
        let text = text
            .as_ref()
            .map_err(|e| anyhow::anyhow!("reading {file}: {e}"))?;
        services.push(licensing_codegen::Service { name, file, text });
    }
    let mut runs = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        licensing_codegen::generate(&services).map_err(|e| anyhow::anyhow!("{e}"))?;
        runs.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let (med, lo, hi, _) = spread_of(runs);
    Ok([med, lo, hi].map(|ms| ms.round() as u64))
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
    /// Sections of their own (a heading and a table), after the notes.
    sections: Vec<String>,
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

/// The median of paired runs' ratios `num[i] / den[i]` (each run's two sides measured
/// back to back), their smallest and largest, and how many; `None` when the runs were
/// not recorded pair by pair.
fn paired(num: &Value, den: &Value) -> Option<(f64, f64, f64, usize)> {
    let (num, den) = (num.as_array()?, den.as_array()?);
    if num.is_empty() || num.len() != den.len() {
        return None;
    }
    let ratios: Vec<f64> = num.iter().zip(den).map(|(a, b)| f(a) / f(b)).collect();
    Some(spread_of(ratios))
}

/// The median (the upper of the middle two), smallest and largest of `values`, and
/// how many.
fn spread_of(mut values: Vec<f64>) -> (f64, f64, f64, usize) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[n / 2], values[0], values[n - 1], n)
}

/// `1.84× (1.70–2.10× over 21 runs)`.
fn times_over(med: f64, lo: f64, hi: f64, n: usize, what: &str) -> String {
    if n > 1 {
        format!("{med:.2}× ({lo:.2}–{hi:.2}× over {n} {what})")
    } else {
        times(med)
    }
}

/// Seconds with two decimals.
fn fmt_secs(s: f64) -> String {
    format!("{s:.2}")
}

/// `30,000,000`.
fn thousands(n: f64) -> String {
    let n = n as u64;
    if n >= 1000 {
        format!("{},{:03}", thousands((n / 1000) as f64), n % 1000)
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

    fn throughput(
        &mut self,
        t: &Value,
        rounds: usize,
        seconds: u64,
        oha_rounds: usize,
        warm_up: &WarmUp,
    ) {
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
                format!(
                    "{vs_prism:.1}× ({:.1}–{:.1}× over {rounds} rounds)",
                    f(&prism["sim_ratio_range"][0]),
                    f(&prism["sim_ratio_range"][1])
                ),
                target,
                "cargo xtask bench",
            );
            let name = format!("simulator throughput, {what}, vs bare hyper");
            let target = self.target(&name, "≥ 90%", vs_bare >= 0.9);
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
            for peer in peers::Peer::ALL {
                let r = &t[format!("{}/{label}", peer.key())];
                if r.is_null() {
                    continue;
                }
                self.row(
                    format!("simulator throughput, {what}, vs {}", peer.name()),
                    format!("{} ({} {})", figures(r), peer.name(), peer.version()),
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
            let peer_rounds: String = peers::Peer::ALL
                .iter()
                .filter(|peer| !t[format!("{}/{label}", peer.key())].is_null())
                .map(|peer| {
                    format!(
                        "; {} {}",
                        peer.name(),
                        rounds_of(&t[format!("{}/{label}", peer.key())], "rounds")
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
        if oha_rounds > 0 {
            self.load_tools(t, oha_rounds, seconds);
        }
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
                peers::WIREMOCK_VERSION,
                runtimes["java"].as_str().unwrap_or("Java"),
                peers::MOCKOON_VERSION,
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
            "Throughput: the five servers run at once. Per endpoint, Prism, WireMock and Mockoon are first warmed up, each on its own, in runs of 1 s until their rate levels off: at least {} runs, at most {}, ending after {} runs in a row none more than 5% faster than the fastest before it (a JVM compiles WireMock's path over seconds of load; {}), then `licensing-sim` and the bare server for 1 s each; then {rounds} rounds; in each, `licensing-sim` and the bare server are loaded for {seconds} s each, taking turns in slices of {SLICE_MS} ms within one `bench-load load` process (so both meet the machine as it is then; the bare server starts every other round), then Prism, WireMock and Mockoon for {seconds} s each, one after the other, each on its own (a server taking turns with Prism met the work Prism's runtime left behind after its slices). A server's req/s is the mean over its slices of its connections' rates, each connection's over its own time in the slice (from the slice's start to its last answer). A ratio is the median of the rounds' ratios, req/s and p99 the medians. Load: 16 concurrent keep-alive connections per server (one worker thread), every request with a fresh `g_nonce`; `licensing-sim` with its default settings (journal on).",
            warm_up.min,
            warm_up.max,
            warm_up.patience,
            warm_ups.join("; ")
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
            let (ratio, ratio_col) = match paired(&c["sdk_runs_us"], &c["floor_runs_us"]) {
                Some((med, lo, hi, n)) => (med, times_over(med, lo, hi, n, "runs")),
                None => (sdk / floor, times(sdk / floor)),
            };
            let target = self.target(&what, "≤ 1.3×", ratio <= 1.3);
            self.row(
                what,
                format!("{} (serde_json to_vec + from_slice)", ms(floor)),
                format!(
                    "{} (build, validate, serialize, decode); heap {:.2}× payload",
                    ms(sdk),
                    f(&c["sdk_peak_bytes"]) / payload
                ),
                ratio_col,
                target,
                "cargo xtask bench",
            );
        }
        // Simulator side: no target of its own; it says where round-trip time goes.
        for r in &rows {
            let n = f(&r["orders"]);
            let s = &r["sim"];
            let (bare, sim) = (f(&s["bare_us"]), f(&s["sim_us"]));
            let (ratio, ratio_col) = match paired(&s["sim_runs_us"], &s["bare_runs_us"]) {
                Some((med, lo, hi, n)) => (med, times_over(med, lo, hi, n, "runs")),
                None => (sim / bare, times(sim / bare)),
            };
            let name = format!(
                "batchOrder simulator side, {} orders (request sent to reply received)",
                thousands(n)
            );
            let (ours, target) = match refused(r) {
                Some(why) => (format!("refused: {why}"), "— (refused)".to_string()),
                // Ten orders is a round trip of a third of a millisecond: no target there.
                None if n < 1000.0 => (
                    format!("{} ({:.2} µs/order)", ms(sim), sim / n),
                    "— (where the round trip's time goes)".to_string(),
                ),
                None => (
                    format!("{} ({:.2} µs/order)", ms(sim), sim / n),
                    self.target(&name, "≤ 1.2×", ratio <= 1.2),
                ),
            };
            self.row(
                name,
                format!("{} ({:.2} µs/order, bare handler)", ms(bare), bare / n),
                ours,
                ratio_col,
                target,
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
            let (ratio, ratio_col) = match paired(&t["sdk_runs_us"], &t["floor_runs_us"]) {
                Some((med, lo, hi, n)) => (med, times_over(med, lo, hi, n, "runs")),
                None => (ours / floor, times(ours / floor)),
            };
            let target = self.target(&what, "≤ 1.25×", ratio <= 1.25);
            let ours = match refused(r) {
                Some(_) => "not measured: the simulator refused the batch".to_string(),
                None => format!("{} (SDK → sim → SDK)", ms(ours)),
            };
            self.row(
                what,
                format!("{} (serialize + parse)", ms(floor)),
                ours,
                ratio_col,
                target,
                "cargo xtask bench",
            );
        }
        // The least a round trip takes in this design, against the same floor.
        let bounds: Vec<String> = rows
            .iter()
            .filter(|r| refused(r).is_none())
            .map(|r| {
                let bound = f(&r["client"]["sdk_us"]) + f(&r["sim"]["bare_us"]);
                format!(
                    "{} at {}",
                    times(bound / f(&r["round_trip"]["floor_us"])),
                    thousands(f(&r["orders"]))
                )
            })
            .collect();
        if !bounds.is_empty() {
            self.notes.push(format!(
                "Round trip against its floor: the SDK's client side (its own work, no network) plus the bare \
                 handler's time (the body sent over loopback, parsed into the same generated types, a reply of the same \
                 size sent back and read) is what a round trip takes with a simulator that does nothing but parse, as \
                 long as the client serializes the whole body before sending it (it is validated first, and sent with \
                 its length) and the server reads the whole body before parsing it (its size is bounded first). Over \
                 the serialize + parse floor, in which the two steps follow each other on one core with no network \
                 between them, that sum is {}.",
                bounds.join(", ")
            ));
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
            // The largest run's peak is the figure; the smallest says how far runs differ.
            let least = r["round_trip"]["sdk_peak_runs_bytes"]
                .as_array()
                .filter(|runs| runs.len() > 1)
                .map(|runs| runs.iter().map(f).fold(f64::INFINITY, f64::min));
            let ratio = match least {
                Some(least) => format!(
                    "{} payload (runs {:.2}–{:.2}×)",
                    times(peak / payload),
                    least / payload,
                    peak / payload
                ),
                None => format!("{} payload", times(peak / payload)),
            };
            self.row(
                what,
                format!("{} payload", kib(payload)),
                ours,
                ratio,
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
            // Each large round trip's cost per order against the 1,000-order median.
            let each: Option<Vec<f64>> = z["round_trip"]["sdk_runs_us"]
                .as_array()
                .filter(|runs| runs.len() > 1 && flanked.is_object())
                .map(|runs| {
                    let n = f(&z["orders"]);
                    runs.iter().map(|t| f(t) / n / small).collect()
                });
            let ratio_col = match each {
                _ if ratio.is_nan() => "—".into(),
                Some(each) => {
                    let (_, lo, hi, n) = spread_of(each);
                    format!("{ratio:.2} ({lo:.2}–{hi:.2} over {n} runs)")
                }
                None => format!("{ratio:.2}"),
            };
            let ours = if large.is_nan() {
                format!("not measured at {nz}")
            } else {
                format!("{large:.1} µs/order at {nz}")
            };
            self.row(
                what,
                format!("{small:.1} µs/order at 1,000"),
                ours,
                ratio_col,
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
             (`__generated::PreparedBody`), and its bytes go into a `reqwest::Request`; the simulator's reply \
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
             warm-up run; a ratio is the median of the runs' ratios, each run's two sides measured back to back, with \
             their range.",
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

    /// The section that sets oha's figures beside the project's generator's.
    fn load_tools(&mut self, t: &Value, oha_rounds: usize, seconds: u64) {
        let figures = |r: &Value| {
            format!(
                "{:.0} req/s, p50 {:.2} ms, p99 {:.2} ms",
                f(&r["rps"]),
                f(&r["p50_us"]) / 1000.0,
                f(&r["p99_us"]) / 1000.0
            )
        };
        let ratio = |r: &Value, percent: bool| {
            let [lo, hi] = [f(&r["sim_ratio_range"][0]), f(&r["sim_ratio_range"][1])];
            if percent {
                format!(
                    "{:.0}% ({:.0}–{:.0}%)",
                    100.0 * f(&r["sim_ratio"]),
                    100.0 * lo,
                    100.0 * hi
                )
            } else {
                format!("{:.1}× ({lo:.1}–{hi:.1}×)", f(&r["sim_ratio"]))
            }
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "## Throughput by two load generators
"
        );
        let _ = writeln!(
            s,
            "The throughput rows above, measured again in the same run by [oha](https://crates.io/crates/oha) \
             {OHA_VERSION}, an established HTTP load generator, with the same load: 16 keep-alive connections on one \
             worker thread, the same requests, every request with a fresh `g_nonce` (oha's `--rand-regex-url`, the \
             nonce drawn as 32 hexadecimal digits). oha loads one server per process: {oha_rounds} rounds of {seconds} s \
             per server, the simulator and the bare server taking turns going first, then Prism, WireMock and \
             Mockoon; its req/s counts \
             the answers received over its run's length. Ratios are the medians of the rounds' ratios, with their \
             range.\n"
        );
        let _ = writeln!(
            s,
            "| endpoint | server | own generator (`bench-load`) | oha | oha / own |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|");
        let mut refused = Vec::new();
        let mut oha_rows = Vec::new();
        for (label, endpoint) in [
            ("read", "read `enterprise/user/query`"),
            ("write", "write `shellnums`"),
        ] {
            for (name, shown) in [
                ("licensing-sim", "licensing-sim"),
                ("bare hyper", "bare hyper"),
                ("prism", "Prism"),
                ("wiremock", "WireMock"),
                ("mockoon", "Mockoon"),
            ] {
                let own = &t[format!("{name}/{label}")];
                let oha = &t[format!("oha/{name}/{label}")];
                if own.is_null() {
                    continue;
                }
                let _ = writeln!(
                    s,
                    "| {endpoint} | {shown} | {} | {} | {:.2} |",
                    figures(own),
                    figures(oha),
                    f(&oha["rps"]) / f(&own["rps"])
                );
                if name == "licensing-sim" && f(&oha["non_200"]) > 0.0 {
                    refused.push(format!(
                        "{} of {} {label} answers",
                        oha["non_200"], oha["requests"]
                    ));
                }
            }
            // The simulator against bare hyper by oha carries the same target as by
            // `bench-load`, in the main table.
            let (sim, bare) = (
                &t[format!("oha/licensing-sim/{label}")],
                &t[format!("oha/bare hyper/{label}")],
            );
            if !bare.is_null() {
                let name = format!("simulator throughput, {endpoint}, vs bare hyper, by oha");
                let target = self.target(&name, "≥ 90%", f(&bare["sim_ratio"]) >= 0.9);
                oha_rows.push((name, figures(bare), figures(sim), ratio(bare, true), target));
            }
            for (name, shown, percent) in [
                ("bare hyper", "licensing-sim / bare hyper", true),
                ("prism", "licensing-sim / Prism", false),
                ("wiremock", "licensing-sim / WireMock", false),
                ("mockoon", "licensing-sim / Mockoon", false),
            ] {
                let own = &t[format!("{name}/{label}")];
                let oha = &t[format!("oha/{name}/{label}")];
                if own.is_null() {
                    continue;
                }
                let _ = writeln!(
                    s,
                    "| {endpoint} | {shown} | {} | {} | — |",
                    ratio(own, percent),
                    ratio(oha, percent)
                );
            }
        }
        let _ = writeln!(
            s,
            "\n{}",
            if refused.is_empty() {
                "Every answer licensing-sim gave oha was HTTP 200: no request was refused as a replay (a reused \
                 `g_nonce` is answered with HTTP 299, code 13004)."
                    .to_string()
            } else {
                format!(
                    "**Not every answer licensing-sim gave oha was HTTP 200**: {} (a refused request, such as a \
                     reused `g_nonce`, is answered with HTTP 299).",
                    refused.join(", ")
                )
            }
        );
        let _ = writeln!(
            s,
            "\nThe simulator's target against bare hyper (≥ 90%) is set for both generators: the main table has \
             a row by each. They differ in one way: `bench-load` loads the simulator and the bare server in \
             alternating {SLICE_MS} ms slices from one process, so the two rates in a ratio are measured in the \
             same second of a shared machine; oha measures one server per run, seconds apart from the other's. \
             Each server's req/s and latencies are measured by both."
        );
        self.sections.push(s);
        for (name, bare, sim, ratio, target) in oha_rows {
            self.row(
                name,
                format!("{bare} (bare hyper)"),
                sim,
                ratio,
                target,
                "cargo xtask bench",
            );
        }
    }

    fn bulk(&mut self, b: &Value) {
        let times = |key: &str| -> Vec<f64> {
            b[key]
                .as_array()
                .map(|v| v.iter().map(f).collect())
                .unwrap_or_default()
        };
        let (cli, sdk) = (times("cli_s"), times("sdk_s"));
        let (cli_cpu, sdk_cpu) = (median(times("cli_cpu_s")), median(times("sdk_cpu_s")));
        let orders = f(&b["orders"]);
        // Throughput of the command line over the SDK's, pair by pair.
        let ratios: Vec<f64> = cli.iter().zip(&sdk).map(|(c, s)| s / c).collect();
        let ratio = median(ratios.clone());
        let (lo, hi) = (
            ratios.iter().copied().fold(f64::INFINITY, f64::min),
            ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let what = format!(
            "bulk submit, {} orders (batches of {}, {} in flight), `licensing orders submit` vs the SDK called directly",
            thousands(orders),
            b["batch_size"],
            b["concurrency"]
        );
        let target = self.target(&what, "≥ 0.9×", ratio >= 0.9);
        let rate = |ts: &[f64]| orders / median(ts.to_vec());
        self.row(
            what,
            format!(
                "{:.0} orders/s (SDK, {} s)",
                rate(&sdk),
                fmt_secs(median(sdk.clone()))
            ),
            format!(
                "{:.0} orders/s (command line, {} s)",
                rate(&cli),
                fmt_secs(median(cli.clone()))
            ),
            format!("{ratio:.2}× ({lo:.2}–{hi:.2})"),
            target,
            "cargo xtask bench",
        );
        let list = |ts: &[f64]| {
            ts.iter()
                .map(|t| format!("{t:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        self.notes.push(format!(
            "Bulk submit: one file of {} `new_buy` orders (JSON Lines, one asset with one product each), sent by \
             `licensing orders submit` (release build) and by `benches/bulk.rs`, a program on the SDK that reads the same \
             file into `LicenseOrder`s and sends the same `batchOrder` batches, as many at once, each a task of its own. \
             Each side is one process, timed from its start to its exit, configured by the same `LICENSING_*` variables, \
             against a `licensing-sim --seed demo` started fresh for it; {} pairs, each side first in every other pair. \
             The command line also checks every line on its own before batching and writes a results file ahead of \
             each batch (a header with the input's SHA-256, each batch's lines recorded as `sending` and synced once \
             per batch before it is sent, their outcomes appended after, the whole rewritten in line order and synced \
             at the end), under a lock on the file; it reads the file into batches on \
             a thread of its own while the first batches are sent, where the SDK program reads the whole file before \
             sending. The ratio is the SDK's time over the command line's (its throughput relative to the SDK's), the \
             median of the pairs, with their range; seconds per run: command line {}; SDK {}. CPU time (user and \
             system, the median of the runs): command line {:.3} s, SDK {:.3} s ({:.2}×): what the command line's \
             checks and results file cost, which reading while sending overlaps with the simulator's work.",
            thousands(orders),
            cli.len(),
            list(&cli),
            list(&sdk),
            cli_cpu,
            sdk_cpu,
            cli_cpu / sdk_cpu
        ));
    }

    fn proxy(&mut self, p: &Value) {
        let range = |r: &Value| {
            format!(
                "{:.2}× ({:.2}–{:.2})",
                f(&r["median"]),
                f(&r["range"][0]),
                f(&r["range"][1])
            )
        };
        for (label, what) in [
            ("read", "read `enterprise/user/query`"),
            ("write", "write `shellnums`"),
        ] {
            let r = &p[label];
            let (direct, forwarder, proxy) = (&r["direct"], &r["forwarder"], &r["proxy"]);
            let rate = |w: &Value| {
                format!(
                    "{:.0} req/s, p99 {:.2} ms",
                    f(&w["rps"]),
                    f(&w["p99_us"]) / 1000.0
                )
            };
            let name = format!(
                "conformance proxy throughput, {what}, through `licensing-proxy` vs the simulator direct"
            );
            self.row(
                name,
                format!("{} (direct)", rate(direct)),
                rate(proxy),
                range(&r["proxy_vs_direct"]),
                "— (reported: the 0.5× target is retired, the forwarder itself reaches about that)"
                    .into(),
                "cargo xtask bench",
            );
            self.row(
                format!(
                    "conformance proxy throughput, {what}, a bare TCP forwarder vs the simulator direct (the ceiling)"
                ),
                format!("{} (direct)", rate(direct)),
                format!("{} (forwarder)", rate(forwarder)),
                range(&r["forwarder_vs_direct"]),
                "— (what any proxy here can reach)".into(),
                "cargo xtask bench",
            );
            let name = format!(
                "conformance proxy throughput, {what}, `licensing-proxy` vs the bare TCP forwarder"
            );
            let target = self.target(
                &name,
                "≥ 0.85×",
                f(&r["proxy_vs_forwarder"]["median"]) >= 0.85,
            );
            self.row(
                name,
                format!("{} (forwarder)", rate(forwarder)),
                rate(proxy),
                range(&r["proxy_vs_forwarder"]),
                target,
                "cargo xtask bench",
            );
            let http_proxy = &r["http_proxy"];
            self.row(
                format!(
                    "conformance proxy throughput, {what}, a bare HTTP proxy vs the bare TCP forwarder (the ceiling of a proxy that reads HTTP)"
                ),
                format!("{} (forwarder)", rate(forwarder)),
                format!("{} (bare HTTP proxy)", rate(http_proxy)),
                range(&r["http_proxy_vs_forwarder"]),
                "— (what a proxy that reads every exchange as HTTP and checks nothing reaches here)"
                    .into(),
                "cargo xtask bench",
            );
            self.row(
                format!(
                    "conformance proxy throughput, {what}, `licensing-proxy` vs the bare HTTP proxy"
                ),
                format!("{} (bare HTTP proxy)", rate(http_proxy)),
                rate(proxy),
                range(&r["proxy_vs_http_proxy"]),
                "— (reported: what the checks, the bounds and the report cost)".into(),
                "cargo xtask bench",
            );
            self.row(
                format!("conformance proxy, added median latency, {what}, one connection"),
                format!("{:.0} µs (direct)", f(&direct["p50_us_single"])),
                format!("{:.0} µs (through the proxy)", f(&proxy["p50_us_single"])),
                match r["added_p50_us_range"].as_array() {
                    Some(range) if range.len() == 2 => {
                        let over = &r["through_over_direct_p50"];
                        let http = &r["http_proxy_added_p50_us"];
                        format!(
                            "+{:.0} µs (+{:.0} to +{:.0} µs over {} rounds); {:.2}× direct ({:.2}–{:.2}×); \
                             the bare HTTP proxy in the same rounds: +{:.0} µs (+{:.0} to +{:.0} µs)",
                            f(&r["added_p50_us"]),
                            f(&range[0]),
                            f(&range[1]),
                            r["rounds"],
                            f(&over["median"]),
                            f(&over["range"][0]),
                            f(&over["range"][1]),
                            f(&http["median"]),
                            f(&http["range"][0]),
                            f(&http["range"][1]),
                        )
                    }
                    _ => format!("+{:.0} µs", f(&r["added_p50_us"])),
                },
                "— (reported)".into(),
                "cargo xtask bench",
            );
        }
        let r = &p["read"];
        self.notes.push(format!(
            "Conformance proxy: `licensing-proxy --upstream URL` (release build, its default settings and a report \
             file) in front of a `licensing-sim` with its default settings, against that simulator direct and through \
             `bench-load bare-forwarder`, a TCP forwarder that copies bytes both ways over one upstream connection per \
             client connection (the same four socket reads and writes per request as the proxy, no HTTP parsed: the \
             ceiling of any proxy on this machine), and through `bench-load bare-http-proxy`, which reads each request \
             and reply as HTTP/1.1 with hyper on both sides (bodies read whole, one upstream connection per client \
             connection, driven by the exchange as the proxy drives its own) and checks nothing: the ceiling of any \
             proxy that reads HTTP, as a conformance proxy must. Per endpoint, after a warm-up of 1 s, {} rounds; in \
             each, the four are loaded for {} s each, taking turns in slices of {SLICE_MS} ms within one `bench-load load` process \
             (each starts a round in turn), first with {LOAD_CONNECTIONS} keep-alive connections each (req/s, p99; a \
             ratio is the median of the rounds' ratios, with their range), then with one connection each (the median \
             latencies, and the median of the rounds' differences and of their ratios: a latency on one connection is \
             mostly the wake-ups of the processes it passes through, which move with the machine, the direct one \
             with them). The proxy checks every request and reply against \
             the documents; every reply was a success and its report stayed empty (the traffic is faithful). The \
             proxy or forwarder, the simulator and the load generator share the machine's cores.",
            r["rounds"], r["seconds"]
        ));
    }

    fn seed(&mut self, s: &Value) {
        let spread = |xs: &[f64], unit: &dyn Fn(f64) -> String| {
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!(
                "{} ({}–{} over {} runs)",
                unit(median(xs.to_vec())),
                unit(lo),
                unit(hi),
                xs.len()
            )
        };
        let secs = |x: f64| format!("{x:.2} s");
        let mb = |x: f64| format!("{:.0} MB", x / 1_048_576.0);
        for (name, label) in [
            (
                "assets",
                "assets (50 enterprises × 1,000, one product each)",
            ),
            ("employees", "employees (50 enterprises × 2,000)"),
        ] {
            let r = &s[name];
            let count = if name == "assets" {
                f(&r["assets"])
            } else {
                f(&r["employees"])
            };
            let what = format!("seed of {} {label}, with a state file", thousands(count));
            let seconds: Vec<f64> = r["seconds"]
                .as_array()
                .into_iter()
                .flatten()
                .map(f)
                .collect();
            let peaks: Vec<f64> = r["peak_bytes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(f)
                .collect();
            let t = median(seconds.clone());
            let target = self.target(&format!("{what}, time to listening"), "≤ 2 s", t <= 2.0);
            self.row(
                format!("{what}, time to listening"),
                format!("{} seed", kib(f(&r["seed_bytes"]))),
                spread(&seconds, &secs),
                "—".into(),
                target,
                "cargo xtask bench --only seed",
            );
            let p = median(peaks.clone());
            let target = self.target(
                &format!("{what}, peak resident memory"),
                "≤ 150 MB",
                p <= 150.0 * 1_048_576.0,
            );
            self.row(
                format!("{what}, peak resident memory"),
                format!("{} seed", kib(f(&r["seed_bytes"]))),
                spread(&peaks, &mb),
                "—".into(),
                target,
                "cargo xtask bench --only seed",
            );
        }
        self.notes.push(
            "Seeds: `licensing-sim --seed FILE --state-file STATE` (release build, its default settings, the seed \
             bounds raised by `--max-seed-records`, `--max-seed-bytes` and `--trial-member-limit`), a fresh state \
             file each run: the time is from the process's start to its `listening on` line (the seed is created \
             through the services' own operations, each logged and synced, and the log compacted into the state \
             file), the peak its resident set's high-water mark (`VmHWM`) read just before it is stopped. The \
             employee seed is held to the asset seed's bounds. Medians of 3 runs, with their range."
                .into(),
        );
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
            match r["runs_peak_bytes"].as_array().filter(|runs| runs.len() > 1) {
                Some(runs) => {
                    let (_, lo, hi, n) = spread_of(runs.iter().map(f).collect());
                    let reply = f(&r["reply_bytes"]);
                    format!(
                        "{ratio:.2}× reply ({:.2}–{:.2}× over {n} calls; the largest is the figure)",
                        lo / reply,
                        hi / reply
                    )
                }
                None => format!("{ratio:.2}× reply"),
            },
            target,
            "cargo xtask bench",
        );
        self.notes.push(
            "Hostile reply: `listVirtualAssets` answered by a thread of the benchmark's process with a body made before \
             the measurement (the spec's example asset, its `assetLimits` holding 30 million `1`s: 60 MB, under the \
             default 64 MiB bound); peak heap is the client's growth during a call, counted by a global allocator, the largest of 3 calls. \
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
                    "{:.2} µs/item{} (median of {} streams), peak heap {} (the largest)",
                    f(&r["us_per_item"]),
                    r["runs_us_per_item"]
                        .as_array()
                        .filter(|runs| runs.len() > 1)
                        .map(|runs| {
                            let (_, lo, hi, _) = spread_of(runs.iter().map(f).collect());
                            format!(" ({lo:.2}–{hi:.2})")
                        })
                        .unwrap_or_default(),
                    r["runs"],
                    kib(f(&r["peak_bytes"])),
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
            // Round by round: the larger stream's figure over the smaller streams' of the
            // same round (`pick`: their median for time, their largest for the peak).
            let by_round = |key: &str, pick: fn(Vec<f64>) -> f64| -> Option<(f64, f64, usize)> {
                let (small, large) = (a[key].as_array()?, z[key].as_array()?);
                let (per_small, per_large) = (
                    f(&a["streams_per_round"]) as usize,
                    f(&z["streams_per_round"]) as usize,
                );
                if per_small == 0 || per_large != 1 || small.len() != per_small * large.len() {
                    return None;
                }
                let ratios: Vec<f64> = large
                    .iter()
                    .zip(small.chunks(per_small))
                    .map(|(l, s)| f(l) / pick(s.iter().map(f).collect()))
                    .collect();
                let (_, lo, hi, n) = spread_of(ratios);
                Some((lo, hi, n))
            };
            let with_rounds = |ratio: f64, rounds: Option<(f64, f64, usize)>| match rounds {
                Some((lo, hi, n)) if n > 1 => {
                    format!("{ratio:.2} (rounds {lo:.2}–{hi:.2}, {n} rounds)")
                }
                _ => format!("{ratio:.2}"),
            };
            let what = format!("paging peak client heap, {nz} vs {na} employees");
            let ratio = f(&z["peak_bytes"]) / f(&a["peak_bytes"]);
            let target = self.target(&what, "≤ 1.2", ratio <= 1.2);
            self.row(
                what,
                format!("{} at {na}", kib(f(&a["peak_bytes"]))),
                format!("{} at {nz}", kib(f(&z["peak_bytes"]))),
                with_rounds(
                    ratio,
                    by_round("runs_peak_bytes", |v| {
                        v.into_iter().fold(f64::NAN, f64::max)
                    }),
                ),
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
                with_rounds(ratio, by_round("runs_us_per_item", median)),
                target,
                "cargo xtask bench",
            );
        }
        let (rounds, flank) = match rows.first() {
            Some(a) => (
                f(&a["runs"]) / f(&a["streams_per_round"]).max(1.0),
                f(&a["streams_per_round"]),
            ),
            None => (f64::NAN, f64::NAN),
        };
        self.notes.push(format!(
            "Paging: one enterprise per size, all seeded in one call to the admin API (`POST /__sandbox/v1/seed`) after \
             a reset, in `licensing-sim --trial-member-limit 100000`, so every stream meets the same state; the stream's \
             items are counted, not kept; time per item is the whole stream's (every page requested, decoded and yielded) \
             over its items, the median of its streams; peak heap is the client's growth during the stream, the largest. \
             After one unmeasured stream of each size, {rounds:.0} rounds of {flank:.0} streams of the smaller enterprise \
             and one of the larger, so both sizes meet the machine as it is then (a 10,000-item stream lasts some 25 ms) \
             and each side's peak is the largest over as many pages (a page's peak depends on whether its body arrived \
             in one read or in several, joined: the more pages, the higher the largest)."
        ));
    }

    /// The build rows; `debug` holds the rebuild and the clean build when measured.
    fn build(&mut self, generation_ms: [u64; 3], debug: Option<(Duration, Duration)>) {
        let what = "build.rs generation (parse, transform, generate, format both specs)";
        let [generation_ms, fastest, slowest] = generation_ms;
        let target = self.target(what, "≤ 1 s", generation_ms <= 1000);
        self.row(
            what.into(),
            "—".into(),
            format!(
                "{generation_ms} ms ({fastest}–{slowest} ms; median of 5 runs of the generator, in `cargo xtask bench`'s process)"
            ),
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
        let _ = writeln!(s, "Machine: {}.\n", machine());
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
        for section in &self.sections {
            let _ = writeln!(s, "\n{}", section.trim_end());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{paired, spread_of, thousands};
    use serde_json::json;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_000.0), "1,000");
        assert_eq!(thousands(50_000.0), "50,000");
        assert_eq!(thousands(30_000_000.0), "30,000,000");
        assert_eq!(thousands(1_002_003.0), "1,002,003");
    }

    #[test]
    fn paired_runs_give_the_median_of_their_ratios_and_its_range() {
        let (med, lo, hi, n) = paired(&json!([2.0, 4.0, 9.0]), &json!([1.0, 2.0, 3.0])).unwrap();
        assert_eq!((med, lo, hi, n), (2.0, 2.0, 3.0, 3));
        assert_eq!(paired(&json!([1.0, 2.0]), &json!([1.0])), None, "unpaired");
        assert_eq!(paired(&json!([]), &json!([])), None);
        assert_eq!(paired(&json!(null), &json!([1.0])), None, "not recorded");
        assert_eq!(spread_of(vec![3.0, 1.0, 2.0, 4.0]), (3.0, 1.0, 4.0, 4));
    }
}
