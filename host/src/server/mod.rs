//! The server: one accept loop, for plain HTTP and for HTTPS, that bounds what clients can
//! hold: connections, the time they take to send headers and bodies or sit idle, and the
//! memory their request bodies take.
//!
//! Each connection's task tracks whether a request is in progress (from its headers to the
//! end of its reply). A connection with none is *quiet*: it is closed when the client takes
//! longer than the header timeout to send a request's headers, or stays idle after a reply
//! for longer than the idle timeout, and it is the one closed to make room when every
//! connection slot is taken. A request in progress is never cut short by these rules; its
//! body is bounded by the body timeout and the body budget instead, and a request refused
//! for either is answered with code `500` ("network exception, retry") through the
//! handler's reply path (see [`BodyUnread`]).
//!
//! Over HTTP/2 the client's flow control can keep a reply from being sent at all, and over
//! either protocol a client can stop reading. Such a reply *waits on the client*: once
//! every request of a connection is one that has waited for a moment, the connection
//! counts as quiet (for eviction), and a reply that waits for the write timeout is given
//! up: over HTTP/2 its stream is reset (and a connection that has given up a few, or has
//! nothing else in progress, is closed), over HTTP/1.1 its connection is closed.
//!
//! Replies are bounded as request bodies are: the bytes of replies built and not yet
//! handed to their connection count against the reply budget (see `budget.rs`).

use std::{
    collections::HashMap,
    future::Future,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll, Wake, Waker},
    time::Duration,
};

use axum::{
    Router,
    body::{Body, Bytes, HttpBody},
    http::{HeaderValue, Request, Response, Version, header, request::Parts},
};
use futures_util::task::AtomicWaker;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
#[cfg(feature = "tls")]
use hyper::server::conn::http2;
use hyper_util::{rt::TokioIo, service::TowerToHyperService};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot, watch},
    task::JoinSet,
    time::Instant,
};
mod body;
mod budget;
mod conn;
mod extensions;
mod reply;
#[cfg(feature = "tls")]
mod tls;
mod version;

pub use extensions::{BodyUnread, DropConnection, MAX_BODY_BYTES, NotBefore, Peer, ReadBody};

/// What performs the server's side of a TLS handshake; without the `tls` feature there
/// is none, and every connection is plain HTTP.
#[cfg(feature = "tls")]
pub type Acceptor = tokio_rustls::TlsAcceptor;
/// Without the `tls` feature: no value, so `Option<Acceptor>` is always `None`.
#[cfg(not(feature = "tls"))]
#[derive(Clone)]
pub enum Acceptor {}

#[cfg(not(feature = "tls"))]
pub use no_tls::TlsConfig;
#[cfg(feature = "tls")]
pub use tls::TlsConfig;

/// Without the `tls` feature a server has no TLS configuration: the builders' fields of
/// this type are always `None`, and the code that serves them is the same.
#[cfg(not(feature = "tls"))]
mod no_tls {
    /// No value: without the `tls` feature nothing is served over HTTPS.
    #[derive(Clone, Debug)]
    pub enum TlsConfig {}

    impl TlsConfig {
        /// Never called: there is no configuration to call it on.
        pub fn acceptor(&self) -> super::Acceptor {
            match *self {}
        }
    }
}

use conn::{Activity, Registered, connection};

/// What a [`Host`](crate::Host) serves: each request, with its body read whole within the
/// host's bounds, or why it could not be (too slow, over the body budget, cut short).
///
/// The accept loop is generic over it: each handler's calls are made directly, with no
/// boxing or dynamic dispatch per request.
pub trait Handler: Clone + Send + Sync + 'static {
    /// Answers one request.
    fn handle(&self, parts: Parts, body: ReadBody) -> impl Future<Output = Response<Body>> + Send;

    /// A request refused from its head alone, before its body is read (default: none).
    fn refuse(&self, _parts: &Parts) -> Option<Response<Body>> {
        None
    }

    /// Whether a large reply to this request may be refused when the reply budget has no
    /// room for it: only where the request changed nothing, so asking again is safe
    /// (default: never).
    fn reply_refusable(&self, _parts: &Parts) -> bool {
        false
    }

    /// What answers a request whose reply the reply budget had no room for (the server
    /// adds `Retry-After`); default: `503` with `{"message": cause}`.
    fn reply_refused(&self, cause: &str) -> Response<Body> {
        let body = serde_json::json!({ "message": cause }).to_string();
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

/// Any axum router (`TlsConfig::serve` serves one over HTTPS).
impl Handler for Router {
    async fn handle(&self, parts: Parts, body: ReadBody) -> Response<Body> {
        use hyper::service::Service as _;
        let body = match body {
            Ok(bytes) => Body::from(bytes),
            Err(cause) => Body::new(body::Unreadable(cause)),
        };
        let service = TowerToHyperService::new(self.clone());
        match service.call(Request::from_parts(parts, body)).await {
            Ok(response) => response,
            Err(infallible) => match infallible {},
        }
    }
}

/// How long a client has to send a request's headers (and, over HTTPS, to finish the TLS
/// handshake) unless configured otherwise.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request's body may take to arrive, counted from its headers, unless
/// configured otherwise.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection may stay open without a request after a reply unless configured
/// otherwise.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a reply may wait on its client (one the client's HTTP/2 flow-control window,
/// or its not reading, keeps from being sent) unless configured otherwise.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// How many connections are open at most unless configured otherwise (lowered to fit the
/// process's open-file limit).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// How many bytes of request bodies are held in memory at once, across all connections,
/// unless configured otherwise: 512 MiB.
pub const DEFAULT_BODY_BUDGET: usize = 512 * 1024 * 1024;
/// How many bytes of replies built and not yet handed to their connection are held at
/// once, across all connections, unless configured otherwise: 64 MiB, room for the
/// journal's export at its default bound (32 MiB of entries) with some to spare.
pub const DEFAULT_REPLY_BUDGET: usize = 64 * 1024 * 1024;

/// Descriptors kept out of the connection cap when it is fitted to the open-file limit:
/// the listener, the runtime's own, logs, and one to accept and close a refused client.
const RESERVED_DESCRIPTORS: usize = 64;

/// How long accepting waits for a quiet connection it closed to give up its slot.
const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// How long a quiet connection being closed may take to finish sending its last reply
/// (less than [`EVICTION_WAIT`], so a slot it gives up is still taken).
const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// The largest read buffer of an HTTP/1 connection: it bounds the request head and what
/// each of up to [`DEFAULT_MAX_CONNECTIONS`] connections can make the server hold before
/// a request starts (hyper's default is about 400 KiB).
const MAX_READ_BUFFER: usize = 64 * 1024;
/// Requests one HTTP/2 connection (over TLS) may have in progress at once.
#[cfg(feature = "tls")]
const H2_MAX_STREAMS: u32 = 32;
/// The largest piece of an HTTP/2 reply handed over at once (see [`reply::Sending`]).
const H2_CHUNK: usize = 16 * 1024;
/// HTTP/2 replies given up for the write timeout after which their connection is closed.
const H2_MAX_ABANDONED: u32 = 4;
/// How long every reply of a connection must have waited on its client before the
/// connection may be closed to make room, as a quiet one is (or the write timeout, if
/// shorter): a client reading at any speed takes its next piece well within it.
const STALL_GRACE: Duration = Duration::from_secs(1);

/// What the server bounds; set through [`HostBuilder`](crate::HostBuilder) (and the
/// simulator's builder). The defaults are the `DEFAULT_…` constants.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// See [`DEFAULT_HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// See [`DEFAULT_BODY_TIMEOUT`].
    pub body_timeout: Duration,
    /// See [`DEFAULT_IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    /// See [`DEFAULT_WRITE_TIMEOUT`].
    pub write_timeout: Duration,
    /// See [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// See [`DEFAULT_BODY_BUDGET`].
    pub body_budget: usize,
    /// See [`DEFAULT_REPLY_BUDGET`].
    pub reply_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            body_budget: DEFAULT_BODY_BUDGET,
            reply_budget: DEFAULT_REPLY_BUDGET,
        }
    }
}

/// What the server's limits have done so far; from [`Host::stats`](crate::Host::stats)
/// (and the simulator's `stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerStats {
    /// Connections open now.
    pub connections: usize,
    /// The connection cap in force: the configured one, or lower to fit the process's
    /// open-file limit.
    pub max_connections: usize,
    /// Connections closed as soon as accepted: every slot held a request in progress.
    pub connections_refused: u64,
    /// Quiet connections closed to make room for a new one.
    pub connections_evicted: u64,
    /// Connections closed by the header or the idle timeout, or for HTTP/2 replies not
    /// read within the write timeout.
    pub connections_timed_out: u64,
    /// HTTP/2 replies given up (their stream reset) because they waited on the client
    /// for the write timeout.
    pub replies_abandoned: u64,
    /// Bytes of request bodies held in memory now (counted against the body budget).
    pub body_bytes: usize,
    /// The most bytes of request bodies held at once since the start; never above the
    /// budget.
    pub body_bytes_peak: usize,
    /// Requests answered `500` because their body did not fit in the budget or did not
    /// arrive within the body timeout.
    pub bodies_refused: u64,
    /// Bytes of replies built and not yet handed to their connection now (counted against
    /// the reply budget).
    pub reply_bytes: usize,
    /// The most bytes of replies held at once since the start: above the budget only by
    /// replies admitted over it (of operations that ran, small ones, or one reply larger
    /// than the whole budget).
    pub reply_bytes_peak: usize,
    /// Requests answered `503` because their reply did not fit in the reply budget.
    pub replies_refused: u64,
}

/// The state of a running server: its limits, the connections it holds and its counters.
pub struct Server {
    limits: Limits,
    max_connections: usize,
    /// The largest body one request may have: the router's limit, or the budget if smaller.
    max_body: usize,
    slots: Arc<Semaphore>,
    connections: Mutex<HashMap<u64, Arc<Activity>>>,
    next_id: AtomicU64,
    body_bytes: AtomicUsize,
    body_bytes_peak: AtomicUsize,
    refused: AtomicU64,
    evicted: AtomicU64,
    timed_out: AtomicU64,
    replies_abandoned: AtomicU64,
    bodies_refused: AtomicU64,
    reply_bytes: AtomicUsize,
    reply_bytes_peak: AtomicUsize,
    replies_refused: AtomicU64,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("limits", &self.limits)
            .field("max_connections", &self.max_connections)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server that bounds what its clients hold by `limits` (the connection cap lowered
    /// to fit the open-file limit); [`serve`] runs it.
    pub fn new(limits: Limits) -> Self {
        let max_connections = fit_to_descriptors(limits.max_connections.max(1));
        Self {
            limits,
            max_connections,
            max_body: MAX_BODY_BYTES.min(limits.body_budget),
            slots: Arc::new(Semaphore::new(max_connections)),
            connections: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            body_bytes: AtomicUsize::new(0),
            body_bytes_peak: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
            replies_abandoned: AtomicU64::new(0),
            bodies_refused: AtomicU64::new(0),
            reply_bytes: AtomicUsize::new(0),
            reply_bytes_peak: AtomicUsize::new(0),
            replies_refused: AtomicU64::new(0),
        }
    }

    /// What its limits have done so far.
    pub fn stats(&self) -> ServerStats {
        ServerStats {
            connections: self.registry().len(),
            max_connections: self.max_connections,
            connections_refused: self.refused.load(Ordering::Relaxed),
            connections_evicted: self.evicted.load(Ordering::Relaxed),
            connections_timed_out: self.timed_out.load(Ordering::Relaxed),
            replies_abandoned: self.replies_abandoned.load(Ordering::Relaxed),
            body_bytes: self.body_bytes.load(Ordering::Relaxed),
            body_bytes_peak: self.body_bytes_peak.load(Ordering::Relaxed),
            bodies_refused: self.bodies_refused.load(Ordering::Relaxed),
            reply_bytes: self.reply_bytes.load(Ordering::Relaxed),
            reply_bytes_peak: self.reply_bytes_peak.load(Ordering::Relaxed),
            replies_refused: self.replies_refused.load(Ordering::Relaxed),
        }
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a new connection: a free one, or the one a quiet connection gives up
    /// when asked to close (the connection quiet the longest). `None` when every slot holds
    /// a request in progress: the new connection is closed at once rather than left
    /// waiting, and no accepted connection is ever cut short for it.
    async fn admit(&self, peer: SocketAddr) -> Option<OwnedSemaphorePermit> {
        if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
            return Some(slot);
        }
        if self.evict_quietest() {
            let freed = Arc::clone(&self.slots).acquire_owned();
            if let Ok(Ok(slot)) = tokio::time::timeout(EVICTION_WAIT, freed).await {
                return Some(slot);
            }
        }
        self.refused.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(%peer, max = self.max_connections, "connection refused: every connection has a request in progress");
        None
    }

    /// Asks the connection quiet the longest to close; `false` when none is quiet.
    fn evict_quietest(&self) -> bool {
        let registry = self.registry();
        let quietest = registry
            .values()
            .filter(|a| !a.evict.load(Ordering::Relaxed))
            .filter_map(|a| a.quiet_since(&self.limits).map(|since| (since, a)))
            .min_by_key(|(since, _)| *since);
        let Some((_, activity)) = quietest else {
            return false;
        };
        activity.evict.store(true, Ordering::Relaxed);
        activity.changed.notify_one();
        true
    }

    fn register(self: &Arc<Self>) -> Registered {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity::new());
        self.registry().insert(id, Arc::clone(&activity));
        Registered {
            server: Arc::clone(self),
            id,
            activity,
        }
    }
}

/// The open-file limit leaves room for `wanted` connections, or fewer.
#[cfg(unix)]
fn fit_to_descriptors(wanted: usize) -> usize {
    // `None`: no limit.
    let Some(current) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    else {
        return wanted;
    };
    let room = usize::try_from(current)
        .unwrap_or(usize::MAX)
        .saturating_sub(RESERVED_DESCRIPTORS)
        .max(1);
    if room < wanted {
        tracing::info!(
            configured = wanted,
            lowered = room,
            open_file_limit = current,
            "max connections lowered to fit the open-file limit (ulimit -n)"
        );
    }
    wanted.min(room)
}

#[cfg(not(unix))]
fn fit_to_descriptors(wanted: usize) -> usize {
    wanted
}

/// Serves `app` on `listener` (over TLS when given an acceptor) within `server`'s limits
/// until `stopped` resolves or its sender is dropped: then stops accepting, closes quiet
/// connections, lets requests in progress finish, and returns.
///
/// One task per connection, held in a set owned by this future, so aborting it ends every
/// connection too.
pub async fn serve<H: Handler>(
    listener: TcpListener,
    app: H,
    tls: Option<Acceptor>,
    server: Arc<Server>,
    mut stopped: oneshot::Receiver<()>,
) -> io::Result<()> {
    // Connections watch this; it changes (or closes) when the server stops.
    let (shutdown, watched) = watch::channel(());
    let mut connections = JoinSet::new();
    let mut trouble = AcceptTrouble::default();
    loop {
        tokio::select! {
            biased;
            // A dropped sender stops the server as well.
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    trouble.recovered();
                    if let Some(slot) = server.admit(peer).await {
                        connections.spawn(connection(
                            Arc::clone(&server),
                            slot,
                            tcp,
                            peer,
                            tls.clone(),
                            app.clone(),
                            watched.clone(),
                        ));
                    }
                }
                Err(e) => trouble.failed(e, &server).await,
            },
            // Reap finished connections so the set does not grow without bound.
            Some(done) = connections.join_next(), if !connections.is_empty() => {
                if let Err(e) = done {
                    tracing::warn!(error = %e, "a connection task failed");
                }
            }
        }
    }
    drop(listener);
    let _ = shutdown.send(());
    let started = std::time::Instant::now();
    while let Some(done) = connections.join_next().await {
        if let Err(e) = done {
            tracing::warn!(error = %e, "a connection task failed");
        }
    }
    tracing::debug!(waited = ?started.elapsed(), "server stopped");
    Ok(())
}

/// Accept errors in a row. Errors of one connection (refused, aborted, reset) are skipped;
/// others, such as running out of file descriptors, pause accepting for a moment that
/// doubles while they last (10 ms up to 1 s), are logged once at warn level per episode,
/// and (for descriptors) close the quietest connection to free one.
#[derive(Default)]
struct AcceptTrouble {
    failures: u32,
}

impl AcceptTrouble {
    async fn failed(&mut self, e: io::Error, server: &Server) {
        if matches!(
            e.kind(),
            io::ErrorKind::ConnectionRefused
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::ConnectionReset
        ) {
            tracing::debug!(error = %e, "accept failed");
            return;
        }
        self.failures += 1;
        let pause = Duration::from_millis(10) * 2u32.pow((self.failures - 1).min(7));
        let pause = pause.min(Duration::from_secs(1));
        if self.failures == 1 {
            tracing::warn!(error = %e, "accept failed; pausing (further failures logged at debug level until accepting works again)");
        } else {
            tracing::debug!(error = %e, failures = self.failures, ?pause, "accept failed");
        }
        if out_of_descriptors(&e) {
            server.evict_quietest();
        }
        tokio::time::sleep(pause).await;
    }

    fn recovered(&mut self) {
        if self.failures > 0 {
            tracing::info!(failures = self.failures, "accepting connections again");
            self.failures = 0;
        }
    }
}

#[cfg(unix)]
fn out_of_descriptors(e: &io::Error) -> bool {
    use rustix::io::Errno;
    matches!(Errno::from_io_error(e), Some(Errno::MFILE | Errno::NFILE))
}

#[cfg(not(unix))]
fn out_of_descriptors(_: &io::Error) -> bool {
    false
}
