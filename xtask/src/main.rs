//! Repository automation for `licensing-sdk`, run as `cargo xtask <command>`.
//!
//! * `export-schemas [--check]`: every named component schema of `spec/*.yaml` as a
//!   self-contained JSON Schema (draft 2020-12) under `schemas/`, plus `schemas/index.json`
//!   and `schemas/README.md`. With `--check` nothing is written; the command fails when
//!   `schemas/` differs from what it would write.
//! * `export-samples DIR`: the examples of both specs as one JSON file each, filed under
//!   the component schema that describes them, plus the list of constraints that the
//!   committed invalid samples must cover. `.ci/schemas.sh` feeds them to other languages'
//!   validators and code generators.
//! * `bench [--quick] [--build-cost] [--partner-build] [--smoke] [--only SECTIONS]`: every benchmark
//!   comparison in one run, measured into a record and rendered as `BENCHMARKS.md` by the
//!   benchmark lab (`bench/`, run with the same flags); `--smoke` only checks the set-up.
//! * `clients [--test]`: TypeScript and Python clients generated from `spec/*.yaml` into
//!   the target directory; `--test` runs a scenario in each language against
//!   `licensing-sim`; an alias of `licensing-clients` (`clients/driver/`, see
//!   `clients/README.md`).
//! * `dist [--check] [--zig | --binaries DIR]`: the packages a partner installs without a
//!   Rust toolchain (the `licensing-sandbox` wheel and npm packages: the simulator, the
//!   proxy and the command line with a Python API and pytest fixtures, or a typed Node API;
//!   the generated clients as `licensing-client` for both) into `target/dist/`;
//!   `--check` installs each in a fresh environment with no `cargo` or `rustc` on PATH and
//!   runs its example suite; an alias of `licensing_clients::dist` (see
//!   `clients/sandbox/README.md`).
//! * `docs [--check]`: the API reference pages of the three specs; `--check` verifies them
//!   in headless Chromium and saves screenshots (see `docs.rs`).
//! * `console [--browser chromium|firefox] [--save-screenshot]`: the simulator's sandbox
//!   console driven in headless Chromium or Firefox against a running `licensing-sim`
//!   (see `console.rs`).
//! * `partner-build`: the cold build of a hello world on `licensing-sdk` against the same
//!   program on reqwest + serde alone, written to its section of `BENCHMARKS.md` (see
//!   `partner_build.rs`).
//! * `spec-diff --base <DIR|REV> [--head DIR] [--format markdown|json]`: every change
//!   between two versions of the specs, judged for each consumer, and the version each
//!   published package needs; exit 1 when a consumer breaks, 2 on an unreadable or
//!   invalid spec. An alias of `licensing-spec-diff` (`spec-diff/`) with this
//!   repository's `spec/`, git repository and workspace.
//! * `spec-diff-corpus [--only ID] [--stale] [--consumers sdk,java,go]`: the proof of spec-diff's rules: each
//!   mutation of `spec-diff/corpus/mutations/` applied to the specs, with consumers of the
//!   old version built against the code generated from the new one; an alias of
//!   `cargo run -p licensing-spec-diff --example corpus`.
//! * `api-surface JSON OUT`: a crate's public API, one item a line, from its rustdoc
//!   JSON; `.ci/semver.sh` compares it with `.ci/api/` before it runs cargo-semver-checks
//!   (see `api.rs`).
//! * `api-inputs`: the digest of what those listings are made of, recorded beside them, so
//!   that `.ci/semver.sh` skips even the rustdoc JSON while it matches (`api_inputs.rs`).
//! * `ci-step NAME [--record] [--always] [--explain] -- COMMAND...`: one of `.ci/run`'s
//!   keyed steps, run only when the digest of its inputs differs from the one recorded in
//!   `.ci/checked/NAME` by a passing run (`ci_step.rs`, `inputs.rs`).

mod api;
mod api_inputs;
mod bench;
mod ci_step;
mod clients;
mod console;
mod docs;
mod export;
mod inputs;
mod ops;
mod partner_build;
mod samples;
mod spec;
mod toolchain;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "xtask",
    bin_name = "cargo xtask",
    about = "Repository automation for licensing-sdk"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Export the component schemas of spec/*.yaml as JSON Schema 2020-12 into schemas/.
    ExportSchemas {
        /// Write nothing; fail when schemas/ is not exactly what the export would write.
        #[arg(long)]
        check: bool,
    },
    /// Write every example of both specs as DIR/valid/SERVICE/SCHEMA/N.json, with
    /// DIR/samples.json (where each came from) and DIR/constraints.json (what the invalid
    /// samples must cover).
    ExportSamples {
        /// Output directory; DIR/valid must not exist yet.
        dir: PathBuf,
    },
    /// Run every benchmark comparison and write BENCHMARKS.md: the lab in bench/ (`cargo
    /// run -p licensing-bench -- run`), given these arguments as they are, so its own
    /// `--help` lists them (`--quick`, `--build-cost`, `--smoke`, `--only SECTIONS`); and
    /// `--partner-build`, this job's own: a partner's first build measured after a full
    /// run (two cold builds, minutes on two cores).
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Generate the TypeScript and Python clients of spec/*.yaml into the target directory.
    Clients {
        /// Also run each language's scenario against licensing-sim.
        #[arg(long)]
        test: bool,
    },
    /// Build the packages for pip and npm (and their binaries) into target/dist/.
    Dist(licensing_clients::dist::Options),
    /// Render the API reference pages of spec/*.yaml into the target directory.
    Docs {
        /// Also check the rendered pages in headless Chromium and save screenshots.
        #[arg(long)]
        check: bool,
    },
    /// Drive the simulator's sandbox console in headless Chromium or Firefox (journal,
    /// cURL, fault form, reset) against a running licensing-sim.
    Console {
        /// The browser: Chromium (playwright-core) or Firefox (puppeteer-core, WebDriver BiDi).
        #[arg(long, value_enum, default_value = "chromium")]
        browser: console::Browser,
        /// Also save the journal's screenshot (Chromium's) as sim/docs/console-journal.png.
        #[arg(long)]
        save_screenshot: bool,
    },
    /// Build a hello world on licensing-sdk and the same on reqwest + serde, each cold, and
    /// write the comparison into BENCHMARKS.md (two full builds, minutes on two cores).
    PartnerBuild,
    /// Every change between two versions of spec/order.yaml and spec/member.yaml, judged
    /// for the wire, Rust, TypeScript, Python and the JSON Schemas, with the version bump
    /// each published package needs (licensing-spec-diff, spec-diff/, with this
    /// repository's paths). Exit 0: nothing breaks; 1: a consumer breaks; 2: a spec cannot
    /// be read or is invalid.
    SpecDiff {
        /// The old version: a directory holding order.yaml and member.yaml, or a git
        /// revision (its spec/ is read with `git show`).
        #[arg(long)]
        base: String,
        /// The new version: a directory (default: the working tree's spec/).
        #[arg(long)]
        head: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "markdown")]
        format: licensing_spec_diff::Format,
    },
    /// Prove spec-diff's rules: apply each mutation of spec-diff/corpus/mutations/ and
    /// build Rust, TypeScript, Python, Java and Go consumers of the old specs against the
    /// new generated code (minutes: one SDK build per mutation). Runs the package's
    /// `corpus` example.
    SpecDiffCorpus {
        /// Only the mutations whose id contains one of these comma-separated texts.
        #[arg(long)]
        only: Option<String>,
        /// Only the mutations whose recorded proof (`spec-diff/corpus/proven.json`) no
        /// longer holds: what they read changed since it was recorded.
        #[arg(long)]
        stale: bool,
        /// Only these comma-separated consumers: `sdk` (Rust, TypeScript and Python),
        /// `java`, `go`.
        #[arg(long)]
        consumers: Option<String>,
    },
    /// Print the digest of what the public API listings of licensing-sdk and
    /// licensing-sim are made of, which `.ci/semver.sh` records beside them.
    ApiInputs,
    /// Run one of .ci/run's keyed steps: COMMAND, unless the digest of the step's inputs
    /// is the one .ci/checked/NAME records of a passing run.
    CiStep {
        /// The step (its inputs are listed in xtask/src/ci_step.rs).
        name: String,
        /// When the command passes, write the digest to .ci/checked/NAME.
        #[arg(long)]
        record: bool,
        /// Run the command whatever the record says.
        #[arg(long)]
        always: bool,
        /// Print each input with its own digest instead of running anything.
        #[arg(long)]
        explain: bool,
        /// The step's command.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Write a crate's public API (one item a line, blanket impls left out) from its
    /// rustdoc JSON to OUT, for `.ci/semver.sh`.
    ApiSurface {
        /// The crate's rustdoc JSON (`cargo doc` with `--output-format json`).
        json: PathBuf,
        /// Where to write the listing.
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = workspace_root();
    // Its own exit codes: 1 is a finding (a breaking change), 2 a usage error.
    if let Command::SpecDiff { base, head, format } = &cli.command {
        return ExitCode::from(licensing_spec_diff::run(&licensing_spec_diff::Options {
            base: base.clone(),
            head: head.clone(),
            repo: root.clone(),
            spec_dir: "spec".into(),
            workspace: Some(root.clone()),
            format: *format,
        }));
    }
    let outcome = match cli.command {
        Command::ExportSchemas { check: false } => export::write(&root).map(|()| true),
        Command::ExportSchemas { check: true } => export::check(&root),
        Command::ExportSamples { dir } => samples::export(&root, &dir).map(|()| true),
        Command::Bench { args } => bench::run(&root, args).map(|()| true),
        Command::Clients { test } => {
            clients::run_all(&root, &clients::Options { test }).map(|()| true)
        }
        Command::Dist(options) => licensing_clients::dist::run_all(&root, &options).map(|()| true),
        Command::Docs { check } => docs::run_all(&root, check).map(|()| true),
        Command::Console {
            browser,
            save_screenshot,
        } => console::run(&root, browser, save_screenshot).map(|()| true),
        Command::PartnerBuild => partner_build::run(&root).map(|()| true),
        Command::SpecDiff { .. } => unreachable!("handled above"),
        Command::SpecDiffCorpus {
            only,
            stale,
            consumers,
        } => corpus(&root, only.as_deref(), stale, consumers.as_deref()),
        Command::ApiInputs => api_inputs::digest(&root).map(|d| {
            println!("{d}");
            true
        }),
        Command::CiStep {
            name,
            explain: true,
            ..
        } => ci_step::explain(&root, &name).map(|()| true),
        Command::CiStep {
            name,
            record,
            always,
            command,
            ..
        } => ci_step::step(&name).and_then(|step| {
            let options = ci_step::Options { record, always };
            ci_step::run(&root, &name, &step.inputs, options, &command)
                .map(|o| o != ci_step::Outcome::Failed)
        }),
        Command::ApiSurface { json, out } => api::surface(&json, &out).map(|()| true),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        // The check already explained what differs.
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The repository root: the parent of this crate, wherever cargo is invoked from.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// `cargo xtask spec-diff-corpus`: the corpus example of licensing-spec-diff, run by the
/// cargo that runs this process; Ok(false) when it reports a disagreement.
fn corpus(
    root: &Path,
    only: Option<&str>,
    stale: bool,
    consumers: Option<&str>,
) -> anyhow::Result<bool> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command
        .args([
            "run",
            "--quiet",
            "-p",
            "licensing-spec-diff",
            "--example",
            "corpus",
            "--",
        ])
        .current_dir(root);
    if let Some(only) = only {
        command.args(["--only", only]);
    }
    if stale {
        command.arg("--stale");
    }
    if let Some(consumers) = consumers {
        command.args(["--consumers", consumers]);
    }
    Ok(command.status()?.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo xtask bench` hands every argument to the lab as written, `--help` included,
    /// so that the lab's flags are documented once, by the lab.
    #[test]
    fn bench_passes_its_arguments_on() {
        let parsed = |args: &[&str]| match Cli::try_parse_from(args).map(|c| c.command) {
            Ok(Command::Bench { args }) => args,
            _ => panic!("{args:?} did not parse as the bench alias"),
        };
        let lab = [
            "--smoke",
            "--only",
            "seed,paging",
            "--partner-build",
            "--help",
        ];
        assert_eq!(
            parsed(&[["cargo xtask", "bench"].as_slice(), &lab].concat()),
            lab
        );
        assert!(parsed(&["cargo xtask", "bench"]).is_empty());
    }
}
