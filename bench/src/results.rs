//! The record of one run, `results.json`: what was measured, on which machine and commit,
//! with which settings, against which targets. The measuring run writes it; `render` reads
//! it, so the document's prose changes without measuring again.
//!
//! Each section holds the figures as measured, every run of a repeated measurement
//! included (the spreads come from them), in the JSON the section's benchmark printed or
//! the lab summed up; the settings a section's prose names (rounds, seconds, versions) are
//! beside them.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::targets::Target;

/// The record's format; a renderer refuses any other.
pub const FORMAT: u32 = 1;

/// The largest record `render` reads: a full run's is about 100 KiB.
const MAX_BYTES: u64 = 64 << 20;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    pub format: u32,
    /// The commit measured; `None` outside a git checkout.
    pub commit: Option<Commit>,
    pub machine: Machine,
    pub run: Run,
    /// The targets the figures were judged against when measured.
    pub targets: Vec<Target>,
    pub sections: Sections,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Commit {
    /// The full hash of `HEAD`.
    pub id: String,
    /// Tracked files differed from `HEAD`.
    pub dirty: bool,
}

/// The machine as far as Linux and the toolchain tell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    /// `MemTotal` in KiB; `None` when unknown.
    pub memory_kib: Option<f64>,
    pub kernel: String,
    pub rustc: String,
}

/// How the run was asked for, and how long it took.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Run {
    pub quick: bool,
    pub smoke: bool,
    pub build_cost: bool,
    /// The sections asked for; every one when empty.
    pub only: Vec<String>,
    /// From the start to the record, building included.
    pub seconds: f64,
    /// When it started, in seconds since the Unix epoch.
    pub started_unix_s: u64,
}

impl Run {
    /// Every section measured in full: a record for `BENCHMARKS.md`.
    pub fn is_full(&self) -> bool {
        !self.smoke && self.only.is_empty()
    }
}

/// Each section's figures; a section not run is absent.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Sections {
    /// `benches/overhead.rs`'s JSON.
    pub overhead: Option<Value>,
    pub throughput: Option<Throughput>,
    /// `benches/batch`'s JSON.
    pub batch: Option<Value>,
    /// `benches/paging.rs`'s JSON.
    pub paging: Option<Value>,
    /// `benches/reply.rs`'s JSON.
    pub reply: Option<Value>,
    /// Each side's seconds and CPU seconds, run by run.
    pub bulk: Option<Value>,
    /// Per endpoint, each way's figures and the ratios of the rounds.
    pub proxy: Option<Value>,
    /// Per seed, its size and each run's seconds and peak.
    pub seed: Option<Value>,
    /// A fresh sandbox per test: per side and phase, each round's seconds.
    pub fresh: Option<Value>,
    /// Tenants: each creation's seconds, memory per tenant, the throughput rounds beside
    /// live tenants, a large seed into a tenant and into the default one.
    pub tenants: Option<Value>,
    pub build: Option<Build>,
}

/// The throughput comparison: its settings, and per server and endpoint the summary of
/// its rounds (`licensing-sim/read`, `oha/prism/write`, `warmup/wiremock/read`, …).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Throughput {
    pub rounds: usize,
    /// Of load per server and round.
    pub seconds: u64,
    pub oha_rounds: usize,
    /// How long `bench-load` stays on one server before the next one's turn.
    pub slice_ms: u64,
    pub warm_up: WarmUp,
    pub versions: Versions,
    pub results: Value,
}

/// Warm-up runs of 1 s on one server alone: at least `min`, at most `max`, ending once
/// `patience` runs in a row were none more than 5% faster than the fastest before them.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct WarmUp {
    pub min: usize,
    pub max: usize,
    pub patience: usize,
}

/// The outside tools' pinned versions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Versions {
    pub oha: String,
    pub wiremock: String,
    pub mockoon: String,
}

/// The build's cost.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Build {
    /// The generator's time for both specs: median, fastest, slowest of 5 runs.
    pub generation_ms: [u64; 3],
    /// Measured with `--build-cost` only.
    pub debug: Option<DebugBuilds>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DebugBuilds {
    /// The rebuild after touching `spec/order.yaml`.
    pub rebuild_s: f64,
    /// The clean build of the crate.
    pub clean_s: f64,
}

impl Results {
    /// Reads a record, refusing another format.
    pub fn read(path: &Path) -> Result<Self> {
        let text = read_bounded(path, MAX_BYTES)?;
        let results: Self = serde_json::from_slice(&text)
            .with_context(|| format!("{}: not a results record", path.display()))?;
        if results.format != FORMAT {
            bail!(
                "{}: a record of format {}, this lab reads format {FORMAT}",
                path.display(),
                results.format
            );
        }
        Ok(results)
    }

    /// Writes the record (pretty JSON), creating its directory.
    pub fn write(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
    }
}

/// The bytes of the file at `path`, refusing one over `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > max {
        bail!("{}: over {max} bytes", path.display());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::read_bounded;

    #[test]
    fn a_file_over_its_bound_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_bounded(&path, 5).unwrap(), b"12345");
        let error = read_bounded(&path, 4).unwrap_err().to_string();
        assert!(error.ends_with("over 4 bytes"), "{error}");
    }
}
