//! One exchange: the request checked, forwarded unchanged, the reply read within its
//! bounds and checked, the deviations reported and recorded, the reply (or, with
//! `--strict`, an error naming the deviations) answered.

use std::{
    borrow::Cow,
    fs::File,
    io::Write,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::{Instant, SystemTime},
};

use axum::{
    body::Body,
    http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header, request::Parts},
};
use serde_json::{Value, json};

use super::{
    DEVIATIONS_HEADER, EXCHANGE_HEADER,
    check::{self, Deviation, Direction},
    contract::Contract,
    fast::Code,
    har::{self, Exchange, Outcome, Recording},
    schema::Finding,
    upstream::{Failed, Upstream},
};
use crate::{
    protocol::{ReadBody, admin::AdminAccess, pages::PageServer},
    sandbox::conformance::DeviationLog,
    server::Handler,
};

/// What every exchange shares.
pub(crate) struct Shared {
    pub contract: Contract,
    pub upstream: Upstream,
    pub report: Option<Mutex<File>>,
    pub strict: bool,
    pub admin: AdminAccess,
    pub recorder: Recording,
    pub ids: Ids,
    /// The deviating exchanges the console's Conformance page shows.
    pub deviations: Arc<DeviationLog>,
    /// The console (its Conformance page) at `/__sandbox/`.
    pub pages: PageServer,
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

/// The proxy as the server serves it.
#[derive(Clone)]
pub(crate) struct App(pub Arc<Shared>);

impl Handler for App {
    async fn handle(&self, parts: Parts, body: ReadBody) -> Response<Body> {
        let path = parts.uri.path();
        if path.starts_with(super::admin::PREFIX) {
            return super::admin::handle(&self.0, parts, body);
        }
        if is_console(path) {
            return self.0.pages.handle(parts, body).await;
        }
        exchange(&self.0, parts, body).await
    }

    fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
        let path = parts.uri.path();
        if path.starts_with(super::admin::PREFIX) {
            self.0.admin.refusal(parts)
        } else if is_console(path) {
            self.0.pages.refuse(parts)
        } else {
            None
        }
    }
}

/// Whether a path is the console's, which the proxy answers itself: `/__sandbox` and
/// what is below it, but for the admin API (`/__sandbox/v1/…`), which is the upstream's
/// (forwarded) but for the recording's routes.
fn is_console(path: &str) -> bool {
    match path.strip_prefix("/__sandbox") {
        Some("") => true,
        Some(rest) => rest.starts_with('/') && rest != "/v1" && !rest.starts_with("/v1/"),
        None => false,
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

/// The request's headers as forwarded: without the hop-by-hop ones.
fn forwarded(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if !hop_by_hop(name) {
            out.append(name.clone(), value.clone());
        }
    }
    out
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

/// The query's pairs, decoded (borrowed where nothing was encoded).
fn query_pairs(parts: &Parts) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
    parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).collect())
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
    // A request sent without a body (a GET) goes on without one, not with an empty one.
    let sent_body = (!body.is_empty() || parts.headers.contains_key(header::CONTENT_LENGTH))
        .then(|| body.clone());
    let sent = shared
        .upstream
        .send(
            &parts.method,
            parts.uri.path_and_query(),
            forwarded(&parts.headers),
            sent_body,
        )
        .await;
    let (reply_found, outcome, reply) = match sent {
        Err(Failed(status, message)) => {
            tracing::warn!(exchange = %id, operation, %message, "proxy error");
            let response = own_reply(status, json!({"message": message, "exchange": id}));
            (Vec::new(), Outcome::ProxyError, Err(response))
        }
        Ok((status, headers, reply_body)) => {
            // The common case first: a documented reply that departs from nothing, read
            // without building its tree. Otherwise parsed once, for the checks and the
            // outcome.
            let clean = match (&matched, checked) {
                (Some(m), true) => {
                    check::reply_clean(&shared.contract, m.contract, status.as_u16(), &reply_body)
                }
                _ => None,
            };
            let (reply_found, business_error) = match clean {
                Some(code) => (Vec::new(), matches!(code, Code::Text(_))),
                None => {
                    let parsed: Option<Value> = serde_json::from_slice(&reply_body).ok();
                    let found = match (&matched, checked) {
                        (Some(m), true) => check::reply(
                            &shared.contract,
                            m.contract,
                            status.as_u16(),
                            &reply_body,
                            parsed.as_ref(),
                        ),
                        _ => Vec::new(),
                    };
                    let text = parsed
                        .as_ref()
                        .and_then(|v| v.get("code"))
                        .is_some_and(Value::is_string);
                    (found, text)
                }
            };
            let outcome = if !reply_found.is_empty() || !request_found.is_empty() {
                Outcome::Deviation
            } else if business_error {
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
    let exchange = Exchange {
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
    };
    if !found.is_empty() {
        shared
            .deviations
            .push(&id, har::recorded(&exchange), found.clone());
    }
    shared.recorder.record(exchange);
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
