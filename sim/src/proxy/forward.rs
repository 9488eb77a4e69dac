//! One exchange: the request checked, forwarded unchanged, the reply read within its
//! bounds and checked, the deviations reported and recorded, the reply (or, with
//! `--strict`, an error naming the deviations) answered.

use std::{
    fs::File,
    io::Write,
    path::PathBuf,
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime},
};

use axum::{
    body::{Body, Bytes},
    http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header, request::Parts},
};
use serde_json::{Value, json};

use super::{
    DEVIATIONS_HEADER, EXCHANGE_HEADER,
    check::{self, Deviation, Direction},
    contract::Contract,
    har::{Exchange, Outcome, Recording},
    schema::Finding,
};
use crate::{
    protocol::{ReadBody, admin::AdminAccess},
    server::Handler,
};

/// What every exchange shares.
pub(crate) struct Shared {
    pub contract: Contract,
    pub upstream: reqwest::Url,
    pub client: reqwest::Client,
    pub timeout: Duration,
    pub max_reply_bytes: u64,
    pub report: Option<Mutex<File>>,
    pub strict: bool,
    pub admin: AdminAccess,
    pub recorder: Recording,
    pub ids: Ids,
}

/// Exchange ids: a random prefix per process, so ids from two runs never collide in one
/// report, and a counter.
pub(crate) struct Ids {
    prefix: String,
    next: AtomicU64,
}

impl Ids {
    pub fn new() -> Self {
        let mut bytes = [0u8; 4];
        getrandom::fill(&mut bytes).expect("the operating system's random source is available");
        Self {
            prefix: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            next: AtomicU64::new(1),
        }
    }

    fn next(&self) -> String {
        format!(
            "{}-{:06}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }
}

/// The upstream client, with the SDK's transport settings: trusted CAs, timeouts, no
/// redirects (credentials never follow one to another origin).
pub(crate) fn client(
    ca_files: &[PathBuf],
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<reqwest::Client, String> {
    let mut roots = Vec::new();
    for path in ca_files {
        let pem = std::fs::read(path).map_err(|e| format!("--ca-file {}: {e}", path.display()))?;
        if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
            return Err(format!(
                "--ca-file {}: no PEM certificate (`-----BEGIN CERTIFICATE-----`) found",
                path.display()
            ));
        }
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("--ca-file {}: malformed PEM: {e}", path.display()))?;
        roots.extend(certs);
    }
    let mut builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .no_proxy();
    if !roots.is_empty() {
        builder = builder.tls_certs_merge(roots);
    }
    builder
        .build()
        .map_err(|e| format!("the upstream client cannot be built: {e}"))
}

/// The proxy as the server serves it.
#[derive(Clone)]
pub(crate) struct App(pub std::sync::Arc<Shared>);

impl Handler for App {
    async fn handle(&self, parts: Parts, body: ReadBody) -> Response<Body> {
        if parts.uri.path().starts_with(super::admin::PREFIX) {
            return super::admin::handle(&self.0, parts, body);
        }
        exchange(&self.0, parts, body).await
    }

    fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
        parts
            .uri
            .path()
            .starts_with(super::admin::PREFIX)
            .then(|| self.0.admin.refusal(parts))
            .flatten()
    }
}

/// Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and the
/// ones the HTTP client sets itself.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    )
}

/// A reply the proxy makes itself: `{"message", "exchange"}` and more.
fn own_reply(status: StatusCode, body: Value) -> Response<Body> {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Why the upstream's reply could not be forwarded.
struct Failed(StatusCode, String);

async fn send(
    shared: &Shared,
    parts: &Parts,
    body: Bytes,
) -> Result<(StatusCode, HeaderMap, Bytes), Failed> {
    let mut url = shared.upstream.clone();
    let base = url.path().trim_end_matches('/').to_string();
    url.set_path(&format!("{base}{}", parts.uri.path()));
    url.set_query(parts.uri.query());
    let method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes())
        .map_err(|_| Failed(StatusCode::BAD_REQUEST, "unknown method".into()))?;
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in &parts.headers {
        if !hop_by_hop(name) {
            headers.append(name.clone(), value.clone());
        }
    }
    let unreachable = |e: reqwest::Error| {
        // Without its URL: the query may carry a credential.
        let e = e.without_url();
        if e.is_timeout() {
            Failed(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the upstream did not answer within {:?} (--timeout-secs)",
                    shared.timeout
                ),
            )
        } else {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
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
    };
    let mut request = shared.client.request(method, url).headers(headers);
    // A request sent without a body (a GET) goes on without one, not with an empty one.
    if !body.is_empty() || parts.headers.contains_key(header::CONTENT_LENGTH) {
        request = request.body(body);
    }
    let mut reply = request.send().await.map_err(unreachable)?;
    let status = StatusCode::from_u16(reply.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut reply_headers = HeaderMap::new();
    for (name, value) in reply.headers() {
        if !hop_by_hop(name) {
            reply_headers.append(name.clone(), value.clone());
        }
    }
    let too_large = || {
        Failed(
            StatusCode::BAD_GATEWAY,
            format!(
                "the upstream's reply body is larger than {} bytes (--max-reply-bytes); not forwarded",
                shared.max_reply_bytes
            ),
        )
    };
    if reply
        .content_length()
        .is_some_and(|n| n > shared.max_reply_bytes)
    {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = reply.chunk().await.map_err(unreachable)? {
        if (bytes.len() + chunk.len()) as u64 > shared.max_reply_bytes {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((status, reply_headers, bytes.into()))
}

fn rfc3339(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn deviations(
    found: Vec<Finding>,
    direction: Direction,
    operation: Option<&str>,
    exchange: &str,
    time: &str,
) -> impl Iterator<Item = Deviation> {
    found.into_iter().map(move |f| Deviation {
        operation_id: operation.map(str::to_string),
        direction,
        pointer: f.pointer,
        rule: f.rule.to_string(),
        expected: f.expected,
        actual: f.actual,
        exchange: exchange.to_string(),
        time: time.to_string(),
    })
}

/// The query's pairs, decoded.
fn query_pairs(parts: &Parts) -> Vec<(String, String)> {
    parts
        .uri
        .query()
        .map(|q| {
            form_urlencoded::parse(q.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

async fn exchange(shared: &Shared, parts: Parts, body: ReadBody) -> Response<Body> {
    let started = Instant::now();
    let started_at = SystemTime::now();
    let id = shared.ids.next();
    let body = match body {
        Ok(body) => body,
        Err(cause) => {
            let mut response = own_reply(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"message": format!("the request's body was not read: {cause}"), "exchange": id}),
            );
            stamp(&mut response, 0, &id);
            return response;
        }
    };
    let path = parts.uri.path();
    // The upstream's own admin API is not the platform's: forwarded, not checked.
    let checked = !path.starts_with(crate::sandbox::PREFIX);
    let matched = shared.contract.find(parts.method.as_str(), path);
    let operation = matched.as_ref().map(|m| m.contract.op.id);
    let request_found = match (&matched, checked) {
        (_, false) => Vec::new(),
        (Some(m), true) => {
            let query = query_pairs(&parts);
            check::request(&shared.contract, m, &query, &parts.headers, &body)
        }
        (None, true) => vec![check::unknown_operation(parts.method.as_str(), path)],
    };
    let sent = send(shared, &parts, body.clone()).await;
    let (reply_found, outcome, reply) = match sent {
        Err(Failed(status, message)) => {
            tracing::warn!(exchange = %id, operation, %message, "proxy error");
            let response = own_reply(status, json!({"message": message, "exchange": id}));
            (Vec::new(), Outcome::ProxyError, Err(response))
        }
        Ok((status, headers, reply_body)) => {
            // Parsed once, for the checks and the outcome.
            let parsed: Option<Value> = serde_json::from_slice(&reply_body).ok();
            let reply_found = match (&matched, checked) {
                (Some(m), true) => check::reply(
                    &shared.contract,
                    m.contract,
                    status.as_u16(),
                    &reply_body,
                    parsed.as_ref(),
                ),
                _ => Vec::new(),
            };
            let outcome = if !reply_found.is_empty() || !request_found.is_empty() {
                Outcome::Deviation
            } else if parsed
                .as_ref()
                .and_then(|v| v.get("code"))
                .is_some_and(Value::is_string)
            {
                Outcome::BusinessError
            } else {
                Outcome::Ok
            };
            (reply_found, outcome, Ok((status, headers, reply_body)))
        }
    };
    let strict = shared.strict && !reply_found.is_empty();
    let mut found: Vec<Deviation> = Vec::new();
    if !request_found.is_empty() || !reply_found.is_empty() {
        let time = rfc3339(started_at);
        found.extend(deviations(
            request_found,
            Direction::Request,
            operation,
            &id,
            &time,
        ));
        found.extend(deviations(
            reply_found,
            Direction::Reply,
            operation,
            &id,
            &time,
        ));
    }
    let mut response = match &reply {
        Err(own) => {
            let mut copy = Response::new(Body::empty());
            *copy.status_mut() = own.status();
            *copy.headers_mut() = own.headers().clone();
            copy
        }
        Ok(_) if strict => strict_reply(&id, &found),
        Ok((status, headers, reply_body)) => {
            let mut response = Response::new(Body::from(reply_body.clone()));
            *response.status_mut() = *status;
            *response.headers_mut() = headers.clone();
            response
        }
    };
    report(shared, &found);
    tracing::debug!(exchange = %id, operation, deviations = found.len(), ?outcome, "exchange");
    shared.recorder.record(Exchange {
        id: &id,
        operation,
        started: started_at,
        duration: started.elapsed(),
        parts: &parts,
        request_body: &body,
        reply: reply.as_ref().ok().map(|(s, h, b)| (*s, h, b)),
        proxy_reply: reply.as_ref().err(),
        deviations: &found,
        outcome,
    });
    if let Err(own) = reply {
        response = own;
    }
    stamp(&mut response, found.len(), &id);
    response
}

/// The error `--strict` answers instead of a departing reply.
fn strict_reply(id: &str, found: &[Deviation]) -> Response<Body> {
    let reply: Vec<&Deviation> = found
        .iter()
        .filter(|d| d.direction == Direction::Reply)
        .collect();
    let listed: Vec<String> = reply
        .iter()
        .take(5)
        .map(|d| {
            format!(
                "{} {} (expected {}, got {})",
                d.pointer, d.rule, d.expected, d.actual
            )
        })
        .collect();
    let more = reply.len().saturating_sub(5);
    let message = format!(
        "the upstream's reply to {} departs from the documents in {} place(s): {}{}",
        reply
            .first()
            .and_then(|d| d.operation_id.as_deref())
            .unwrap_or("?"),
        reply.len(),
        listed.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    );
    own_reply(
        StatusCode::BAD_GATEWAY,
        json!({"message": message, "exchange": id, "deviations": reply}),
    )
}

fn stamp(response: &mut Response<Body>, deviations: usize, id: &str) {
    let headers = response.headers_mut();
    headers.insert(DEVIATIONS_HEADER, HeaderValue::from(deviations));
    if let Ok(id) = HeaderValue::from_str(id) {
        headers.insert(EXCHANGE_HEADER, id);
    }
}

/// Appends the exchange's deviations to the report, one JSON line each, in one write.
fn report(shared: &Shared, found: &[Deviation]) {
    let Some(file) = &shared.report else {
        return;
    };
    if found.is_empty() {
        return;
    }
    let mut lines = Vec::new();
    for deviation in found {
        serde_json::to_writer(&mut lines, deviation).expect("a deviation serialises");
        lines.push(b'\n');
    }
    let mut file = file.lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(e) = file.write_all(&lines) {
        tracing::error!(error = %e, "the report cannot be written");
    }
}
