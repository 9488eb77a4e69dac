//! A measuring run: the binaries built, every section asked for measured in its order, and
//! the record written (`results.json` under cargo's target directory).

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Instant, SystemTime},
};

use anyhow::{Context, Result};

use crate::cargo::{Binaries, bench_json, target_dir};
use crate::lab::{Lab, PAGING_MEMBERS};
pub use crate::lab::{Options, SECTIONS};
use crate::oha::OhaInstall;
use crate::peers::PeersInstall;
pub use crate::progress::step;
use crate::results::{Commit, FORMAT, Machine, Results, Run, Sections};
use crate::servers::{PrismInstall, Server};
use crate::specs;
use crate::{build_cost, bulk, fresh, proxy, seed, targets, tenants, throughput};

/// Measures every section `options` asks for and writes the record; its path.
pub fn measure(root: &Path, options: &Options) -> Result<PathBuf> {
    let started = Instant::now();
    let started_unix_s = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    step(if options.smoke {
        "benchmark set-up check (--smoke)"
    } else {
        "benchmarks"
    });
    let lab = prepare(root, options)?;
    let mut sections = Sections::default();
    // A section that fails keeps what the ones before it measured: the record is written
    // either way, and the error says where, so a rerun needs `--only` the rest.
    let measured = measure_sections(root, options, &lab, &mut sections);
    let results = Results {
        format: FORMAT,
        commit: commit(root),
        machine: machine(),
        run: Run {
            quick: options.quick,
            smoke: options.smoke,
            build_cost: options.build_cost,
            only: options.only.clone(),
            seconds: started.elapsed().as_secs_f64(),
            started_unix_s,
        },
        targets: targets::all(),
        sections,
    };
    let path = options.results_path(&lab.bins.target_dir);
    results.write(&path)?;
    eprintln!("measurements written to {}", path.display());
    measured.with_context(|| {
        format!(
            "a section failed; the sections measured before it are in {}",
            path.display()
        )
    })?;
    Ok(path)
}

/// Every section `options` asks for, in its order, into `sections`; stops at the first
/// that fails.
fn measure_sections(
    root: &Path,
    options: &Options,
    lab: &Lab<'_>,
    sections: &mut Sections,
) -> Result<()> {
    let bins = &lab.bins;
    if options.runs("overhead") {
        step("1. SDK call overhead");
        sections.overhead = Some(bench_json(bins, "overhead", options.smoke, &[])?);
    }
    if options.runs("throughput") {
        step("2. simulator throughput");
        sections.throughput = Some(throughput::measure(lab)?);
    }
    if options.runs("batch") {
        step("3. batch order: client side, simulator side, round trip");
        let sim = Server::licensing_sim(bins, &[])?;
        let env = [("LICENSING_SIM_URL", sim.url.clone())];
        sections.batch = Some(bench_json(bins, "batch", options.smoke, &env)?);
    }
    if options.runs("paging") {
        step("4. paging");
        // One seed makes every employee: past the simulator's default bounds for seeds.
        let sim = Server::licensing_sim(
            bins,
            &[
                "--trial-member-limit",
                PAGING_MEMBERS,
                "--max-seed-records",
                "1000000",
                "--max-seed-bytes",
                "268435456",
            ],
        )?;
        let env = [("LICENSING_SIM_URL", sim.url.clone())];
        sections.paging = Some(bench_json(bins, "paging", options.smoke, &env)?);
    }
    if options.runs("reply") {
        step("5. a hostile reply's peak heap");
        sections.reply = Some(bench_json(bins, "reply", options.smoke, &[])?);
    }
    if options.runs("bulk") {
        step("6. bulk submit: the command line against the SDK called directly");
        sections.bulk = Some(bulk::measure(lab)?);
    }
    if options.runs("proxy") {
        step("7. conformance proxy: through the proxy against the simulator direct");
        sections.proxy = Some(proxy::measure(lab)?);
    }
    if options.runs("seed") {
        step("7b. seeding a large state with a state file");
        let dir = bins.target_dir.join("bench-seed");
        sections.seed = Some(seed::measure(&bins.sim, &dir, options.smoke)?);
    }
    if options.runs("fresh") {
        step("7c. a fresh sandbox per test: from start to the first answer, and to a seeded state");
        sections.fresh = Some(fresh::measure(lab)?);
    }
    if options.runs("tenants") {
        step("7d. tenants: creation, memory, throughput beside 1,000 others, a large seed");
        sections.tenants = Some(tenants::measure(lab)?);
    }
    // Nothing of the build is timed in a smoke run.
    if options.runs("build") && !options.smoke {
        step("8. build cost");
        sections.build = Some(build_cost::measure(
            root,
            &bins.target_dir,
            options.build_cost,
        )?);
    }
    Ok(())
}

/// The binaries built and the tools installed. Prism, WireMock and Mockoon come from npm:
/// fetched while cargo builds (network and disk, little CPU). oha comes from crates.io,
/// built once per target directory (minutes, the first time).
fn prepare<'a>(root: &'a Path, options: &'a Options) -> Result<Lab<'a>> {
    // The fresh-sandbox comparison starts Prism and WireMock too (not oha).
    let peers = !options.smoke && (options.runs("throughput") || options.runs("fresh"));
    let (prism, stub_servers, oha) = if !peers {
        (None, None, None)
    } else {
        let target = target_dir(root)?;
        (
            PrismInstall::start(&target)?,
            PeersInstall::start(&target)?,
            if options.runs("throughput") {
                OhaInstall::start(&target)?
            } else {
                None
            },
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
    Ok(Lab {
        root,
        options,
        bins,
        specs: specs::load_all(root)?,
    })
}

/// The commit checked out, and whether tracked files differ from it.
fn commit(root: &Path) -> Option<Commit> {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let id = git(&["rev-parse", "HEAD"])?;
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_none_or(|changes| !changes.is_empty());
    Some(Commit { id, dirty })
}

/// The machine the run measured, as far as Linux and the toolchain tell: CPU model, cores,
/// memory, kernel, compiler.
fn machine() -> Machine {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let field = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpuinfo = read("/proc/cpuinfo");
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    Machine {
        cpu: field(&cpuinfo, "model name").unwrap_or_else(|| "CPU model unknown".into()),
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_kib: field(&read("/proc/meminfo"), "MemTotal")
            .and_then(|v| v.trim_end_matches(" kB").trim().parse::<f64>().ok()),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        rustc,
    }
}

/// `--smoke` ended: the record rendered in memory, every section it holds with its rows.
pub fn smoke_passed(path: &Path, seconds: f64) -> Result<()> {
    let results = Results::read(path)?;
    let text = crate::render::report(&results).context("rendering the smoke run's record")?;
    let rows = text.lines().filter(|l| l.starts_with("| ")).count();
    eprintln!(
        "\nsmoke run passed in {seconds:.0} s: every benchmark path ran once, its record \
         ({}) rendered to {rows} table lines (no document written)",
        path.display()
    );
    Ok(())
}
