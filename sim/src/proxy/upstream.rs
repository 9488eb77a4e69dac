//! The upstream client: hyper's own, over one pool of keep-alive connections, with the
//! SDK's transport settings: trusted CAs (the system's and the CA files), a connect
//! timeout, a timeout on the whole reply, a cap on the reply body, no redirects followed
//! (credentials never follow one to another origin), no proxy from the environment.

use std::{path::PathBuf, sync::Arc, time::Duration};

use axum::{
    body::Bytes,
    http::{
        HeaderMap, Method, StatusCode, Uri, header,
        uri::{Authority, PathAndQuery, Scheme},
    },
};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::{
    client::legacy::{Client, connect::HttpConnector},
    rt::{TokioExecutor, TokioTimer},
};
use rustls::pki_types::{CertificateDer, pem::PemObject};

/// Idle upstream connections kept for reuse; more may be open at once (one per exchange
/// in flight, bounded by the client side's connection cap), but are closed when done.
const MAX_IDLE: usize = 64;

/// How long an idle upstream connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the upstream's reply could not be forwarded: the status the client gets and what
/// it is told.
pub(crate) struct Failed(pub StatusCode, pub String);

/// Where exchanges are forwarded, and how.
pub(crate) struct Upstream {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    scheme: Scheme,
    authority: Authority,
    /// The upstream URL's path, without a trailing `/`: a prefix of every request's.
    base: String,
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
        let host = url.host_str().ok_or_else(bad_url)?;
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        let authority = Authority::try_from(authority).map_err(|_| bad_url())?;
        let tls = tls_config(ca_files)?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .pool_max_idle_per_host(MAX_IDLE)
            .build(connector);
        Ok(Self {
            client,
            scheme,
            authority,
            base: url.path().trim_end_matches('/').to_string(),
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
        headers: HeaderMap,
        body: Option<Bytes>,
    ) -> Result<(StatusCode, HeaderMap, Bytes), Failed> {
        let target = target.map_or("/", PathAndQuery::as_str);
        let path_and_query = if self.base.is_empty() {
            PathAndQuery::try_from(target)
        } else {
            PathAndQuery::try_from(format!("{}{target}", self.base))
        }
        .map_err(|_| Failed(StatusCode::BAD_REQUEST, "an invalid request target".into()))?;
        let uri = Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path_and_query)
            .build()
            .map_err(|_| Failed(StatusCode::BAD_REQUEST, "an invalid request target".into()))?;
        let mut request = hyper::Request::new(Full::new(body.clone().unwrap_or_default()));
        *request.method_mut() = method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        // A request sent without a body (a GET) goes on without one, not with an empty one.
        if body.is_some() {
            let length = body.as_ref().map_or(0, Bytes::len);
            request
                .headers_mut()
                .insert(header::CONTENT_LENGTH, length.into());
        }
        match tokio::time::timeout(self.timeout, self.exchange(request)).await {
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

    async fn exchange(
        &self,
        request: hyper::Request<Full<Bytes>>,
    ) -> Result<(StatusCode, HeaderMap, Bytes), Failed> {
        let reply = self.client.request(request).await.map_err(|e| {
            let mut failed = unreachable(&e);
            if e.is_connect() && failed.1.contains("timed out") {
                failed.1.push_str(" (--connect-timeout-secs)");
            }
            failed
        })?;
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
        // A reply nearly always arrives as one piece: kept as it is, copied only when a
        // second one follows.
        let mut first: Option<Bytes> = None;
        let mut joined: Vec<u8> = Vec::new();
        let mut len = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| unreachable(&e))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            len += data.len() as u64;
            if len > self.max_reply_bytes {
                return Err(too_large());
            }
            match first.take() {
                None if joined.is_empty() => first = Some(data),
                None => joined.extend_from_slice(&data),
                Some(earlier) => {
                    joined.extend_from_slice(&earlier);
                    joined.extend_from_slice(&data);
                }
            }
        }
        let bytes = first.unwrap_or_else(|| joined.into());
        Ok((head.status, head.headers, bytes))
    }
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
