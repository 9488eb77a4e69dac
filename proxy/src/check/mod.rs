//! A request and its reply checked against the documents: the operation its path and
//! method lead to, its parameters, credentials and body; the reply's HTTP status, envelope,
//! `code` and body. Everything comes from the spec ([`Contract`]); nothing here names an
//! operation.
//!
//! Request pointers are into `{"path": …, "query": …, "headers": …, "body": …}`
//! (`/query/g_nonce`, `/body/orderList/0/orderType`); reply pointers are into the reply's
//! body (`/data/list/0/status`), `""` for the reply as a whole.

use std::borrow::Cow;

use axum::http::HeaderMap;
use serde_json::Value;

pub(crate) mod compiled;
pub(crate) mod contract;
pub(crate) mod fast;
pub(crate) mod scalar;
pub(crate) mod schema;
pub(crate) mod walk;

use contract::{Contract, In, Matched, OpContract};
use fast::Code;
use schema::Finding;
use walk::Walker;

pub(crate) use walk::code_is_text;

fn finding(
    pointer: impl Into<String>,
    rule: &'static str,
    expected: impl Into<String>,
    actual: impl Into<String>,
) -> Finding {
    Finding {
        pointer: pointer.into(),
        rule,
        expected: expected.into(),
        actual: actual.into(),
    }
}

/// What an unmatched request departs by.
pub(crate) fn unknown_operation(method: &str, path: &str) -> Finding {
    finding(
        "",
        "unknown-operation",
        "a method and path of the documents",
        schema::quote("", &Value::String(format!("{method} {path}"))),
    )
}

/// A request the documents have no operation for, but that a browser sends by itself to
/// any server it is pointed at: not a departure of the client under test.
pub(crate) fn browser_noise(method: &str, path: &str) -> bool {
    matches!(method, "GET" | "HEAD") && matches!(path, "/favicon.ico" | "/robots.txt")
}

/// What a body forwarded without being checked departs by: it did not fit in what the
/// check budget had left.
pub(crate) fn not_checked(len: usize, held: usize, budget: usize) -> Finding {
    finding(
        "",
        "not-checked",
        format!("a body checked within the check budget of {budget} bytes (--check-budget-mib)"),
        format!("over budget: {len} bytes, with {held} bytes of other bodies under check"),
    )
}

/// The `not-checked` finding of an upstream reply that did not fit in the check budget and
/// was handed on as it arrived: `len` bytes declared, or read before it stopped fitting
/// (`at_least`).
pub(crate) fn not_checked_reply(len: u64, at_least: bool, held: usize, budget: usize) -> Finding {
    let size = if at_least {
        format!("more than {len} bytes")
    } else {
        format!("{len} bytes")
    };
    finding(
        "",
        "not-checked",
        format!("a body checked within the check budget of {budget} bytes (--check-budget-mib)"),
        format!(
            "over budget: {size}, with {held} bytes of other bodies under check; \
             forwarded as it arrived"
        ),
    )
}

/// The request's departures from its operation's documents; its body's when `body` is
/// given (`None`: not checked, for want of room in the check budget).
pub(crate) fn request(
    contract: &Contract,
    matched: &Matched<'_>,
    query: &[(Cow<'_, str>, Cow<'_, str>)],
    headers: &HeaderMap,
    body: Option<&[u8]>,
) -> Vec<Finding> {
    let op = matched.contract;
    let schemas = &contract.schemas;
    let mut walker = Walker::new(schemas);
    // One pointer buffer for every parameter.
    let mut at = String::with_capacity(64);
    for param in &op.params {
        let given: Option<&str> = match param.location {
            In::Path => matched
                .path
                .iter()
                .find(|(k, _)| *k == param.name)
                .map(|(_, v)| v.as_str()),
            In::Query => query
                .iter()
                .find(|(k, _)| *k == param.name)
                .map(|(_, v)| v.as_ref()),
            In::Header => headers.get(&param.name).and_then(|v| v.to_str().ok()),
        };
        at.clear();
        at.push('/');
        at.push_str(param.location.part());
        at.push('/');
        at.push_str(&schema::segment(&param.name));
        match given {
            None if param.required => {
                walker
                    .found
                    .push(finding(at.clone(), "required", "present", "absent"));
            }
            None => {}
            Some(text) => match schemas.coerce(param.schema, text) {
                Some(value) => walker.check_value(param.schema, &value, &mut at),
                None => walker
                    .found
                    .push(schemas.uncoerced(param.schema, &at, text)),
            },
        }
    }
    for credential in &op.credentials {
        match headers.get(&credential.header) {
            None => walker.found.push(finding(
                header_at(credential),
                "required",
                "present",
                "absent",
            )),
            Some(v) if credential.bearer => {
                let bearer = v
                    .to_str()
                    .ok()
                    .and_then(|v| v.get(..7))
                    .is_some_and(|p| p.eq_ignore_ascii_case("bearer "));
                if !bearer {
                    walker.found.push(finding(
                        header_at(credential),
                        "constraint",
                        "Bearer <token>",
                        "[REDACTED]",
                    ));
                }
            }
            Some(_) => {}
        }
    }
    if let (Some((required, body_schema)), Some(body)) = (&op.body, body) {
        if body.iter().all(u8::is_ascii_whitespace) {
            if *required {
                walker
                    .found
                    .push(finding("/body", "required", "a JSON body", "no body"));
            }
        } else {
            let before = walker.found.len();
            if walker
                .check_json(*body_schema, body, &mut "/body".to_string())
                .is_err()
            {
                // What was found before the document turned out not to be one goes.
                walker.found.truncate(before);
                walker.found.push(finding(
                    "/body",
                    "type",
                    "a JSON document",
                    format!("not JSON ({} bytes)", body.len()),
                ));
            }
        }
    }
    walker.found
}

/// Where a credential's header is, as a pointer.
fn header_at(credential: &contract::Credential) -> String {
    format!("/headers/{}", schema::segment(&credential.header))
}

/// Whether a reply departs from nothing, settled without building its JSON tree, and its
/// `code`; `None` when [`reply`] must decide (and find what departs).
pub(crate) fn reply_clean(
    contract: &Contract,
    op: &OpContract,
    status: u16,
    body: &[u8],
) -> Option<Code> {
    let schema = (*op.replies.get(&status)?)?;
    let code = fast::clean_object(&contract.schemas, schema, body)?;
    match &code {
        Code::Text(text) if !op.op.documents(text) => None,
        Code::Other => None,
        Code::Zero if status == 299 => None,
        _ => Some(code),
    }
}

/// The reply's departures from its operation's documents, and whether its `code` is a
/// string (a business error).
pub(crate) fn reply(
    contract: &Contract,
    op: &OpContract,
    status: u16,
    body: &[u8],
) -> (Vec<Finding>, bool) {
    let Some(reply_schema) = op.replies.get(&status) else {
        let documented: Vec<String> = op.replies.keys().map(u16::to_string).collect();
        let found = vec![finding(
            "",
            "http-status",
            format!("one of [{}]", documented.join(", ")),
            status.to_string(),
        )];
        return (found, code_is_text(body));
    };
    let Some(reply_schema) = *reply_schema else {
        return (Vec::new(), code_is_text(body));
    };
    let envelope = |actual: String| {
        let found = vec![finding(
            "",
            "envelope",
            "a JSON object (the reply envelope)",
            actual,
        )];
        (found, false)
    };
    let not_json = || format!("not JSON ({} bytes)", body.len());
    if body.is_empty() {
        return envelope("an empty body".to_string());
    }
    let first = body.iter().copied().find(|b| !b.is_ascii_whitespace());
    if first != Some(b'{') {
        // Not an object: what it is, read without keeping it (a number is small).
        let mut de = serde_json::Deserializer::from_slice(body);
        let kind = match first {
            Some(b'-' | b'0'..=b'9') => serde_json::from_slice::<Value>(body)
                .ok()
                .map(|v| schema::json_type(&v)),
            _ => serde::de::Deserialize::deserialize(&mut de)
                .and_then(|serde::de::IgnoredAny| de.end())
                .ok()
                .map(|()| match first {
                    Some(b'[') => "array",
                    Some(b'"') => "string",
                    Some(b'n') => "null",
                    _ => "boolean",
                }),
        };
        return envelope(kind.map_or_else(not_json, str::to_string));
    }
    let mut walker = Walker::new(&contract.schemas);
    let top = match walker.check_reply(reply_schema, body) {
        Ok(top) => top,
        Err(_) => return envelope(not_json()),
    };
    let mut found = walker.found;
    let documented = || {
        let codes: Vec<String> = op.op.error_codes.iter().map(|c| format!("{c:?}")).collect();
        format!("0 or one of [{}]", codes.join(", "))
    };
    let text = matches!(top.code, Some(Value::String(_)));
    match top.code {
        Some(Value::String(code)) if !op.op.documents(&code) => found.push(finding(
            "/code",
            "undocumented-code",
            documented(),
            schema::quote_str("/code", &code),
        )),
        Some(Value::Number(n))
            if n.as_i64() != Some(0) && !found.iter().any(|f| f.pointer == "/code") =>
        {
            found.push(finding("/code", "envelope", documented(), n.to_string()));
        }
        Some(Value::Number(_)) if status == 299 => found.push(finding(
            "/code",
            "envelope",
            "a string error code with HTTP 299 (a business exception)",
            "0",
        )),
        _ => {}
    }
    found.truncate(schema::MAX_FINDINGS);
    (found, text)
}
