//! `licensing-proxy`: the conformance proxy in front of a deployment of the licensing
//! platform (or a simulator), and the tools that read its recordings.
//!
//! Without a subcommand it serves the proxy: prints exactly one line on stdout,
//! `listening on http://HOST:PORT` (`https://` with `--tls-cert` and `--tls-key`), once it
//! accepts connections; logs go to stderr (`RUST_LOG`, default `warn`). Stops cleanly on
//! Ctrl-C or SIGTERM, writing the recording of `--record`.

use std::{
    future::Future,
    io::{BufRead, IsTerminal, Read, Write},
    net::SocketAddr,
    path::PathBuf,
    process::ExitCode,
    time::Duration,
};

use clap::{Parser, Subcommand, ValueEnum};
use licensing_host::{self as host, TlsConfig};
use licensing_proxy::{
    Proxy,
    conformance::{self, escape},
    tools,
};
use licensing_sandbox_client as sandbox;
use tracing_subscriber::EnvFilter;

// The simulator's allocator: checking a large batch parses and frees many small values.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A conformance proxy for the licensing platform: forwards every request to a deployment
/// (or a simulator) and checks request and reply against the documents.
#[derive(Debug, Parser)]
#[command(
    name = "licensing-proxy",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Args {
    /// A tool that reads a recording instead of serving the proxy.
    #[command(subcommand)]
    command: Option<Command>,

    #[command(flatten)]
    proxy: ProxyArgs,
}

/// A subcommand.
#[derive(Debug, Subcommand)]
enum Command {
    /// Per operation: calls, deviations by rule, and the first exact request and reply
    /// behind each rule, read from a recording (HAR).
    Report {
        /// The recording (HAR 1.2, from the proxy).
        file: PathBuf,
        /// `text` for people, `json` for machines.
        #[arg(long, value_enum, default_value = "text")]
        output: Output,
        /// The most bytes one entry of the recording may take (the file is read one entry
        /// at a time; a larger entry is refused, naming it).
        #[arg(long, value_name = "BYTES", default_value_t = licensing_coverage::exchange::DEFAULT_MAX_ENTRY_BYTES, value_parser = clap::value_parser!(u64).range(1..))]
        max_entry_bytes: u64,
    },
    /// What an integration exercised against the documents, from recordings (HAR, from
    /// the proxy) and simulator journals (`licensing sandbox journal` as JSON), merged in
    /// the order given: per operation the calls, documented codes seen and never seen,
    /// enum values and optional fields never sent, later pages, retries; and suspected
    /// double submissions. Exits 1 when a total falls below --min.
    Coverage {
        /// Recordings and journals.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// `markdown` for people and pull requests, `json` for machines, `junit` for CI
        /// dashboards (a test case per documented code of each operation).
        #[arg(long, value_enum, default_value = "markdown")]
        format: CoverageFormat,
        /// The least each total must reach, e.g. `operations=100%,codes=80%` (totals:
        /// operations, codes, enums, optional, paging).
        #[arg(long, value_name = "NAME=PERCENT,...")]
        min: Option<licensing_coverage::Minimums>,
        /// The most bytes one entry of a recording or journal may take (each file is read
        /// one entry at a time; a larger entry is refused, naming the file and the entry).
        #[arg(long, value_name = "BYTES", default_value_t = licensing_coverage::exchange::DEFAULT_MAX_ENTRY_BYTES, value_parser = clap::value_parser!(u64).range(1..))]
        max_entry_bytes: u64,
    },
    /// Sandbox seeds made from what a recording observed.
    #[command(subcommand)]
    Seed(SeedCommand),
    /// Re-send a recording's reads in order and report every reply that differs in HTTP
    /// status, business code or shape; exits 1 when one does. Recorded writes are counted,
    /// not sent, unless --writes.
    Replay {
        /// The recording (HAR 1.2, from the proxy).
        file: PathBuf,
        /// The base URL to send to (a simulator, a new platform version).
        #[arg(long, value_name = "URL")]
        against: String,
        /// Also repeat the recorded writes (orders, employees added, passwords reset, …).
        /// Against anything but a simulator, it lists them and asks first (or needs --yes).
        #[arg(long)]
        writes: bool,
        /// With --writes: repeat them without asking.
        #[arg(long, requires = "writes")]
        yes: bool,
        /// With --writes: the target is a simulator (one with an admin token, which is
        /// not recognised by its answer), so writes are repeated without asking.
        #[arg(long, requires = "writes")]
        simulator: bool,
        /// Order service token sent as `Authorization: Bearer …`.
        #[arg(long, env = "LICENSING_APP_TOKEN", default_value = sandbox::DEFAULT_APP_TOKEN, hide_env_values = true)]
        app_token: String,
        /// Member center client token (`Authorization: Bearer …` and `clientToken`).
        #[arg(long, env = "LICENSING_CLIENT_TOKEN", default_value = sandbox::DEFAULT_CLIENT_TOKEN, hide_env_values = true)]
        client_token: String,
        /// Member center user token (`userToken`).
        #[arg(long, env = "LICENSING_USER_TOKEN", default_value = sandbox::DEFAULT_USER_TOKEN, hide_env_values = true)]
        user_token: String,
        /// `text` for people, `json` for machines.
        #[arg(long, value_enum, default_value = "text")]
        output: Output,
    },
}

/// Seed subcommands.
#[derive(Debug, Subcommand)]
enum SeedCommand {
    /// Print (or write) a seed reproducing the enterprises, channel customers, assets and
    /// employees a recording observed.
    FromRecording {
        /// The recording (HAR 1.2, from the proxy).
        file: PathBuf,
        /// Write the seed here instead of printing it.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// How a tool prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Output {
    /// For people.
    Text,
    /// One JSON document, for machines.
    Json,
}

/// How `coverage` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CoverageFormat {
    /// For people and pull requests.
    Markdown,
    /// One JSON document, for machines.
    Json,
    /// JUnit XML, for CI dashboards.
    Junit,
}

/// Serving the proxy. The variables keep the names they had when the proxy was
/// `licensing-sim proxy` (`LICENSING_SIM_PROXY_*`): `LICENSING_PROXY` is the SDK's, the
/// HTTP proxy it goes through.
#[derive(Debug, clap::Args)]
struct ProxyArgs {
    /// The deployment to forward to: scheme, host, port and an optional path prefix.
    #[arg(
        long,
        env = "LICENSING_SIM_PROXY_UPSTREAM",
        value_name = "URL",
        required = true
    )]
    upstream: Option<String>,

    /// Address to listen on; port 0 picks a free port.
    #[arg(
        long,
        env = "LICENSING_SIM_PROXY_ADDR",
        default_value = "127.0.0.1:8081"
    )]
    addr: SocketAddr,

    /// Append one JSON line per deviation to this file.
    #[arg(long, env = "LICENSING_SIM_PROXY_REPORT", value_name = "FILE")]
    report: Option<PathBuf>,

    /// Answer 502 naming the deviations instead of an upstream reply that departs from
    /// the documents.
    #[arg(long, env = "LICENSING_SIM_PROXY_STRICT")]
    strict: bool,

    /// PEM file of CA certificates to trust for an HTTPS upstream, besides the system's
    /// (as the SDK's LICENSING_CA_FILE).
    #[arg(long, env = "LICENSING_CA_FILE", value_name = "FILE")]
    ca_file: Option<PathBuf>,

    /// Seconds allowed to connect to the upstream.
    #[arg(long, env = "LICENSING_SIM_PROXY_CONNECT_TIMEOUT_SECS", default_value_t = licensing_sdk::DEFAULT_CONNECT_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    connect_timeout_secs: u64,

    /// Seconds allowed for the upstream's whole reply (then 504).
    #[arg(long, env = "LICENSING_SIM_PROXY_TIMEOUT_SECS", default_value_t = licensing_sdk::DEFAULT_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    timeout_secs: u64,

    /// Largest upstream reply body read, in bytes (a larger one: 502).
    #[arg(long, env = "LICENSING_MAX_REPLY_BYTES", value_name = "BYTES", default_value_t = licensing_sdk::DEFAULT_MAX_REPLY_BYTES)]
    max_reply_bytes: u64,

    /// Record from the start and write the recording (HAR 1.2) to this file on exit.
    #[arg(long, env = "LICENSING_SIM_PROXY_RECORD", value_name = "FILE")]
    record: Option<PathBuf>,

    /// Most entries a recording keeps (further exchanges are counted as dropped).
    #[arg(long, env = "LICENSING_SIM_PROXY_RECORD_MAX_ENTRIES", default_value_t = licensing_proxy::DEFAULT_RECORD_MAX_ENTRIES)]
    record_max_entries: usize,

    /// Most deviating exchanges the console's Conformance page (/__sandbox/) keeps, the
    /// oldest going first (and at most 64 MiB of their text).
    #[arg(long, env = "LICENSING_SIM_PROXY_CONSOLE_MAX_EXCHANGES", default_value_t = conformance::DEFAULT_DEVIATION_LOG_CAPACITY)]
    console_max_exchanges: usize,

    /// Serve HTTPS to clients with this PEM certificate chain; needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,

    /// Token the recording routes (/__sandbox/v1/recording), the console (/__sandbox/) and
    /// the upstream's admin API through the proxy require. Needed to listen on a
    /// non-loopback address, unless --admin-open.
    #[arg(long, env = "LICENSING_SIM_PROXY_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,

    /// Serve the admin routes (the recording, the console, the upstream's admin API
    /// forwarded) without a token on a non-loopback address: anyone who can reach the
    /// port can then read the recording and reset the upstream simulator.
    #[arg(long, env = "LICENSING_SIM_PROXY_ADMIN_OPEN")]
    admin_open: bool,

    /// Another name the admin routes answer to on a loopback address (a container's
    /// name), besides localhost, 127.0.0.1 and [::1]; repeatable, or comma-separated.
    #[arg(
        long = "allowed-host",
        env = "LICENSING_SIM_PROXY_ALLOWED_HOSTS",
        value_name = "NAME",
        value_delimiter = ','
    )]
    allowed_hosts: Vec<String>,

    /// MiB of bodies (requests' and replies') checked at once, across exchanges; a body
    /// that does not fit is forwarded unchecked with a `not-checked` deviation.
    #[arg(long, env = "LICENSING_SIM_PROXY_CHECK_BUDGET_MIB", default_value_t = licensing_proxy::DEFAULT_CHECK_BUDGET / (1024 * 1024))]
    check_budget_mib: usize,

    /// Seconds a client has to send a request's headers.
    #[arg(long, default_value_t = host::DEFAULT_HEADER_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout_secs: u64,

    /// Seconds a request's body may take to arrive after its headers.
    #[arg(long, default_value_t = host::DEFAULT_BODY_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout_secs: u64,

    /// Seconds a client connection may stay idle.
    #[arg(long, default_value_t = host::DEFAULT_IDLE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout_secs: u64,

    /// Client connections open at once.
    #[arg(long, default_value_t = host::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,

    /// MiB of request bodies held at once, across client connections.
    #[arg(long, default_value_t = host::DEFAULT_BODY_BUDGET / (1024 * 1024))]
    body_budget_mib: usize,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match args.command {
        Some(command) => run(command).await,
        None => run_proxy(args.proxy, stopped()).await,
    }
}

/// Runs a tool.
async fn run(command: Command) -> ExitCode {
    match command {
        Command::Report {
            file,
            output,
            max_entry_bytes,
        } => finish(
            tools::report_with(&file, max_entry_bytes).map(|r| match output {
                Output::Text => r.to_text(),
                Output::Json => pretty(&r),
            }),
        ),
        Command::Coverage {
            files,
            format,
            min,
            max_entry_bytes,
        } => {
            let limits = licensing_coverage::exchange::Limits { max_entry_bytes };
            coverage(&files, format, min.as_ref(), &limits)
        }
        Command::Seed(SeedCommand::FromRecording { file, output }) => {
            let seed = tools::seed_from_recording(&file).map(|s| pretty(&s));
            match (seed, output) {
                (Ok(text), Some(path)) => finish(
                    std::fs::write(&path, text)
                        .map(|()| String::new())
                        .map_err(|e| format!("{}: {e}", path.display())),
                ),
                (seed, _) => finish(seed),
            }
        }
        Command::Replay {
            file,
            against,
            writes,
            yes,
            simulator,
            app_token,
            client_token,
            user_token,
            output,
        } => {
            let tokens = tools::Tokens {
                app: app_token,
                client: client_token,
                user: user_token,
            };
            if writes
                && !yes
                && !simulator
                && let Err(refused) = confirm_writes(&file, &against).await
            {
                eprintln!("licensing-proxy: {}", escape(&refused));
                return ExitCode::from(2);
            }
            let options = tools::ReplayOptions { writes };
            match tools::replay(&file, &against, &tokens, options).await {
                Ok(result) => {
                    let text = match output {
                        Output::Text => result.to_text(),
                        Output::Json => pretty(&result),
                    };
                    print!("{text}");
                    if result.differences.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(1)
                    }
                }
                Err(e) => {
                    eprintln!("licensing-proxy: {}", escape(&e));
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// Before `replay --writes` repeats a recording's writes against what may be a live
/// deployment: nothing to confirm when it holds none or the target is a simulator;
/// otherwise the writes are listed and, on a terminal, confirmed (`y`). An error says why
/// not.
async fn confirm_writes(file: &std::path::Path, against: &str) -> Result<(), String> {
    let writes = tools::recorded_writes(file)?;
    if writes.is_empty() || tools::is_simulator(against).await {
        return Ok(());
    }
    let total: usize = writes.iter().map(|(_, n)| n).sum();
    let listed: Vec<String> = writes
        .iter()
        .map(|(name, n)| format!("{} x{n}", escape(name)))
        .collect();
    eprintln!(
        "licensing-proxy: replay --writes repeats {total} recorded writes against {}, which          is not a simulator: {}",
        escape(against),
        listed.join(", ")
    );
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err("not repeated: give --yes to repeat them without asking".into());
    }
    eprint!("Repeat them? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    // One short line: a terminal's answer.
    let _ = stdin.lock().take(64).read_line(&mut answer);
    match answer.trim() {
        "y" | "Y" | "yes" => Ok(()),
        _ => Err("not repeated".into()),
    }
}

/// `coverage`: the report on stdout; exit 1 when a minimum is missed (said on stderr), 2
/// when a file cannot be read. Each file is read one entry at a time, each exchange
/// counted and dropped before the next is read.
fn coverage(
    files: &[PathBuf],
    format: CoverageFormat,
    min: Option<&licensing_coverage::Minimums>,
    limits: &licensing_coverage::exchange::Limits,
) -> ExitCode {
    let read = || -> Result<licensing_coverage::Report, String> {
        let catalogue = licensing_coverage::Catalogue::documents()?;
        let mut tally = licensing_coverage::Tally::new(&catalogue);
        for file in files {
            let name = file.display().to_string();
            let reader = std::fs::File::open(file).map_err(|e| format!("{name}: {e}"))?;
            licensing_coverage::exchange::read_from(&name, reader, limits, &mut |x| {
                tally.add(&x);
            })?;
        }
        Ok(tally.report())
    };
    let report = match read() {
        Ok(report) => report,
        Err(e) => return finish(Err(e)),
    };
    let text = match format {
        CoverageFormat::Markdown => licensing_coverage::render::markdown(&report),
        CoverageFormat::Json => pretty(&report),
        CoverageFormat::Junit => licensing_coverage::render::junit(&report),
    };
    print!("{text}");
    let missed = min.map(|m| m.missed(&report)).unwrap_or_default();
    for line in &missed {
        eprintln!("licensing-proxy: coverage below its minimum: {line}");
    }
    if missed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `value` as JSON for stdout, which may be a terminal: the characters a terminal acts on
/// that serde_json leaves in strings (C1, separators, bidi) written as `\uXXXX`, the same
/// document for a program.
fn pretty(value: &impl serde::Serialize) -> String {
    let text = serde_json::to_string_pretty(value).expect("serialises");
    let mut text = licensing_escape::json::for_terminal(&text).into_owned();
    text.push('\n');
    text
}

fn finish(result: Result<String, String>) -> ExitCode {
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("licensing-proxy: {}", escape(&e));
            ExitCode::from(2)
        }
    }
}

async fn run_proxy(args: ProxyArgs, stopped: impl Future<Output = ()>) -> ExitCode {
    // Required by clap unless a subcommand is given.
    let Some(upstream) = &args.upstream else {
        eprintln!("licensing-proxy: --upstream URL is required");
        return ExitCode::from(2);
    };
    // As the simulator: what other machines may reach is not served open by accident.
    if !args.addr.ip().is_loopback() && args.admin_token.is_none() && !args.admin_open {
        eprintln!(
            "licensing-proxy: refusing to serve the admin routes without a token on {}, \
             which other machines may reach (the recording, the console and the upstream's \
             admin API through the proxy): give --admin-token TOKEN, or --admin-open to \
             serve them open on purpose",
            args.addr
        );
        return ExitCode::from(2);
    }
    let mut builder = Proxy::builder(upstream)
        .addr(args.addr)
        .strict(args.strict)
        .connect_timeout(Duration::from_secs(args.connect_timeout_secs))
        .timeout(Duration::from_secs(args.timeout_secs))
        .max_reply_bytes(args.max_reply_bytes)
        .record_max_entries(args.record_max_entries)
        .console_max_exchanges(args.console_max_exchanges)
        .client_timeouts(
            Duration::from_secs(args.header_timeout_secs),
            Duration::from_secs(args.body_timeout_secs),
            Duration::from_secs(args.idle_timeout_secs),
        )
        .max_connections(args.max_connections.max(1))
        .body_budget(args.body_budget_mib.max(1).saturating_mul(1024 * 1024))
        .check_budget(args.check_budget_mib.saturating_mul(1024 * 1024));
    for host in &args.allowed_hosts {
        builder = builder.allowed_host(host);
    }
    if let Some(path) = &args.report {
        builder = builder.report(path);
    }
    if let Some(path) = &args.ca_file {
        builder = builder.ca_file(path);
    }
    if let Some(path) = &args.record {
        builder = builder.record(path);
    }
    if let Some(token) = &args.admin_token {
        builder = builder.admin_token(token);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        match TlsConfig::from_files(cert, key) {
            Ok(tls) => builder = builder.tls(tls),
            Err(e) => {
                eprintln!("licensing-proxy: {}", escape(&e.to_string()));
                return ExitCode::FAILURE;
            }
        }
    }
    let running = match builder.start().await {
        Ok(running) => running,
        Err(e) => {
            eprintln!("licensing-proxy: {}", escape(&e.to_string()));
            return ExitCode::FAILURE;
        }
    };
    // The one line on stdout: scripts wait for it and read the port from it.
    println!("listening on {}", running.url());
    stopped.await;
    tracing::info!("shutting down");
    match running.shutdown().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("licensing-proxy: {}", escape(&e.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// Ctrl-C, or SIGTERM where there is one.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
