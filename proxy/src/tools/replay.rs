//! A recording's requests re-sent in order to another deployment (a simulator, a new
//! platform version), each reply compared with the recorded one by HTTP status, business
//! `code` and shape (the same fields with the same JSON types, the same list lengths;
//! values aside). Read-only unless told otherwise: a recorded write (an order, added
//! employees, a password reset) repeated against a live deployment would apply again, so
//! only the documents' reads are re-sent, and the writes are counted.

use std::{fmt::Write as _, path::Path, time::Duration};

use licensing_sdk::operations::{self, Method};
use serde::Serialize;
use serde_json::Value;

use super::entries;
use crate::{
    check::schema::{self, json_type},
    conformance::escape,
};

/// What a replay re-sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayOptions {
    /// Also the recorded writes: every request but a `GET` of an operation the documents
    /// mark `x-idempotent: true`. Off by default.
    pub writes: bool,
}

/// Whether a recorded request is a write: anything but a `GET` of an operation the
/// documents mark `x-idempotent: true` (the reads). A request of no operation is a read
/// only as a `GET` or `HEAD`.
fn is_write(entry: &Value) -> bool {
    let method = entry
        .pointer("/request/method")
        .and_then(Value::as_str)
        .unwrap_or("");
    let operation = entry
        .get("_operationId")
        .and_then(Value::as_str)
        .and_then(operations::find);
    match operation {
        Some(op) => !(op.idempotent && op.method == Method::Get && method == "GET"),
        None => !matches!(method, "GET" | "HEAD"),
    }
}

/// An entry's operation, or its method and path when it has none.
fn named(entry: &Value) -> String {
    match entry.get("_operationId").and_then(Value::as_str) {
        Some(operation) => operation.to_string(),
        None => {
            let text = |p: &str| entry.pointer(p).and_then(Value::as_str).unwrap_or("");
            let url = text("/request/url");
            let path = reqwest::Url::parse(url).map_or(url.to_string(), |u| u.path().to_string());
            format!("{} {path}", text("/request/method"))
        }
    }
}

/// The writes a recording holds, per operation in the order first seen: what a replay
/// with [`ReplayOptions::writes`] repeats.
pub fn recorded_writes(path: &Path) -> Result<Vec<(String, usize)>, String> {
    let mut writes: Vec<(String, usize)> = Vec::new();
    for entry in entries(path)?.iter().filter(|e| is_write(e)) {
        let name = named(entry);
        match writes.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => writes.push((name, 1)),
        }
    }
    Ok(writes)
}

/// Whether `against` is a simulator (`licensing-sim`, directly or through a proxy): its
/// admin API answers `GET /__sandbox/v1/clock` with the clock. A simulator with an admin
/// token answers `401` and is not recognised this way.
pub async fn is_simulator(against: &str) -> bool {
    let Ok(base) = reqwest::Url::parse(against) else {
        return false;
    };
    let Ok(url) = base.join("/__sandbox/v1/clock") else {
        return false;
    };
    let Ok(http) = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        return false;
    };
    let Ok(reply) = http.get(url).send().await else {
        return false;
    };
    if !reply.status().is_success() {
        return false;
    }
    // A clock is a few dozen bytes: a larger answer is not one.
    let Ok(bytes) = reply.bytes().await else {
        return false;
    };
    bytes.len() < 4096
        && serde_json::from_slice::<Value>(&bytes).is_ok_and(|clock| {
            clock.get("now").is_some_and(Value::is_i64)
                && clock.get("frozen").is_some_and(Value::is_boolean)
        })
}

/// The credentials a replay sends (the recording holds none).
#[derive(Clone)]
pub struct Tokens {
    /// Order service: `Authorization: Bearer …`.
    pub app: String,
    /// Member center: `Authorization: Bearer …` and `clientToken`.
    pub client: String,
    /// Member center: `userToken`.
    pub user: String,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens([REDACTED])")
    }
}

/// One reply that differs from the recorded one.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    /// The recorded exchange.
    pub exchange: String,
    /// Its operation.
    pub operation_id: Option<String>,
    /// `METHOD path`.
    pub request: String,
    /// `status`, `code` or `shape`.
    pub what: String,
    /// Where, for `shape`: a JSON Pointer into the reply body.
    pub pointer: String,
    /// As recorded.
    pub recorded: String,
    /// As replayed.
    pub replayed: String,
}

/// What a replay found.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    /// Requests sent.
    pub sent: usize,
    /// Entries without a recorded reply (the upstream could not be reached), not sent.
    pub skipped: usize,
    /// Recorded writes not sent (without [`ReplayOptions::writes`]).
    #[serde(rename = "writesSkipped")]
    pub writes_skipped: usize,
    /// Replies that differ.
    pub differences: Vec<Difference>,
}

impl Replay {
    /// The result for people: one line per difference, whatever the recording holds
    /// (every value from it [`escape`]d).
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} requests replayed, {} skipped, {} differences\n",
            self.sent,
            self.skipped,
            self.differences.len()
        );
        if self.writes_skipped > 0 {
            let _ = writeln!(
                out,
                "{} recorded writes not repeated (--writes repeats them)",
                self.writes_skipped
            );
        }
        for d in &self.differences {
            let _ = writeln!(
                out,
                "  {} {} ({}): {} {}differs: recorded {}, replayed {}",
                escape(&d.exchange),
                escape(d.operation_id.as_deref().unwrap_or("-")),
                escape(&d.request),
                escape(&d.what),
                if d.pointer.is_empty() {
                    String::new()
                } else {
                    format!("at {} ", escape(&d.pointer))
                },
                escape(&d.recorded),
                escape(&d.replayed)
            );
        }
        out
    }
}

/// Where two replies' shapes first differ: pointer, recorded, replayed.
pub(crate) fn shape_difference(
    a: &Value,
    b: &Value,
    at: &mut String,
) -> Option<(String, String, String)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let len = at.len();
                at.push('/');
                at.push_str(&schema::segment(key));
                let found = match (x.get(key.as_str()), y.get(key.as_str())) {
                    (Some(p), Some(q)) => shape_difference(p, q, at),
                    (p, q) => {
                        let shown = |v: Option<&Value>| v.map_or("absent", json_type).to_string();
                        Some((at.clone(), shown(p), shown(q)))
                    }
                };
                at.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some((
                    at.clone(),
                    format!("{} items", x.len()),
                    format!("{} items", y.len()),
                ));
            }
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                let found = shape_difference(p, q, at);
                at.truncate(len);
                found
            })
        }
        (p, q) if json_type(p) != json_type(q) => Some((
            at.clone(),
            json_type(p).to_string(),
            json_type(q).to_string(),
        )),
        _ => None,
    }
}

fn nonce() -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The largest reply body compared, as a recording keeps one (larger: `{"omitted":
/// bytes}`, as recorded).
const MAX_COMPARED_BYTES: usize = 1024 * 1024;

/// A replayed reply's body as JSON (`null` when it is not), read no further than
/// [`MAX_COMPARED_BYTES`]: a larger one stands as a recording keeps it, by its size.
async fn read_reply(mut reply: reqwest::Response) -> Value {
    let mut body = Vec::new();
    loop {
        match reply.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_COMPARED_BYTES {
                    let size = reply
                        .content_length()
                        .map_or(body.len() + chunk.len(), |n| n as usize);
                    return serde_json::json!({ "omitted": size });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(_) => return Value::Null,
        }
    }
    serde_json::from_slice(&body).unwrap_or(Value::Null)
}

/// `licensing-proxy replay FILE.har --against URL`: the reads only unless `options` say
/// otherwise.
pub async fn replay(
    path: &Path,
    against: &str,
    tokens: &Tokens,
    options: ReplayOptions,
) -> Result<Replay, String> {
    let base = reqwest::Url::parse(against)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
        .ok_or_else(|| format!("--against: `{against}` is not an absolute http(s) URL"))?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let mut result = Replay {
        sent: 0,
        skipped: 0,
        writes_skipped: 0,
        differences: Vec::new(),
    };
    for entry in entries(path)? {
        let text = |p: &str| entry.pointer(p).and_then(Value::as_str).unwrap_or("");
        let recorded_status = entry
            .pointer("/response/status")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if recorded_status == 0 || text("/_outcome") == "proxyError" {
            result.skipped += 1;
            continue;
        }
        if !options.writes && is_write(&entry) {
            result.writes_skipped += 1;
            continue;
        }
        let recorded_url = reqwest::Url::parse(text("/request/url"))
            .map_err(|e| format!("an entry's request.url: {e}"))?;
        let mut url = base.clone();
        url.set_path(recorded_url.path());
        let query: Vec<(String, String)> = recorded_url
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "g_nonce" {
                    nonce()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        url.set_query(None);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(&query);
        }
        let method = reqwest::Method::from_bytes(text("/request/method").as_bytes())
            .map_err(|e| format!("an entry's request.method: {e}"))?;
        let mut request = http
            .request(method.clone(), url)
            .header("content-type", "application/json");
        request = if recorded_url.path().starts_with("/me/") {
            request
                .bearer_auth(&tokens.client)
                .header("clientToken", &tokens.client)
                .header("userToken", &tokens.user)
        } else {
            request.bearer_auth(&tokens.app)
        };
        if let Some(body) = entry
            .pointer("/request/postData/text")
            .and_then(Value::as_str)
        {
            request = request.body(body.to_string());
        }
        let reply = request.send().await.map_err(|e| {
            let e = e.without_url();
            let mut text = format!("{against}: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            text
        })?;
        result.sent += 1;
        let status = reply.status().as_u16() as u64;
        let body = read_reply(reply).await;
        let recorded: Value =
            serde_json::from_str(text("/response/content/text")).unwrap_or(Value::Null);
        let mut differ = |what: &str, pointer: String, recorded: String, replayed: String| {
            result.differences.push(Difference {
                exchange: text("/_exchange").to_string(),
                operation_id: entry
                    .get("_operationId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                request: format!("{method} {}", recorded_url.path()),
                what: what.to_string(),
                pointer,
                recorded,
                replayed,
            });
        };
        if status != recorded_status {
            differ(
                "status",
                String::new(),
                recorded_status.to_string(),
                status.to_string(),
            );
        } else if recorded.get("code") != body.get("code") {
            let show = |v: Option<&Value>| v.map_or("absent".to_string(), Value::to_string);
            differ(
                "code",
                "/code".into(),
                show(recorded.get("code")),
                show(body.get("code")),
            );
        } else if let Some((pointer, a, b)) = shape_difference(&recorded, &body, &mut String::new())
        {
            differ("shape", pointer, a, b);
        }
    }
    Ok(result)
}
