//! `cargo xtask spec-diff --base <DIR|REV> [--head DIR] [--format markdown|json]`: every
//! change between two versions of `order.yaml` and `member.yaml`, each judged for the
//! wire in both directions (old clients against a new deployment, new clients against an
//! old one), the Rust SDK, TypeScript and Python clients and the exported JSON Schemas
//! (see `rules.rs`), and the version each published package needs next.
//!
//! What comes from a spec is escaped for where it goes: the markdown report (a
//! pull-request comment) holds it as escaped text or code spans, error messages show
//! its control characters escaped (`licensing-escape`).
//!
//! Exit code: 0 when no consumer breaks, 1 when one does, 2 when a spec cannot be read or
//! is not one the generator accepts (the message names the file).
//!
//! `cargo xtask spec-diff-corpus` proves the rules: it applies each mutation of
//! `xtask/spec-diff/mutations/` to the current specs and builds consumers of the old
//! version against the code generated from the new one (`corpus.rs`).

pub mod compare;
pub mod corpus;
pub mod load;
pub mod report;
pub mod rules;

use std::path::Path;

use clap::ValueEnum;
use licensing_escape::terminal;

pub use compare::Change;
use load::{Side, UsageError};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Markdown,
    Json,
}

/// Every change between the two sides, spec by spec in the build script's order.
pub fn changes(base: &Side, head: &Side) -> Vec<Change> {
    let mut out = Vec::new();
    for (old, new) in base.specs.iter().zip(&head.specs) {
        out.extend(compare::diff(old.service, &old.api, &new.api));
    }
    out
}

/// The command: prints the report; returns the exit code.
pub fn run(root: &Path, base: &str, head: Option<&Path>, format: Format) -> u8 {
    let sides = || -> Result<(Side, Side), UsageError> {
        let base = load::side(root, base)?;
        let head = match head {
            Some(dir) => load::from_dir(dir, &dir.display().to_string())?,
            None => load::from_dir(&root.join("spec"), "spec/")?,
        };
        Ok((base, head))
    };
    let (base, head) = match sides() {
        Ok(sides) => sides,
        Err(e) => {
            eprintln!("error: {}", terminal::escape(&e.to_string()));
            return 2;
        }
    };
    let changes = changes(&base, &head);
    let packages = match report::packages(root) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}", terminal::escape(&e));
            return 2;
        }
    };
    let bumps = report::bumps(&changes, &packages);
    let text = match format {
        Format::Json => report::json(&base, &head, &changes, &bumps),
        Format::Markdown => report::markdown(&base, &head, &changes, &bumps),
    };
    print!("{text}");
    u8::from(changes.iter().any(|c| c.verdicts.any_breaking()))
}
