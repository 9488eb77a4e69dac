//! `licensing sandbox …`: the simulator's admin API (reset, state, seeds, journal,
//! faults, clock) through its generated client, `licensing_sandbox_client`.

mod faults;
mod journal;
mod tenant;

use clap::{Arg, ArgMatches, Command};
use licensing_sandbox_client::{self as admin, types as t};
use serde::Serialize;

use crate::{
    config::Context,
    error::{CliError, exit},
    input::{read_json, typed},
    output::{Format, Sink},
};

/// The `sandbox` command tree.
pub fn command() -> Command {
    Command::new("sandbox")
        .about("The simulator's sandbox: reset, state, seeds, journal, faults, clock, tenants")
        .subcommand_required(true)
        .subcommand(reset_command())
        .subcommand(state_command())
        .subcommand(seed_command())
        .subcommand(journal::command())
        .subcommand(faults::command())
        .subcommand(clock_command())
        .subcommand(tenant::command())
}

/// Whether the command is `sandbox tenant create`, whose `--profile` names the profile it
/// writes: the simulator is then reached without it.
pub fn writes_profile(m: &ArgMatches) -> bool {
    tenant::writes_profile(m)
}

/// A failed call through the base URL the first of `vars` gives: a `404` where that URL
/// is a tenant's is told as the tenant gone.
pub fn tenant_gone(ctx: &Context, vars: &[&str], e: CliError) -> CliError {
    tenant::gone(ctx, vars, e)
}

fn reset_command() -> Command {
    Command::new("reset")
        .about("Forgets everything (journal and faults kept), or one enterprise")
        .arg(
            Arg::new("enterprise")
                .long("enterprise")
                .value_name("ENTERPRISE_GLOBAL_ID")
                .help("Remove only this enterprise and what belongs to it"),
        )
}

fn state_command() -> Command {
    Command::new("state")
        .about("Exports or imports the whole state")
        .subcommand_required(true)
        .subcommand(Command::new("export").about("Prints the whole state as JSON"))
        .subcommand(
            Command::new("import")
                .about("Replaces the whole state with an exported document")
                .arg(Arg::new("file").required(true).value_name("FILE|-")),
        )
}

fn seed_command() -> Command {
    Command::new("seed")
        .about("Loads a built-in seed (demo) or a seed file")
        .arg(
            Arg::new("name")
                .value_name("NAME")
                .help("A built-in seed: demo"),
        )
        .arg(
            Arg::new("file")
                .long("file")
                .value_name("FILE|-")
                .conflicts_with("name")
                .help("A seed document (the `Seed` schema)"),
        )
}

fn clock_command() -> Command {
    Command::new("clock")
        .about("The simulator's clock")
        .subcommand_required(true)
        .subcommand(Command::new("show").about("Shows the clock"))
        .subcommand(
            Command::new("advance")
                .about("Moves the clock forward")
                .arg(
                    Arg::new("by")
                        .required(true)
                        .value_name("DURATION")
                        .help("500ms, 30s, 15m, 2h, 7d"),
                ),
        )
}

/// An admin call's failure: the admin API's own error body, or the transport's.
fn failed<E: Serialize + std::fmt::Debug>(e: progenitor_client::Error<E>) -> CliError {
    match e {
        // The admin API's errors are `{"message", "field"}`: the field first, as the
        // command line's own refusals name theirs.
        progenitor_client::Error::ErrorResponse(r) => {
            let status = r.status();
            let body = serde_json::to_value(r.into_inner()).unwrap_or_default();
            let text = |key: &str| body.get(key).and_then(serde_json::Value::as_str);
            let what = match (text("field"), text("message")) {
                (Some(field), Some(message)) => format!("`{field}` {message}"),
                (None, Some(message)) => message.to_string(),
                _ => body.to_string(),
            };
            CliError {
                status: Some(status.as_u16()),
                ..CliError::new(exit::API, format!("sandbox: HTTP {status}: {what}"))
            }
        }
        progenitor_client::Error::CommunicationError(e) => {
            CliError::new(exit::TRANSPORT, format!("sandbox: {e}")).caused_by(&e)
        }
        progenitor_client::Error::UnexpectedResponse(r) => CliError {
            status: Some(r.status().as_u16()),
            ..CliError::new(
                exit::API,
                format!(
                    "sandbox: HTTP {}{}",
                    r.status(),
                    if r.status().as_u16() == 401 {
                        " (set LICENSING_SANDBOX_TOKEN to the simulator's admin token)"
                    } else {
                        ""
                    }
                ),
            )
        },
        other => CliError::new(exit::API, format!("sandbox: {other}")),
    }
}

/// `500ms`, `30s`, `15m`, `2h`, `7d`: read as the SDK reads its durations.
fn duration_ms(text: &str) -> Result<i64, CliError> {
    licensing_sdk::env::parse_duration(text)
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .ok_or_else(|| {
            CliError::usage(format!(
                "`{}` is not a duration such as 500ms, 30s, 15m, 2h or 7d",
                text.trim()
            ))
        })
}

/// Runs a sandbox command.
pub async fn run(ctx: &Context, m: &ArgMatches, sink: &mut Sink) -> Result<(), CliError> {
    let admin = ctx.sandbox_client()?;
    match m.subcommand().expect("clap requires a subcommand") {
        ("reset", m) => reset(&admin, m, sink).await,
        ("state", m) => state(&admin, m, sink).await,
        ("seed", m) => seed(&admin, m, sink).await,
        ("journal", m) => journal::run(&admin, m, sink).await,
        ("faults", m) => faults::run(&admin, m, sink).await,
        ("clock", m) => clock(&admin, m, sink).await,
        ("tenant", m) => tenant::run(ctx, &admin, m, sink).await,
        _ => unreachable!(),
    }
    .map_err(|e| tenant::gone(ctx, &["LICENSING_SANDBOX_URL", "LICENSING_ORDER_URL"], e))
}

async fn reset(admin: &admin::Client, m: &ArgMatches, sink: &mut Sink) -> Result<(), CliError> {
    let mut body = t::ResetRequest::builder();
    if let Some(eg) = m.get_one::<String>("enterprise") {
        body = body.enterprise_global_id(Some(eg.clone()));
    }
    let reply = admin.reset().body(body).send().await.map_err(failed)?;
    sink.value(&reply.into_inner())
}

async fn state(admin: &admin::Client, m: &ArgMatches, sink: &mut Sink) -> Result<(), CliError> {
    match m.subcommand().expect("clap requires a subcommand") {
        ("export", _) => {
            let state = admin.export_state().send().await.map_err(failed)?;
            // The document is for `state import`: always JSON, whatever the format.
            let format = std::mem::replace(&mut sink.format, Format::Json);
            let written = sink.value(&state.into_inner());
            sink.format = format;
            written
        }
        ("import", m) => {
            let value = read_json(m.get_one::<String>("file").expect("required"))?;
            let document: t::StateDocument =
                typed(value).map_err(|(field, rule)| CliError::invalid(&field, rule))?;
            let reply = admin
                .import_state()
                .body(document)
                .send()
                .await
                .map_err(failed)?;
            sink.value(&reply.into_inner())
        }
        _ => unreachable!(),
    }
}

/// `seed --file`, read and checked here, or a built-in seed by name (`demo` if none).
async fn seed(admin: &admin::Client, m: &ArgMatches, sink: &mut Sink) -> Result<(), CliError> {
    let reply = match (m.get_one::<String>("name"), m.get_one::<String>("file")) {
        (_, Some(file)) => {
            let value = read_json(file)?;
            let seed = admin::parse_seed(&value.to_string())
                .map_err(|e| CliError::usage(format!("{file}: {e}")))?;
            admin.load_seed().body(seed).send().await.map_err(failed)?
        }
        (name, None) => {
            let name = name.map_or("demo", String::as_str);
            let seed: t::BuiltinSeed = name
                .parse()
                .map_err(|_| CliError::usage(format!("no built-in seed `{name}` (demo)")))?;
            admin
                .load_builtin_seed()
                .name(seed)
                .send()
                .await
                .map_err(failed)?
        }
    };
    sink.value(&reply.into_inner())
}

async fn clock(admin: &admin::Client, m: &ArgMatches, sink: &mut Sink) -> Result<(), CliError> {
    match m.subcommand().expect("clap requires a subcommand") {
        ("show", _) => {
            let reply = admin.get_clock().send().await.map_err(failed)?;
            sink.value(&reply.into_inner())
        }
        ("advance", m) => {
            let ms = duration_ms(m.get_one::<String>("by").expect("required"))?;
            let reply = admin
                .advance_clock()
                .body(t::ClockAdvance { ms })
                .send()
                .await
                .map_err(failed)?;
            sink.value(&reply.into_inner())
        }
        _ => unreachable!(),
    }
}
