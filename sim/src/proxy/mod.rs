//! The conformance proxy (`licensing-sim proxy --upstream URL`): forwards every request
//! unchanged to a deployment of the platform (or a simulator) and checks the request and
//! the reply against the documents (`spec/order.yaml`, `spec/member.yaml`), saying where
//! they depart: a count and an id on each reply (`x-licensing-deviations`,
//! `x-licensing-exchange`), one JSON line per deviation in a report file, and a HAR 1.2
//! recording started and stopped through the admin API.
//!
//! It is served by the simulator's own accept loop (`server/`), with its bounds on
//! connections, header, body and idle times and request bodies; its upstream client has
//! the SDK's transport settings (CA file, connect timeout, timeout, reply cap).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use licensing_sim::{Simulator, proxy::Proxy};
//!
//! let upstream = Simulator::start().await?;
//! let proxy = Proxy::builder(&upstream.url()).report("deviations.jsonl").start().await?;
//! // Point the SDK at proxy.url() instead of upstream.url().
//! # Ok(()) }
//! ```

mod admin;
mod check;
mod contract;
mod forward;
mod har;
mod replay;
mod schema;
mod seed;
pub mod tools;

use std::{
    fs::File,
    io,
    net::{Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{sync::oneshot, task::JoinHandle};

pub use check::{Deviation, Direction};
pub use har::{DEFAULT_RECORD_MAX_ENTRIES, Recording};

use crate::{
    protocol::admin::AdminAccess,
    server::{self, Limits, ServerStats, tls::TlsConfig},
};

/// The header carrying how many deviations an exchange showed (request and reply).
pub const DEVIATIONS_HEADER: &str = "x-licensing-deviations";
/// The header carrying the exchange's id (as in the report and the recording).
pub const EXCHANGE_HEADER: &str = "x-licensing-exchange";

/// What a proxy forwards to and how; see [`Proxy::builder`].
#[must_use]
pub struct ProxyBuilder {
    upstream: String,
    addr: SocketAddr,
    tls: Option<TlsConfig>,
    ca_files: Vec<PathBuf>,
    connect_timeout: Duration,
    timeout: Duration,
    max_reply_bytes: u64,
    report: Option<PathBuf>,
    strict: bool,
    limits: Limits,
    admin_token: Option<String>,
    allowed_hosts: Vec<String>,
    record: Option<PathBuf>,
    record_max_entries: usize,
}

impl std::fmt::Debug for ProxyBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyBuilder")
            .field("upstream", &self.upstream)
            .field("addr", &self.addr)
            .field("ca_files", &self.ca_files)
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("report", &self.report)
            .field("strict", &self.strict)
            .field("limits", &self.limits)
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
        self.addr = addr;
        self
    }

    /// Serve HTTPS to clients with this certificate and key.
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
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

    /// Append one JSON line per deviation to this file.
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
        self.limits.header_timeout = header;
        self.limits.body_timeout = body;
        self.limits.idle_timeout = idle;
        self
    }

    /// Connections open at once (default 1024, lowered to fit the open-file limit).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.limits.max_connections = n;
        self
    }

    /// Bytes of request bodies held at once across connections (default 512 MiB).
    pub fn body_budget(mut self, bytes: usize) -> Self {
        self.limits.body_budget = bytes;
        self
    }

    /// The recording routes require `Authorization: Bearer <token>`.
    pub fn admin_token(mut self, token: impl Into<String>) -> Self {
        self.admin_token = Some(token.into());
        self
    }

    /// Another name the recording routes answer to on a loopback address.
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Record from the start, and write the recording (HAR) to this file when the proxy
    /// stops.
    pub fn record(mut self, path: impl AsRef<Path>) -> Self {
        self.record = Some(path.as_ref().to_path_buf());
        self
    }

    /// The most entries a recording keeps (default [`DEFAULT_RECORD_MAX_ENTRIES`]).
    pub fn record_max_entries(mut self, n: usize) -> Self {
        self.record_max_entries = n;
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
        let client =
            forward::client(&self.ca_files, self.connect_timeout, self.timeout).map_err(invalid)?;
        let contract = contract::Contract::load().map_err(invalid)?;
        let report = match &self.report {
            Some(path) => Some(Mutex::new(
                File::options()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| invalid(format!("--report {}: {e}", path.display())))?,
            )),
            None => None,
        };
        let listener = tokio::net::TcpListener::bind(self.addr).await?;
        let addr = listener.local_addr()?;
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let recorder = har::Recording::new(self.record_max_entries);
        if self.record.is_some() {
            recorder.start(None, None);
        }
        let shared = Arc::new(forward::Shared {
            contract,
            upstream,
            client,
            timeout: self.timeout,
            max_reply_bytes: self.max_reply_bytes,
            report,
            strict: self.strict,
            admin: AdminAccess {
                token: self.admin_token,
                loopback_port: addr.ip().is_loopback().then_some(addr.port()),
                scheme,
                allowed_hosts: self.allowed_hosts,
                sessions: Arc::default(),
            },
            recorder,
            ids: forward::Ids::new(),
        });
        let server = Arc::new(server::Server::new(self.limits));
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(server::serve(
            listener,
            forward::App(Arc::clone(&shared)),
            self.tls.map(|t| t.acceptor()),
            Arc::clone(&server),
            stopped,
        ));
        tracing::debug!(%addr, upstream = %shared.upstream, "proxy listening");
        Ok(Proxy {
            addr,
            scheme,
            shared,
            server,
            record: self.record,
            stop: Some(stop),
            task: Some(task),
        })
    }
}

/// A running conformance proxy; stopped by [`Proxy::shutdown`] or when dropped.
pub struct Proxy {
    addr: SocketAddr,
    scheme: &'static str,
    shared: Arc<forward::Shared>,
    server: Arc<server::Server>,
    record: Option<PathBuf>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("addr", &self.addr)
            .field("upstream", &self.shared.upstream.as_str())
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A builder for a proxy forwarding to `upstream` (scheme, host, port and an optional
    /// path prefix), with the SDK's transport defaults.
    pub fn builder(upstream: &str) -> ProxyBuilder {
        ProxyBuilder {
            upstream: upstream.to_string(),
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            tls: None,
            ca_files: Vec::new(),
            connect_timeout: licensing_sdk::DEFAULT_CONNECT_TIMEOUT,
            timeout: licensing_sdk::DEFAULT_TIMEOUT,
            max_reply_bytes: licensing_sdk::DEFAULT_MAX_REPLY_BYTES,
            report: None,
            strict: false,
            limits: Limits::default(),
            admin_token: None,
            allowed_hosts: Vec::new(),
            record: None,
            record_max_entries: DEFAULT_RECORD_MAX_ENTRIES,
        }
    }

    /// The base URL clients use instead of the upstream's.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What the client side's limits have done so far.
    pub fn stats(&self) -> ServerStats {
        self.server.stats()
    }

    /// The recording: start, stop, read (as the admin API does).
    pub fn recording(&self) -> &Recording {
        &self.shared.recorder
    }

    /// Stops accepting, lets exchanges in flight finish (up to five seconds), and writes
    /// the recording to the file given to [`ProxyBuilder::record`].
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take() {
            match tokio::time::timeout(Duration::from_secs(5), &mut task).await {
                Ok(Ok(result)) => result?,
                Ok(Err(join)) => return Err(io::Error::other(join)),
                Err(_) => task.abort(),
            }
        }
        if let Some(path) = &self.record {
            let har = self.shared.recorder.stop();
            std::fs::write(path, serde_json::to_vec_pretty(&har)?)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        }
        Ok(())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
