//! `licensing mcp`: the operations of both services as tools for an assistant, over the
//! Model Context Protocol, on the command line's profiles, credentials and SDK. The tools
//! are generated from the specs; the server lists and runs the reads, and a write only
//! when the person running it allowed that write, then asked them. That is enforced
//! here, whatever a client makes of the tools' hints.
//!
//! One concern a file: the tools ([`catalogue`]) and their schemas ([`schema`]), bulk
//! orders ([`bulk`]), the simulator's admin API ([`admin`]), what a call may do ([`policy`]), its arguments ([`args`]) and its
//! answer ([`reply`]), a call's steps ([`session`]), the audit log ([`audit`]) and the
//! recording of the traffic ([`har`]), the protocol library ([`wire`], the one file that
//! names it) and the HTTP listener's checks ([`http`]).

mod admin;
mod args;
mod audit;
mod bulk;
mod catalogue;
mod har;
mod http;
mod policy;
mod reply;
mod schema;
mod session;
mod wire;

use std::{io::Write as _, path::PathBuf, sync::Arc, time::Duration};

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};

use crate::{config::Context, error::CliError};

/// Writes a line to stderr, which is the log under stdio (stdout is the protocol's).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The `mcp` command.
pub fn command() -> Command {
    Command::new("mcp")
        .about("Serves both services' operations as tools over the Model Context Protocol")
        .long_about(
            "Serves every operation of both services as a tool over the Model Context Protocol \
             (stdio, or streamable HTTP on loopback with --http), generated from the specs, on \
             this command line's profile and credentials. Only the tools that read are listed \
             and callable unless --allow-writes names a write (or says all); each allowed write \
             is sent once the person confirms it through the client (elicitation), and refused \
             when the client cannot ask, unless --no-confirm. --max-writes bounds a session's \
             writes, --enterprise the enterprises a call may name. A refused call is a tool \
             error naming the flag that allows it. Every call is a line of the audit log.",
        )
        .arg(
            Arg::new("allow-writes")
                .long("allow-writes")
                .value_name("OPERATION,…|all")
                .value_delimiter(',')
                .action(ArgAction::Append)
                .help("The writes to list and allow, by operationId, or `all` [default: none]"),
        )
        .arg(
            Arg::new("no-confirm")
                .long("no-confirm")
                .action(ArgAction::SetTrue)
                .help("Send the allowed writes without asking a person first"),
        )
        .arg(
            Arg::new("max-writes")
                .long("max-writes")
                .value_name("N")
                .value_parser(value_parser!(u32))
                .help("The most writes a session sends [default: no limit]"),
        )
        .arg(
            Arg::new("enterprise")
                .long("enterprise")
                .value_name("EG-…")
                .value_delimiter(',')
                .action(ArgAction::Append)
                .help("Only calls that name these enterprises (enterpriseGlobalId) are sent"),
        )
        .arg(
            Arg::new("confirm-timeout")
                .long("confirm-timeout")
                .value_name("SECONDS")
                .value_parser(value_parser!(u64).range(1..=3600))
                .help(format!(
                    "How long a confirmation waits for the person's answer [default: {}]",
                    policy::DEFAULT_CONFIRM_TIMEOUT.as_secs()
                )),
        )
        .arg(
            Arg::new("max-result-bytes")
                .long("max-result-bytes")
                .value_name("BYTES")
                .value_parser(value_parser!(usize))
                .help(format!(
                    "The most a result holds; a longer list is cut, with a note [default: {}]",
                    reply::DEFAULT_MAX_RESULT_BYTES
                )),
        )
        .arg(
            Arg::new("max-page-size")
                .long("max-page-size")
                .value_name("N")
                .value_parser(value_parser!(i64).range(1..))
                .help(format!(
                    "The largest page a list tool may ask for [default: {}]",
                    catalogue::DEFAULT_MAX_PAGE_SIZE
                )),
        )
        .arg(
            Arg::new("audit-log")
                .long("audit-log")
                .value_name("FILE")
                .help(format!(
                    "Where each call is logged, as JSON lines [default: {} in the config directory]",
                    audit::DEFAULT_FILE
                )),
        )
        .arg(
            Arg::new("har")
                .long("har")
                .value_name("FILE")
                .help("Record the calls sent as HAR 1.2, for the integration report"),
        )
        .arg(
            Arg::new("http")
                .long("http")
                .value_name("ADDR")
                .help(format!(
                    "Serve streamable HTTP at http://ADDR/mcp (loopback only), clients sending \
                     the bearer token in {} [default: stdio]",
                    http::TOKEN_VAR
                )),
        )
}

/// The values of the configuration that are secrets: never in a result, a log line or
/// the audit log, wherever the platform or a client puts them.
fn secrets(ctx: &Context) -> Vec<String> {
    [
        "LICENSING_APP_TOKEN",
        "LICENSING_CLIENT_TOKEN",
        "LICENSING_USER_TOKEN",
        "LICENSING_SANDBOX_TOKEN",
        "LICENSING_APP_KEY",
        http::TOKEN_VAR,
    ]
    .iter()
    .filter_map(|var| ctx.var(var))
    .collect()
}

/// Every tool: the operations', the bulk orders' (made from `batchOrder`'s), and with
/// `sandbox` the simulator's admin API's.
fn tools(max_page_size: i64, sandbox: bool) -> Result<catalogue::Catalogue, String> {
    let mut catalogue = catalogue::Catalogue::from_specs(max_page_size)?;
    let batch = catalogue
        .find("batchOrder")
        .ok_or("batchOrder: not in the specs (the bulk tool is made from it)")?;
    let bulk = bulk::tool(batch)?;
    catalogue.tools.push(bulk);
    if sandbox {
        catalogue.tools.extend(admin::tools()?);
    }
    Ok(catalogue)
}

/// Runs `licensing mcp` until the client ends the session (stdio) or the server is
/// stopped (HTTP).
pub async fn run(ctx: Context, m: &ArgMatches) -> Result<(), CliError> {
    let list = |name: &str| -> Vec<String> {
        m.get_many::<String>(name)
            .into_iter()
            .flatten()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let max_page_size = m
        .get_one::<i64>("max-page-size")
        .copied()
        .unwrap_or(catalogue::DEFAULT_MAX_PAGE_SIZE);
    let sandbox = admin::is_simulator(&ctx).await;
    if sandbox {
        say("the target is a simulator: its admin API is listed too, as sandbox_* tools");
    }
    let catalogue =
        tools(max_page_size, sandbox).map_err(|e| CliError::usage(format!("the specs: {e}")))?;
    let policy = policy::Policy::new(
        &catalogue,
        list("allow-writes"),
        !m.get_flag("no-confirm"),
        m.get_one::<u32>("max-writes").copied(),
        list("enterprise"),
        m.get_one::<u64>("confirm-timeout")
            .map_or(policy::DEFAULT_CONFIRM_TIMEOUT, |s| Duration::from_secs(*s)),
    )?;
    let token = match m.get_one::<String>("http") {
        Some(_) => Some(http::token(ctx.var(http::TOKEN_VAR))?),
        None => None,
    };
    let config_dir = crate::config::config_dir()?;
    let audit_path = match m.get_one::<String>("audit-log") {
        Some(path) => PathBuf::from(path),
        None => {
            std::fs::create_dir_all(&config_dir).map_err(|e| {
                CliError::usage(format!("cannot create {}: {e}", config_dir.display()))
            })?;
            config_dir.join(audit::DEFAULT_FILE)
        }
    };
    let secrets = secrets(&ctx);
    let har = match m.get_one::<String>("har") {
        Some(path) => Some(har::Har::create(
            std::path::Path::new(path),
            secrets.clone(),
        )?),
        None => None,
    };
    let audit = audit::Audit::open(&audit_path, secrets.clone())?;
    say(&format!("audit log: {}", audit.path().display()));
    let max_result_bytes = m
        .get_one::<usize>("max-result-bytes")
        .copied()
        .unwrap_or(reply::DEFAULT_MAX_RESULT_BYTES);
    let server = Arc::new(session::Server::new(
        catalogue,
        policy,
        ctx,
        audit,
        session::Limits {
            max_result_bytes,
            orders_dir: config_dir.join(bulk::FOLDER),
        },
        har,
        secrets,
    ));
    match (m.get_one::<String>("http"), token) {
        (Some(addr), Some(token)) => http::serve(server, addr, token).await,
        _ => wire::serve_stdio(server).await.map_err(CliError::usage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bulk_tool_and_the_admin_tools_join_the_operations() {
        let platform = catalogue::Catalogue::from_specs(catalogue::DEFAULT_MAX_PAGE_SIZE).unwrap();
        let all = tools(catalogue::DEFAULT_MAX_PAGE_SIZE, true).unwrap();
        let bulk = all.find(bulk::NAME).unwrap();
        assert!(bulk.hints.idempotent && !bulk.hints.read_only);
        assert_eq!(bulk.input["properties"]["orders"]["type"], "array");
        assert!(bulk.input["$defs"].get("LicenseOrder").is_some());
        let journal = all.find("sandbox_listJournal").unwrap();
        assert!(journal.hints.read_only);
        assert!(
            all.find("sandbox_reset")
                .is_some_and(|t| t.hints.destructive)
        );
        assert!(
            all.find("sandbox_createTenant").is_none(),
            "its reply holds tokens"
        );
        let without = tools(catalogue::DEFAULT_MAX_PAGE_SIZE, false).unwrap();
        assert_eq!(without.tools.len(), platform.tools.len() + 1);
        assert!(
            !without
                .tools
                .iter()
                .any(|t| t.name.starts_with(admin::PREFIX))
        );
    }
}
