//! Request bodies read whole, within the body budget and the body timeout.

use super::*;

impl Server {
    /// Reads a request's whole body into memory within the body budget and the body
    /// timeout. A body refused for either is not read: the request goes on with an empty
    /// body and a [`BodyUnread`] for the gate to answer `500`. A body larger than one
    /// request may have goes on as a body that failed to read (`Err` with why), which the
    /// operation reports as a malformed request (retrying cannot help it).
    pub(super) async fn read_body(
        &self,
        req: Request<Incoming>,
    ) -> (Parts, ReadBody, Option<Lease<'_>>) {
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
pub(super) fn in_units(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Bytes of request bodies counted against the budget; given back when dropped, which is
/// once the operation has answered (it holds the body until then).
pub(super) struct Lease<'s> {
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

/// A request body that fails to read, with this message.
pub(super) struct Unreadable(pub String);

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
