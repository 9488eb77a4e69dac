//! `licensing-bench`: the benchmark lab (`cargo xtask bench` runs it).
//!
//! * `run [--quick] [--build-cost] [--smoke] [--only SECTIONS]`: measures, writes the
//!   record (`bench/results.json` under cargo's target directory), then renders it:
//!   `BENCHMARKS.md` and `benches/batch-scale.svg` for a full run, the report alone
//!   (`bench-only.md` in the target directory) for `--only`; `--smoke` checks the set-up
//!   and renders in memory only.
//! * `render [RESULTS] [--output FILE] [--chart FILE]`: renders a record again, without
//!   measuring: after a change to the document's prose.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::{Parser, Subcommand};
use licensing_bench::{measure, render};

#[derive(Parser)]
#[command(
    name = "licensing-bench",
    about = "The benchmark lab: measure every comparison into a record, render BENCHMARKS.md from it"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure, write the record, render it.
    Run {
        /// Short load phases: to try the pipeline, not to publish numbers.
        #[arg(long)]
        quick: bool,
        /// Also time the debug builds: a clean build of the crate, and its rebuild after
        /// touching a spec (a second full build, minutes on two cores).
        #[arg(long)]
        build_cost: bool,
        /// Only check the set-up: debug builds, every path once at its smallest size, no
        /// Prism, no oha, no timing; the record is rendered in memory, no document written.
        #[arg(long)]
        smoke: bool,
        /// Only these sections (comma-separated: overhead, throughput, batch, paging,
        /// reply, bulk, proxy, seed, fresh, tenants, build), to work on one; the report goes to the
        /// terminal and `bench-only.md` in the target directory, never to BENCHMARKS.md.
        #[arg(long, value_delimiter = ',', value_parser = measure::SECTIONS)]
        only: Vec<String>,
    },
    /// Render a record: a full run's as BENCHMARKS.md and the batch chart, a partial
    /// run's as its report.
    Render {
        /// The record (default: `bench/results.json` under cargo's target directory).
        results: Option<PathBuf>,
        /// Where the document goes (default: BENCHMARKS.md for a full run's record, else
        /// `bench-only.md` in the target directory).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Where the batch chart goes (default: benches/batch-scale.svg when the document
        /// goes to BENCHMARKS.md).
        #[arg(long)]
        chart: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<()> {
    let root = licensing_bench::root();
    match command {
        Command::Run {
            quick,
            build_cost,
            smoke,
            only,
        } => {
            let started = Instant::now();
            let options = measure::Options {
                quick,
                build_cost,
                smoke,
                only,
            };
            let record = measure::measure(&root, &options)?;
            if smoke {
                return measure::smoke_passed(&record, started.elapsed().as_secs_f64());
            }
            let (text, document) = render::publish(&root, &record, render::Outputs::default())?;
            println!("\n{text}");
            eprintln!("rendered {} to {}", record.display(), document.display());
            Ok(())
        }
        Command::Render {
            results,
            output,
            chart,
        } => {
            let record = match results {
                Some(path) => path,
                None => {
                    measure::Options::default().results_path(&licensing_bench::target_dir(&root)?)
                }
            };
            let outputs = render::Outputs {
                document: output,
                chart,
            };
            let (_, document) = render::publish(&root, &record, outputs)?;
            eprintln!("rendered {} to {}", record.display(), document.display());
            Ok(())
        }
    }
}
