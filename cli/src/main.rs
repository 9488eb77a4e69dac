//! `licensing`: every operation of the order service and the member center, a raw escape
//! hatch, bulk order submission and the simulator's sandbox, on `licensing-sdk`.

mod api;
mod bulk;
mod cli;
mod config;
mod error;
mod input;
mod mcp;
mod ops;
mod output;
mod probe;
mod sandbox;
mod terminal;

use std::{
    io::{IsTerminal as _, Write as _},
    process::ExitCode,
};

use error::{CliError, exit};
use output::{Format, Sink};

fn main() -> ExitCode {
    let matches = match cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => exit::USAGE,
                _ => exit::USAGE,
            });
        }
    };
    let verbose = matches.get_flag("verbose");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(&matches)) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(e) => {
            // An empty message: the command reported its outcome itself. Messages quote
            // what the services and the files hold: escaped, none of it drives the terminal.
            // Written without `eprintln!`, which panics when the terminal has gone away (a
            // run stopped by SIGHUP still exits 129).
            if !e.message.is_empty() {
                let mut stderr = std::io::stderr().lock();
                let _ = writeln!(stderr, "error: {}", terminal::escape(&e.message));
                if verbose {
                    for cause in &e.chain {
                        let _ = writeln!(stderr, "  caused by: {}", terminal::escape(cause));
                    }
                }
            }
            ExitCode::from(e.code)
        }
    }
}

fn format(matches: &clap::ArgMatches) -> Format {
    match matches.get_one::<String>("output").map(String::as_str) {
        Some("json") => Format::Json,
        Some("table") => Format::Table,
        _ if std::io::stdout().is_terminal() => Format::Table,
        _ => Format::Json,
    }
}

async fn run(matches: &clap::ArgMatches) -> Result<(), CliError> {
    let (name, sub) = matches.subcommand().expect("clap requires a subcommand");
    match name {
        "completion" => {
            let shell = *sub
                .get_one::<clap_complete::Shell>("shell")
                .expect("required");
            clap_complete::generate(
                shell,
                &mut cli::command(),
                "licensing",
                &mut std::io::stdout(),
            );
            Ok(())
        }
        "profile" => config::profile_command(sub),
        _ => {
            let ctx = if name == "sandbox" && sandbox::writes_profile(sub) {
                config::Context::load_without_profile_flag(sub)?
            } else {
                config::Context::load(sub)?
            };
            let mut sink = Sink::stdout(format(sub));
            match name {
                "order" | "member" => {
                    let (command, m) = sub.subcommand().expect("clap requires a subcommand");
                    let op = ops::find(name, command).expect("built from the same records");
                    let input = input::Input::from_matches(op, m, &ctx)?;
                    let url = if name == "order" {
                        "LICENSING_ORDER_URL"
                    } else {
                        "LICENSING_MEMBER_URL"
                    };
                    ops::dispatch(&ctx, op, &input, &mut sink)
                        .await
                        .map_err(|e| sandbox::tenant_gone(&ctx, &[url], e))
                }
                "api" => api::run(&ctx, sub, &mut sink).await,
                "orders" => {
                    let (_, m) = sub.subcommand().expect("clap requires a subcommand");
                    bulk::run(&ctx, m, format(m)).await
                }
                "sandbox" => sandbox::run(&ctx, sub, &mut sink).await,
                "probe" => probe::run(&ctx, sub, format(sub)).await,
                "mcp" => mcp::run(ctx, sub).await,
                other => unreachable!("unknown command {other}"),
            }
        }
    }
}
