//! The build's cost: the generator's time, and on request the debug builds.

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use crate::results::{Build, DebugBuilds};
use crate::stats::spread_of;

/// Generation time, measured in this process (the build script and the generator
/// it runs are built alike in every profile: unoptimized). With `build_cost`, also the
/// debug builds: a clean build of the crate in a directory of its own, then its rebuild
/// there after touching a spec. They are a second full build of every dependency, in the
/// dev profile: about two more minutes on two cores.
pub fn measure(root: &Path, target_dir: &Path, build_cost: bool) -> Result<Build> {
    let generation_ms = generation_ms(root)?;
    if !build_cost {
        return Ok(Build {
            generation_ms,
            debug: None,
        });
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
    Ok(Build {
        generation_ms,
        debug: Some(DebugBuilds {
            rebuild_s: rebuild.as_secs_f64(),
            clean_s: clean.as_secs_f64(),
        }),
    })
}

/// How long the SDK's `build.rs` takes to generate both clients: the generator it calls,
/// run here on both specs. The figure the build script writes (`generation-ms.txt`) is
/// taken while a fresh clone's bench installs its tools beside the build: it read 1,002 ms
/// where a quiet run reads under half that. This process runs the generator as a build
/// script does, built without optimization (the dev profile here; build scripts and their
/// dependencies in every profile). In ms: the median of 5 runs, the fastest and the
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
