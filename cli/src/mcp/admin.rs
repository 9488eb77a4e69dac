//! The simulator's admin API as tools (`sandbox_<operationId>`), listed only when the
//! target is a simulator: `LICENSING_SANDBOX_URL` names one whose admin API answered
//! when the server started. Made from
//! `sim/spec/sandbox.yaml` by the same reader and translation as the platform's tools;
//! the reads (state export, journal, faults, clock) are listed as reads are, the changes
//! (reset, import, seeds, faults, clock) as writes are. The tenants are left out (a new
//! tenant's answer holds its tokens), and so is the recording (the proxy's, not the
//! simulator's).

use std::time::Duration;

use licensing_spec::{Data, openapiv3::StatusCode};
use serde_json::{Map, Value};

use super::{
    args::{Invalid, MAX_ARGUMENTS_BYTES, MAX_PARAM_BYTES},
    catalogue::{AdminOp, Hints, Target, ToolDef},
    schema::Spec,
};
use crate::{
    config::Context,
    error::{CliError, exit},
};

/// The admin API's spec, read when the CLI is built (it is installed from the clone).
const SPEC: &str = include_str!("../../../sim/spec/sandbox.yaml");

/// Before each admin tool's name: they are the simulator's, not the platform's.
pub const PREFIX: &str = "sandbox_";

/// The tags whose operations are not tools.
const LEFT_OUT: [&str; 2] = ["tenants", "recording"];

/// The most of an admin reply read (a state export, a journal).
pub const MAX_REPLY_BYTES: usize = 64 * 1024 * 1024;

/// One admin request, checked.
#[derive(Debug)]
pub struct Request {
    method: reqwest::Method,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
}

/// The admin API's tools.
pub fn tools() -> Result<Vec<ToolDef>, String> {
    let file = "sim/spec/sandbox.yaml";
    let spec = Spec::parse(file, SPEC)?;
    let mut tools = Vec::new();
    for (path, method, op) in spec.api().operations() {
        if op.tags.iter().any(|t| LEFT_OUT.contains(&t.as_str())) {
            continue;
        }
        let id = op
            .operation_id
            .clone()
            .ok_or(format!("{file}: {method} {path}: no operationId"))?;
        let params = spec.params(&id, path, method)?;
        let request = op
            .request_body
            .as_ref()
            .and_then(|b| b.as_item())
            .and_then(|b| b.content.get("application/json"))
            .and_then(|m| m.schema.as_ref())
            .and_then(licensing_spec::ref_name);
        let data = op
            .responses
            .responses
            .iter()
            .find(|(status, _)| matches!(status, StatusCode::Code(c) if (200..300).contains(c)))
            .and_then(|(_, r)| licensing_spec::response_schema(spec.api(), r))
            .map(Data::Named);
        let method = method.to_ascii_uppercase();
        let read_only = method == "GET";
        let summary = op.summary.clone().unwrap_or_default();
        let what = if read_only {
            "Reads only."
        } else {
            "Changes the simulator's state: callable only when the server allows it \
             (--allow-writes), after a person confirms it."
        };
        tools.push(ToolDef {
            name: format!("{PREFIX}{id}"),
            description: format!(
                "{summary}. The simulator's admin API ({method} {path}), listed because the \
                 target is a simulator. {what}"
            ),
            summary,
            input: spec.input(&id, request.as_deref(), &params, None)?,
            output: spec.output(data.as_ref())?,
            hints: Hints {
                read_only,
                destructive: !read_only,
                idempotent: method != "POST",
            },
            params,
            page_size: None,
            target: Target::Admin(AdminOp {
                method: method
                    .parse()
                    .map_err(|_| format!("{file}: {id}: method {method}"))?,
                path: path.to_string(),
            }),
        });
    }
    Ok(tools)
}

/// The request of `tool` (an admin tool) from `args`, or the argument at fault.
pub fn read(tool: &ToolDef, op: &AdminOp, args: &Map<String, Value>) -> Result<Request, Invalid> {
    let size = serde_json::to_string(args).map_or(usize::MAX, |t| t.len());
    if size > MAX_ARGUMENTS_BYTES {
        return Err(Invalid::new(
            "arguments",
            format!("are {size} bytes of JSON, more than the {MAX_ARGUMENTS_BYTES} allowed"),
        ));
    }
    let takes_body = tool.input["properties"].get("body").is_some();
    if let Some(key) = args.keys().find(|k| {
        let known =
            (k.as_str() == "body" && takes_body) || tool.params.iter().any(|p| &p.name == *k);
        !known
    }) {
        return Err(Invalid::new(
            key,
            format!("is not an argument of {}", tool.name),
        ));
    }
    let mut path = op.path.clone();
    let mut query = Vec::new();
    for param in &tool.params {
        let Some(value) = args.get(&param.name) else {
            if param.required {
                return Err(Invalid::new(&param.name, "is required"));
            }
            continue;
        };
        let kind = tool.input["properties"][param.name.as_str()]["type"]
            .as_str()
            .unwrap_or("string");
        let text = match (kind, value) {
            ("string", Value::String(s)) => s.clone(),
            ("integer", Value::Number(n)) if n.is_i64() => n.to_string(),
            ("number", Value::Number(n)) => n.to_string(),
            ("boolean", Value::Bool(b)) => b.to_string(),
            _ => return Err(Invalid::new(&param.name, format!("must be of type {kind}"))),
        };
        if text.len() > MAX_PARAM_BYTES || text.contains(char::is_control) {
            return Err(Invalid::new(
                &param.name,
                format!("must be at most {MAX_PARAM_BYTES} bytes, without control characters"),
            ));
        }
        let placeholder = format!("{{{}}}", param.name);
        if path.contains(&placeholder) {
            if text.is_empty()
                || !text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._~-".contains(c))
                || text == "."
                || text == ".."
            {
                return Err(Invalid::new(
                    &param.name,
                    "is one segment of a path: letters, digits, `.`, `_`, `~` and `-` only",
                ));
            }
            path = path.replace(&placeholder, &text);
        } else {
            query.push((param.name.clone(), text));
        }
    }
    let body = match (takes_body, args.get("body")) {
        (true, Some(body)) => Some(body.clone()),
        (true, None)
            if tool.input["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|n| n == "body")) =>
        {
            return Err(Invalid::new("body", "is required"));
        }
        _ => None,
    };
    Ok(Request {
        method: op.method.clone(),
        path,
        query,
        body,
    })
}

/// The simulator's address: `LICENSING_SANDBOX_URL`, else the order service's.
fn base(ctx: &Context) -> Option<String> {
    ctx.var("LICENSING_SANDBOX_URL")
        .or_else(|| ctx.var("LICENSING_ORDER_URL"))
        .map(|u| u.trim_end_matches('/').to_string())
}

/// Sends an admin request (with `LICENSING_SANDBOX_TOKEN`, when set): the reply's JSON.
pub async fn send(ctx: &Context, request: &Request) -> Result<Value, CliError> {
    let base = base(ctx).ok_or_else(|| {
        CliError::usage("LICENSING_SANDBOX_URL is not set (nor LICENSING_ORDER_URL)")
    })?;
    let transport =
        |e: reqwest::Error| CliError::new(exit::TRANSPORT, format!("sandbox: {}", e.without_url()));
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(transport)?;
    let mut builder = client
        .request(request.method.clone(), format!("{base}{}", request.path))
        .query(&request.query);
    if let Some(token) = ctx.var("LICENSING_SANDBOX_TOKEN") {
        builder = builder.bearer_auth(token);
    }
    if let Some(body) = &request.body {
        builder = builder.json(body);
    }
    let mut response = builder.send().await.map_err(transport)?;
    let status = response.status();
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
            return Err(CliError::new(
                exit::API,
                format!("sandbox: the reply is larger than {MAX_REPLY_BYTES} bytes"),
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).map_err(|e| {
            CliError::new(exit::API, format!("sandbox: HTTP {status}: not JSON: {e}"))
        })?
    };
    if status.is_success() {
        return Ok(value);
    }
    let message = value.get("message").and_then(Value::as_str).unwrap_or("");
    Err(CliError {
        status: Some(status.as_u16()),
        ..CliError::new(exit::API, format!("sandbox: HTTP {status}: {message}"))
    })
}

/// Whether the target is a simulator: `LICENSING_SANDBOX_URL` is set (so that nothing
/// is asked of a platform that is not one) and its admin API tells its clock.
pub async fn is_simulator(ctx: &Context) -> bool {
    if ctx.var("LICENSING_SANDBOX_URL").is_none() {
        return false;
    }
    let request = Request {
        method: reqwest::Method::GET,
        path: "/__sandbox/v1/clock".into(),
        query: Vec::new(),
        body: None,
    };
    let answer = tokio::time::timeout(Duration::from_secs(5), send(ctx, &request)).await;
    matches!(answer, Ok(Ok(Value::Object(_))))
}
