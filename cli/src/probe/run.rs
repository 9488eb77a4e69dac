//! A run of `licensing probe`: its settings, the plan, the checks in order, the undo of
//! anything left, the reports, the exit code; and `--finish`.

use std::{collections::BTreeMap, path::PathBuf, sync::Arc, time::Duration};

use clap::ArgMatches;

use super::{
    context::{Creds, Inputs, Probe},
    har,
    http::{Http, Limits},
    ledger::{self, DEFAULT_MAX_WRITES, Ledger},
    outcome::{Judged, Outcome, not_run},
    plan::{self, Check, Kind, Spec, Tier},
    reads,
    redact::Secrets,
    report::{self, Comparison, Deployment, Report},
    signals, undo, writes,
};
use crate::{
    config::Context,
    error::{CliError, exit},
    output::Format,
};

/// The most bytes of a CA file read.
const MAX_CA_BYTES: u64 = 1024 * 1024;

/// Runs `licensing probe`.
pub async fn run(ctx: &Context, m: &ArgMatches, format: Format) -> Result<(), CliError> {
    let specs = Spec::both().map_err(CliError::usage)?;
    let all = plan::plan(&specs).map_err(CliError::usage)?;
    if let Some(path) = m.get_one::<String>("finish") {
        return finish(ctx, &specs, &PathBuf::from(path)).await;
    }
    let writes = m.get_flag("writes");
    let irreversible = m.get_flag("irreversible");
    let checks: Vec<Check> = all
        .into_iter()
        .filter(|c| match c.tier {
            Tier::Read | Tier::Refusal => true,
            Tier::Write => writes,
            Tier::Irreversible => irreversible,
        })
        .collect();
    if m.get_flag("plan") {
        let text = match format {
            Format::Json => serde_json::to_string_pretty(&checks).expect("JSON") + "\n",
            Format::Table => report::plan_markdown(&checks),
        };
        return print(&text);
    }
    let inputs = inputs(m)?;
    if writes && inputs.enterprises.is_empty() {
        return Err(CliError::usage(
            "--writes needs at least one --enterprise: only allow-listed ids are written to; nothing was sent",
        ));
    }
    let limits = limits(ctx, m)?;
    let (order_url, member_url) = urls(ctx)?;
    let creds = creds(ctx);
    let http = Arc::new(http(ctx, &order_url, &member_url, limits, &creds)?);
    if irreversible && !m.get_flag("simulator") && !is_simulator(ctx, &order_url, limits).await {
        return Err(CliError::usage(format!(
            "--irreversible only against a simulator, and {order_url} does not answer as one (its \
             admin API); give --simulator if it is one; nothing was sent"
        )));
    }
    let ledger_file = (writes || irreversible).then(|| ledger_path(m));
    // Listening before the ledger exists: a signal from then on is a stop, never the
    // default death.
    let watch = signals::watch(
        http.clone(),
        ledger_file.as_ref().map(|p| p.display().to_string()),
    )?;
    let mut ledger = match &ledger_file {
        Some(path) => Some(new_ledger(m, path, &order_url, &member_url, &inputs)?),
        None => None,
    };
    let mut probe = Probe {
        http: &http,
        specs: &specs,
        creds: &creds,
        inputs: &inputs,
        found: BTreeMap::new(),
    };
    let outcomes = execute(&mut probe, ledger.as_mut(), &checks).await?;
    let left = match ledger.as_mut() {
        Some(ledger) => undo::all(&probe, ledger).await?,
        None => Vec::new(),
    };
    let deployment = Deployment {
        order_url: order_url.clone(),
        member_url: member_url.clone(),
    };
    let writes_made = ledger.as_ref().map_or(0, Ledger::writes);
    let mut report = Report::new(deployment, outcomes, http.sent(), writes_made);
    report.summary.not_undone = left.len();
    if let Some(url) = m.get_one::<String>("compare-with") {
        let there = compare_run(&specs, &checks, &creds, &inputs, url, limits).await?;
        report.comparison = Some(Comparison {
            with: url.clone(),
            differences: report::compare(&report.outcomes, &there),
        });
    }
    write_outputs(m, &report, &http)?;
    print(&match format {
        Format::Json => serde_json::to_string_pretty(&report).expect("JSON") + "\n",
        Format::Table => report::markdown(&report),
    })?;
    watch.abort();
    ending(&report, &http, ledger.as_ref(), &left)
}

/// The exit code a run calls for, with its message.
fn ending(
    report: &Report,
    http: &Http,
    ledger: Option<&Ledger>,
    left: &[(u64, String)],
) -> Result<(), CliError> {
    let finish = ledger.map_or_else(String::new, |l| {
        format!("`licensing probe --finish {}`", l.path().display())
    });
    if !left.is_empty() {
        let list: Vec<String> = left
            .iter()
            .map(|(s, why)| format!("write {s}: {why}"))
            .collect();
        return Err(CliError::new(
            exit::TRANSPORT,
            format!(
                "{} write(s) not undone yet ({}): {finish}",
                left.len(),
                list.join("; ")
            ),
        ));
    }
    if let Some((why, code)) = http.stopped() {
        return Err(CliError::new(
            code,
            format!("{why}; every write made was undone"),
        ));
    }
    let differences = report
        .comparison
        .as_ref()
        .map_or(0, |c| c.differences.len());
    if report.summary.departs > 0 || differences > 0 {
        return Err(CliError::new(exit::API, ""));
    }
    let reached = report
        .outcomes
        .iter()
        .flat_map(|o| &o.exchanges)
        .any(|x| x.status != 0);
    if !reached && !report.outcomes.is_empty() {
        return Err(CliError::new(
            exit::TRANSPORT,
            "the deployment was not reached: no check could run",
        ));
    }
    Ok(())
}

/// Every check in order: a refusal answered as a success stops the refusals.
async fn execute(
    probe: &mut Probe<'_>,
    mut ledger: Option<&mut Ledger>,
    checks: &[Check],
) -> Result<Vec<Outcome>, CliError> {
    let mut outcomes = Vec::new();
    let mut accepted: Option<String> = None;
    let mut edit: Option<Judged> = None;
    let with_edit = checks.iter().any(|c| c.kind == Kind::MemberEditRestore);
    for check in checks {
        let mark = probe.http.mark();
        let judged = match (check.tier, ledger.as_deref_mut()) {
            (Tier::Refusal, _) if accepted.is_some() => not_run(format!(
                "not sent: {} was accepted, so the probe sends nothing more it expects refused",
                accepted.as_deref().unwrap_or_default()
            )),
            (Tier::Read | Tier::Refusal, _) => match reads::run(probe, check).await {
                Ok(judged) => judged,
                Err(judged) => {
                    if check.tier == Tier::Refusal {
                        accepted = Some(check.id.clone());
                    }
                    judged
                }
            },
            (_, None) => not_run("no ledger"),
            (_, Some(ledger)) => match &check.kind {
                Kind::LockRoundTrip => writes::lock_round_trip(probe, ledger).await?,
                Kind::UnknownLock => writes::unknown_lock(probe, ledger).await?,
                Kind::MemberAddDelete => {
                    let (added, edited) = writes::employee(probe, ledger, with_edit).await?;
                    edit = edited;
                    added
                }
                Kind::MemberEditRestore => edit
                    .take()
                    .unwrap_or_else(|| not_run("runs inside member.employee.add-delete")),
                Kind::ShellNumbers => writes::shell_numbers(probe, ledger).await?,
                other => not_run(format!("{other:?} is not a write")),
            },
        };
        let exchanges = if check.kind == Kind::MemberEditRestore {
            outcomes
                .iter()
                .rev()
                .find(|o: &&Outcome| o.check.kind == Kind::MemberAddDelete)
                .map(|o| o.exchanges.clone())
                .unwrap_or_default()
        } else {
            probe.http.since(mark)
        };
        outcomes.push(Outcome {
            check: check.clone(),
            verdict: judged.0,
            why: judged.1,
            exchanges,
        });
    }
    Ok(outcomes)
}

/// The reads and refusals against a second deployment.
async fn compare_run(
    specs: &[Spec],
    checks: &[Check],
    creds: &Creds,
    inputs: &Inputs,
    url: &str,
    limits: Limits,
) -> Result<Vec<Outcome>, CliError> {
    let http = Http::new(url, url, limits, secrets(creds), None)
        .map_err(|e| CliError::usage(format!("--compare-with: {e}")))?;
    let mut probe = Probe {
        http: &http,
        specs,
        creds,
        inputs,
        found: BTreeMap::new(),
    };
    let reads: Vec<Check> = checks
        .iter()
        .filter(|c| c.tier <= Tier::Refusal)
        .cloned()
        .collect();
    execute(&mut probe, None, &reads).await
}

/// `--finish LEDGER`: the writes a stopped run left, undone (each read back first).
async fn finish(ctx: &Context, specs: &[Spec], path: &std::path::Path) -> Result<(), CliError> {
    let mut ledger = Ledger::open(path)?;
    let creds = creds(ctx);
    let limits = limits_of(ctx, None)?;
    let http = Arc::new(http(
        ctx,
        &ledger.run.order_url,
        &ledger.run.member_url,
        limits,
        &creds,
    )?);
    let watch = signals::watch(http.clone(), Some(path.display().to_string()))?;
    let inputs = ledger.run.inputs.clone();
    let probe = Probe {
        http: &http,
        specs,
        creds: &creds,
        inputs: &inputs,
        found: BTreeMap::new(),
    };
    let left = undo::all(&probe, &mut ledger).await?;
    watch.abort();
    // One line a write, each escaped on its own: the ids in it came from a deployment.
    for (seq, entry) in &ledger.entries {
        let undo = match (&entry.undone, entry.open()) {
            (Some(result), _) => result.as_str(),
            (None, true) => "not yet",
            (None, false) => "none needed",
        };
        let line = format!(
            "write {seq}: {} — {}, undo: {undo}",
            serde_json::to_string(&entry.write).expect("JSON"),
            entry.written.as_deref().unwrap_or("outcome unknown"),
        );
        eprintln!("{}", crate::terminal::escape(&line));
    }
    if left.is_empty() {
        Ok(())
    } else {
        let list: Vec<String> = left
            .iter()
            .map(|(s, why)| format!("write {s}: {why}"))
            .collect();
        Err(CliError::new(
            exit::TRANSPORT,
            format!(
                "{} write(s) not undone yet: {}",
                left.len(),
                list.join("; ")
            ),
        ))
    }
}

/// The allow-list and the query's ids, each checked.
fn inputs(m: &ArgMatches) -> Result<Inputs, CliError> {
    let list = |name: &str| -> Result<Vec<String>, CliError> {
        let mut values = Vec::new();
        for value in m.get_many::<String>(name).into_iter().flatten() {
            id(name, value)?;
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        Ok(values)
    };
    let one = |name: &str| -> Result<Option<String>, CliError> {
        m.get_one::<String>(name)
            .map(|v| id(name, v).map(|()| v.clone()))
            .transpose()
    };
    Ok(Inputs {
        enterprises: list("enterprise")?,
        assets: list("asset")?,
        channel_code: one("channel-code")?,
        channel_customer_id: one("channel-customer-id")?,
    })
}

fn id(flag: &str, value: &str) -> Result<(), CliError> {
    if value.is_empty()
        || value.len() > 256
        || value.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(CliError::invalid(
            &format!("--{flag}"),
            "must be 1 to 256 characters without spaces or control characters",
        ));
    }
    Ok(())
}

fn limits(ctx: &Context, m: &ArgMatches) -> Result<Limits, CliError> {
    let mut limits = limits_of(ctx, Some(m))?;
    if limits.rate.is_nan() || limits.rate <= 0.0 || limits.rate > 100.0 {
        return Err(CliError::invalid(
            "--rate",
            "must be above 0 and at most 100 requests a second",
        ));
    }
    if limits.max_reply_bytes < 1024 {
        return Err(CliError::invalid(
            "--max-reply-bytes",
            "must be at least 1024",
        ));
    }
    limits.max_requests = limits.max_requests.max(1);
    Ok(limits)
}

fn limits_of(ctx: &Context, m: Option<&ArgMatches>) -> Result<Limits, CliError> {
    let mut limits = Limits::default();
    if let Some(text) = ctx.var("LICENSING_TIMEOUT") {
        limits.timeout = licensing_sdk::env::parse_duration(&text)
            .filter(|d| *d > Duration::ZERO)
            .ok_or_else(|| {
                CliError::invalid(
                    "--timeout",
                    format!("`{text}` is not a duration (30s, 500ms, 2m)"),
                )
            })?;
    }
    if let Some(m) = m {
        if let Some(rate) = m.get_one::<f64>("rate") {
            limits.rate = *rate;
        }
        if let Some(n) = m.get_one::<u64>("max-requests") {
            limits.max_requests = *n;
        }
        if let Some(n) = m.get_one::<usize>("max-reply-bytes") {
            limits.max_reply_bytes = *n;
        }
    }
    Ok(limits)
}

fn urls(ctx: &Context) -> Result<(String, String), CliError> {
    let get = |var: &str, flag: &str| {
        ctx.var(var).ok_or_else(|| {
            CliError::usage(format!(
                "{var} is not set (--{flag}, or the profile's): nothing was sent"
            ))
        })
    };
    Ok((
        get("LICENSING_ORDER_URL", "order-url")?,
        get("LICENSING_MEMBER_URL", "member-url")?,
    ))
}

fn creds(ctx: &Context) -> Creds {
    Creds {
        app_token: ctx.var("LICENSING_APP_TOKEN"),
        client_token: ctx.var("LICENSING_CLIENT_TOKEN"),
        user_token: ctx.var("LICENSING_USER_TOKEN"),
    }
}

fn secrets(creds: &Creds) -> Secrets {
    let mut secrets = Secrets::default();
    for token in [&creds.app_token, &creds.client_token, &creds.user_token]
        .into_iter()
        .flatten()
    {
        secrets.add(token);
    }
    secrets
}

fn http(
    ctx: &Context,
    order: &str,
    member: &str,
    limits: Limits,
    creds: &Creds,
) -> Result<Http, CliError> {
    let ca = match ctx.var("LICENSING_CA_FILE") {
        Some(path) => {
            use std::io::Read as _;
            let mut pem = Vec::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(MAX_CA_BYTES).read_to_end(&mut pem))
                .map_err(|e| CliError::usage(format!("LICENSING_CA_FILE {path}: {e}")))?;
            Some(pem)
        }
        None => None,
    };
    Http::new(order, member, limits, secrets(creds), ca.as_deref()).map_err(CliError::usage)
}

/// Whether the deployment answers as a simulator: its admin API (`LICENSING_SANDBOX_URL`,
/// else the order service's URL) reads its clock, `{"now": …, "frozen": …}`. Read within
/// the run's bounds, as every reply.
async fn is_simulator(ctx: &Context, order_url: &str, limits: Limits) -> bool {
    let base = ctx
        .var("LICENSING_SANDBOX_URL")
        .unwrap_or_else(|| order_url.to_string());
    let Ok(client) = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(limits.timeout)
        .build()
    else {
        return false;
    };
    let mut request = client.get(format!("{}/__sandbox/v1/clock", base.trim_end_matches('/')));
    if let Some(token) = ctx.var("LICENSING_SANDBOX_TOKEN") {
        request = request.bearer_auth(token);
    }
    let Ok(mut response) = request.send().await else {
        return false;
    };
    if response.status() != reqwest::StatusCode::OK {
        return false;
    }
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_CLOCK_BYTES {
            return false;
        }
    }
    serde_json::from_slice::<serde_json::Value>(&body).is_ok_and(|clock| {
        clock.get("now").is_some_and(serde_json::Value::is_i64)
            && clock
                .get("frozen")
                .is_some_and(serde_json::Value::is_boolean)
    })
}

/// The most of the admin API's clock read: it is a few dozen bytes.
const MAX_CLOCK_BYTES: usize = 4096;

fn ledger_path(m: &ArgMatches) -> PathBuf {
    m.get_one::<String>("ledger").map_or_else(
        || {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            PathBuf::from(format!("licensing-probe-{secs}.ledger.jsonl"))
        },
        PathBuf::from,
    )
}

fn new_ledger(
    m: &ArgMatches,
    path: &std::path::Path,
    order_url: &str,
    member_url: &str,
    inputs: &Inputs,
) -> Result<Ledger, CliError> {
    let run = ledger::Run {
        version: 1,
        order_url: order_url.to_string(),
        member_url: member_url.to_string(),
        inputs: inputs.clone(),
        max_writes: m
            .get_one::<u64>("max-writes")
            .copied()
            .unwrap_or(DEFAULT_MAX_WRITES),
    };
    let ledger = Ledger::create(path, run)?;
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "ledger: {}\n",
            crate::terminal::escape(&path.display().to_string())
        )
        .as_bytes(),
    );
    Ok(ledger)
}

fn write_outputs(m: &ArgMatches, report: &Report, http: &Http) -> Result<(), CliError> {
    let write = |flag: &str, text: String| -> Result<(), CliError> {
        match m.get_one::<String>(flag) {
            Some(path) => std::fs::write(path, text)
                .map_err(|e| CliError::usage(format!("--{flag} {path}: {e}"))),
            None => Ok(()),
        }
    };
    write("report-md", report::markdown(report))?;
    write(
        "report-json",
        serde_json::to_string_pretty(report).expect("JSON"),
    )?;
    write("junit", report::junit(report))?;
    if m.get_one::<String>("har").is_some() {
        let document = har::document(&http.exchanges());
        write(
            "har",
            serde_json::to_string_pretty(&document).expect("JSON"),
        )?;
    }
    Ok(())
}

fn print(text: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::usage(format!("cannot write the output: {e}")))
}
