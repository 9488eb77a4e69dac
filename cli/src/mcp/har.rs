//! `--har FILE`: the session's calls as HAR 1.2, the format the conformance proxy records
//! and the integration report (`licensing-coverage`) reads: for each call the server sent,
//! the request the SDK made of it (method, URL, query, body) and what came back (the
//! status and the envelope: its code and data, as bounded for the result).
//!
//! Made from what the call sent and read, not from the bytes on the wire: no headers are
//! kept (the credentials travel in them), a secret parameter reads `[REDACTED]`, and the
//! `g_nonce` of each attempt is left out. The file is rewritten whole after each call (a
//! new file renamed over it), so that what a stopped server leaves is a whole document.

use std::{
    path::{Path, PathBuf},
    sync::Mutex,
};

use serde_json::{Value, json};

use super::{audit::redacted, catalogue::Platform, reply::redact_value};
use crate::{
    config::{Context, param_var},
    error::CliError,
    input::Input,
    ops::Location,
};

/// The most entries the file keeps: the newest.
pub const MAX_ENTRIES: usize = 10_000;

/// The recording of one server.
pub struct Har {
    path: PathBuf,
    entries: Mutex<Vec<Value>>,
    secrets: Vec<String>,
}

/// One sent call, as [`Har::record`] writes it.
pub struct Sent<'a> {
    /// The operation it called.
    pub platform: Platform,
    /// What was sent.
    pub input: &'a Input,
    /// The body, as the arguments gave it.
    pub body: Option<&'a Value>,
    /// The data that came back (bounded).
    pub data: Option<&'a Value>,
    /// The business code of a failure, `None` for a success (or a failure with none).
    pub business: Option<&'a str>,
    /// Whether an answer came (a transport failure has none).
    pub answered: bool,
    /// When it started.
    pub started: chrono::DateTime<chrono::Utc>,
}

impl Har {
    /// A recording to `path`, written (empty) at once, so that a path that cannot be
    /// written stops the server before it serves.
    pub fn create(path: &Path, secrets: Vec<String>) -> Result<Self, CliError> {
        let har = Har {
            path: path.to_path_buf(),
            entries: Mutex::new(Vec::new()),
            secrets,
        };
        har.write(&[])?;
        Ok(har)
    }

    /// Adds a sent call and rewrites the file; a failure to write is said on stderr.
    pub fn record(&self, ctx: &Context, sent: &Sent<'_>) {
        let mut entry = entry(ctx, sent);
        redact_value(&mut entry, &self.secrets);
        let mut entries = self.entries.lock().expect("not poisoned");
        entries.push(entry);
        if entries.len() > MAX_ENTRIES {
            entries.remove(0);
        }
        if let Err(e) = self.write(&entries) {
            super::say(&format!("--har: {}", e.message));
        }
    }

    fn write(&self, entries: &[Value]) -> Result<(), CliError> {
        let document = json!({"log": {
            "version": "1.2",
            "creator": {"name": "licensing mcp", "version": env!("CARGO_PKG_VERSION"),
                        "comment": "each call as the SDK sent and read it; no headers"},
            "entries": entries,
        }});
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty());
        let cannot = |e: std::io::Error| {
            CliError::usage(format!(
                "--har {}: cannot write it: {e}",
                self.path.display()
            ))
        };
        let mut file =
            tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new("."))).map_err(cannot)?;
        serde_json::to_writer(&mut file, &document).map_err(|e| cannot(e.into()))?;
        file.persist(&self.path).map_err(|e| cannot(e.error))?;
        Ok(())
    }
}

/// The HAR entry of a sent call.
fn entry(ctx: &Context, sent: &Sent<'_>) -> Value {
    let Platform { op, operation } = sent.platform;
    let values: Vec<&str> = operation
        .path_params()
        .map(|name| sent.input.param(name).unwrap_or(""))
        .collect();
    let base = match op.service {
        crate::ops::Service::Order => ctx.var("LICENSING_ORDER_URL"),
        crate::ops::Service::Member => ctx.var("LICENSING_MEMBER_URL"),
    }
    .unwrap_or_default();
    let query: Vec<Value> = op
        .params
        .iter()
        .filter(|f| f.location == Location::Query)
        .filter_map(|f| {
            let value = sent.input.param(f.wire)?;
            let shown = if param_var(f.wire).is_some() {
                "[REDACTED]"
            } else {
                value
            };
            Some(json!({"name": f.wire, "value": shown}))
        })
        .collect();
    let search: Vec<String> = query
        .iter()
        .map(|q| {
            let text = |k: &str| q[k].as_str().unwrap_or("").to_string();
            format!("{}={}", text("name"), text("value"))
        })
        .collect();
    let mut url = format!(
        "{}{}",
        base.trim_end_matches('/'),
        operation.path_with(&values)
    );
    if !search.is_empty() {
        url = format!("{url}?{}", search.join("&"));
    }
    let mut request = json!({
        "method": operation.method.as_str(), "url": url, "httpVersion": "HTTP/1.1",
        "headers": [], "queryString": query, "cookies": [], "headersSize": -1, "bodySize": -1,
    });
    if let Some(body) = sent.body {
        // A password in the body is the employee's: not the recording's to keep.
        let mut args = serde_json::Map::new();
        args.insert("body".into(), body.clone());
        let body = redacted(&args)["body"].to_string();
        request["postData"] = json!({"mimeType": "application/json", "text": body});
    }
    let code = match sent.business {
        None => json!(0),
        Some(code) => code
            .parse::<i64>()
            .map_or_else(|_| json!(code), |n| json!(n)),
    };
    let envelope = json!({"code": code, "data": sent.data});
    let status = match (sent.answered, sent.business) {
        (false, _) => 0,
        (true, None) => 200,
        (true, Some(_)) => 299,
    };
    json!({
        "startedDateTime": sent.started.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "time": (chrono::Utc::now() - sent.started).num_milliseconds().max(0),
        "_operationId": operation.id,
        "request": request,
        "response": {
            "status": status, "statusText": "", "httpVersion": "HTTP/1.1", "headers": [],
            "cookies": [], "redirectURL": "", "headersSize": -1, "bodySize": -1,
            "content": {"size": -1, "mimeType": "application/json", "text": envelope.to_string()},
        },
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
    })
}
