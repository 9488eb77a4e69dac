//! `licensing sandbox …`: the simulator's admin API (reset, state, seeds, journal,
//! faults, clock) through its generated client, `licensing_sandbox_client`.

use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use licensing_sandbox_client::{self as admin, types as t};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{
    config::Context,
    error::{CliError, exit},
    input::{read_json, typed},
    output::{Format, Json, Sink},
};

/// The `sandbox` command tree.
pub fn command() -> Command {
    Command::new("sandbox")
        .about("The simulator's sandbox: reset, state, seeds, journal, faults, clock")
        .subcommand_required(true)
        .subcommand(reset_command())
        .subcommand(state_command())
        .subcommand(seed_command())
        .subcommand(journal_command())
        .subcommand(faults_command())
        .subcommand(clock_command())
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

fn journal_command() -> Command {
    Command::new("journal")
        .about("Shows the requests the services received and what they answered")
        .long_about(
            "Shows the requests the services received and what they answered. A table \
             shows each time in RFC 3339 (UTC); JSON keeps the milliseconds since the \
             epoch.",
        )
        .arg(
            Arg::new("operation")
                .long("operation")
                .help("Only this operationId"),
        )
        .arg(
            Arg::new("code")
                .long("code")
                .help("Only this business code (0: success)"),
        )
        .arg(
            Arg::new("limit")
                .long("limit")
                .value_parser(value_parser!(u32).range(1..))
                .help("At most this many, the newest"),
        )
        .arg(
            Arg::new("follow")
                .long("follow")
                .short('f')
                .action(ArgAction::SetTrue)
                .help("Keep printing new entries, one JSON line each, until Ctrl-C"),
        )
        .arg(
            Arg::new("full")
                .long("full")
                .action(ArgAction::SetTrue)
                .help("Include the request and reply bodies in the table"),
        )
}

fn faults_command() -> Command {
    Command::new("faults")
        .about("Scripted faults on the services' operations")
        .subcommand_required(true)
        .subcommand(fault_add_command())
        .subcommand(Command::new("list").about("Lists the fault rules"))
        .subcommand(
            Command::new("remove")
                .about("Removes a fault rule, or all of them, and prints what it removed")
                .arg(
                    Arg::new("id")
                        .value_parser(value_parser!(i64))
                        .required_unless_present("all"),
                )
                .arg(Arg::new("all").long("all").action(ArgAction::SetTrue)),
        )
}

/// `faults add`: the fault (`--kind` and its own options), then which requests it hits.
fn fault_add_command() -> Command {
    Command::new("add")
        .about("Adds a fault rule")
        .arg(Arg::new("operation").required(true).help("The operationId"))
        .arg(Arg::new("kind").long("kind").required(true).value_parser([
            "code",
            "status",
            "delay",
            "slowBody",
            "dropConnection",
            "truncatedBody",
            "malformedBody",
            "patch",
        ]))
        .arg(
            Arg::new("patch")
                .long("patch")
                .value_name("JSON")
                .help("For --kind patch: an RFC 6902 JSON Patch applied to the reply body"),
        )
        .arg(
            Arg::new("code")
                .long("code")
                .help("For --kind code: the business code"),
        )
        .arg(
            Arg::new("status")
                .long("status")
                .value_parser(value_parser!(i64).range(200..=599))
                .help("For --kind status"),
        )
        .arg(
            Arg::new("ms")
                .long("ms")
                .value_parser(value_parser!(i64).range(0..=600_000))
                .help("For --kind delay and slowBody"),
        )
        .arg(
            Arg::new("times")
                .long("times")
                .value_parser(value_parser!(i64).range(1..))
                .help("Fire at most this many times"),
        )
        .arg(
            Arg::new("probability")
                .long("probability")
                .value_parser(value_parser!(f64))
                .help("Chance a matching request fires it (0 to 1)"),
        )
        .arg(
            Arg::new("enterprise")
                .long("enterprise")
                .value_name("ENTERPRISE_GLOBAL_ID")
                .help("Only requests about this enterprise"),
        )
        .arg(
            Arg::new("body-field")
                .long("body-field")
                .value_name("POINTER=JSON")
                .help("Only requests whose body has JSON at this JSON Pointer"),
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
        progenitor_client::Error::ErrorResponse(r) => {
            let status = r.status();
            let body = serde_json::to_string(&r.into_inner()).unwrap_or_default();
            CliError::new(exit::API, format!("sandbox: HTTP {status}: {body}"))
        }
        progenitor_client::Error::CommunicationError(e) => {
            CliError::new(exit::TRANSPORT, format!("sandbox: {e}")).caused_by(&e)
        }
        progenitor_client::Error::UnexpectedResponse(r) => CliError::new(
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
        ),
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
        ("reset", m) => {
            let mut body = t::ResetRequest::builder();
            if let Some(eg) = m.get_one::<String>("enterprise") {
                body = body.enterprise_global_id(Some(eg.clone()));
            }
            let reply = admin.reset().body(body).send().await.map_err(failed)?;
            sink.value(&reply.into_inner())
        }
        ("state", m) => match m.subcommand().expect("clap requires a subcommand") {
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
        },
        ("seed", m) => {
            let reply = match (m.get_one::<String>("name"), m.get_one::<String>("file")) {
                (_, Some(file)) => {
                    let value = read_json(file)?;
                    let seed = admin::parse_seed(&value.to_string())
                        .map_err(|e| CliError::usage(format!("{file}: {e}")))?;
                    admin.load_seed().body(seed).send().await.map_err(failed)?
                }
                (name, None) => {
                    let name = name.map_or("demo", String::as_str);
                    let seed: t::BuiltinSeed = name.parse().map_err(|_| {
                        CliError::usage(format!("no built-in seed `{name}` (demo)"))
                    })?;
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
        ("journal", m) => journal(&admin, m, sink).await,
        ("faults", m) => match m.subcommand().expect("clap requires a subcommand") {
            ("add", m) => {
                let mut fault = Map::new();
                fault.insert("kind".into(), m.get_one::<String>("kind").cloned().into());
                if let Some(code) = m.get_one::<String>("code") {
                    fault.insert("code".into(), code.clone().into());
                }
                if let Some(status) = m.get_one::<i64>("status") {
                    fault.insert("status".into(), (*status).into());
                }
                if let Some(ms) = m.get_one::<i64>("ms") {
                    fault.insert("ms".into(), (*ms).into());
                }
                if let Some(patch) = m.get_one::<String>("patch") {
                    let patch: Value = serde_json::from_str(patch)
                        .map_err(|e| CliError::invalid("--patch", format!("not JSON: {e}")))?;
                    fault.insert("patch".into(), patch);
                }
                let mut rule = Map::new();
                rule.insert(
                    "operation".into(),
                    m.get_one::<String>("operation").cloned().into(),
                );
                rule.insert("fault".into(), Value::Object(fault));
                if let Some(times) = m.get_one::<i64>("times") {
                    rule.insert("times".into(), (*times).into());
                }
                if let Some(p) = m.get_one::<f64>("probability") {
                    rule.insert("probability".into(), (*p).into());
                }
                if let Some(eg) = m.get_one::<String>("enterprise") {
                    rule.insert("enterpriseGlobalId".into(), eg.clone().into());
                }
                if let Some(pair) = m.get_one::<String>("body-field") {
                    let (pointer, equals) = pair.split_once('=').ok_or_else(|| {
                        CliError::usage(format!("--body-field {pair}: expected POINTER=JSON"))
                    })?;
                    let equals: Value = serde_json::from_str(equals)
                        .unwrap_or_else(|_| Value::String(equals.to_string()));
                    rule.insert(
                        "bodyField".into(),
                        serde_json::json!({ "pointer": pointer, "equals": equals }),
                    );
                }
                let spec: t::FaultRuleSpec = typed(Value::Object(rule))
                    .map_err(|(field, rule)| CliError::invalid(&field, rule))?;
                let reply = admin
                    .create_fault()
                    .body(spec)
                    .send()
                    .await
                    .map_err(failed)?;
                sink.value(&reply.into_inner())
            }
            ("list", _) => {
                let reply = admin.list_faults().send().await.map_err(failed)?;
                sink.value(&reply.into_inner())
            }
            // The admin API answers a removal with no body: what is removed is read first,
            // so that the command can show it.
            ("remove", m) => {
                if m.get_flag("all") {
                    let rules = admin.list_faults().send().await.map_err(failed)?;
                    admin.clear_faults().send().await.map_err(failed)?;
                    sink.value(&rules.into_inner())
                } else {
                    let id = *m.get_one::<i64>("id").expect("required");
                    let rule = admin.get_fault().id(id).send().await.map_err(failed)?;
                    admin.delete_fault().id(id).send().await.map_err(failed)?;
                    sink.value(&rule.into_inner())
                }
            }
            _ => unreachable!(),
        },
        ("clock", m) => match m.subcommand().expect("clap requires a subcommand") {
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
        },
        _ => unreachable!(),
    }
}

/// One journal entry as a table row: its time in RFC 3339, bodies left out unless
/// `--full`.
fn row(entry: &t::JournalEntry, full: bool) -> Json {
    let Json::Object(mut fields) = Json::of(entry) else {
        unreachable!("an entry is an object")
    };
    if !full {
        fields.retain(|(k, _)| !matches!(k.as_str(), "requestBody" | "replyBody" | "query"));
    }
    for (key, value) in &mut fields {
        if key == "time" {
            *value = Json::Scalar(rfc3339(entry.time));
        }
    }
    Json::Object(fields)
}

/// Milliseconds since the Unix epoch as RFC 3339 in UTC, to the millisecond:
/// `2026-01-01T00:00:00.123Z`.
fn rfc3339(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

async fn journal(admin: &admin::Client, m: &ArgMatches, sink: &mut Sink) -> Result<(), CliError> {
    let full = m.get_flag("full");
    let list = |limit: Option<u32>| {
        let mut call = admin.list_journal();
        if let Some(op) = m.get_one::<String>("operation") {
            call = call.operation(op.clone());
        }
        if let Some(code) = m.get_one::<String>("code") {
            call = call.code(code.clone());
        }
        if let Some(limit) = limit {
            call = call.limit(limit);
        }
        call
    };
    let limit = m.get_one::<u32>("limit").copied();
    let page = list(limit).send().await.map_err(failed)?.into_inner();
    if !m.get_flag("follow") {
        return match sink.format {
            Format::Json => sink.value(&page),
            Format::Table => {
                let rows: Vec<Json> = page.entries.iter().map(|e| row(e, full)).collect();
                sink.write(crate::output::table(&Json::Array(rows)).as_bytes())
            }
        };
    }
    // Follow: every entry once, by sequence number, until Ctrl-C.
    let mut last = i64::MIN;
    let print = |entries: &[t::JournalEntry], sink: &mut Sink, last: &mut i64| {
        let seen = *last;
        for entry in entries.iter().filter(|e| e.seq > seen) {
            *last = entry.seq;
            let mut line = serde_json::to_vec(entry).expect("JSON");
            line.push(b'\n');
            sink.write(&line)?;
        }
        Ok::<_, CliError>(())
    };
    print(&page.entries, sink, &mut last)?;
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = &mut interrupted => return Ok(()),
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
        let page = list(None).send().await.map_err(failed)?.into_inner();
        print(&page.entries, sink, &mut last)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_times_read_as_rfc_3339_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_767_225_600_123), "2026-01-01T00:00:00.123Z");
        // The last millisecond of a leap day, and one before the epoch.
        assert_eq!(rfc3339(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(1_709_251_199_000), "2024-02-29T23:59:59.000Z");
    }
}
