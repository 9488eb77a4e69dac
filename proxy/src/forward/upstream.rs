//! The upstream client: HTTP/1.1 over a pool of keep-alive connections, each driven by
//! the exchange that uses it (no task per connection, so a request and its reply do not
//! hop between tasks and threads), with the SDK's transport settings: trusted CAs (the
//! system's and the CA files), a connect timeout, a timeout on the whole reply, a cap on
//! the reply body, no redirects followed (credentials never follow one to another
//! origin), no proxy from the environment. A reply is read whole within the check budget
//! (see `budget`); one that does not fit is handed on as it arrives instead.

use std::{
    future::Future,
    path::PathBuf,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::Poll,
    time::{Duration, Instant},
};

use axum::{
    body::Bytes,
    http::{
        HeaderMap, HeaderValue, Method, StatusCode, Uri, header,
        uri::{Authority, PathAndQuery, Scheme},
    },
};
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use tokio::io::{AsyncRead, AsyncWrite};

use super::budget::{CheckBudget, Held};

/// Idle upstream connections kept for reuse; more may be open at once (one per exchange
/// in flight, bounded by the client side's connection cap), but are closed when done.
const MAX_IDLE: usize = 64;

/// How long an idle upstream connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the upstream's reply could not be forwarded: the status the client gets and what
/// it is told.
pub(crate) struct Failed(pub StatusCode, pub String);

/// An upstream reply's body.
pub(crate) enum ReplyBody {
    /// Read whole, its room in the check budget held until this is dropped.
    Whole(Bytes, Held),
    /// No room in the check budget: handed to the client as it arrives, never held whole,
    /// not checked.
    Streamed {
        body: axum::body::Body,
        /// The declared length, or the bytes read when it stopped fitting (`at_least`).
        len: u64,
        at_least: bool,
        /// The bytes other bodies held at that moment.
        others: usize,
    },
}

/// A byte stream to the upstream: TCP, or TLS over it.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

type Io = TokioIo<Box<dyn Stream>>;

/// One upstream connection: where requests are sent, and the connection itself, which
/// whoever sends on it polls until the exchange is done.
struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
    io: Pin<Box<http1::Connection<Io, Full<Bytes>>>>,
    /// The connection has ended (closed by either side, or failed).
    ended: bool,
    idle_since: Instant,
}

impl Conn {
    /// Runs `work` while driving the connection, until `work` is done; `None` when the
    /// connection ended and left `work` unsettled.
    async fn drive<T>(&mut self, work: impl Future<Output = T>) -> Option<T> {
        let mut work = std::pin::pin!(work);
        let (io, ended) = (&mut self.io, &mut self.ended);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            if *ended {
                return Poll::Ready(None);
            }
            if io.as_mut().poll(cx).is_ready() {
                *ended = true;
                // The connection's end settles `work` (its request fails): polled once
                // more for that.
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
        .await
    }
}

/// Where exchanges are forwarded, and how.
pub(crate) struct Upstream {
    scheme: Scheme,
    authority: Authority,
    host: String,
    port: u16,
    /// `Host` as sent upstream.
    host_header: HeaderValue,
    /// The upstream URL's path, without a trailing `/`: a prefix of every request's.
    base: String,
    tls: Option<(tokio_rustls::TlsConnector, ServerName<'static>)>,
    idle: Mutex<Vec<Conn>>,
    connect_timeout: Duration,
    timeout: Duration,
    max_reply_bytes: u64,
}

impl Upstream {
    /// A client for `url` (absolute, `http` or `https`). The error names the setting.
    pub fn new(
        url: &reqwest::Url,
        ca_files: &[PathBuf],
        connect_timeout: Duration,
        timeout: Duration,
        max_reply_bytes: u64,
    ) -> Result<Self, String> {
        let bad_url = || format!("--upstream: `{url}` is not an absolute http(s) URL");
        let scheme = Scheme::try_from(url.scheme()).map_err(|_| bad_url())?;
        let host = url.host_str().ok_or_else(bad_url)?.to_string();
        let port = url.port_or_known_default().ok_or_else(bad_url)?;
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.clone(),
        };
        let host_header = HeaderValue::from_str(&authority).map_err(|_| bad_url())?;
        let authority = Authority::try_from(authority).map_err(|_| bad_url())?;
        let tls = match url.scheme() {
            "https" => {
                let name = host.trim_start_matches('[').trim_end_matches(']');
                let name = ServerName::try_from(name.to_string()).map_err(|_| bad_url())?;
                let config = Arc::new(tls_config(ca_files)?);
                Some((tokio_rustls::TlsConnector::from(config), name))
            }
            _ => {
                // Read anyway: a CA file that cannot be used is an error either way.
                tls_config(ca_files)?;
                None
            }
        };
        Ok(Self {
            scheme,
            authority,
            host,
            port,
            host_header,
            base: url.path().trim_end_matches('/').to_string(),
            tls,
            idle: Mutex::new(Vec::new()),
            connect_timeout,
            timeout,
            max_reply_bytes,
        })
    }

    /// The upstream as configured, for logs (no credential: the URL is the operator's).
    pub fn origin(&self) -> String {
        format!("{}://{}{}", self.scheme, self.authority, self.base)
    }

    /// Sends a request (its path and query as the client sent them, its headers already
    /// without the hop-by-hop ones) and reads the reply within the timeout and the cap.
    pub async fn send(
        &self,
        method: &Method,
        target: Option<&PathAndQuery>,
        mut headers: HeaderMap,
        body: Option<Bytes>,
        budget: &Arc<CheckBudget>,
    ) -> Result<(StatusCode, HeaderMap, ReplyBody), Failed> {
        let path_and_query = request_target(&self.base, target)?;
        headers.insert(header::HOST, self.host_header.clone());
        // A request sent without a body (a GET) goes on without one, not with an empty one.
        if let Some(body) = &body {
            headers.insert(header::CONTENT_LENGTH, body.len().into());
        }
        let mut request = hyper::Request::new(Full::new(body.unwrap_or_default()));
        *request.method_mut() = method.clone();
        *request.uri_mut() = Uri::from(path_and_query);
        *request.headers_mut() = headers;
        let deadline = tokio::time::Instant::now() + self.timeout;
        match tokio::time::timeout_at(deadline, self.exchange(request, budget, deadline)).await {
            Ok(result) => result,
            Err(_) => Err(Failed(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the upstream did not answer within {:?} (--timeout-secs)",
                    self.timeout
                ),
            )),
        }
    }

    /// An idle connection still open, or a new one; and whether it was reused.
    async fn checkout(&self) -> Result<(Conn, bool), Failed> {
        loop {
            let idle = self
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop();
            let Some(mut conn) = idle else {
                return Ok((self.connect().await?, false));
            };
            if conn.idle_since.elapsed() > IDLE_TIMEOUT {
                continue;
            }
            // Polling the connection notices that the upstream closed it meanwhile.
            let (sender, ended) = (&mut conn.sender, conn.ended);
            if !ended && conn_ready(&mut conn.io, sender).await {
                return Ok((conn, true));
            }
        }
    }

    async fn connect(&self) -> Result<Conn, Failed> {
        let connect = async {
            let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
                .await
                .map_err(|e| unreachable(&e))?;
            let _ = tcp.set_nodelay(true);
            let stream: Box<dyn Stream> = match &self.tls {
                Some((tls, name)) => Box::new(
                    tls.connect(name.clone(), tcp)
                        .await
                        .map_err(|e| unreachable(&e))?,
                ),
                None => Box::new(tcp),
            };
            Ok(stream)
        };
        let stream = match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(stream) => stream?,
            Err(_) => {
                return Err(Failed(
                    StatusCode::BAD_GATEWAY,
                    format!(
                        "the upstream cannot be reached: not connected within {:?} \
                         (--connect-timeout-secs)",
                        self.connect_timeout
                    ),
                ));
            }
        };
        let (sender, io) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| unreachable(&e))?;
        Ok(Conn {
            sender,
            io: Box::pin(io),
            ended: false,
            idle_since: Instant::now(),
        })
    }

    async fn exchange(
        &self,
        mut request: hyper::Request<Full<Bytes>>,
        budget: &Arc<CheckBudget>,
        deadline: tokio::time::Instant,
    ) -> Result<(StatusCode, HeaderMap, ReplyBody), Failed> {
        let (mut conn, reply) = loop {
            let (mut conn, reused) = self.checkout().await?;
            let sent = conn.sender.try_send_request(request);
            match conn.drive(sent).await.ok_or_else(closed)? {
                Ok(reply) => break (conn, reply),
                Err(mut e) => match e.take_message() {
                    // Never sent: a reused connection the upstream had closed. Tried
                    // again on another; a request that was sent is never sent twice.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(unreachable(e.error())),
                },
            }
        };
        let too_large = || {
            Failed(
                StatusCode::BAD_GATEWAY,
                format!(
                    "the upstream's reply body is larger than {} bytes (--max-reply-bytes); not forwarded",
                    self.max_reply_bytes
                ),
            )
        };
        let declared = reply
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_reply_bytes) {
            return Err(too_large());
        }
        let (head, mut body) = reply.into_parts();
        // Room for the declared length at once; for a reply of unknown length, piece by
        // piece. Without room, the rest is handed on as it arrives.
        let mut room = match budget.reserve(declared.unwrap_or(0) as usize) {
            Ok(room) => room,
            Err(others) => {
                let len = declared.unwrap_or(0);
                let body = self.stream(conn, body, Vec::new(), 0, None, deadline);
                return Ok((
                    head.status,
                    head.headers,
                    ReplyBody::Streamed {
                        body,
                        len,
                        at_least: false,
                        others,
                    },
                ));
            }
        };
        // A reply nearly always arrives as one piece: kept as it is, copied only when a
        // second one follows.
        let mut first: Option<Bytes> = None;
        let mut joined: Vec<u8> = Vec::new();
        let mut len = 0u64;
        while let Some(frame) = conn.drive(body.frame()).await.ok_or_else(closed)? {
            let frame = frame.map_err(|e| unreachable(&e))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            len += data.len() as u64;
            if len > self.max_reply_bytes {
                return Err(too_large());
            }
            if declared.is_none()
                && let Err(others) = room.grow(data.len())
            {
                let mut read: Vec<Bytes> = first.into_iter().collect();
                if !joined.is_empty() {
                    read.push(joined.into());
                }
                read.push(data);
                let body = self.stream(conn, body, read, len, Some(room), deadline);
                return Ok((
                    head.status,
                    head.headers,
                    ReplyBody::Streamed {
                        body,
                        len,
                        at_least: true,
                        others,
                    },
                ));
            }
            match first.take() {
                None if joined.is_empty() => first = Some(data),
                None => joined.extend_from_slice(&data),
                Some(earlier) => {
                    // The declared length at once (it is within the cap): grown by
                    // doubling, a large reply would be held two or three times over
                    // while it is copied.
                    let expected = declared.unwrap_or(0).max(len) as usize;
                    joined.reserve_exact(expected);
                    joined.extend_from_slice(&earlier);
                    joined.extend_from_slice(&data);
                }
            }
        }
        let bytes = first.unwrap_or_else(|| joined.into());
        self.checkin(conn).await;
        Ok((head.status, head.headers, ReplyBody::Whole(bytes, room)))
    }

    /// The rest of a reply as a body handed on as it arrives: what was `read` of it first
    /// (its `room` in the budget kept until the body is done), then its pieces, within the
    /// cap. The connection is driven by a task of its own until the reply ends or
    /// `deadline` (the whole reply's timeout) passes, and is not reused.
    fn stream(
        &self,
        conn: Conn,
        rest: hyper::body::Incoming,
        read: Vec<Bytes>,
        read_len: u64,
        room: Option<Held>,
        deadline: tokio::time::Instant,
    ) -> axum::body::Body {
        let io = conn.io;
        // The request's sender goes with `conn`: the connection ends once this reply has.
        drop(conn.sender);
        tokio::spawn(async move {
            let _ = tokio::time::timeout_at(deadline, io).await;
        });
        let max = self.max_reply_bytes;
        let mut total = read_len;
        let rest = rest.into_data_stream().map(move |piece| {
            let _room = &room;
            let piece = piece.map_err(std::io::Error::other)?;
            total += piece.len() as u64;
            if total > max {
                return Err(std::io::Error::other(format!(
                    "the upstream's reply body is larger than {max} bytes (--max-reply-bytes)"
                )));
            }
            Ok(piece)
        });
        axum::body::Body::from_stream(
            futures_util::stream::iter(read.into_iter().map(Ok)).chain(rest),
        )
    }

    /// Keeps a connection whose exchange is done for the next one, if it is still open
    /// and there is room.
    async fn checkin(&self, mut conn: Conn) {
        let (sender, ended) = (&mut conn.sender, conn.ended);
        if ended || !conn_ready(&mut conn.io, sender).await {
            return;
        }
        conn.idle_since = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

/// The target sent upstream: the client's, below the upstream URL's path.
fn request_target(base: &str, target: Option<&PathAndQuery>) -> Result<PathAndQuery, Failed> {
    match target {
        // Already parsed: cloned (its bytes are shared), not parsed again. `/` is parsed
        // anew: it may stand for an empty target, which as it is would leave the request
        // line without one.
        Some(target) if base.is_empty() && target.as_str() != "/" => Ok(target.clone()),
        _ => {
            let target = target.map_or("/", PathAndQuery::as_str);
            if base.is_empty() {
                PathAndQuery::try_from(target)
            } else {
                PathAndQuery::try_from(format!("{base}{target}"))
            }
            .map_err(|_| Failed(StatusCode::BAD_REQUEST, "an invalid request target".into()))
        }
    }
}

/// Whether a connection takes a new request now, driving it first so that it notices
/// what happened while it sat idle (the upstream closing it), and without waiting on the
/// network: an open idle connection says so at once.
async fn conn_ready(
    io: &mut Pin<Box<http1::Connection<Io, Full<Bytes>>>>,
    sender: &mut http1::SendRequest<Full<Bytes>>,
) -> bool {
    std::future::poll_fn(|cx| {
        if io.as_mut().poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        Poll::Ready(matches!(sender.poll_ready(cx), Poll::Ready(Ok(()))))
    })
    .await
}

/// The upstream closed the connection in the middle of an exchange.
fn closed() -> Failed {
    Failed(
        StatusCode::BAD_GATEWAY,
        "the upstream cannot be reached: it closed the connection before its reply was complete"
            .into(),
    )
}

/// An upstream failure as the client is told it: the error and its causes, never the
/// request's URL (its query may carry a credential).
fn unreachable(e: &dyn std::error::Error) -> Failed {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    Failed(
        StatusCode::BAD_GATEWAY,
        format!("the upstream cannot be reached: {text}"),
    )
}

/// TLS to the upstream: the platform's trust store (as the SDK's) and the CA files.
fn tls_config(ca_files: &[PathBuf]) -> Result<rustls::ClientConfig, String> {
    let mut roots: Vec<CertificateDer<'static>> = Vec::new();
    for path in ca_files {
        let pem = std::fs::read(path).map_err(|e| format!("--ca-file {}: {e}", path.display()))?;
        if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
            return Err(format!(
                "--ca-file {}: no PEM certificate (`-----BEGIN CERTIFICATE-----`) found",
                path.display()
            ));
        }
        for cert in CertificateDer::pem_slice_iter(&pem) {
            roots.push(
                cert.map_err(|e| format!("--ca-file {}: malformed PEM: {e}", path.display()))?,
            );
        }
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = if roots.is_empty() {
        rustls_platform_verifier::Verifier::new(Arc::clone(&provider))
    } else {
        rustls_platform_verifier::Verifier::new_with_extra_roots(roots, Arc::clone(&provider))
    }
    .map_err(|e| format!("the system's trusted certificates cannot be read: {e}"))?;
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("the upstream's TLS settings: {e}"))
        .map(|b| {
            b.dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target as sent (the request line's) is the one parsed from the client's text,
    /// cloned or not.
    #[test]
    fn request_target_as_parsed_from_its_text() {
        let mut uris = [
            "/",
            "/a/b?x=1&y=%20+z",
            "/a?",
            "*",
            "http://host",
            "http://host?x=1",
            "http://host/a/b?x",
        ]
        .map(Uri::from_static)
        .to_vec();
        // An empty target, which `as_str` shows as `/`.
        uris.push(
            Uri::builder()
                .scheme("http")
                .authority("host")
                .path_and_query("")
                .build()
                .unwrap(),
        );
        for uri in uris {
            let target = uri.path_and_query();
            for base in ["", "/base"] {
                let parsed = PathAndQuery::try_from(format!(
                    "{base}{}",
                    target.map_or("/", PathAndQuery::as_str)
                ))
                .unwrap();
                let Ok(sent) = request_target(base, target) else {
                    panic!("{uri}: no target");
                };
                assert_eq!(
                    Uri::from(sent).to_string(),
                    Uri::from(parsed).to_string(),
                    "{uri} below `{base}`"
                );
            }
        }
        assert_eq!(request_target("", None).ok().unwrap(), "/");
    }
}
