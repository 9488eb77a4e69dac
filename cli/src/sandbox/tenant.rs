//! `licensing sandbox tenant …`: tenants, sandboxes of their own inside one simulator
//! (served under `/t/{id}` with tokens of their own), and a profile made from one.

use std::num::NonZeroU64;

use clap::{Arg, ArgMatches, Command, value_parser};
use licensing_sandbox_client::{self as admin, types as t};
use serde_json::Value;

use super::failed;
use crate::{
    config::{self, Context},
    error::CliError,
    output::{Format, Sink},
    terminal::escape,
};

/// `tenant create`, `tenant list`, `tenant get`, `tenant delete`.
pub(super) fn command() -> Command {
    let id = || {
        Arg::new("id")
            .required(true)
            .value_name("ID")
            .help("The tenant's id (32 lowercase hexadecimal digits)")
    };
    Command::new("tenant")
        .about("Tenants: sandboxes of their own in one simulator, for parallel workers and teams")
        .subcommand_required(true)
        .subcommand(create_command())
        .subcommand(Command::new("list").about("Lists the live tenants, without their tokens"))
        .subcommand(
            Command::new("get")
                .about("Shows one tenant with its tokens")
                .arg(id()),
        )
        .subcommand(
            Command::new("delete")
                .about(
                    "Deletes a tenant with everything it holds, and prints it without its tokens",
                )
                .arg(id()),
        )
}

fn create_command() -> Command {
    Command::new("create")
        .about("Creates a tenant; with --profile, a profile that reaches it")
        .long_about(
            "Creates a tenant: a sandbox of its own (state, ids, clock, faults, journal) under \
             /t/{id} of the simulator, with tokens of its own. It prints the tenant with its \
             tokens; with --profile NAME it writes instead a new profile NAME (the tenant's URL \
             as the order, member and sandbox URLs, its tokens in the owner-only credentials \
             file) and prints the tenant without them, so that `--profile NAME` reaches the \
             tenant. The simulator itself is reached as every sandbox command reaches it, \
             from the flags, the environment, LICENSING_PROFILE or the `default` profile.",
        )
        .arg(
            Arg::new("name")
                .long("name")
                .value_name("NAME")
                .help("A name shown in lists (a branch, a test worker); at most 100 characters"),
        )
        .arg(
            Arg::new("seed")
                .long("seed")
                .value_name("NAME")
                .help("A built-in seed it starts with: demo"),
        )
        .arg(
            Arg::new("region")
                .long("region")
                .value_parser(["domestic", "singapore"])
                .help("The region marker of its asset numbers (default: domestic)"),
        )
        .arg(
            Arg::new("ttl")
                .long("ttl")
                .value_name("SECS")
                .value_parser(value_parser!(u64).range(1..=2_592_000))
                .help("Seconds without a request after which it is removed (default: the simulator's --tenant-ttl-secs)"),
        )
}

/// Whether the command is `tenant create`, whose `--profile` names the profile it writes
/// rather than the one to read.
pub(super) fn writes_profile(m: &ArgMatches) -> bool {
    matches!(m.subcommand(), Some(("tenant", m)) if matches!(m.subcommand(), Some(("create", _))))
}

pub(super) async fn run(
    ctx: &Context,
    admin: &admin::Client,
    m: &ArgMatches,
    sink: &mut Sink,
) -> Result<(), CliError> {
    // A tenant's prefix serves its own admin API but not the tenants: those are the
    // simulator's, at its own address.
    let url = ctx
        .var("LICENSING_SANDBOX_URL")
        .or_else(|| ctx.var("LICENSING_ORDER_URL"))
        .unwrap_or_default();
    if is_tenant_url(&url) {
        return Err(CliError::usage(format!(
            "{url} is a tenant's address: tenants are managed at the simulator's own \
             (--sandbox-url, or another profile)"
        )));
    }
    match m.subcommand().expect("clap requires a subcommand") {
        ("create", m) => create(ctx, admin, m, sink).await,
        ("list", _) => {
            let list = admin.list_tenants().send().await.map_err(failed)?;
            sink.value(&list.into_inner())
        }
        ("get", m) => {
            let id = tenant_id(m)?;
            let tenant = admin.get_tenant().id(id).send().await.map_err(failed)?;
            shown(sink, &tenant.into_inner(), None)
        }
        // The admin API answers a deletion with no body: the tenant is read first, so
        // that the command can show what it removed.
        ("delete", m) => {
            let id = tenant_id(m)?;
            let tenant = admin.get_tenant().id(id).send().await.map_err(failed)?;
            admin.delete_tenant().id(id).send().await.map_err(failed)?;
            shown(sink, &tenant.into_inner(), Some(""))
        }
        _ => unreachable!(),
    }
}

/// The id argument, refused before anything is sent unless it has an id's shape (the
/// simulator would answer `404` for any other).
fn tenant_id(m: &ArgMatches) -> Result<&str, CliError> {
    let id = m.get_one::<String>("id").expect("required").as_str();
    if is_id(id) {
        Ok(id)
    } else {
        Err(CliError::invalid(
            "ID",
            "must be a tenant's id: 32 lowercase hexadecimal digits",
        ))
    }
}

async fn create(
    ctx: &Context,
    admin: &admin::Client,
    m: &ArgMatches,
    sink: &mut Sink,
) -> Result<(), CliError> {
    let spec = spec(m)?;
    let profile = m.get_one::<String>("profile");
    // Checked first: a tenant created for a profile that cannot be written would be left
    // behind with nobody holding its tokens.
    if let Some(name) = profile
        && config::profile_exists(name)?
    {
        return Err(CliError::usage(format!(
            "profile `{name}` exists: `licensing profile remove {name}` first, or name \
             another; nothing was created"
        )));
    }
    let tenant = admin
        .create_tenant()
        .body(spec)
        .send()
        .await
        .map_err(failed)?
        .into_inner();
    let Some(name) = profile else {
        return shown(sink, &tenant, None);
    };
    if let Err(e) = config::save_profile(name, &profile_values(ctx, &tenant)) {
        // Best effort: without its profile nobody holds the tenant's tokens.
        let _ = admin.delete_tenant().id(&tenant.id).send().await;
        return Err(e);
    }
    shown(sink, &tenant, Some(name))
}

/// The tenant `create` asks for, read by the admin API's own schema before it is sent.
fn spec(m: &ArgMatches) -> Result<t::TenantSpec, CliError> {
    let name = m
        .get_one::<String>("name")
        .map(|name| t::TenantSpecName::try_from(name.as_str()))
        .transpose()
        .map_err(|e| CliError::invalid("--name", e))?;
    let seed = m
        .get_one::<String>("seed")
        .map(|name| {
            name.parse::<t::BuiltinSeed>().map_err(|_| {
                CliError::invalid("--seed", format!("`{name}` is not a built-in seed (demo)"))
            })
        })
        .transpose()?;
    let region = m
        .get_one::<String>("region")
        .map(|r| r.parse::<t::TenantRegion>().expect("clap checked it"));
    Ok(t::TenantSpec {
        name,
        seed,
        region,
        ttl: m.get_one::<u64>("ttl").copied().and_then(NonZeroU64::new),
    })
}

/// What the profile made from `tenant` holds: its URL for both services and the admin
/// API, its four tokens, and how this run reaches the simulator (a CA file, a proxy),
/// which reaches the tenant too.
fn profile_values(ctx: &Context, tenant: &t::Tenant) -> Vec<(&'static str, String)> {
    let url = &tenant.url;
    let mut values = vec![
        ("order_url", url.clone()),
        ("member_url", url.clone()),
        ("sandbox_url", url.clone()),
        ("app_token", tenant.tokens.app.clone()),
        ("client_token", tenant.tokens.client.clone()),
        ("user_token", tenant.tokens.user.clone()),
        ("sandbox_token", tenant.tokens.admin.clone()),
    ];
    for (key, var) in [
        ("ca_file", "LICENSING_CA_FILE"),
        ("proxy", "LICENSING_PROXY"),
    ] {
        if let Some(value) = ctx.var(var) {
            values.push((key, value));
        }
    }
    values
}

/// Prints a tenant: with its tokens (as `tokens.app`, … lines in a table, where a cell
/// would cut them), or, given `without`, with them left out and `profile` naming where
/// they went (empty: nowhere, the tenant is gone).
fn shown(sink: &mut Sink, tenant: &t::Tenant, without: Option<&str>) -> Result<(), CliError> {
    let Value::Object(mut fields) = serde_json::to_value(tenant).expect("serializable") else {
        unreachable!("a tenant is an object")
    };
    let tokens = fields.remove("tokens");
    match without {
        Some("") => {}
        Some(profile) => {
            fields.insert("profile".into(), profile.into());
        }
        None => match sink.format {
            Format::Json => {
                fields.insert("tokens".into(), tokens.unwrap_or_default());
            }
            Format::Table => {
                if let Some(Value::Object(tokens)) = tokens {
                    for (key, token) in tokens {
                        fields.insert(format!("tokens.{key}"), token);
                    }
                }
            }
        },
    }
    match sink.format {
        Format::Json => sink.value(&fields),
        Format::Table => sink.write(lines(&fields).as_bytes()),
    }
}

/// `field  value` lines, each value escaped and whole (its URL and tokens are copied
/// from here, and a table would cut them), a nested one as compact JSON.
fn lines(fields: &serde_json::Map<String, Value>) -> String {
    let width = fields.keys().map(String::len).max().unwrap_or(0);
    fields
        .iter()
        .map(|(key, value)| {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string);
            format!("{:width$}  {}\n", escape(key), escape(&value))
        })
        .collect()
}

/// A failure of a call whose base URL (the first of `vars` set) is a tenant's: a `404`
/// there means the tenant is gone, which the message then says.
pub(super) fn gone(ctx: &Context, vars: &[&str], mut e: CliError) -> CliError {
    let url = vars.iter().find_map(|var| ctx.var(var));
    if let Some(url) = url.filter(|url| e.status == Some(404) && is_tenant_url(url)) {
        e.message = format!(
            "{}: no tenant at {url} any more (deleted, or removed after its time to live \
             without a request; `licensing sandbox tenant list` shows the live ones)",
            e.message
        );
    }
    e
}

/// Whether `url` ends in a tenant's prefix, `/t/{id}`.
fn is_tenant_url(url: &str) -> bool {
    let mut segments = url.trim_end_matches('/').rsplit('/');
    let id = segments.next().unwrap_or_default();
    segments.next() == Some("t") && is_id(id)
}

/// A tenant id's shape: 32 lowercase hexadecimal digits.
fn is_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_url_ends_in_its_prefix() {
        let id = "0123456789abcdef0123456789abcdef";
        assert!(is_tenant_url(&format!("http://127.0.0.1:8080/t/{id}")));
        assert!(is_tenant_url(&format!(
            "https://sandbox.example/base/t/{id}/"
        )));
        assert!(!is_tenant_url("http://127.0.0.1:8080"));
        assert!(!is_tenant_url(&format!("http://127.0.0.1:8080/x/{id}")));
        assert!(!is_tenant_url(&format!("http://h/t/{}", id.to_uppercase())));
        assert!(!is_tenant_url(&format!("http://h/t/{id}0")));
        assert!(!is_tenant_url("http://h/t/"));
    }
}
