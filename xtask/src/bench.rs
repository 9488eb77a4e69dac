//! `cargo xtask bench`: the benchmark lab (the `licensing-bench` package, `bench/`) run
//! with the same flags; it measures, writes its record and renders `BENCHMARKS.md` from
//! it. With `--partner-build`, a partner's first build is measured after it, into its
//! section of the document (`partner_build.rs`).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The flag this job takes itself; every other argument is the lab's.
const PARTNER_BUILD: &str = "--partner-build";

pub fn run(root: &Path, mut args: Vec<String>) -> Result<()> {
    let partner_build = args.iter().any(|a| a == PARTNER_BUILD);
    args.retain(|a| a != PARTNER_BUILD);
    let flag = |name: &str| {
        args.iter()
            .any(|a| a == name || a.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
    };
    if partner_build && flag("--smoke") {
        bail!("{PARTNER_BUILD} measures two cold builds, which --smoke does not run");
    }
    // A partial run's report never goes to BENCHMARKS.md, nor does the partner build.
    let partner_build = partner_build && !flag("--only");
    let mut lab = Command::new(env!("CARGO"));
    lab.args([
        "run",
        "--quiet",
        "--package",
        "licensing-bench",
        "--",
        "run",
    ])
    .args(&args)
    .current_dir(root);
    let status = lab
        .status()
        .context("running the benchmark lab (cargo run -p licensing-bench)")?;
    if !status.success() {
        bail!("the benchmark lab failed ({status})");
    }
    if partner_build {
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
