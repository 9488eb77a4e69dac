//! Recording exchanges as HAR 1.2 (the format browsers and most HTTP tools read), with
//! every credential redacted (the secret headers, parameters and fields by their name, and
//! each of their values wherever else it appears in the exchange), filtered by operation
//! and outcome, bounded in entries and in body size.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, SystemTime},
};

use axum::{
    body::{Body, Bytes},
    http::{HeaderMap, Response, StatusCode, request::Parts},
};
use licensing_host::is_secret;
use licensing_sandbox_client::types::{RecordingOutcome, RecordingStatus};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::conformance::{
    Deviation, RecordedExchange, RecordedMessage,
    json::{self, JsonOut},
    secrets::Secrets,
};

/// The most entries a recording keeps unless configured otherwise.
pub const DEFAULT_RECORD_MAX_ENTRIES: usize = 10_000;

/// The largest body text an entry keeps; a larger one is kept as its size only.
const MAX_BODY_TEXT: usize = 1024 * 1024;

/// What replaces a credential.
const REDACTED: &str = "[REDACTED]";

/// How an exchange ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Outcome {
    Ok,
    BusinessError,
    Deviation,
    ProxyError,
}

impl From<Outcome> for RecordingOutcome {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Ok => RecordingOutcome::Ok,
            Outcome::BusinessError => RecordingOutcome::BusinessError,
            Outcome::Deviation => RecordingOutcome::Deviation,
            Outcome::ProxyError => RecordingOutcome::ProxyError,
        }
    }
}

/// One exchange as the recording sees it.
pub(crate) struct Exchange<'a> {
    pub id: &'a str,
    pub operation: Option<&'static str>,
    pub started: SystemTime,
    pub duration: Duration,
    pub parts: &'a Parts,
    pub request_body: &'a Bytes,
    /// The upstream's reply, when there was one.
    pub reply: Option<(StatusCode, &'a HeaderMap, &'a Bytes)>,
    /// The proxy's own reply, when the upstream's could not be forwarded.
    pub proxy_reply: Option<&'a Response<Body>>,
    pub deviations: &'a [Deviation],
    pub outcome: Outcome,
    /// The exchange's credentials, replaced wherever they appear.
    pub secrets: &'a Secrets,
}

/// The credentials an exchange carried: the values of its secret headers (and cookies),
/// query parameters and body fields, request and reply.
pub(crate) fn secrets(
    parts: &Parts,
    request_body: &[u8],
    reply: Option<(StatusCode, &HeaderMap, &Bytes)>,
) -> Secrets {
    let mut secrets = Secrets::default();
    let mut headers = |map: &HeaderMap| {
        for (name, value) in map {
            secrets.add_header(name.as_str(), &String::from_utf8_lossy(value.as_bytes()));
        }
    };
    headers(&parts.headers);
    if let Some((_, reply_headers, _)) = reply {
        headers(reply_headers);
    }
    for (name, value) in form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()) {
        secrets.add_pair(&name, &value);
    }
    secrets.add_body(request_body);
    if let Some((_, _, body)) = reply {
        secrets.add_body(body);
    }
    secrets
}

#[derive(Default)]
struct State {
    recording: bool,
    operations: Option<Vec<String>>,
    outcomes: Option<Vec<RecordingOutcome>>,
    /// Shared, so that a reader copies pointers under the lock and reads outside it:
    /// a HAR of 10,000 entries or a coverage page never holds up the exchanges recorded.
    entries: Vec<Arc<Value>>,
    dropped: u64,
}

/// A proxy's recording: started, filtered, read and stopped at any time (the admin API's
/// `/__sandbox/v1/recording`).
pub struct Recording {
    max_entries: usize,
    state: Mutex<State>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("max_entries", &self.max_entries)
            .finish_non_exhaustive()
    }
}

impl Recording {
    pub(crate) fn new(max_entries: usize) -> Self {
        Self {
            max_entries,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a new recording (forgetting the last one), keeping only the exchanges of
    /// `operations` and with `outcomes`, when given.
    pub fn start(&self, operations: Option<Vec<String>>, outcomes: Option<Vec<RecordingOutcome>>) {
        *self.state() = State {
            recording: true,
            operations,
            outcomes,
            ..State::default()
        };
    }

    /// Stops recording; the recording as a HAR document.
    pub fn stop(&self) -> Value {
        let entries = {
            let mut state = self.state();
            state.recording = false;
            state.entries.clone()
        };
        har(&entries)
    }

    /// The entries so far (or the last recording's), as a HAR document.
    pub fn har(&self) -> Value {
        har(&self.entries())
    }

    /// The entries so far (or the last recording's), taken under the lock and read after.
    fn entries(&self) -> Vec<Arc<Value>> {
        self.state().entries.clone()
    }

    /// Whether it records, its filters and counts.
    pub fn status(&self) -> RecordingStatus {
        let state = self.state();
        RecordingStatus {
            recording: state.recording,
            entries: state.entries.len() as i64,
            dropped: state.dropped as i64,
            max_entries: self.max_entries as i64,
            operations: state.operations.clone().unwrap_or_default(),
            outcomes: state.outcomes.clone().unwrap_or_default(),
        }
    }

    /// Whether an exchange of `operation` with `outcome` is recorded now.
    pub(crate) fn wants(&self, operation: Option<&str>, outcome: Outcome) -> bool {
        let state = self.state();
        let operation = operation.unwrap_or_default();
        state.recording
            && state
                .operations
                .as_ref()
                .is_none_or(|ops| ops.iter().any(|o| o == operation))
            && state
                .outcomes
                .as_ref()
                .is_none_or(|o| o.contains(&outcome.into()))
    }

    /// Keeps an exchange that [`Recording::wants`] (asked before its credentials were
    /// collected: an entry is never built without them).
    pub(crate) fn record(&self, exchange: Exchange<'_>) {
        // Built outside the lock: concurrent exchanges do not wait on each other's JSON.
        let entry = entry(&exchange);
        let mut state = self.state();
        if !state.recording {
            return;
        }
        if state.entries.len() >= self.max_entries {
            state.dropped += 1;
        } else {
            state.entries.push(Arc::new(entry));
        }
    }
}

impl crate::console::coverage::Recorded for Recording {
    fn exchanges(&self) -> Vec<licensing_coverage::Exchange> {
        self.entries()
            .iter()
            .enumerate()
            .map(|(i, e)| licensing_coverage::exchange::from_har(&format!("recording#{i}"), e))
            .collect()
    }

    fn status(&self) -> RecordingStatus {
        Recording::status(self)
    }
}

fn har(entries: &[Arc<Value>]) -> Value {
    json!({"log": {
        "version": "1.2",
        "creator": {"name": "licensing-proxy", "version": env!("CARGO_PKG_VERSION")},
        "entries": entries,
    }})
}

/// A message's headers, credentials and cookies redacted.
fn header_pairs<'m>(
    map: &'m HeaderMap,
    secrets: &'m Secrets,
) -> impl Iterator<Item = (&'m str, String)> {
    map.iter().map(|(name, value)| {
        let shown = if is_secret(name.as_str()) || name.as_str().contains("cookie") {
            REDACTED.to_string()
        } else {
            secrets
                .redact(&String::from_utf8_lossy(value.as_bytes()))
                .into_owned()
        };
        (name.as_str(), shown)
    })
}

fn headers(map: &HeaderMap, secrets: &Secrets) -> Vec<Value> {
    header_pairs(map, secrets)
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect()
}

/// The request's URL as recorded: credentials in the query redacted; and the query's
/// pairs as shown.
fn shown_url(parts: &Parts, secrets: &Secrets) -> (String, Vec<(String, String)>) {
    let mut shown_query = Vec::new();
    for (name, value) in form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()) {
        let value = if is_secret(&name) {
            REDACTED.to_string()
        } else {
            secrets.redact(&value).into_owned()
        };
        shown_query.push((secrets.redact(&name).into_owned(), value));
    }
    let host = parts
        .headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let host = secrets.redact(host);
    let path = secrets.redact(parts.uri.path());
    let mut url = format!("http://{host}{path}");
    if !shown_query.is_empty() {
        let encoded: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&shown_query)
            .finish();
        url = format!("{url}?{encoded}");
    }
    (url, shown_query)
}

/// The exchange as the console's Conformance page shows it, redacted as a recording is.
pub(crate) fn recorded(x: &Exchange<'_>) -> RecordedExchange {
    let (url, _) = shown_url(x.parts, x.secrets);
    let pairs = |h: &HeaderMap| {
        header_pairs(h, x.secrets)
            .map(|(k, v)| (k.to_string(), v))
            .collect::<Vec<_>>()
    };
    let request = RecordedMessage {
        method: x.parts.method.to_string(),
        url,
        status: 0,
        headers: pairs(&x.parts.headers),
        body: body_text(x.request_body, x.secrets).unwrap_or_default(),
    };
    let reply = match (x.reply, x.proxy_reply) {
        (Some((status, h, body)), _) => RecordedMessage {
            status: status.as_u16(),
            headers: pairs(h),
            body: body_text(body, x.secrets).unwrap_or_default(),
            ..RecordedMessage::default()
        },
        (None, Some(own)) => RecordedMessage {
            status: own.status().as_u16(),
            headers: pairs(own.headers()),
            ..RecordedMessage::default()
        },
        (None, None) => RecordedMessage::default(),
    };
    RecordedExchange { request, reply }
}

/// A body as HAR text: compact JSON with its secret fields and the exchange's credentials
/// redacted (rewritten as it is read: no tree of it), else its size only.
fn body_text(bytes: &[u8], secrets: &Secrets) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    if bytes.len() > MAX_BODY_TEXT {
        return Some(json!({"omitted": bytes.len()}).to_string());
    }
    let mut out = JsonOut::new(usize::MAX).credentials(secrets);
    match json::rewrite(bytes, &mut out) {
        Ok(()) => Some(out.finish().0),
        Err(_) => Some(json!({"notJson": bytes.len()}).to_string()),
    }
}

fn entry(x: &Exchange<'_>) -> Value {
    let parts = x.parts;
    let (url, shown_query) = shown_url(parts, x.secrets);
    let query: Vec<Value> = shown_query
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    let mime = |h: &HeaderMap| {
        h.get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let mut request = Map::new();
    request.insert("method".into(), parts.method.as_str().into());
    request.insert("url".into(), url.into());
    request.insert("httpVersion".into(), format!("{:?}", parts.version).into());
    request.insert("cookies".into(), json!([]));
    request.insert("headers".into(), headers(&parts.headers, x.secrets).into());
    request.insert("queryString".into(), query.into());
    if let Some(text) = body_text(x.request_body, x.secrets) {
        request.insert(
            "postData".into(),
            json!({"mimeType": mime(&parts.headers), "text": text}),
        );
    }
    request.insert("headersSize".into(), (-1).into());
    request.insert("bodySize".into(), x.request_body.len().into());
    let (status, reply_headers, reply_body): (u16, Vec<Value>, Option<String>) =
        match (x.reply, x.proxy_reply) {
            (Some((status, h, body)), _) => (
                status.as_u16(),
                headers(h, x.secrets),
                body_text(body, x.secrets),
            ),
            (None, Some(own)) => (
                own.status().as_u16(),
                headers(own.headers(), x.secrets),
                None,
            ),
            (None, None) => (0, Vec::new(), None),
        };
    let size = x.reply.map_or(0, |(_, _, b)| b.len());
    let mut content = json!({"size": size, "mimeType": "application/json"});
    if let Some(text) = reply_body {
        content["text"] = text.into();
    }
    let ms = x.duration.as_secs_f64() * 1000.0;
    json!({
        "startedDateTime": chrono::DateTime::<chrono::Utc>::from(x.started)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "time": ms,
        "request": request,
        "response": {
            "status": status,
            "statusText": StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or(""),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": reply_headers,
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": size,
        },
        "cache": {},
        "timings": {"send": 0, "wait": ms, "receive": 0},
        "_exchange": x.id,
        "_operationId": x.operation,
        "_outcome": x.outcome,
        "_deviations": x.deviations,
    })
}
