//! The conformance proxy (`licensing-proxy --upstream URL`): forwards every request
//! unchanged to a deployment of the platform (or a simulator) and checks the request and
//! the reply against the documents (`spec/order.yaml`, `spec/member.yaml`), saying where
//! they depart: a count and an id on each reply (`x-licensing-deviations`,
//! `x-licensing-exchange`), one JSON line per deviation in a report file, a HAR 1.2
//! recording started and stopped through its admin routes, and its console's Conformance
//! page at `/__sandbox/` (each deviation with its exact request and reply, credentials
//! redacted; behind the same admin checks and sessions as the simulator's console). The
//! [`tools`] read recordings: a report per operation, a seed, a replay.
//!
//! It is served on the simulator's server layer ([`licensing_host`]): its accept loop,
//! with its bounds on connections, header, body and idle times and request bodies, its
//! admin checks and its console's frame; its upstream client has the SDK's transport
//! settings (CA file, connect timeout, timeout, reply cap).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use licensing_proxy::Proxy;
//! use licensing_sim::Simulator;
//!
//! let upstream = Simulator::start().await?;
//! let proxy = Proxy::builder(&upstream.url()).report("deviations.jsonl").start().await?;
//! // Point the SDK at proxy.url() instead of upstream.url().
//! # Ok(()) }
//! ```

mod check;
pub mod conformance;
mod console;
mod forward;
pub mod tools;

use std::{
    fs::File,
    io::{self, Write as _},
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use licensing_host::{AdminChecks, Host, HostBuilder, ServerStats, TlsConfig};

pub use conformance::{Deviation, Direction};
pub use forward::{
    DEVIATIONS_HEADER, EXCHANGE_HEADER,
    budget::DEFAULT_CHECK_BUDGET,
    har::{DEFAULT_RECORD_MAX_ENTRIES, Recording},
};

use conformance::{DEFAULT_DEVIATION_LOG_CAPACITY, DeviationLog};

/// What a proxy forwards to and how; see [`Proxy::builder`].
#[must_use]
pub struct ProxyBuilder {
    upstream: String,
    /// The client side: address, TLS, bounds.
    host: HostBuilder,
    ca_files: Vec<PathBuf>,
    connect_timeout: Duration,
    timeout: Duration,
    max_reply_bytes: u64,
    check_budget: usize,
    report: Option<PathBuf>,
    strict: bool,
    admin_token: Option<String>,
    allowed_hosts: Vec<String>,
    record: Option<PathBuf>,
    record_max_entries: usize,
    console_max_exchanges: usize,
}

impl std::fmt::Debug for ProxyBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyBuilder")
            .field("upstream", &self.upstream)
            .field("host", &self.host)
            .field("ca_files", &self.ca_files)
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("check_budget", &self.check_budget)
            .field("report", &self.report)
            .field("strict", &self.strict)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "[REDACTED]"),
            )
            .finish_non_exhaustive()
    }
}

impl ProxyBuilder {
    /// Address to listen on (default `127.0.0.1:0`, a free port).
    pub fn addr(mut self, addr: SocketAddr) -> Self {
        self.host = self.host.addr(addr);
        self
    }

    /// Serve HTTPS to clients with this certificate and key.
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.host = self.host.tls(tls);
        self
    }

    /// Trust the CA certificates (PEM) of this file for an HTTPS upstream, besides the
    /// system's roots (the SDK's `add_ca_certificate_file`, `LICENSING_CA_FILE`).
    pub fn ca_file(mut self, path: impl AsRef<Path>) -> Self {
        self.ca_files.push(path.as_ref().to_path_buf());
        self
    }

    /// Time allowed to connect to the upstream (default the SDK's, 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Time allowed for the upstream's whole reply (default the SDK's, 30 s); past it the
    /// client is answered `504`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Largest upstream reply body read (default the SDK's, 64 MiB); a larger one is not
    /// forwarded: the client is answered `502` naming the bound.
    pub fn max_reply_bytes(mut self, bytes: u64) -> Self {
        self.max_reply_bytes = bytes;
        self
    }

    /// Bytes of bodies (requests' and replies') checked at once, across exchanges (default
    /// [`DEFAULT_CHECK_BUDGET`]); a body that does not fit in what the others leave is
    /// forwarded unchecked, with one `not-checked` deviation.
    pub fn check_budget(mut self, bytes: usize) -> Self {
        self.check_budget = bytes;
        self
    }

    /// Append one JSON line per deviation to this file (created readable by its owner
    /// only).
    pub fn report(mut self, path: impl AsRef<Path>) -> Self {
        self.report = Some(path.as_ref().to_path_buf());
        self
    }

    /// Answer `502` naming the deviations instead of an upstream reply that departs from
    /// the documents.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The client side's bounds, as the simulator's: header, body and idle timeouts.
    pub fn client_timeouts(mut self, header: Duration, body: Duration, idle: Duration) -> Self {
        self.host = self
            .host
            .header_timeout(header)
            .body_timeout(body)
            .idle_timeout(idle);
        self
    }

    /// Connections open at once (default 1024, lowered to fit the open-file limit).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.host = self.host.max_connections(n);
        self
    }

    /// Bytes of request bodies held at once across connections (default 512 MiB).
    pub fn body_budget(mut self, bytes: usize) -> Self {
        self.host = self.host.body_budget(bytes);
        self
    }

    /// The proxy's admin routes (the recording's), its console and the upstream's admin
    /// API forwarded through it require `Authorization: Bearer <token>` (or a session of
    /// its console). A forwarded request goes on with its headers: when the upstream has
    /// an admin token too, give the proxy the same one.
    pub fn admin_token(mut self, token: impl Into<String>) -> Self {
        self.admin_token = Some(token.into());
        self
    }

    /// Another name the admin routes (the proxy's and the upstream's through it) and the
    /// console answer to on a loopback address.
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Record from the start, and write the recording (HAR) to this file when the proxy
    /// stops (readable by its owner only).
    pub fn record(mut self, path: impl AsRef<Path>) -> Self {
        self.record = Some(path.as_ref().to_path_buf());
        self
    }

    /// The most entries a recording keeps (default [`DEFAULT_RECORD_MAX_ENTRIES`]).
    pub fn record_max_entries(mut self, n: usize) -> Self {
        self.record_max_entries = n;
        self
    }

    /// The most deviating exchanges the console's Conformance page keeps (default
    /// [`DEFAULT_DEVIATION_LOG_CAPACITY`], and at most
    /// [`DEFAULT_DEVIATION_LOG_BYTES`](conformance::DEFAULT_DEVIATION_LOG_BYTES) of
    /// their text); the oldest go first.
    pub fn console_max_exchanges(mut self, n: usize) -> Self {
        self.console_max_exchanges = n;
        self
    }

    /// Reads the documents, opens the report, binds the address and starts serving.
    ///
    /// # Errors
    /// An upstream that is not an absolute `http(s)` URL, a CA file that cannot be read or
    /// holds no certificate, a report file that cannot be opened, an address in use; the
    /// message names the setting.
    pub async fn start(self) -> io::Result<Proxy> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        let upstream = reqwest::Url::parse(&self.upstream)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
            .ok_or_else(|| {
                invalid(format!(
                    "--upstream: `{}` is not an absolute http(s) URL",
                    self.upstream
                ))
            })?;
        let upstream = forward::upstream::Upstream::new(
            &upstream,
            &self.ca_files,
            self.connect_timeout,
            self.timeout,
            self.max_reply_bytes,
        )
        .map_err(invalid)?;
        let contract = check::contract::Contract::load().map_err(invalid)?;
        let report = match &self.report {
            Some(path) => {
                Some(Mutex::new(private_file(path, false).map_err(|e| {
                    invalid(format!("--report {}: {e}", path.display()))
                })?))
            }
            None => None,
        };
        let listening = self.host.bind().await?;
        let recorder = Arc::new(Recording::new(self.record_max_entries));
        if self.record.is_some() {
            recorder.start(None, None);
        }
        let admin = AdminChecks::new(&listening, self.admin_token, self.allowed_hosts);
        let deviations = Arc::new(DeviationLog::new(self.console_max_exchanges));
        let recorded: Arc<dyn console::coverage::Recorded> = Arc::<Recording>::clone(&recorder);
        let pages = console::console(Arc::clone(&deviations), recorded, &admin);
        let shared = Arc::new(forward::Shared {
            contract,
            upstream,
            report,
            strict: self.strict,
            admin,
            budget: Arc::new(forward::budget::CheckBudget::new(self.check_budget)),
            recorder,
            ids: forward::Ids::new(),
            deviations,
            pages,
        });
        let host = listening.serve(forward::App(Arc::clone(&shared)));
        tracing::debug!(addr = %host.addr(), upstream = %shared.upstream.origin(), "proxy listening");
        Ok(Proxy {
            host,
            shared,
            record: self.record,
        })
    }
}

/// A running conformance proxy; stopped by [`Proxy::shutdown`] or when dropped.
pub struct Proxy {
    host: Host,
    shared: Arc<forward::Shared>,
    record: Option<PathBuf>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("addr", &self.host.addr())
            .field("upstream", &self.shared.upstream.origin())
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A builder for a proxy forwarding to `upstream` (scheme, host, port and an optional
    /// path prefix), with the SDK's transport defaults.
    pub fn builder(upstream: &str) -> ProxyBuilder {
        ProxyBuilder {
            upstream: upstream.to_string(),
            host: Host::builder(),
            ca_files: Vec::new(),
            connect_timeout: licensing_sdk::DEFAULT_CONNECT_TIMEOUT,
            timeout: licensing_sdk::DEFAULT_TIMEOUT,
            max_reply_bytes: licensing_sdk::DEFAULT_MAX_REPLY_BYTES,
            check_budget: DEFAULT_CHECK_BUDGET,
            report: None,
            strict: false,
            admin_token: None,
            allowed_hosts: Vec::new(),
            record: None,
            record_max_entries: DEFAULT_RECORD_MAX_ENTRIES,
            console_max_exchanges: DEFAULT_DEVIATION_LOG_CAPACITY,
        }
    }

    /// The base URL clients use instead of the upstream's.
    pub fn url(&self) -> String {
        self.host.url()
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.host.addr()
    }

    /// What the client side's limits have done so far.
    pub fn stats(&self) -> ServerStats {
        self.host.stats()
    }

    /// Bodies forwarded unchecked so far, for want of room in the check budget.
    pub fn not_checked(&self) -> usize {
        self.shared.budget.refused()
    }

    /// The recording: start, stop, read (as the admin routes do).
    pub fn recording(&self) -> &Recording {
        &self.shared.recorder
    }

    /// What the proxy has found, as its console's Conformance page shows it (the
    /// deviating exchanges, redacted).
    pub fn deviations(&self) -> Arc<DeviationLog> {
        Arc::clone(&self.shared.deviations)
    }

    /// Stops accepting, lets exchanges in flight finish (up to five seconds), and writes
    /// the recording to the file given to [`ProxyBuilder::record`].
    pub async fn shutdown(self) -> io::Result<()> {
        self.host.shutdown().await?;
        if let Some(path) = &self.record {
            let har = self.shared.recorder.stop();
            let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
            let mut file = private_file(path, true).map_err(named)?;
            file.write_all(&serde_json::to_vec_pretty(&har)?)
                .map_err(named)?;
        }
        Ok(())
    }
}

/// A file for what the proxy keeps of the traffic (its report, its recording), readable
/// and writable by its owner only (`0600`), also a regular file that was there before (a
/// terminal or a pipe given as the file is left as it is); appended to, or emptied first
/// (`truncate`).
fn private_file(path: &Path, truncate: bool) -> io::Result<File> {
    let mut options = File::options();
    options.create(true);
    if truncate {
        options.write(true).truncate(true);
    } else {
        options.append(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        if file.metadata()?.is_file() {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

/// The proxy's manual (its README): the command line, what it checks, the report, the
/// recording, the tools that read recordings, and what it chose where the documents
/// leave room.
#[doc = include_str!("../README.md")]
pub mod guide {}
