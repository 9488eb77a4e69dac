//! The command tree: the service commands built from the generated operation records,
//! and the hand-written ones (`api`, `orders`, `sandbox`, `profile`, `completion`).

use clap::{Arg, ArgAction, Command, builder::PossibleValuesParser, value_parser};

use crate::{
    config::{self, KEYS},
    ops::{CliOp, Kind, Location, OPERATIONS, Paged, Service},
};

const EXIT_CODES: &str = "\
Configuration: flags over LICENSING_* environment variables over the profile (--profile,
LICENSING_PROFILE, else `default`) in $LICENSING_CONFIG_DIR or the user's config directory
(`licensing profile add`).

Exit codes:
  0    success
  1    the platform answered with an error (or a bulk line failed)
  2    usage: a bad flag, body, configuration or input; nothing was sent
  3    transport: the service was not reached, or the outcome is unknown
  130  interrupted (Ctrl-C)";

/// The whole command line.
pub fn command() -> Command {
    Command::new("licensing")
        .version(env!("CARGO_PKG_VERSION"))
        .about("The command line of the licensing platform's order service and member center")
        .after_long_help(EXIT_CODES)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .args(global_args())
        .subcommand(service(
            Service::Order,
            "The order service: enterprises, batch orders, locks, virtual assets, asset numbers",
        ))
        .subcommand(service(
            Service::Member,
            "The member center: employees, asset assignment, lent locks",
        ))
        .subcommand(api())
        .subcommand(orders())
        .subcommand(crate::sandbox::command())
        .subcommand(crate::mcp::command())
        .subcommand(crate::probe::command())
        .subcommand(profile())
        .subcommand(
            Command::new("completion")
                .about("Prints a shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(value_parser!(clap_complete::Shell)),
                ),
        )
}

fn global_args() -> Vec<Arg> {
    global_args_ungrouped()
        .into_iter()
        .map(|arg| arg.help_heading("Global options"))
        .collect()
}

fn global_args_ungrouped() -> Vec<Arg> {
    let text = |name: &'static str, help: &'static str| {
        Arg::new(name)
            .long(name)
            .global(true)
            .value_name("VALUE")
            .help(help)
    };
    vec![
        text(
            "profile",
            "The profile to use (default: LICENSING_PROFILE, else `default`)",
        ),
        Arg::new("output")
            .long("output")
            .short('o')
            .global(true)
            .value_parser(["json", "table"])
            .help("Output format (default: table on a terminal, JSON otherwise)"),
        Arg::new("verbose")
            .long("verbose")
            .short('v')
            .global(true)
            .action(ArgAction::SetTrue)
            .help("On failure, print every cause of the error"),
        text(
            "order-url",
            "The order service's base URL [LICENSING_ORDER_URL]",
        ),
        text(
            "member-url",
            "The member center's base URL [LICENSING_MEMBER_URL]",
        ),
        text(
            "sandbox-url",
            "The simulator's base URL [LICENSING_SANDBOX_URL]",
        ),
        text(
            "timeout",
            "Time allowed per attempt: 30s, 500ms, 2m [LICENSING_TIMEOUT]",
        ),
        text(
            "deadline",
            "Time allowed per call, retries included [LICENSING_DEADLINE]",
        ),
        Arg::new("retry")
            .long("retry")
            .global(true)
            .value_parser(["standard", "never"])
            .help("Retry policy [LICENSING_RETRY]"),
    ]
}

fn service(service: Service, about: &'static str) -> Command {
    Command::new(service.command())
        .about(about)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommands(
            OPERATIONS
                .iter()
                .filter(|op| op.service == service)
                .map(operation),
        )
}

/// One operation's command, from its generated record.
pub fn operation(op: &'static CliOp) -> Command {
    let mut command = Command::new(op.name)
        .about(op.about)
        .long_about(format!("{}\n\n{} {}", op.long_about, op.method, op.path));
    for flag in op.flags() {
        let param = flag.location != Location::Body;
        let secret_var = param.then(|| config::param_var(flag.wire)).flatten();
        let paging = op
            .paged
            .as_ref()
            .filter(|_| flag.location == Location::Query)
            .and_then(|p| {
                if flag.wire == p.page {
                    Some("With --paginate: 1 unless given.".to_string())
                } else if flag.wire == p.size {
                    Some(format!(
                        "With --paginate: {} unless given; {}.",
                        Paged::default_size(flag),
                        if matches!(flag.kind, Kind::Int { max: Some(_), .. }) {
                            "the spec's maximum"
                        } else {
                            "the spec documents no maximum"
                        }
                    ))
                } else {
                    None
                }
            });
        let help = match (secret_var, &paging) {
            (Some(var), _) => format!(
                "{} Default: {var}, else the profile's {}; `-` reads it from stdin.",
                flag.help,
                var.trim_start_matches("LICENSING_").to_ascii_lowercase()
            ),
            (None, Some(paging)) if flag.required => format!("{} {paging}", flag.help),
            _ => flag.help.to_string(),
        };
        let mut arg = Arg::new(flag.flag).long(flag.flag).help(help);
        arg = match flag.kind {
            Kind::Str => arg.value_name("TEXT"),
            Kind::Int { min, max } => arg.value_name("INTEGER").value_parser(
                value_parser!(i64).range(min.unwrap_or(i64::MIN)..=max.unwrap_or(i64::MAX)),
            ),
            Kind::Number => arg.value_name("NUMBER").value_parser(value_parser!(f64)),
            Kind::Bool => arg.value_name("BOOL").value_parser(value_parser!(bool)),
            Kind::Enum(values) => {
                arg.value_parser(PossibleValuesParser::new(values.iter().copied()))
            }
            Kind::IntEnum(values) => {
                arg.value_parser(PossibleValuesParser::new(values.iter().map(|v| {
                    clap::builder::PossibleValue::new(clap::builder::Str::from(v.to_string()))
                })))
            }
        };
        // A body field may come from --json-body instead, a secret parameter from its
        // variable or the profile (checked when the input is read), and the page flags
        // have defaults under --paginate.
        if flag.required && param && secret_var.is_none() {
            arg = if paging.is_some() {
                arg.required_unless_present("paginate")
            } else {
                arg.required(true)
            };
        }
        command = command.arg(arg);
    }
    if let Some(body) = &op.body {
        command = command.arg(
            Arg::new("json-body")
                .long("json-body")
                .value_name("FILE|-")
                .required(body.required && body.fields.is_empty())
                .help(format!(
                    "The whole body, a `{}` object, from a file or stdin (-); field flags override its fields",
                    body.schema
                )),
        );
    }
    if op.paged.is_some() {
        command = command.arg(
            Arg::new("paginate")
                .long("paginate")
                .action(ArgAction::SetTrue)
                .help("Fetch every page from --page-num (default 1) on; print one item per line (JSON lines)"),
        );
    }
    command
}

fn api() -> Command {
    Command::new("api")
        .about("Sends a raw request, with the credentials and g_nonce added; prints the reply as received")
        .long_about(
            "Sends a raw request to the service that serves PATH (chosen by its path prefix, or \
             --service), with the service's credentials and a fresh g_nonce added, and prints the \
             reply body as received, envelope included. Exits 0 when the reply's code is 0, 1 \
             otherwise.",
        )
        .arg(Arg::new("method").required(true).help("GET, POST, PUT or DELETE"))
        .arg(Arg::new("path").required(true).help("The path, with its query string if any"))
        .arg(
            Arg::new("service")
                .long("service")
                .value_parser(["order", "member"])
                .help("The service (default: the one whose paths start like PATH)"),
        )
        .arg(
            Arg::new("field")
                .long("field")
                .short('f')
                .value_name("KEY=VALUE")
                .action(ArgAction::Append)
                .help("A body field, as a string; KEY:=JSON for another JSON value"),
        )
        .arg(
            Arg::new("query")
                .long("query")
                .short('q')
                .value_name("KEY=VALUE")
                .action(ArgAction::Append)
                .help("A query parameter"),
        )
        .arg(
            Arg::new("input")
                .long("input")
                .value_name("FILE|-")
                .conflicts_with("field")
                .help("The body, sent as it is, from a file or stdin (-)"),
        )
        .arg(
            Arg::new("include")
                .long("include")
                .short('i')
                .action(ArgAction::SetTrue)
                .help("Print the HTTP status line and headers before the body"),
        )
}

fn orders() -> Command {
    Command::new("orders")
        .about("Bulk license orders")
        .subcommand_required(true)
        .subcommand(crate::bulk::command())
}

fn profile() -> Command {
    let mut add = Command::new("add")
        .about("Creates or updates a profile (secrets go to the private credentials.toml)")
        .arg(Arg::new("name").required(true));
    for (key, secret) in KEYS {
        let flag = key.replace('_', "-");
        // The global flags (--order-url, --timeout, …) set these keys too.
        if crate::config::FLAG_VARS.iter().any(|(f, _)| *f == flag) {
            continue;
        }
        let help = if *secret {
            format!("{} (`-` reads it from stdin)", crate::config::key_help(key))
        } else {
            crate::config::key_help(key)
        };
        add = add.arg(
            Arg::new(flag.clone())
                .long(flag)
                .value_name("VALUE")
                .help(help),
        );
    }
    add = add.arg(
        Arg::new("set")
            .long("set")
            .value_name("KEY=VALUE")
            .action(ArgAction::Append)
            .help("Any key, by its name in the file"),
    );
    Command::new("profile")
        .about("Named settings in the user's config directory")
        .subcommand_required(true)
        .subcommand(add)
        .subcommand(Command::new("list").about("Lists the profiles"))
        .subcommand(
            Command::new("show")
                .about("Shows a profile's settings (tokens hidden)")
                .arg(Arg::new("name")),
        )
        .subcommand(
            Command::new("remove")
                .about("Removes a profile from config.toml and credentials.toml")
                .arg(Arg::new("name").required(true)),
        )
}
