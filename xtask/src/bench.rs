//! `cargo xtask bench`: the benchmark lab (the `licensing-bench` package, `bench/`) run
//! with the same flags; it measures, writes its record and renders `BENCHMARKS.md` from
//! it. With `--partner-build`, a partner's first build is measured after it, into its
//! section of the document (`partner_build.rs`).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

pub struct Options {
    pub quick: bool,
    pub build_cost: bool,
    pub smoke: bool,
    pub partner_build: bool,
    /// The lab checks the section names.
    pub only: Vec<String>,
}

pub fn run(root: &Path, options: &Options) -> Result<()> {
    let mut lab = Command::new(env!("CARGO"));
    lab.args([
        "run",
        "--quiet",
        "--package",
        "licensing-bench",
        "--",
        "run",
    ])
    .current_dir(root);
    for (on, flag) in [
        (options.quick, "--quick"),
        (options.build_cost, "--build-cost"),
        (options.smoke, "--smoke"),
    ] {
        if on {
            lab.arg(flag);
        }
    }
    if !options.only.is_empty() {
        lab.arg("--only").arg(options.only.join(","));
    }
    let status = lab
        .status()
        .context("running the benchmark lab (cargo run -p licensing-bench)")?;
    if !status.success() {
        bail!("the benchmark lab failed ({status})");
    }
    // A partial run's report never goes to BENCHMARKS.md, nor does the partner build.
    if options.partner_build && options.only.is_empty() {
        let section =
            crate::partner_build::measure(root, None, "cargo xtask bench --partner-build")?;
        let path = root.join("BENCHMARKS.md");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        std::fs::write(
            &path,
            crate::partner_build::replace_section(&text, &section),
        )
        .with_context(|| format!("writing {}", path.display()))?;
        println!("{section}");
    }
    Ok(())
}
