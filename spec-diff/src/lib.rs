//! Every change between two versions of the licensing platform's `order.yaml` and
//! `member.yaml`, each judged for the wire in both directions (old clients against a new
//! deployment, new clients against an old one), the Rust SDK, TypeScript and Python
//! clients and the exported JSON Schemas ([`rules`]), and, given a cargo workspace, the
//! version each of its published packages needs next ([`report::bumps`]).
//!
//! The binary `licensing-spec-diff` is [`run`] on its arguments; `cargo xtask spec-diff`
//! in the repository is the same with the repository's paths. Nothing here assumes it runs
//! in that repository: the specs are read from the directories given, or from a revision
//! of the git repository given, at the path given ([`Options`]).
//!
//! What comes from a spec is escaped for where it goes: the markdown report (a
//! pull-request comment) holds it as escaped text or code spans, error messages show
//! its control characters escaped (`licensing-escape`).
//!
//! Exit code ([`run`]): [`COMPATIBLE`] (0) when no consumer breaks, [`BREAKING`] (1) when
//! one does, [`INVALID`] (2) when a spec cannot be read or is not one the generator
//! accepts (the message names the file).
//!
//! The rules are proven by the corpus in the repository (`spec-diff/corpus/`, `cargo
//! xtask spec-diff-corpus`): each mutation applied to the current specs, with consumers of
//! the old version built against the code generated from the new one.

pub mod compare;
pub mod load;
pub mod report;
pub mod rules;

use std::path::PathBuf;

use clap::ValueEnum;
use licensing_escape::terminal;

pub use compare::Change;
pub use load::{Side, Source, UsageError};

/// The exit code when no consumer breaks.
pub const COMPATIBLE: u8 = 0;
/// The exit code when a consumer breaks (either direction of the wire included).
pub const BREAKING: u8 = 1;
/// The exit code when a spec cannot be read or is one the generator refuses.
pub const INVALID: u8 = 2;

/// How the report is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For a pull-request comment: a table per operation, then the versions.
    Markdown,
    /// For a script: the shape documented in `docs/changing-the-spec.md`.
    Json,
}

/// What to compare, and where the specs and the packages are.
#[derive(Clone, Debug)]
pub struct Options {
    /// The old version: a directory holding `order.yaml` and `member.yaml` (relative to
    /// the current directory), or else a revision of the git repository at `repo`, whose
    /// `spec_dir` is read at that commit.
    pub base: String,
    /// The new version: a directory; `None` for `repo`'s `spec_dir` as it is on disk.
    pub head: Option<PathBuf>,
    /// The git repository a revision names, at its top (`.` on the command line).
    pub repo: PathBuf,
    /// Where the specs are in the repository, from its top: `spec` in this one.
    pub spec_dir: String,
    /// A cargo workspace whose published packages get the version bump the changes need
    /// (`cargo metadata` is run there); `None`: no versions are judged.
    pub workspace: Option<PathBuf>,
    pub format: Format,
}

impl Options {
    /// The default of every option but the base: the current directory's `spec/`, no
    /// workspace, markdown.
    pub fn new(base: impl Into<String>) -> Options {
        Options {
            base: base.into(),
            head: None,
            repo: PathBuf::from("."),
            spec_dir: "spec".into(),
            workspace: None,
            format: Format::Markdown,
        }
    }
}

/// A comparison made: the report as the format asks, and whether a consumer breaks.
#[derive(Clone, Debug)]
pub struct Compared {
    pub report: String,
    pub breaking: bool,
}

/// Every change between the two sides, spec by spec in the build script's order.
pub fn changes(base: &Side, head: &Side) -> Vec<Change> {
    let mut out = Vec::new();
    for (old, new) in base.specs.iter().zip(&head.specs) {
        out.extend(compare::diff(old.service, &old.api, &new.api));
    }
    out
}

/// Reads both sides, compares them and writes the report; an error is a side that
/// cannot be read or compared (exit [`INVALID`]).
pub fn compare(options: &Options) -> Result<Compared, UsageError> {
    let base = load::side(&options.repo, &options.spec_dir, &options.base)?;
    let head = match &options.head {
        Some(dir) => load::from_dir(dir, &dir.display().to_string())?,
        None => {
            let dir = options.repo.join(&options.spec_dir);
            load::from_dir(&dir, &format!("{}/", options.spec_dir))?
        }
    };
    let changes = changes(&base, &head);
    let packages = match &options.workspace {
        Some(dir) => report::packages(dir).map_err(UsageError)?,
        None => Vec::new(),
    };
    let bumps = options
        .workspace
        .as_ref()
        .map(|_| report::bumps(&changes, &packages));
    let report = match options.format {
        Format::Json => report::json(&base, &head, &changes, &bumps.clone().unwrap_or_default()),
        Format::Markdown => report::markdown(&base, &head, &changes, bumps.as_ref()),
    };
    Ok(Compared {
        report,
        breaking: changes.iter().any(|c| c.verdicts.any_breaking()),
    })
}

/// The command: prints the report (an error on stderr, escaped); returns the exit code.
pub fn run(options: &Options) -> u8 {
    match compare(options) {
        Ok(compared) => {
            print!("{}", compared.report);
            if compared.breaking {
                BREAKING
            } else {
                COMPATIBLE
            }
        }
        Err(e) => {
            eprintln!("error: {}", terminal::escape(&e.to_string()));
            INVALID
        }
    }
}
