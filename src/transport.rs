//! What went wrong on the wire, told apart: reqwest reports every failure as one error
//! type, and this module reads its chain to say which kind it was, whether the request may
//! have reached the server, and (for TLS) what was wrong with the certificate. It also
//! bounds what a reply may cost: its size, and the bytes read to quote an error body.

use std::{error::Error as StdError, fmt, io, time::Duration};

use futures_util::{StreamExt as _, TryStreamExt as _};

use crate::{Error, retry::Verdict};

/// Which kind of transport failure ended an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// Nothing listens at the address (connection refused).
    ConnectRefused,
    /// The host name could not be resolved.
    Dns,
    /// No connection within the connect timeout.
    ConnectTimeout,
    /// Connected, but no complete reply within the attempt timeout (when the SDK knows
    /// it: not with a custom `reqwest::Client`).
    ReadTimeout(Option<Duration>),
    /// The connection was reset or closed before the reply was complete.
    Reset,
    /// The proxy refused or failed the tunnel.
    Proxy,
    /// The reply's status line and headers passed the HTTP client's limits (too long or
    /// too many); never retried, a repeat would get the same reply.
    HeadersTooLarge,
    /// Anything else (the source says what).
    Other,
}

impl TransportKind {
    /// A stable, low-cardinality name (the telemetry's `error.type`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::ConnectRefused => "connect_refused",
            Self::Dns => "dns",
            Self::ConnectTimeout => "connect_timeout",
            Self::ReadTimeout(_) => "read_timeout",
            Self::Reset => "connection_reset",
            Self::Proxy => "proxy",
            Self::HeadersTooLarge => "headers_too_large",
            Self::Other => "transport",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConnectRefused => f.write_str("connection refused"),
            Self::Dns => f.write_str("host name not resolved (DNS)"),
            Self::ConnectTimeout => f.write_str("connect timeout"),
            Self::ReadTimeout(Some(after)) => write!(f, "read timeout after {}", seconds(*after)),
            Self::ReadTimeout(None) => f.write_str("read timeout"),
            Self::Reset => f.write_str("connection reset or closed before the reply was complete"),
            Self::Proxy => f.write_str("proxy failure"),
            Self::HeadersTooLarge => {
                f.write_str("the reply's headers are larger than the HTTP client accepts")
            }
            Self::Other => f.write_str("transport failure"),
        }
    }
}

/// `1.5 s`, `30 s`, `250 ms`.
pub(crate) fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// The reply body passed the configured maximum; carried in reqwest's error chain from
/// the body stream to [`classify`].
#[derive(Debug)]
pub(crate) struct TooLarge {
    pub limit: u64,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the reply body is larger than {} bytes", self.limit)
    }
}

impl StdError for TooLarge {}

/// The URL an error may show: scheme, host, port and path. The query goes (`appKey` and
/// `g_nonce` travel there), and so do user info and fragment.
pub(crate) fn redact_url(url: &mut reqwest::Url) {
    url.set_query(None);
    url.set_fragment(None);
    // Only fails for URLs that cannot have user info, which then have none.
    let _ = url.set_username("");
    let _ = url.set_password(None);
}

/// reqwest's error with its URL redacted ([`redact_url`]): its `Display` and `Debug` show
/// the URL, and nothing in the rest of its chain does.
pub(crate) fn redact(mut error: reqwest::Error) -> reqwest::Error {
    if let Some(url) = error.url_mut() {
        redact_url(url);
    }
    error
}

/// Turns a reqwest failure of one attempt into the SDK's error and what it allows.
pub(crate) fn classify(
    operation: &'static str,
    source: reqwest::Error,
    attempt_timeout: Option<Duration>,
) -> (Error, Verdict) {
    let source = redact(source);
    if let Some(limit) = chain(&source).find_map(|e| e.downcast_ref::<TooLarge>().map(|t| t.limit))
    {
        return (Error::ReplyTooLarge { operation, limit }, Verdict::Final);
    }
    if let Some(reason) = certificate_problem(&source) {
        return (
            Error::Tls {
                operation,
                reason,
                source,
            },
            Verdict::Final,
        );
    }
    let connect = source.is_connect();
    let kind = if source.is_timeout() {
        if connect {
            TransportKind::ConnectTimeout
        } else {
            TransportKind::ReadTimeout(attempt_timeout)
        }
    } else if chain(&source).any(|e| e.to_string().contains("dns error")) {
        TransportKind::Dns
    } else if io_kind(&source) == Some(io::ErrorKind::ConnectionRefused) {
        TransportKind::ConnectRefused
    } else if connect && chain(&source).any(|e| e.to_string().contains("proxy")) {
        TransportKind::Proxy
    } else if chain(&source).any(|e| e.to_string().contains("message head is too large")) {
        TransportKind::HeadersTooLarge
    } else if matches!(
        io_kind(&source),
        Some(
            io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof
        )
    ) || chain(&source).any(is_incomplete)
    {
        TransportKind::Reset
    } else {
        TransportKind::Other
    };
    // A connect failure never reached the server; anything later may have.
    let (sent, verdict) = if connect {
        (false, Verdict::NotSent)
    } else if kind == TransportKind::HeadersTooLarge {
        (true, Verdict::Final)
    } else {
        (true, Verdict::MaybeApplied)
    };
    (
        Error::Transport {
            operation,
            kind,
            may_have_been_sent: sent,
            source,
        },
        verdict,
    )
}

fn chain<'e>(
    error: &'e (dyn StdError + 'static),
) -> impl Iterator<Item = &'e (dyn StdError + 'static)> {
    let mut next = Some(error);
    std::iter::from_fn(move || {
        let current = next?;
        // `io::Error::source()` skips the error it wraps (rustls's, for a TLS failure);
        // `get_ref()` does not.
        next = match current.downcast_ref::<io::Error>() {
            Some(io) => io.get_ref().map(|inner| inner as &(dyn StdError + 'static)),
            None => current.source(),
        };
        Some(current)
    })
}

fn io_kind(error: &reqwest::Error) -> Option<io::ErrorKind> {
    chain(error).find_map(|e| e.downcast_ref::<io::Error>().map(io::Error::kind))
}

fn is_incomplete(e: &(dyn StdError + 'static)) -> bool {
    let text = e.to_string();
    text.contains("connection closed before message completed")
        || text.contains("connection reset")
        || text.contains("end of file before message length reached")
}

/// What was wrong with the server's certificate, if that is why the attempt failed.
fn certificate_problem(error: &reqwest::Error) -> Option<String> {
    #[cfg(feature = "rustls")]
    for e in chain(error) {
        if let Some(rustls::Error::InvalidCertificate(problem)) = e.downcast_ref::<rustls::Error>()
        {
            return Some(describe_certificate(problem));
        }
    }
    // Other stacks (native-tls: OpenSSL, Secure Transport, SChannel) only say so in text.
    chain(error).find_map(|e| {
        let text = e.to_string();
        let lower = text.to_ascii_lowercase();
        if !lower.contains("certificate") || lower.contains("dns error") {
            return None;
        }
        Some(
            if lower.contains("unable to get local issuer")
                || lower.contains("self-signed")
                || lower.contains("self signed")
                || lower.contains("untrusted")
            {
                format!("{UNKNOWN_ISSUER} ({text})")
            } else if lower.contains("hostname mismatch")
                || lower.contains("host name mismatch")
                || lower.contains("ip address mismatch")
            {
                format!("{NOT_VALID_FOR_NAME} ({text})")
            } else if lower.contains("expired") {
                format!("the server's certificate has expired ({text})")
            } else {
                format!("the server's certificate was rejected: {text}")
            },
        )
    })
}

const UNKNOWN_ISSUER: &str = "the server's certificate is not signed by a trusted certificate \
                              authority (add its CA with `add_ca_certificate_pem`/`_file`, or \
                              through SSL_CERT_FILE)";
const NOT_VALID_FOR_NAME: &str =
    "the server's certificate is not valid for the host name of the base URL";

#[cfg(feature = "rustls")]
fn describe_certificate(problem: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    match problem {
        C::UnknownIssuer => "the server's certificate is not signed by a trusted certificate \
                             authority (add its CA with `add_ca_certificate_pem`/`_file`, \
                             or through SSL_CERT_FILE)"
            .to_string(),
        C::NotValidForName => "the server's certificate is not valid for the host name of \
                               the base URL"
            .to_string(),
        C::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "the server's certificate is not valid for the host name of the base URL \
             ({expected:?}); it is valid for {}",
            if presented.is_empty() {
                "no name".to_string()
            } else {
                presented.join(", ")
            }
        ),
        C::Expired | C::ExpiredContext { .. } => "the server's certificate has expired".to_string(),
        C::NotValidYet | C::NotValidYetContext { .. } => {
            "the server's certificate is not valid yet".to_string()
        }
        C::Revoked => "the server's certificate has been revoked".to_string(),
        C::BadSignature | C::BadEncoding => {
            format!("the server's certificate is malformed or badly signed ({problem:?})")
        }
        other => format!("the server's certificate was rejected: {other:?}"),
    }
}

/// A reply whose body stream fails with [`TooLarge`] once more than `limit` bytes arrive,
/// so no more than the limit is ever held. A documented reply (200 or 299) that declares a
/// larger `Content-Length` fails before anything is read; any other status is only ever
/// quoted, so its first bytes stay readable.
pub(crate) fn limit_body(response: reqwest::Response, limit: u64) -> reqwest::Response {
    let documented = matches!(response.status().as_u16(), 200 | 299);
    let declared = response.content_length();
    // hyper reads no more than a declared length, so a reply within the limit needs no
    // counting: the common case stays as fast as reqwest alone.
    if declared.is_some_and(|n| n <= limit) || (declared.is_some() && !documented) {
        return response;
    }
    let declared = declared.filter(|_| documented);
    // reqwest's conversion back takes the URL from an extension the conversion to
    // `http::Response` leaves out; without it, the body's errors would name
    // `no.url.provided.local` instead of the request's URL.
    let url = {
        use reqwest::ResponseBuilderExt as _;
        let marker = http::Response::builder()
            .url(response.url().clone())
            .body(());
        marker
            .map(|m| m.into_parts().0.extensions)
            .unwrap_or_default()
    };
    let response: http::Response<reqwest::Body> = response.into();
    let (mut parts, body) = response.into_parts();
    parts.extensions.extend(url);
    let body = if declared.is_some_and(|n| n > limit) {
        reqwest::Body::wrap_stream(futures_util::stream::once(async move {
            Err::<bytes::Bytes, _>(TooLarge { limit })
        }))
    } else {
        let mut seen = 0u64;
        let stream = http_body_util::BodyDataStream::new(body)
            .map_err(|e| Box::new(e) as Box<dyn StdError + Send + Sync>)
            .map(move |chunk| {
                let chunk = chunk?;
                seen += chunk.len() as u64;
                if seen > limit {
                    return Err(Box::new(TooLarge { limit }) as Box<dyn StdError + Send + Sync>);
                }
                Ok(chunk)
            });
        reqwest::Body::wrap_stream(stream)
    };
    http::Response::from_parts(parts, body).into()
}

/// At most `max` bytes of a body, for an error message: never the whole of a large one.
pub(crate) async fn read_excerpt(mut response: reqwest::Response, max: usize) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < max {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                bytes.extend_from_slice(&chunk[..chunk.len().min(max - bytes.len())])
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(Duration::from_millis(250)), "250 ms");
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(
            TransportKind::ReadTimeout(Some(Duration::from_secs(2))).to_string(),
            "read timeout after 2 s"
        );
    }
}
