//! A check's outcome, and the judgements of a reply the checks share: a processed read, a
//! refusal.

use serde::Serialize;
use serde_json::Value;

use super::{
    http::{Answer, Shown},
    plan::{Check, Spec},
    schema,
};

/// What a check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The deployment did what the documents say.
    AsDocumented,
    /// It did not: the exact request and reply are kept.
    Departs,
    /// The check could not be made; `why` says why.
    NotRun,
}

impl Verdict {
    /// Its words in a report.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::AsDocumented => "as documented",
            Verdict::Departs => "departs",
            Verdict::NotRun => "not run",
        }
    }
}

/// A check and what it found.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    #[serde(flatten)]
    pub check: Check,
    pub verdict: Verdict,
    /// What departed, why it was not run, or a note on an outcome as documented.
    pub why: String,
    /// The check's requests and replies, redacted.
    pub exchanges: Vec<Shown>,
}

/// A judgement: the verdict and its reason.
pub type Judged = (Verdict, String);

pub fn departs(why: impl Into<String>) -> Judged {
    (Verdict::Departs, why.into())
}

pub fn not_run(why: impl Into<String>) -> Judged {
    (Verdict::NotRun, why.into())
}

pub fn documented(note: impl Into<String>) -> Judged {
    (Verdict::AsDocumented, note.into())
}

/// A reply's business code as text (`0` for success), when it has one.
pub fn code(json: &Value) -> Option<String> {
    match json.get("code")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether a reply is a success: integer code `0`.
pub fn success(json: &Value) -> bool {
    json.get("code").and_then(Value::as_i64) == Some(0)
        && json.get("code").is_some_and(Value::is_number)
}

/// A reply read as far as every check reads it: an answer, HTTP 200 or 299, JSON, the
/// operation's reply schema. The JSON, or the judgement that ends the check.
pub fn envelope(spec: &Spec, reply_schema: &str, answer: &Answer) -> Result<Value, Judged> {
    let reply = match answer {
        Answer::Reply(reply) => reply,
        Answer::NotSent(why) => return Err(not_run(format!("not sent: {why}"))),
        Answer::Lost(why) => return Err(not_run(format!("no reply: {why}"))),
    };
    if let Some(to) = &reply.location {
        return Err(departs(format!(
            "HTTP {} redirect to `{to}` (not followed): the documents answer HTTP 200 or 299",
            reply.status
        )));
    }
    if reply.cut {
        return Err(not_run(
            "the reply is longer than the probe reads (--max-reply-bytes)",
        ));
    }
    if !matches!(reply.status, 200 | 299) {
        return Err(departs(format!(
            "HTTP {}: the documents answer HTTP 200 (processed) or 299 (business exception)",
            reply.status
        )));
    }
    let Some(json) = reply.json() else {
        return Err(departs(format!(
            "HTTP {} with a body that is not JSON ({} bytes)",
            reply.status,
            reply.body.len()
        )));
    };
    let findings = schema::check(&spec.doc, reply_schema, &json);
    if !findings.is_empty() {
        let list: Vec<String> = findings
            .iter()
            .map(|f| format!("{}: {}", f.at, f.rule))
            .collect();
        return Err(departs(format!(
            "the reply departs from {reply_schema}: {}",
            list.join("; ")
        )));
    }
    Ok(json)
}

/// A read that should be processed: a success whose `message` is `success`, or a refusal
/// with a code the documents give for the operation.
pub fn processed(spec: &Spec, op: &licensing_spec::Op, answer: &Answer) -> Judged {
    let json = match envelope(spec, &op.reply, answer) {
        Ok(json) => json,
        Err(judged) => return judged,
    };
    if success(&json) {
        return match json.get("message").and_then(Value::as_str) {
            Some("success") => documented(""),
            other => departs(format!(
                "code 0 with message {other:?}: the documents give `success` on success"
            )),
        };
    }
    match code(&json) {
        Some(c) if op.error_codes.contains(&c) => documented(format!(
            "answered documented code {c}: the reply's data could not be checked"
        )),
        Some(c) => departs(format!(
            "code {c}, which the documents do not give for {} ({})",
            op.id,
            op.error_codes.join(", ")
        )),
        None => departs("a reply without a code"),
    }
}

/// A request that should be refused: an error reply with `expected` as its code, or any
/// code the documents give for the operation. `Err` when it was accepted instead.
pub fn refused(
    spec: &Spec,
    op: &licensing_spec::Op,
    answer: &Answer,
    expected: Option<&str>,
) -> Result<Judged, Judged> {
    let json = match envelope(spec, &op.reply, answer) {
        Ok(json) => json,
        Err(judged) => return Ok(judged),
    };
    if success(&json) {
        return Err(departs(
            "accepted (code 0): the documents say it is refused",
        ));
    }
    let code = code(&json).unwrap_or_default();
    if !json.get("code").is_some_and(Value::is_string) {
        return Ok(departs(format!(
            "refused with code {code} as a number: an error reply's code is a string"
        )));
    }
    Ok(match expected {
        Some(want) if code == want => documented(format!("refused with {code}")),
        Some(want) => departs(format!(
            "refused with {code} where the documents give {want}"
        )),
        None if op.error_codes.contains(&code) => documented(format!("refused with {code}")),
        None => departs(format!(
            "refused with {code}, which the documents do not give for {} ({})",
            op.id,
            op.error_codes.join(", ")
        )),
    })
}
