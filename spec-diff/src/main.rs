//! `licensing-spec-diff --base <DIR|REV> [--head DIR] [--format markdown|json]`: what the
//! changes between two versions of the licensing specs do to each consumer (see the
//! library's documentation and the package README).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use licensing_spec_diff::{Format, Options};

/// Every change between two versions of order.yaml and member.yaml, judged for the wire
/// (old clients against the new documents and new clients against the old), Rust,
/// TypeScript, Python and the JSON Schemas. Exit 0: no consumer breaks; 1: a consumer
/// breaks; 2: a spec cannot be read or is invalid.
#[derive(Parser)]
#[command(name = "licensing-spec-diff", version)]
struct Cli {
    /// The old version: a directory holding order.yaml and member.yaml, or else a git
    /// revision of the repository (--repo), whose --spec-dir is read with `git show`.
    #[arg(long)]
    base: String,
    /// The new version: a directory holding order.yaml and member.yaml (default: the
    /// repository's --spec-dir as it is on disk).
    #[arg(long)]
    head: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "markdown")]
    format: Format,
    /// The git repository a revision given to --base belongs to, at its top.
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// Where the specs are in the repository, from its top.
    #[arg(long, default_value = "spec")]
    spec_dir: String,
    /// A cargo workspace whose published packages get the version bump the changes need
    /// (`cargo metadata` runs there); without it no version is judged.
    #[arg(long)]
    workspace: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    ExitCode::from(licensing_spec_diff::run(&Options {
        base: cli.base,
        head: cli.head,
        repo: cli.repo,
        spec_dir: cli.spec_dir,
        workspace: cli.workspace,
        format: cli.format,
    }))
}
