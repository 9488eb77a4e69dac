//! One connection: its activity (quiet or busy), its watchers (shutdown, eviction,
//! timers) and the service that reads each request's body before the gate sees it.

use super::*;
use budget::OverBudget;
use reply::Sending;
#[cfg(feature = "tls")]
use reply::Streams;
use version::Protocol;

/// What one connection is doing, shared by its task, its I/O and its requests.
pub(super) struct Activity {
    pub(super) state: Mutex<Phase>,
    /// HTTP/2: its reads carry frames of every kind, so they do not tell that a request is
    /// starting.
    pub(super) h2: AtomicBool,
    /// Set when the connection is asked to close to make room.
    pub(super) evict: AtomicBool,
    /// HTTP/2 replies given up for the write timeout; past [`H2_MAX_ABANDONED`] the
    /// connection is closed.
    pub(super) abandoned: AtomicU32,
    /// Bytes of its replies counted against the reply budget: what closing it gives back.
    pub(super) reply_bytes: AtomicUsize,
    /// Set when a reply asked for the connection to be closed with no answer
    /// ([`DropConnection`]).
    pub(super) dropped: AtomicBool,
    /// Wakes the connection's task when it is asked to close, or has given up too many
    /// replies. Phase changes do not: they are on every request's path, and the task
    /// looks at the phase often enough anyway (see [`Activity::next_check`]).
    pub(super) changed: Notify,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Phase {
    /// Requests between their headers and the end of their reply.
    in_flight: usize,
    /// Of those, HTTP/2 replies waiting on the client: handed over, and not taken further
    /// because the client's flow-control window (or its reading) does not let them.
    waiting: usize,
    /// When one of them last started waiting.
    waiting_since: Instant,
    /// When the connection last became quiet: accepted, handshake done, or last reply sent.
    quiet_since: Instant,
    /// When the first byte of the next request arrived (HTTP/1), if it has.
    request_started: Option<Instant>,
    /// Whether any request has arrived yet.
    served: bool,
}

impl Activity {
    pub(super) fn new() -> Self {
        Self {
            state: Mutex::new(Phase {
                in_flight: 0,
                waiting: 0,
                waiting_since: Instant::now(),
                quiet_since: Instant::now(),
                request_started: None,
                served: false,
            }),
            h2: AtomicBool::new(false),
            evict: AtomicBool::new(false),
            abandoned: AtomicU32::new(0),
            reply_bytes: AtomicUsize::new(0),
            dropped: AtomicBool::new(false),
            changed: Notify::new(),
        }
    }

    pub(super) fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Since when it has had no request in progress; `None` while it has one. Replies
    /// waiting on the client count as none once all of them have waited for
    /// [`STALL_GRACE`] (or the write timeout, if shorter): the client is holding the
    /// connection, not the server, as an HTTP/1.1 client that does not read its reply does
    /// once it is handed over.
    pub(super) fn quiet_since(&self, limits: &Limits) -> Option<Instant> {
        let phase = self.phase();
        if phase.in_flight == 0 {
            return Some(phase.quiet_since);
        }
        let since = phase.waiting_since + STALL_GRACE.min(limits.write_timeout);
        (phase.in_flight == phase.waiting && since <= Instant::now()).then_some(since)
    }

    /// When a quiet connection is closed, and which timeout closes it; `None` while a
    /// request is in progress, unless that is an HTTP/1 reply its client has taken none of
    /// for the write timeout (an HTTP/2 stream's is given up by itself, see [`Streams`]).
    pub(super) fn deadline(&self, limits: &Limits) -> Option<(Instant, &'static str)> {
        let phase = self.phase();
        if phase.in_flight > 0 {
            let stalled = phase.waiting > 0 && phase.waiting == phase.in_flight;
            return (stalled && !self.h2.load(Ordering::Relaxed))
                .then(|| (phase.waiting_since + limits.write_timeout, "write timeout"));
        }
        Some(match phase.request_started {
            Some(started) => (started + limits.header_timeout, "header timeout"),
            None if !phase.served => (phase.quiet_since + limits.header_timeout, "header timeout"),
            None => (phase.quiet_since + limits.idle_timeout, "idle timeout"),
        })
    }

    /// When the connection's task next looks at the phase: at the deadline, or sooner.
    ///
    /// A change of phase moves the deadline to at least one header, idle or write timeout
    /// after it happens (the shortest of them). So a task that looks again no later than
    /// that long after it last looked never misses a deadline, and nobody has to wake it.
    pub(super) fn next_check(&self, limits: &Limits) -> Instant {
        let shortest = limits
            .header_timeout
            .min(limits.idle_timeout)
            .min(limits.write_timeout);
        let soonest = Instant::now() + shortest;
        self.deadline(limits)
            .map_or(soonest, |(at, _)| at.min(soonest))
    }

    /// Asks the connection's task to close the connection now, with no answer to what is
    /// in progress.
    fn drop_now(&self) {
        self.dropped.store(true, Ordering::Relaxed);
        self.changed.notify_one();
    }

    /// Whether no request is in progress.
    pub(super) fn idle(&self) -> bool {
        self.phase().in_flight == 0
    }

    /// Starts the quiet period over (the TLS handshake is done).
    #[cfg(feature = "tls")]
    pub(super) fn restart(&self) {
        self.phase().quiet_since = Instant::now();
    }

    pub(super) fn bytes_arrived(&self) {
        if self.h2.load(Ordering::Relaxed) {
            return;
        }
        let mut phase = self.phase();
        if phase.in_flight == 0 && phase.request_started.is_none() {
            phase.request_started = Some(Instant::now());
        }
    }

    pub(super) fn begin(self: &Arc<Self>, version: Version) -> Busy {
        if version == Version::HTTP_2 {
            self.h2.store(true, Ordering::Relaxed);
        }
        let mut phase = self.phase();
        phase.in_flight += 1;
        phase.served = true;
        phase.request_started = None;
        drop(phase);
        Busy {
            activity: Arc::clone(self),
            waiting: false,
        }
    }
}

/// A request in progress on its connection, until its reply has been sent (or dropped).
pub(super) struct Busy {
    activity: Arc<Activity>,
    /// Whether its reply is waiting on the client.
    waiting: bool,
}

impl Busy {
    /// Its reply has been handed over (whole or in part) and waits on the client from now.
    pub(super) fn wait(&mut self) {
        let mut phase = self.activity.phase();
        if !self.waiting {
            phase.waiting += 1;
            self.waiting = true;
        }
        phase.waiting_since = Instant::now();
    }

    /// Its reply waits on the server again (the rest of its body).
    pub(super) fn resume(&mut self) {
        if self.waiting {
            self.activity.phase().waiting -= 1;
            self.waiting = false;
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut phase = self.activity.phase();
        if self.waiting {
            phase.waiting -= 1;
        }
        phase.in_flight -= 1;
        if phase.in_flight == 0 {
            phase.quiet_since = Instant::now();
        }
    }
}

/// A connection in the server's registry, removed when its task ends.
pub(super) struct Registered {
    pub(super) server: Arc<Server>,
    pub(super) id: u64,
    pub(super) activity: Arc<Activity>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.server.registry().remove(&self.id);
    }
}

/// A connection's I/O, telling its [`Activity`] when a request's first bytes arrive.
pub(super) struct Watched<S> {
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

/// The service's error for a reply that must not be sent ([`DropConnection`]). hyper writes
/// nothing for it: over HTTP/1.1 the connection ends with it, over HTTP/2 the stream is
/// reset, and the connection's task closes the connection (see [`Activity::drop_now`]).
#[derive(Debug)]
pub(super) struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("closed with no answer, as the reply asked (a dropConnection fault)")
    }
}

impl std::error::Error for Dropped {}

/// The app behind the server's limits, for one connection: it marks the request in
/// progress, reads its body within the budget and the body timeout, and holds both until
/// the reply has been sent.
#[derive(Clone)]
pub(super) struct Limited<H> {
    app: H,
    server: Arc<Server>,
    activity: Arc<Activity>,
    /// The connection's peer, given to each request (the admin checks slow down wrong
    /// tokens per address).
    peer: SocketAddr,
}

impl<H: Handler> hyper::service::Service<Request<Incoming>> for Limited<H> {
    // The reply's body wrapped as it is: boxing it again would cost an allocation per
    // request.
    type Response = Response<Sending>;
    type Error = Dropped;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Sending>, Dropped>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let busy = self.activity.begin(req.version());
        let this = self.clone();
        Box::pin(async move {
            let (mut head, incoming) = req.into_parts();
            head.extensions.insert(Peer(this.peer));
            let over = if this.app.reply_refusable(&head) {
                OverBudget::Refuse
            } else {
                OverBudget::Admit
            };
            // Refused from its head alone: its body is never read.
            let response = match this.app.refuse(&head) {
                Some(refused) => refused,
                None => {
                    let req = Request::from_parts(head, incoming);
                    let (parts, body, lease) = this.server.read_body(req).await;
                    let response = this.app.handle(parts, body).await;
                    drop(lease);
                    response
                }
            };
            if response.extensions().get::<DropConnection>().is_some() {
                this.activity.drop_now();
                return Err(Dropped);
            }
            // A refusal of a wrong admin token leaves no earlier than its address's turn.
            if let Some(NotBefore(at)) = response.extensions().get::<NotBefore>().copied() {
                tokio::time::sleep_until(at).await;
            }
            let (response, lease) = this
                .server
                .hold_reply(response, &this.activity, over, |cause| {
                    this.app.reply_refused(cause)
                })
                .await;
            // Set when this runs as an HTTP/2 stream's task (see `Streams`).
            let watch = reply::current_stream();
            Ok(response.map(|body| Sending::new(body, busy, watch, lease)))
        })
    }
}

/// One connection: over HTTPS the TLS handshake (within the header timeout), then HTTP/1.1
/// or HTTP/2 until the client closes it, a timeout closes it while quiet, it is evicted
/// while quiet, or, on shutdown, its requests in progress are done.
pub(super) async fn connection<H: Handler>(
    server: Arc<Server>,
    _slot: OwnedSemaphorePermit,
    tcp: TcpStream,
    peer: SocketAddr,
    tls: Option<Acceptor>,
    app: H,
    shutdown: watch::Receiver<()>,
) {
    let registered = server.register();
    let activity = Arc::clone(&registered.activity);
    let Some(acceptor) = tls else {
        return drive(&server, &activity, tcp, peer, app, shutdown).await;
    };
    #[cfg(not(feature = "tls"))]
    match acceptor {}
    #[cfg(feature = "tls")]
    over_tls(server, &activity, tcp, peer, acceptor, app, shutdown).await;
}

/// The TLS handshake (within the header timeout), then the connection as [`drive`] serves it.
#[cfg(feature = "tls")]
async fn over_tls<H: Handler>(
    server: Arc<Server>,
    activity: &Arc<Activity>,
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: Acceptor,
    app: H,
    mut shutdown: watch::Receiver<()>,
) {
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
    drive(&server, activity, stream, peer, app, shutdown).await;
}

/// What a connection's task woke up for.
pub(super) enum Event<E> {
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
pub(super) struct Watchers {
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
async fn drive<S, H: Handler>(
    server: &Arc<Server>,
    activity: &Arc<Activity>,
    io: S,
    peer: SocketAddr,
    app: H,
    mut shutdown: watch::Receiver<()>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = Limited {
        app,
        server: Arc::clone(server),
        activity: Arc::clone(activity),
        peer,
    };
    let io = TokioIo::new(Watched {
        io,
        activity: Arc::clone(activity),
    });
    let mut conn = match () {
        #[cfg(feature = "tls")]
        () if activity.h2.load(Ordering::Relaxed) => {
            let streams = Streams {
                server: Arc::clone(server),
                activity: Arc::clone(activity),
            };
            Protocol::http2(io, service, streams)
        }
        () => Protocol::http1(io, service),
    };
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
            if let Poll::Ready(result) = Pin::new(&mut conn).poll(cx) {
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
                // Closed at once: no graceful shutdown, so nothing more is written.
                if activity.dropped.load(Ordering::Relaxed) {
                    tracing::debug!(%peer, "connection dropped with no answer, as a reply asked");
                    return;
                }
                let abandoned = activity.abandoned.load(Ordering::Relaxed);
                if abandoned >= H2_MAX_ABANDONED || (abandoned > 0 && activity.idle()) {
                    server.timed_out.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, abandoned, "connection closed: its client read none of a reply within the write timeout");
                    break;
                }
                // Checked here, in the task that also runs HTTP/1 requests, so a request
                // that has just started is seen and the connection kept.
                if activity.evict.swap(false, Ordering::Relaxed)
                    && activity.quiet_since(&server.limits).is_some()
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
    // shutdown, or with replies given up), they finish and no new one is taken. Without
    // (replies waiting on the client do not count), a connection between requests may
    // still be sending its last reply, and is let finish that (briefly: a client that does
    // not read gets no longer); one that has sent nothing, or part of a request, is just
    // dropped. Dropping an HTTP/2 connection ends its streams' tasks too.
    let phase = *activity.phase();
    if phase.in_flight > phase.waiting {
        conn.graceful_shutdown();
        if let Err(e) = conn.await {
            tracing::debug!(%peer, error = %e, "connection ended with an error");
        }
    } else if phase.served && phase.request_started.is_none() {
        // Also where replies wait on the client: it gets no longer than the others.
        conn.graceful_shutdown();
        let _ = tokio::time::timeout(CLOSE_GRACE, conn).await;
    }
}
