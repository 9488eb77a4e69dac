//! Replies: the body that keeps its request in progress until it is sent, and, over
//! HTTP/2, how long a reply has waited on its client, with the executor that gives up a
//! stream whose reply has waited for the write timeout.

use super::*;
use budget::ReplyLease;
use conn::Busy;
// Only HTTP/2's executor holds a connection's activity, and HTTP/2 is spoken over TLS only.
#[cfg(feature = "tls")]
use conn::Activity;

/// The watch of the HTTP/2 stream whose task is running, if any (see [`Streams`]).
pub(super) fn current_stream() -> Option<Arc<StreamWatch>> {
    STREAM.try_with(Arc::clone).ok()
}

tokio::task_local! {
    /// The HTTP/2 stream whose task is running (see [`Streams`]).
    static STREAM: Arc<StreamWatch>;
}

/// How far one HTTP/2 stream's reply has gone, shared by its body and its task.
#[derive(Debug)]
pub(super) struct StreamWatch {
    born: Instant,
    /// Nanoseconds after `born` at which its reply last started waiting on the client,
    /// plus one; 0 while it is not waiting.
    waiting_since: AtomicU64,
}

impl StreamWatch {
    #[cfg(feature = "tls")]
    fn new() -> Self {
        Self {
            born: Instant::now(),
            waiting_since: AtomicU64::new(0),
        }
    }

    fn wait(&self) {
        let nanos = u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        self.waiting_since.store(nanos + 1, Ordering::Relaxed);
    }

    fn resume(&self) {
        self.waiting_since.store(0, Ordering::Relaxed);
    }

    #[cfg(feature = "tls")]
    fn waiting_since(&self) -> Option<Instant> {
        match self.waiting_since.load(Ordering::Relaxed) {
            0 => None,
            n => Some(self.born + Duration::from_nanos(n - 1)),
        }
    }
}

/// The executor of a connection's HTTP/2 streams (hyper runs each stream as a task of its
/// own): it gives up a stream whose reply has waited on the client for the write timeout.
/// Dropping the stream's task resets the stream (`RST_STREAM` with `CANCEL`) and frees
/// its reply; past [`H2_MAX_ABANDONED`] such streams, or when no other request of the
/// connection is in progress, the connection is closed too. HTTP/2 is only spoken over
/// TLS, so only with the `tls` feature.
#[cfg(feature = "tls")]
#[derive(Clone)]
pub(super) struct Streams {
    pub(super) server: Arc<Server>,
    pub(super) activity: Arc<Activity>,
}

#[cfg(feature = "tls")]
impl<F> hyper::rt::Executor<F> for Streams
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, stream: F) {
        let server = Arc::clone(&self.server);
        let activity = Arc::clone(&self.activity);
        tokio::spawn(async move {
            let watch = Arc::new(StreamWatch::new());
            let timeout = server.limits.write_timeout;
            let stall = tokio::time::sleep(timeout);
            let mut stall = std::pin::pin!(stall);
            // The stream's task lives in this block: given up, it is dropped at its end,
            // and hyper's half of the stream with it.
            let finished = {
                let mut stream = std::pin::pin!(stream);
                std::future::poll_fn(|cx| {
                    // The stream's body finds its watch here (see `Limited::call`).
                    let polled = STREAM.sync_scope(Arc::clone(&watch), || stream.as_mut().poll(cx));
                    if polled.is_ready() {
                        return Poll::Ready(true);
                    }
                    let Some(since) = watch.waiting_since() else {
                        return Poll::Pending;
                    };
                    let at = since + timeout;
                    if at <= Instant::now() {
                        return Poll::Ready(false);
                    }
                    if stall.deadline() != at {
                        stall.as_mut().reset(at);
                    }
                    // Only to be woken at the deadline: the next poll looks again.
                    let _ = stall.as_mut().poll(cx);
                    Poll::Pending
                })
                .await
            };
            if !finished {
                server.replies_abandoned.fetch_add(1, Ordering::Relaxed);
                let given_up = activity.abandoned.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::debug!(
                    ?timeout,
                    given_up,
                    "HTTP/2 reply not read within the write timeout; stream reset"
                );
                // Its stream's request is over: a connection left with none in progress
                // belongs to a client that does not read, and is closed now rather than
                // at the idle timeout.
                if given_up == H2_MAX_ABANDONED || activity.idle() {
                    activity.changed.notify_one();
                }
            }
        });
    }
}

/// A reply body that keeps its request in progress until it is sent or dropped, and its
/// bytes counted against the reply budget until they are handed over.
///
/// It is handed over in pieces of at most [`H2_CHUNK`] bytes, each once the one before
/// has been taken (hyper asks for the next only then, over HTTP/1 once its write buffer
/// has room): so at most that much of a reply waits in the connection's buffers beyond
/// what the client takes, and between pieces the reply is known to wait on the client.
pub(crate) struct Sending {
    body: Body,
    /// The part of the body's last data frame not yet handed over.
    rest: Bytes,
    busy: Busy,
    watch: Option<Arc<StreamWatch>>,
    lease: Option<ReplyLease>,
}

impl Sending {
    pub(super) fn new(
        body: Body,
        mut busy: Busy,
        watch: Option<Arc<StreamWatch>>,
        lease: Option<ReplyLease>,
    ) -> Self {
        if let Some(watch) = &watch {
            // Its head is sent at once; its body waits on the client's window from now.
            busy.wait();
            watch.wait();
        }
        Self {
            body,
            rest: Bytes::new(),
            busy,
            watch,
            lease,
        }
    }
}

impl HttpBody for Sending {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        // Asked for more: what was handed over has been taken.
        let polled = if this.rest.is_empty() {
            Pin::new(&mut this.body).poll_frame(cx)
        } else {
            Poll::Ready(Some(Ok(Frame::data(std::mem::take(&mut this.rest)))))
        };
        match polled {
            Poll::Ready(Some(Ok(frame))) if frame.is_data() => {
                let mut data = frame.into_data().unwrap_or_default();
                if data.len() > H2_CHUNK {
                    this.rest = data.split_off(H2_CHUNK);
                }
                if let Some(lease) = &mut this.lease {
                    lease.release(data.len());
                }
                match &this.watch {
                    Some(watch) => {
                        this.busy.wait();
                        watch.wait();
                    }
                    // HTTP/1: the last piece is the connection's to write, as a whole
                    // reply was before (a client that does not read it leaves the
                    // connection quiet).
                    None if !(this.rest.is_empty() && this.body.is_end_stream()) => {
                        this.busy.wait();
                    }
                    None => {}
                }
                Poll::Ready(Some(Ok(Frame::data(data))))
            }
            other => {
                this.busy.resume();
                if let Some(watch) = &this.watch {
                    watch.resume();
                }
                other
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let body = self.body.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(body.lower() + rest);
        if let Some(upper) = body.upper() {
            hint.set_upper(upper + rest);
        }
        hint
    }
}
