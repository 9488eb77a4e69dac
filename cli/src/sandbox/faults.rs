//! `licensing sandbox faults …`: the scripted faults on the services' operations.

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use licensing_sandbox_client::{self as admin, types as t};
use serde_json::{Map, Value};

use super::failed;
use crate::{error::CliError, input::typed, output::Sink};

/// `faults add`, `faults list`, `faults remove`.
pub(super) fn command() -> Command {
    Command::new("faults")
        .about("Scripted faults on the services' operations")
        .subcommand_required(true)
        .subcommand(add_command())
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
fn add_command() -> Command {
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

pub(super) async fn run(
    admin: &admin::Client,
    m: &ArgMatches,
    sink: &mut Sink,
) -> Result<(), CliError> {
    match m.subcommand().expect("clap requires a subcommand") {
        ("add", m) => {
            let reply = admin
                .create_fault()
                .body(rule(m)?)
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
    }
}

/// The rule `faults add` describes, read by the admin API's own schema before it is sent.
fn rule(m: &ArgMatches) -> Result<t::FaultRuleSpec, CliError> {
    let mut rule = Map::new();
    rule.insert(
        "operation".into(),
        m.get_one::<String>("operation").cloned().into(),
    );
    rule.insert("fault".into(), Value::Object(fault(m)?));
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
        rule.insert("bodyField".into(), body_field(pair)?);
    }
    typed(Value::Object(rule)).map_err(|(field, rule)| CliError::invalid(&field, rule))
}

/// The fault itself: its kind and the options of that kind.
fn fault(m: &ArgMatches) -> Result<Map<String, Value>, CliError> {
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
    Ok(fault)
}

/// `--body-field POINTER=JSON`: a value that is not JSON is taken as a string.
fn body_field(pair: &str) -> Result<Value, CliError> {
    let (pointer, equals) = pair
        .split_once('=')
        .ok_or_else(|| CliError::usage(format!("--body-field {pair}: expected POINTER=JSON")))?;
    let equals: Value =
        serde_json::from_str(equals).unwrap_or_else(|_| Value::String(equals.to_string()));
    Ok(serde_json::json!({ "pointer": pointer, "equals": equals }))
}
