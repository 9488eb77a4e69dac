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
//! operation's reply path (see [`BodyUnread`]).

use std::{
    collections::HashMap,
    convert::Infallible,
    future::Future,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll, Wake, Waker},
    time::Duration,
};

use axum::{
    Router,
    body::{Body, Bytes, HttpBody},
    http::{Request, Response, Version, request::Parts},
};
use futures_util::task::AtomicWaker;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
    service::TowerToHyperService,
};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot, watch},
    task::JoinSet,
    time::Instant,
};
use tokio_rustls::TlsAcceptor;

use crate::routes::Operations;

/// How long a client has to send a request's headers (and, over HTTPS, to finish the TLS
/// handshake) unless configured otherwise.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request's body may take to arrive, counted from its headers, unless
/// configured otherwise.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection may stay open without a request after a reply unless configured
/// otherwise.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How many connections are open at most unless configured otherwise (lowered to fit the
/// process's open-file limit).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// How many bytes of request bodies are held in memory at once, across all connections,
/// unless configured otherwise: 512 MiB.
pub const DEFAULT_BODY_BUDGET: usize = 512 * 1024 * 1024;

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

/// What the server bounds; set through [`SimulatorBuilder`](crate::SimulatorBuilder).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub body_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            body_budget: DEFAULT_BODY_BUDGET,
        }
    }
}

/// What the server's limits have done so far; from [`Simulator::stats`](crate::Simulator::stats).
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
    /// Connections closed by the header or the idle timeout.
    pub connections_timed_out: u64,
    /// Bytes of request bodies held in memory now (counted against the body budget).
    pub body_bytes: usize,
    /// The most bytes of request bodies held at once since the start; never above the
    /// budget.
    pub body_bytes_peak: usize,
    /// Requests answered `500` because their body did not fit in the budget or did not
    /// arrive within the body timeout.
    pub bodies_refused: u64,
}

/// The state of a running server: its limits, the connections it holds and its counters.
pub(crate) struct Server {
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
    bodies_refused: AtomicU64,
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
    pub fn new(limits: Limits) -> Self {
        let max_connections = fit_to_descriptors(limits.max_connections.max(1));
        Self {
            limits,
            max_connections,
            max_body: crate::routes::MAX_BODY_BYTES.min(limits.body_budget),
            slots: Arc::new(Semaphore::new(max_connections)),
            connections: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            body_bytes: AtomicUsize::new(0),
            body_bytes_peak: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
            bodies_refused: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> ServerStats {
        ServerStats {
            connections: self.registry().len(),
            max_connections: self.max_connections,
            connections_refused: self.refused.load(Ordering::Relaxed),
            connections_evicted: self.evicted.load(Ordering::Relaxed),
            connections_timed_out: self.timed_out.load(Ordering::Relaxed),
            body_bytes: self.body_bytes.load(Ordering::Relaxed),
            body_bytes_peak: self.body_bytes_peak.load(Ordering::Relaxed),
            bodies_refused: self.bodies_refused.load(Ordering::Relaxed),
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
            .filter_map(|a| a.quiet_since().map(|since| (since, a)))
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

    /// Reads a request's whole body into memory within the body budget and the body
    /// timeout. A body refused for either is not read: the request goes on with an empty
    /// body and a [`BodyUnread`] for the gate to answer `500`. A body larger than one
    /// request may have goes on as a body that failed to read (`Err` with why), which the
    /// operation reports as a malformed request (retrying cannot help it).
    async fn read_body(&self, req: Request<Incoming>) -> (Parts, ReadBody, Option<Lease<'_>>) {
        let (parts, mut incoming) = req.into_parts();
        if incoming.is_end_stream() {
            return (parts, Ok(Bytes::new()), None);
        }
        let declared = incoming.size_hint().exact();
        if declared.is_some_and(|n| n > self.max_body as u64) {
            return self.too_large(parts);
        }
        let mut lease = Lease {
            server: self,
            bytes: 0,
        };
        let mut buffer = Vec::new();
        if let Some(n) = declared {
            // Reserved up front, so concurrent large bodies are admitted first come, first
            // served, instead of all starting and all running out half-way.
            let n = n as usize;
            if !lease.grow_to(n) {
                return self.refuse(parts, self.budget_cause());
            }
            buffer.reserve_exact(n);
        }
        let deadline = Instant::now() + self.limits.body_timeout;
        loop {
            let frame = std::future::poll_fn(|cx| Pin::new(&mut incoming).poll_frame(cx));
            let data = match tokio::time::timeout_at(deadline, frame).await {
                Err(_) => {
                    let cause = format!(
                        "the request body did not arrive within {:?}",
                        self.limits.body_timeout
                    );
                    return self.refuse(parts, cause);
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    // The client broke off; whatever answers it, nobody reads it.
                    return (parts, Err(e.to_string()), None);
                }
                Ok(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => data,
                    Err(_trailers) => continue,
                },
            };
            let needed = buffer.len() + data.len();
            if needed > self.max_body {
                drop(lease);
                return self.too_large(parts);
            }
            if needed > buffer.capacity() {
                // Doubling, as `Vec` does, but counted: the budget holds the capacity.
                let capacity = needed.max(buffer.capacity() * 2).min(self.max_body);
                if !lease.grow_to(capacity) {
                    return self.refuse(parts, self.budget_cause());
                }
                buffer.reserve_exact(capacity - buffer.len());
            }
            buffer.extend_from_slice(&data);
        }
        (parts, Ok(Bytes::from(buffer)), Some(lease))
    }

    fn too_large(&self, parts: Parts) -> (Parts, ReadBody, Option<Lease<'_>>) {
        let cause = format!(
            "the request body is larger than {}, the most one request may send",
            in_units(self.max_body)
        );
        (parts, Err(cause), None)
    }

    fn budget_cause(&self) -> String {
        format!(
            "the simulator's budget for request bodies held at once ({}) is taken by other \
             requests",
            in_units(self.limits.body_budget)
        )
    }

    fn refuse(&self, mut parts: Parts, cause: String) -> (Parts, ReadBody, Option<Lease<'_>>) {
        self.bodies_refused.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(uri = %parts.uri, %cause, "request body refused");
        parts.extensions.insert(BodyUnread(cause));
        (parts, Ok(Bytes::new()), None)
    }
}

/// `bytes` in MiB or KiB when it is a whole number of them.
fn in_units(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The open-file limit leaves room for `wanted` connections, or fewer.
#[cfg(unix)]
fn fit_to_descriptors(wanted: usize) -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` only writes the struct it is given, which outlives the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return wanted;
    }
    let room = usize::try_from(limit.rlim_cur)
        .unwrap_or(usize::MAX)
        .saturating_sub(RESERVED_DESCRIPTORS)
        .max(1);
    if room < wanted {
        tracing::info!(
            configured = wanted,
            lowered = room,
            open_file_limit = limit.rlim_cur,
            "max connections lowered to fit the open-file limit (ulimit -n)"
        );
    }
    wanted.min(room)
}

#[cfg(not(unix))]
fn fit_to_descriptors(wanted: usize) -> usize {
    wanted
}

/// Bytes of request bodies counted against the budget; given back when dropped, which is
/// once the operation has answered (it holds the body until then).
struct Lease<'s> {
    server: &'s Server,
    bytes: usize,
}

impl Lease<'_> {
    /// Grows the lease to `bytes` if the budget has room; `false` (and unchanged) if not.
    fn grow_to(&mut self, bytes: usize) -> bool {
        let more = bytes.saturating_sub(self.bytes);
        let budget = self.server.limits.body_budget;
        let held =
            self.server
                .body_bytes
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                    held.checked_add(more).filter(|&total| total <= budget)
                });
        match held {
            Ok(before) => {
                self.bytes += more;
                self.server
                    .body_bytes_peak
                    .fetch_max(before + more, Ordering::Relaxed);
                true
            }
            Err(_) => false,
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.server
            .body_bytes
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A request's body in memory, or why it could not be read.
pub(crate) type ReadBody = Result<Bytes, String>;

/// Marks a request whose body the server did not read (the budget was taken, or the body
/// was too slow): the gate answers it with code `500`, which the SDK retries.
#[derive(Clone, Debug)]
pub(crate) struct BodyUnread(pub String);

/// A request body that fails to read, with this message.
struct Unreadable(String);

impl HttpBody for Unreadable {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        Poll::Ready(Some(Err(io::Error::other(self.0.clone()))))
    }
}

/// What one connection is doing, shared by its task, its I/O and its requests.
struct Activity {
    state: Mutex<Phase>,
    /// HTTP/2: its reads carry frames of every kind, so they do not tell that a request is
    /// starting.
    h2: AtomicBool,
    /// Set when the connection is asked to close to make room.
    evict: AtomicBool,
    /// Wakes the connection's task when it is asked to close. Phase changes do not: they
    /// are on every request's path, and the task looks at the phase often enough anyway
    /// (see [`Activity::next_check`]).
    changed: Notify,
}

#[derive(Clone, Copy, Debug)]
struct Phase {
    /// Requests between their headers and the end of their reply.
    in_flight: usize,
    /// When the connection last became quiet: accepted, handshake done, or last reply sent.
    quiet_since: Instant,
    /// When the first byte of the next request arrived (HTTP/1), if it has.
    request_started: Option<Instant>,
    /// Whether any request has arrived yet.
    served: bool,
}

impl Activity {
    fn new() -> Self {
        Self {
            state: Mutex::new(Phase {
                in_flight: 0,
                quiet_since: Instant::now(),
                request_started: None,
                served: false,
            }),
            h2: AtomicBool::new(false),
            evict: AtomicBool::new(false),
            changed: Notify::new(),
        }
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Since when it has had no request in progress; `None` while it has one.
    fn quiet_since(&self) -> Option<Instant> {
        let phase = self.phase();
        (phase.in_flight == 0).then_some(phase.quiet_since)
    }

    /// When a quiet connection is closed, and which timeout closes it; `None` while a
    /// request is in progress.
    fn deadline(&self, limits: &Limits) -> Option<(Instant, &'static str)> {
        let phase = self.phase();
        if phase.in_flight > 0 {
            return None;
        }
        Some(match phase.request_started {
            Some(started) => (started + limits.header_timeout, "header timeout"),
            None if !phase.served => (phase.quiet_since + limits.header_timeout, "header timeout"),
            None => (phase.quiet_since + limits.idle_timeout, "idle timeout"),
        })
    }

    /// When the connection's task next looks at the phase: at the deadline, or sooner.
    ///
    /// A change of phase moves the deadline to at least one header or idle timeout after
    /// it happens (the shorter of the two). So a task that looks again no later than that
    /// long after it last looked never misses a deadline, and nobody has to wake it.
    fn next_check(&self, limits: &Limits) -> Instant {
        let soonest = Instant::now() + limits.header_timeout.min(limits.idle_timeout);
        self.deadline(limits)
            .map_or(soonest, |(at, _)| at.min(soonest))
    }

    /// Starts the quiet period over (the TLS handshake is done).
    fn restart(&self) {
        self.phase().quiet_since = Instant::now();
    }

    fn bytes_arrived(&self) {
        if self.h2.load(Ordering::Relaxed) {
            return;
        }
        let mut phase = self.phase();
        if phase.in_flight == 0 && phase.request_started.is_none() {
            phase.request_started = Some(Instant::now());
        }
    }

    fn begin(self: &Arc<Self>, version: Version) -> Busy {
        if version == Version::HTTP_2 {
            self.h2.store(true, Ordering::Relaxed);
        }
        let mut phase = self.phase();
        phase.in_flight += 1;
        phase.served = true;
        phase.request_started = None;
        drop(phase);
        Busy(Arc::clone(self))
    }
}

/// A request in progress on its connection, until its reply has been sent (or dropped).
struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let mut phase = self.0.phase();
        phase.in_flight -= 1;
        if phase.in_flight == 0 {
            phase.quiet_since = Instant::now();
        }
    }
}

/// A connection in the server's registry, removed when its task ends.
struct Registered {
    server: Arc<Server>,
    id: u64,
    activity: Arc<Activity>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.server.registry().remove(&self.id);
    }
}

/// A connection's I/O, telling its [`Activity`] when a request's first bytes arrive.
struct Watched<S> {
    io: S,
    activity: Arc<Activity>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.bytes_arrived();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// What a server serves: the simulator's operations, found without the router (the way
/// nearly every request takes), and an axum router for everything else.
#[derive(Clone)]
pub(crate) struct App {
    pub operations: Option<Arc<Operations>>,
    pub router: Router,
}

impl From<Router> for App {
    fn from(router: Router) -> Self {
        Self {
            operations: None,
            router,
        }
    }
}

/// The app behind the server's limits, for one connection: it marks the request in
/// progress, reads its body within the budget and the body timeout, and holds both until
/// the reply has been sent.
#[derive(Clone)]
struct Limited {
    operations: Option<Arc<Operations>>,
    router: TowerToHyperService<Router>,
    server: Arc<Server>,
    activity: Arc<Activity>,
}

impl hyper::service::Service<Request<Incoming>> for Limited {
    // The reply's body wrapped as it is: boxing it again would cost an allocation per
    // request.
    type Response = Response<Sending>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Sending>, Infallible>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let busy = self.activity.begin(req.version());
        let this = self.clone();
        Box::pin(async move {
            let (parts, body, lease) = this.server.read_body(req).await;
            let operation = this
                .operations
                .as_deref()
                .and_then(|ops| ops.find(&parts.method, parts.uri.path()));
            let response = match operation {
                Some((route, path)) => crate::http::gate(route, path, parts, body).await,
                None => {
                    let body = match body {
                        Ok(bytes) => Body::from(bytes),
                        Err(cause) => Body::new(Unreadable(cause)),
                    };
                    this.router.call(Request::from_parts(parts, body)).await?
                }
            };
            drop(lease);
            Ok(response.map(|body| Sending { body, _busy: busy }))
        })
    }
}

/// A reply body that keeps its request in progress until it is sent or dropped.
pub(crate) struct Sending {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Sending {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Serves `app` on `listener` (over TLS when given an acceptor) within `server`'s limits
/// until `stopped` resolves or its sender is dropped: then stops accepting, closes quiet
/// connections, lets requests in progress finish, and returns.
///
/// One task per connection, held in a set owned by this future, so aborting it ends every
/// connection too.
pub(crate) async fn serve(
    listener: TcpListener,
    app: App,
    tls: Option<TlsAcceptor>,
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
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

#[cfg(not(unix))]
fn out_of_descriptors(_: &io::Error) -> bool {
    false
}

/// One connection: over HTTPS the TLS handshake (within the header timeout), then HTTP/1.1
/// or HTTP/2 until the client closes it, a timeout closes it while quiet, it is evicted
/// while quiet, or, on shutdown, its requests in progress are done.
async fn connection(
    server: Arc<Server>,
    _slot: OwnedSemaphorePermit,
    tcp: TcpStream,
    peer: SocketAddr,
    tls: Option<TlsAcceptor>,
    app: App,
    mut shutdown: watch::Receiver<()>,
) {
    let registered = server.register();
    let activity = Arc::clone(&registered.activity);
    let Some(acceptor) = tls else {
        return drive(&server, &activity, tcp, peer, app, shutdown).await;
    };
    // TLS sends several small records per flight; Nagle's algorithm would delay them.
    let _ = tcp.set_nodelay(true);
    let timeout = server.limits.header_timeout;
    let handshake = tokio::time::timeout(timeout, acceptor.accept(tcp));
    tokio::pin!(handshake);
    let stream = loop {
        tokio::select! {
            done = &mut handshake => match done {
                Ok(Ok(stream)) => break stream,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed; connection dropped");
                    return;
                }
                Err(_) => {
                    server.timed_out.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, ?timeout, "TLS handshake timed out; connection dropped");
                    return;
                }
            },
            // No request is in progress before the handshake ends: nothing to wait for.
            _ = shutdown.changed() => return,
            () = activity.changed.notified() => {
                if activity.evict.load(Ordering::Relaxed) {
                    server.evicted.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, "closed during its TLS handshake to make room");
                    return;
                }
            }
        }
    };
    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
        activity.h2.store(true, Ordering::Relaxed);
    }
    activity.restart();
    drive(&server, &activity, stream, peer, app, shutdown).await;
}

/// What a connection's task woke up for.
enum Event<E> {
    Ended(Result<(), E>),
    Shutdown,
    Changed,
    Check,
}

/// The waker a connection's watchers (shutdown, eviction, its timer) are polled with. It
/// notes that one of them woke the task, so the task polls them only then: not on every
/// wake-up the connection itself causes (two or more per request), where each poll of
/// `Notify` and `watch` futures takes a lock. That came to about 800 instructions a
/// request (callgrind).
#[derive(Default)]
struct Watchers {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Watchers {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

/// Serves HTTP on an established connection until it ends (see [`connection`]).
async fn drive<S>(
    server: &Arc<Server>,
    activity: &Arc<Activity>,
    io: S,
    peer: SocketAddr,
    app: App,
    mut shutdown: watch::Receiver<()>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The header timeout is this task's (hyper's would also close idle keep-alive
    // connections, at the header timeout instead of the idle timeout).
    builder
        .http1()
        .header_read_timeout(None)
        .max_buf_size(MAX_READ_BUFFER);
    let service = Limited {
        operations: app.operations,
        router: TowerToHyperService::new(app.router),
        server: Arc::clone(server),
        activity: Arc::clone(activity),
    };
    let io = TokioIo::new(Watched {
        io,
        activity: Arc::clone(activity),
    });
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let watchers = Arc::new(Watchers::default());
    let watchers_waker = Waker::from(Arc::clone(&watchers));
    loop {
        let check = tokio::time::sleep_until(activity.next_check(&server.limits));
        let stop = shutdown.changed();
        let changed = activity.changed.notified();
        tokio::pin!(check, stop, changed);
        // New watchers are polled once, to register.
        watchers.woken.store(true, Ordering::Release);
        let event = std::future::poll_fn(|cx| {
            // The connection first: it wakes the task for every request, the others
            // rarely do.
            if let Poll::Ready(result) = conn.as_mut().poll(cx) {
                return Poll::Ready(Event::Ended(result));
            }
            watchers.task.register(cx.waker());
            if !watchers.woken.swap(false, Ordering::AcqRel) {
                return Poll::Pending;
            }
            let mut cx = Context::from_waker(&watchers_waker);
            if stop.as_mut().poll(&mut cx).is_ready() {
                Poll::Ready(Event::Shutdown)
            } else if changed.as_mut().poll(&mut cx).is_ready() {
                Poll::Ready(Event::Changed)
            } else if check.as_mut().poll(&mut cx).is_ready() {
                Poll::Ready(Event::Check)
            } else {
                Poll::Pending
            }
        })
        .await;
        match event {
            Event::Ended(result) => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            Event::Shutdown => break,
            Event::Changed => {
                // Checked here, in the task that also runs HTTP/1 requests, so a request
                // that has just started is seen and the connection kept.
                if activity.evict.swap(false, Ordering::Relaxed) && activity.quiet_since().is_some()
                {
                    server.evicted.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, "quiet connection closed to make room");
                    break;
                }
            }
            Event::Check => {
                if let Some((at, which)) = activity.deadline(&server.limits)
                    && at <= Instant::now()
                {
                    server.timed_out.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, which, "quiet connection closed");
                    break;
                }
            }
        }
    }
    // Closing: evicted, timed out or shut down. With requests in progress (only on
    // shutdown), they finish and no new one is taken. Without, a connection between
    // requests may still be sending its last reply, and is let finish that (briefly: a
    // client that does not read gets no longer); one that has sent nothing, or part of a
    // request, is just dropped.
    let phase = *activity.phase();
    if phase.in_flight > 0 {
        conn.as_mut().graceful_shutdown();
        if let Err(e) = conn.await {
            tracing::debug!(%peer, error = %e, "connection ended with an error");
        }
    } else if phase.served && phase.request_started.is_none() {
        conn.as_mut().graceful_shutdown();
        let _ = tokio::time::timeout(CLOSE_GRACE, conn).await;
    }
}
