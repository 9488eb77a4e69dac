//! Which HTTP a connection speaks: HTTP/1.1, or HTTP/2 where the client chose it through
//! TLS's ALPN, each with its bounds.

use super::*;
#[cfg(feature = "tls")]
use reply::Streams;

/// A connection's protocol: HTTP/1.1, or HTTP/2 where the client chose it through TLS's
/// ALPN (a plain connection always speaks HTTP/1.1, so without the `tls` feature no HTTP/2
/// stack is built).
pub(super) enum Protocol<I, S: hyper::service::HttpService<Incoming>> {
    Http1(Pin<Box<http1::Connection<I, S>>>),
    #[cfg(feature = "tls")]
    Http2(Pin<Box<http2::Connection<I, S, Streams>>>),
}

impl<I, S, B> Protocol<I, S>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = B> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    pub(super) fn http1(io: I, service: S) -> Self {
        // The header timeout is the connection task's (hyper's would also close idle
        // keep-alive connections, at the header timeout instead of the idle timeout).
        let conn = http1::Builder::new()
            .header_read_timeout(None)
            .max_buf_size(MAX_READ_BUFFER)
            .serve_connection(io, service);
        Self::Http1(Box::pin(conn))
    }

    /// HTTP/2 as HTTP/1.1 is bounded: as many requests in progress as a few HTTP/1.1
    /// connections, headers no larger than an HTTP/1.1 read buffer, and replies buffered
    /// per stream no larger than one.
    #[cfg(feature = "tls")]
    pub(super) fn http2(io: I, service: S, streams: Streams) -> Self {
        let conn = http2::Builder::new(streams)
            .max_concurrent_streams(H2_MAX_STREAMS)
            .max_header_list_size(MAX_READ_BUFFER as u32)
            .max_send_buf_size(MAX_READ_BUFFER)
            .serve_connection(io, service);
        Self::Http2(Box::pin(conn))
    }

    pub(super) fn graceful_shutdown(&mut self) {
        match self {
            Self::Http1(conn) => conn.as_mut().graceful_shutdown(),
            #[cfg(feature = "tls")]
            Self::Http2(conn) => conn.as_mut().graceful_shutdown(),
        }
    }
}

impl<I, S, B> Future for Protocol<I, S>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = B> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Output = hyper::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Self::Http1(conn) => conn.as_mut().poll(cx),
            #[cfg(feature = "tls")]
            Self::Http2(conn) => conn.as_mut().poll(cx),
        }
    }
}
