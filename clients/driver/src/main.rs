//! `licensing-clients [--test]`: the TypeScript and Python clients of the specs, generated
//! into the target directory and, with `--test`, run against `licensing-sim` (see the
//! library's documentation and `clients/README.md`). `cargo xtask clients` runs the same.
//! `licensing-clients dist [--check]`: the packages of `target/dist/` (`cargo xtask dist`).

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "licensing-clients",
    about = "Generate the TypeScript and Python clients of spec/*.yaml into the target directory"
)]
struct Cli {
    /// Also run each language's scenario, the guide's examples and the control against
    /// licensing-sim.
    #[arg(long)]
    test: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Build the packages for other languages' package managers into target/dist/ (what
    /// `cargo xtask dist` runs).
    Dist(licensing_clients::dist::Options),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("clients/driver lives two levels below the repository's root");
    let outcome = match cli.command {
        Some(Command::Dist(options)) => licensing_clients::dist::run_all(root, &options),
        None => licensing_clients::run(root, &licensing_clients::Options { test: cli.test }),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
