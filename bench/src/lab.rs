//! What a run is asked for, and what every section's measurement works with.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cargo::Binaries;
use crate::specs::{self, Spec};

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Shorter load phases (for trying the pipeline, not for publishing numbers).
    pub quick: bool,
    /// Also time the debug builds (clean build and rebuild after touching a spec): they
    /// need a second full build, in the dev profile (minutes on two cores).
    pub build_cost: bool,
    /// Set-up and correctness only: debug binaries, smallest sizes, no Prism, no oha.
    pub smoke: bool,
    /// Only these sections (of [`SECTIONS`]); every one when empty.
    pub only: Vec<String>,
}

/// The sections of a run, in its order.
pub const SECTIONS: [&str; 11] = [
    "overhead",
    "throughput",
    "batch",
    "paging",
    "reply",
    "bulk",
    "proxy",
    "seed",
    "fresh",
    "tenants",
    "build",
];

/// Employees the paging benchmark adds to one enterprise, at most.
pub const PAGING_MEMBERS: &str = "100000";

impl Options {
    pub fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }

    /// Where the run's record goes, under the target directory: a partial run's beside a
    /// full run's, never over it.
    pub fn results_path(&self, target_dir: &Path) -> PathBuf {
        let name = if self.smoke {
            "results-smoke.json"
        } else if !self.only.is_empty() {
            "results-only.json"
        } else {
            "results.json"
        };
        target_dir.join("bench").join(name)
    }
}

/// What every section's measurement needs.
pub struct Lab<'a> {
    pub root: &'a Path,
    pub options: &'a Options,
    pub bins: Binaries,
    pub specs: Vec<Spec>,
}

impl Lab<'_> {
    /// `(METHOD, path template)` of the operation `id`, from the specs.
    pub fn operation(&self, id: &str) -> Result<(String, String)> {
        specs::operation(&self.specs, id)
    }
}
