//! The reply budget: bytes of replies built and not yet handed to the connection, across
//! all connections. A reply waiting on its client (an HTTP/2 window of zero, a client that
//! does not read) holds its body until it is sent or given up; without a bound, a few
//! such clients asking for large admin replies hold hundreds of MB.

use super::*;
use conn::Activity;

/// Replies no larger than this are never refused for the reply budget (only counted):
/// they are within what each request in progress may hold anyway (an HTTP/1 read buffer,
/// an HTTP/2 stream's send buffer), and the admin API's small replies stay available
/// while large ones wait for room.
pub(super) const SMALL_REPLY: usize = 64 * 1024;

/// How long a refusable reply that does not fit waits for the room that closing
/// connections whose replies wait on their clients gives back: as long as accepting
/// waits for a slot (more than such a connection's [`CLOSE_GRACE`]).
const ROOM_WAIT: Duration = EVICTION_WAIT;

/// A reply too large to hold whole is admitted alone: when other replies hold no more
/// than this share of the budget (1/64, 1 MiB of the default), so the services' small
/// replies in progress do not keep a large export out on a server otherwise idle.
const ALONE_SHARE: usize = 64;

/// What to do with a reply that does not fit in what the budget has left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OverBudget {
    /// Admit it anyway, over the budget: a reply of an operation that has run (what it
    /// changed is applied; its reply is the only account of it), or a small one.
    Admit,
    /// Answer `503` instead: a large reply to a request that changed nothing.
    Refuse,
}

impl Server {
    /// Counts `response`'s body against the reply budget for as long as it is held. A
    /// reply that does not fit makes room by closing connections whose every reply has
    /// waited on its client (as the connection cap does); one that still does not fit is
    /// admitted over the budget or, where `over` says so, answered with `refused` (a
    /// `503` with `Retry-After`) instead.
    pub(super) async fn hold_reply(
        self: &Arc<Self>,
        response: Response<Body>,
        activity: &Arc<Activity>,
        over: OverBudget,
        refused: impl FnOnce(&str) -> Response<Body>,
    ) -> (Response<Body>, Option<ReplyLease>) {
        let Some(size) = response.body().size_hint().exact() else {
            // Streamed (the console's live updates, a slow fault): each piece is held
            // only until it is handed over.
            return (response, None);
        };
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        if size == 0 {
            return (response, None);
        }
        if let Some(lease) = self.try_reply_lease(size, activity) {
            return (response, Some(lease));
        }
        let over = if size <= SMALL_REPLY {
            OverBudget::Admit
        } else {
            over
        };
        let freed = self.make_reply_room(size);
        if over == OverBudget::Admit {
            return (response, Some(self.reply_lease(size, activity)));
        }
        if freed > 0 {
            let deadline = Instant::now() + ROOM_WAIT;
            while Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
                if let Some(lease) = self.try_reply_lease(size, activity) {
                    return (response, Some(lease));
                }
            }
        }
        drop(response);
        self.replies_refused.fetch_add(1, Ordering::Relaxed);
        let cause = format!(
            "the reply has {size} bytes and the simulator's budget for replies not yet sent \
             ({}, --reply-budget-mib) is taken by other replies; retry in a moment",
            body::in_units(self.limits.reply_budget)
        );
        tracing::debug!(size, "reply refused: the reply budget is taken");
        let mut response = refused(&cause);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        (response, None)
    }

    /// A lease of `size` bytes if it fits in what is left, or the reply is too large to
    /// fit at all and the budget is otherwise (nearly) unused.
    fn try_reply_lease(
        self: &Arc<Self>,
        size: usize,
        activity: &Arc<Activity>,
    ) -> Option<ReplyLease> {
        let budget = self.limits.reply_budget;
        let held = self
            .reply_bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                let total = held.checked_add(size)?;
                let alone = size > budget && held <= budget / ALONE_SHARE;
                (total <= budget || alone).then_some(total)
            })
            .ok()?;
        Some(self.leased(held, size, activity))
    }

    /// A lease of `size` bytes whether it fits or not.
    fn reply_lease(self: &Arc<Self>, size: usize, activity: &Arc<Activity>) -> ReplyLease {
        let held = self.reply_bytes.fetch_add(size, Ordering::AcqRel);
        self.leased(held, size, activity)
    }

    fn leased(
        self: &Arc<Self>,
        before: usize,
        size: usize,
        activity: &Arc<Activity>,
    ) -> ReplyLease {
        self.reply_bytes_peak
            .fetch_max(before + size, Ordering::Relaxed);
        activity.reply_bytes.fetch_add(size, Ordering::Relaxed);
        ReplyLease {
            server: Arc::clone(self),
            activity: Arc::clone(activity),
            bytes: size,
        }
    }

    /// Asks connections whose every request in progress is a reply waiting on its client
    /// (for [`STALL_GRACE`]) to close, those waiting longest first, until what they hold
    /// would make room for `size` more bytes. Returns the bytes they hold.
    fn make_reply_room(&self, size: usize) -> usize {
        let budget = self.limits.reply_budget;
        let held = self.reply_bytes.load(Ordering::Acquire);
        let mut needed = (held + size).saturating_sub(budget).max(1);
        let registry = self.registry();
        let mut stalled: Vec<(Instant, &Arc<Activity>, usize)> = registry
            .values()
            .filter(|a| !a.evict.load(Ordering::Relaxed))
            .filter_map(|a| {
                let bytes = a.reply_bytes.load(Ordering::Relaxed);
                let since = a.quiet_since(&self.limits)?;
                (bytes > 0).then_some((since, a, bytes))
            })
            .collect();
        stalled.sort_by_key(|(since, _, _)| *since);
        let mut freed = 0;
        for (_, activity, bytes) in stalled {
            if needed == 0 {
                break;
            }
            activity.evict.store(true, Ordering::Relaxed);
            activity.changed.notify_one();
            freed += bytes;
            needed = needed.saturating_sub(bytes);
        }
        if freed > 0 {
            tracing::debug!(
                freed,
                "connections whose replies wait on their clients closed to make room for a reply"
            );
        }
        freed
    }
}

/// Bytes of a reply counted against the reply budget: given back as its pieces are handed
/// to the connection, and whatever is left when it is dropped (sent, its stream reset, or
/// its connection closed).
pub(crate) struct ReplyLease {
    server: Arc<Server>,
    activity: Arc<Activity>,
    bytes: usize,
}

impl ReplyLease {
    /// `bytes` of it have been handed to the connection.
    pub(super) fn release(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        if bytes == 0 {
            return;
        }
        self.bytes -= bytes;
        self.server.reply_bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.activity
            .reply_bytes
            .fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl Drop for ReplyLease {
    fn drop(&mut self) {
        self.release(self.bytes);
    }
}
