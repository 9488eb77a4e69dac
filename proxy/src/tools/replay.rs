//! A recording's requests re-sent in order to another deployment (a simulator, a new
//! platform version), each reply compared with the recorded one by HTTP status, business
//! `code` and shape (the same fields with the same JSON types, the same list lengths;
//! values aside).

use std::{fmt::Write as _, path::Path, time::Duration};

use serde::Serialize;
use serde_json::Value;

use super::entries;
use crate::check::schema::{self, json_type};

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
    /// Replies that differ.
    pub differences: Vec<Difference>,
}

impl Replay {
    /// The result for people.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} requests replayed, {} skipped, {} differences\n",
            self.sent,
            self.skipped,
            self.differences.len()
        );
        for d in &self.differences {
            let _ = writeln!(
                out,
                "  {} {} ({}): {} {}differs: recorded {}, replayed {}",
                d.exchange,
                d.operation_id.as_deref().unwrap_or("-"),
                d.request,
                d.what,
                if d.pointer.is_empty() {
                    String::new()
                } else {
                    format!("at {} ", d.pointer)
                },
                d.recorded,
                d.replayed
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

/// `licensing-proxy replay FILE.har --against URL`.
pub async fn replay(path: &Path, against: &str, tokens: &Tokens) -> Result<Replay, String> {
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
        let body: Value = reply
            .bytes()
            .await
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
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
