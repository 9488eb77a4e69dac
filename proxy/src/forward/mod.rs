//! One exchange: the request checked, forwarded unchanged, the reply read within its
//! bounds and checked, the deviations reported and recorded, the reply (or, with
//! `--strict`, an error naming the deviations) answered.

use std::{
    fs::File,
    io::Write,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::{Instant, SystemTime},
};

use axum::{
    body::{Body, Bytes},
    http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header, request::Parts},
};
use licensing_host::{AdminChecks, Console, Handler};
use serde_json::{Value, json};

mod admin;
pub(crate) mod budget;
pub(crate) mod har;
mod query;
pub(crate) mod upstream;

use crate::{
    check::{
        self,
        contract::{Contract, Matched, OpContract},
        fast::Code,
        schema::Finding,
    },
    conformance::{Deviation, DeviationLog, Direction, escape, secrets::Secrets},
};
use budget::CheckBudget;
use har::{Exchange, Outcome, Recording};
use upstream::{Failed, ReplyBody, Upstream};

/// The header carrying how many deviations an exchange showed (request and reply).
pub const DEVIATIONS_HEADER: &str = "x-licensing-deviations";
/// The header carrying the exchange's id (as in the report and the recording).
pub const EXCHANGE_HEADER: &str = "x-licensing-exchange";

/// What every exchange shares.
pub(crate) struct Shared {
    pub contract: Contract,
    pub upstream: Upstream,
    pub report: Option<Mutex<File>>,
    pub strict: bool,
    /// The admin checks: the recording's routes, the console, and the upstream's admin
    /// API before anything of it is forwarded.
    pub admin: AdminChecks,
    /// Bytes of bodies under check at once.
    pub budget: Arc<CheckBudget>,
    pub recorder: Arc<Recording>,
    pub ids: Ids,
    /// The deviating exchanges the console's Conformance page shows.
    pub deviations: Arc<DeviationLog>,
    /// The console (its Conformance page) at `/__sandbox/`.
    pub pages: Console,
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

    /// `prefix-000042`, the counter zero-padded to six digits at least. Written by hand
    /// (`format!` cost a thousand instructions an exchange) and at its exact length, which
    /// the header value takes as it is, with no further allocation.
    fn next(&self) -> String {
        let mut n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut digits = [b'0'; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let start = start.min(digits.len() - 6);
        let mut id = String::with_capacity(self.prefix.len() + 1 + digits.len() - start);
        id.push_str(&self.prefix);
        id.push('-');
        id.extend(digits[start..].iter().map(|&d| char::from(d)));
        id
    }
}

/// The proxy as the server serves it.
#[derive(Clone)]
pub(crate) struct App(pub Arc<Shared>);

impl Handler for App {
    async fn handle(&self, parts: Parts, body: Result<Bytes, String>) -> Response<Body> {
        let path = parts.uri.path();
        if path.starts_with(admin::PREFIX) {
            return admin::handle(&self.0, parts, body);
        }
        if is_console(path) {
            return self.0.pages.handle(parts, body).await;
        }
        exchange(&self.0, parts, body).await
    }

    fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
        let path = parts.uri.path();
        if is_console(path) {
            self.0.pages.refuse(parts)
        } else if path.starts_with(licensing_host::ADMIN_PREFIX) {
            // The recording's routes, and the upstream's admin API: forwarded with the
            // proxy's own `Host`, the upstream's checks would pass a page that rebinds
            // its name to the proxy's address. So the proxy applies them (the simulator's
            // own) before the body is read and anything is sent on.
            self.0.admin.refusal(parts)
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

/// The request's headers as forwarded: without the hop-by-hop ones, with room for the
/// `Host` and `Content-Length` the upstream client sets.
fn forwarded(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len() + 2);
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

/// The exchange's findings as its deviations, the request's first, each stamped with the
/// exchange and the time it started.
fn deviations(
    request: Vec<Finding>,
    reply: Vec<Finding>,
    operation: Option<&str>,
    exchange: &str,
    started: SystemTime,
) -> Vec<Deviation> {
    if request.is_empty() && reply.is_empty() {
        return Vec::new();
    }
    let time = rfc3339(started);
    let request = request.into_iter().map(|f| (Direction::Request, f));
    let reply = reply.into_iter().map(|f| (Direction::Reply, f));
    request
        .chain(reply)
        .map(|(direction, f)| Deviation {
            operation_id: operation.map(str::to_string),
            direction,
            pointer: f.pointer,
            rule: f.rule.to_string(),
            expected: f.expected,
            actual: f.actual,
            exchange: exchange.to_string(),
            time: time.clone(),
        })
        .collect()
}

/// One exchange: the request checked and forwarded, the reply checked, what departs
/// reported and what is asked for kept, the reply (or the proxy's own) answered.
async fn exchange(shared: &Shared, parts: Parts, body: Result<Bytes, String>) -> Response<Body> {
    let started = Instant::now();
    let started_at = SystemTime::now();
    let id = shared.ids.next();
    let body = match body {
        Ok(body) => body,
        Err(cause) => return unread(&cause, id),
    };
    let path = parts.uri.path();
    // The upstream's own admin API is not the platform's: forwarded, not checked.
    let checked = !path.starts_with(licensing_host::ADMIN_PREFIX);
    let matched = shared.contract.find(parts.method.as_str(), path);
    let operation = matched.as_ref().map(|m| m.contract.op.id);
    let request_found = check_request(shared, &parts, &body, matched.as_ref(), checked);
    let sent = send_on(shared, &parts, &body).await;
    let op = matched.as_ref().filter(|_| checked).map(|m| m.contract);
    let request_deviates = !request_found.is_empty();
    let Replied {
        found: reply_found,
        outcome,
        reply,
        streamed,
    } = replied(shared, sent, op, request_deviates, &id, operation);
    // A reply forwarded unchecked (over the check budget) is not refused for it.
    let strict = shared.strict && reply_found.iter().any(|f| f.rule != "not-checked");
    let mut found = deviations(request_found, reply_found, operation, &id, started_at);
    // What is kept of the exchange (the report, the console, the recording) has every
    // credential it carried replaced wherever it appears: collected only when something
    // is kept.
    let recorded = shared.recorder.wants(operation, outcome);
    let reply_parts = reply.as_ref().ok().map(|(s, h, b)| (*s, h, b));
    let secrets = if !found.is_empty() || recorded {
        har::secrets(&parts, &body, reply_parts)
    } else {
        Secrets::default()
    };
    redact_all(&mut found, &secrets);
    report(shared, &found);
    tracing::debug!(exchange = %id, operation, deviations = found.len(), ?outcome, "exchange");
    let exchange = Exchange {
        id: &id,
        operation,
        started: started_at,
        duration: started.elapsed(),
        parts: &parts,
        request_body: &body,
        reply: reply_parts,
        proxy_reply: reply.as_ref().err(),
        deviations: &found,
        outcome,
        secrets: &secrets,
    };
    if !found.is_empty() {
        shared
            .deviations
            .push(&id, har::recorded(&exchange), found.clone());
    }
    if recorded {
        shared.recorder.record(exchange);
    }
    let mut response = respond(reply, streamed, strict, &id, &found);
    stamp(&mut response, found.len(), id);
    response
}

/// The answer to a request whose body could not be read.
fn unread(cause: &str, id: String) -> Response<Body> {
    let mut response = own_reply(
        StatusCode::SERVICE_UNAVAILABLE,
        json!({"message": format!("the request's body was not read: {cause}"), "exchange": id}),
    );
    stamp(&mut response, 0, id);
    response
}

/// What the request departs from the documents by: nothing when it is not `checked` (the
/// upstream's admin API) or a browser's own, an unknown operation when nothing matched.
fn check_request(
    shared: &Shared,
    parts: &Parts,
    body: &Bytes,
    matched: Option<&Matched<'_>>,
    checked: bool,
) -> Vec<Finding> {
    let (method, path) = (parts.method.as_str(), parts.uri.path());
    match (matched, checked) {
        (_, false) => Vec::new(),
        (Some(m), true) => {
            let query = query::pairs(parts);
            let room = shared.budget.reserve(body.len());
            let shown = room.as_ref().ok().map(|_| &body[..]);
            let mut found = check::request(&shared.contract, m, &query, &parts.headers, shown);
            if let Err(held) = room {
                found.push(check::not_checked(body.len(), held, shared.budget.limit()));
            }
            found
        }
        (None, true) if check::browser_noise(method, path) => Vec::new(),
        (None, true) => vec![check::unknown_operation(method, path)],
    }
}

/// The request sent on to the upstream unchanged but for its hop-by-hop headers.
async fn send_on(
    shared: &Shared,
    parts: &Parts,
    body: &Bytes,
) -> Result<(StatusCode, HeaderMap, ReplyBody), Failed> {
    // A request sent without a body (a GET) goes on without one, not with an empty one.
    let sent_body = (!body.is_empty() || parts.headers.contains_key(header::CONTENT_LENGTH))
        .then(|| body.clone());
    shared
        .upstream
        .send(
            &parts.method,
            parts.uri.path_and_query(),
            forwarded(&parts.headers),
            sent_body,
            &shared.budget,
        )
        .await
}

/// The upstream's reply as the exchange keeps it, and what it departs by.
struct Replied {
    found: Vec<Finding>,
    outcome: Outcome,
    /// The upstream's reply, or the proxy's own when there was none.
    reply: Result<(StatusCode, HeaderMap, Bytes), Response<Body>>,
    /// A reply handed on as it arrives (no room to hold it for checking): what is kept of
    /// the exchange has, in `reply`, a note saying so in its place.
    streamed: Option<Body>,
}

/// What came of sending the request on, the reply checked against `op` when the request
/// was a documented operation's and checked.
fn replied(
    shared: &Shared,
    sent: Result<(StatusCode, HeaderMap, ReplyBody), Failed>,
    op: Option<&OpContract>,
    request_deviates: bool,
    id: &str,
    operation: Option<&str>,
) -> Replied {
    match sent {
        Err(Failed(status, message)) => {
            tracing::warn!(exchange = %id, operation, message = %escape(&message), "proxy error");
            let response = own_reply(status, json!({"message": message, "exchange": id}));
            Replied {
                found: Vec::new(),
                outcome: Outcome::ProxyError,
                reply: Err(response),
                streamed: None,
            }
        }
        Ok((status, headers, ReplyBody::Whole(body, room))) => {
            let (found, business_error) = check_reply(shared, op, status, &body);
            drop(room);
            Replied {
                outcome: outcome(request_deviates || !found.is_empty(), business_error),
                found,
                reply: Ok((status, headers, body)),
                streamed: None,
            }
        }
        Ok((
            status,
            headers,
            ReplyBody::Streamed {
                body,
                len,
                at_least,
                others,
            },
        )) => {
            let found = match op {
                Some(_) => vec![check::not_checked_reply(
                    len,
                    at_least,
                    others,
                    shared.budget.limit(),
                )],
                None => Vec::new(),
            };
            let kept = Bytes::from(
                json!({"omitted": len, "streamed": "no room in the check budget: handed on as it arrived"})
                    .to_string(),
            );
            Replied {
                outcome: outcome(request_deviates || !found.is_empty(), false),
                found,
                reply: Ok((status, headers, kept)),
                streamed: Some(body),
            }
        }
    }
}

/// What a reply read whole departs by, and whether it answers a business error (a `code`
/// of text): checked against `op`, or only read for its code.
fn check_reply(
    shared: &Shared,
    op: Option<&OpContract>,
    status: StatusCode,
    body: &[u8],
) -> (Vec<Finding>, bool) {
    let Some(op) = op else {
        return (Vec::new(), check::code_is_text(body));
    };
    // The common case first: a documented reply that departs from nothing, read without a
    // finding's allocations.
    match check::reply_clean(&shared.contract, op, status.as_u16(), body) {
        Some(code) => (Vec::new(), matches!(code, Code::Text(_))),
        None => check::reply(&shared.contract, op, status.as_u16(), body),
    }
}

/// How an exchange the upstream answered ended.
fn outcome(deviates: bool, business_error: bool) -> Outcome {
    if deviates {
        Outcome::Deviation
    } else if business_error {
        Outcome::BusinessError
    } else {
        Outcome::Ok
    }
}

/// What answers the client: the proxy's own reply, `--strict`'s error, or the upstream's
/// reply (moved in, now that what is kept of the exchange no longer borrows it).
fn respond(
    reply: Result<(StatusCode, HeaderMap, Bytes), Response<Body>>,
    streamed: Option<Body>,
    strict: bool,
    id: &str,
    found: &[Deviation],
) -> Response<Body> {
    match reply {
        Err(own) => own,
        Ok(_) if strict => strict_reply(id, found),
        Ok((status, headers, reply_body)) => {
            let body = streamed.unwrap_or_else(|| Body::from(reply_body));
            let mut response = Response::new(body);
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            response
        }
    }
}

/// The deviations with the exchange's credentials replaced.
fn redact_all(found: &mut [Deviation], secrets: &Secrets) {
    if secrets.is_empty() {
        return;
    }
    for deviation in found {
        redact(&mut deviation.pointer, secrets);
        redact(&mut deviation.actual, secrets);
    }
}

/// `text` with the exchange's credentials replaced.
fn redact(text: &mut String, secrets: &Secrets) {
    if let std::borrow::Cow::Owned(shown) = secrets.redact(text) {
        *text = shown;
    }
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

/// The stamp's header names, built once: inserting by `&str` copies a custom name anew.
static DEVIATIONS: HeaderName = HeaderName::from_static(DEVIATIONS_HEADER);
static EXCHANGE: HeaderName = HeaderName::from_static(EXCHANGE_HEADER);

fn stamp(response: &mut Response<Body>, deviations: usize, id: String) {
    let headers = response.headers_mut();
    // The upstream's reply may have no room left: grown once for both.
    headers.reserve(2);
    let count = match deviations {
        // Nearly every exchange: nothing to allocate.
        0 => HeaderValue::from_static("0"),
        n => HeaderValue::from(n),
    };
    headers.insert(&DEVIATIONS, count);
    // The id's buffer, taken as it is (its exact length, so not copied).
    if let Ok(id) = HeaderValue::from_maybe_shared(Bytes::from(id)) {
        headers.insert(&EXCHANGE, id);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_as_formatted() {
        for n in [1, 42, 999_999, 1_000_000, 1_234_567, u64::MAX] {
            let ids = Ids {
                prefix: "0a1b2c3d".into(),
                next: AtomicU64::new(n),
            };
            let id = ids.next();
            assert_eq!(id, format!("0a1b2c3d-{n:06}"));
            assert_eq!(id.capacity(), id.len(), "{id}");
            assert_eq!(ids.next(), format!("0a1b2c3d-{:06}", n.wrapping_add(1)));
        }
    }
}
