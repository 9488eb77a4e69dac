//! Tools that read a recording (HAR 1.2 with the proxy's `_exchange`, `_operationId`,
//! `_outcome` and `_deviations` fields): the report per operation, a seed reproducing what
//! was observed, and the replay of its requests against another deployment.

use std::{fmt::Write as _, path::Path};

use serde::Serialize;
use serde_json::Value;

mod replay;
mod seed;

pub use replay::{
    Difference, Replay, ReplayOptions, Tokens, is_simulator, recorded_writes, replay,
};
pub use seed::{SEED_PASSWORD, seed_from_recording};

use crate::conformance::{Deviation, Direction, escape};

/// The largest recording the tools read: 1 GiB.
const MAX_RECORDING_BYTES: u64 = 1024 * 1024 * 1024;

/// A recording's entries, read from a HAR file.
pub(crate) fn entries(path: &Path) -> Result<Vec<Value>, String> {
    let name = path.display();
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{name}: {e}"))?
        .len();
    if len > MAX_RECORDING_BYTES {
        return Err(format!(
            "{name}: {len} bytes, more than the {MAX_RECORDING_BYTES} a recording may have"
        ));
    }
    let text = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let mut har: Value =
        serde_json::from_slice(&text).map_err(|e| format!("{name}: not JSON: {e}"))?;
    match har.pointer_mut("/log/entries").map(Value::take) {
        Some(Value::Array(entries)) => Ok(entries),
        _ => Err(format!("{name}: not a HAR document (no log.entries array)")),
    }
}

/// One request and its reply, exactly as recorded (credentials redacted).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pair {
    /// The exchange's id.
    pub exchange: String,
    /// `METHOD URL`.
    pub request: String,
    /// The request body's text, if any.
    pub request_body: Option<String>,
    /// The reply's HTTP status.
    pub status: u16,
    /// The reply body's text, if any.
    pub reply_body: Option<String>,
}

fn pair(entry: &Value) -> Pair {
    let text = |p: &str| entry.pointer(p).and_then(Value::as_str).map(str::to_string);
    Pair {
        exchange: text("/_exchange").unwrap_or_default(),
        request: format!(
            "{} {}",
            text("/request/method").unwrap_or_default(),
            text("/request/url").unwrap_or_default()
        ),
        request_body: text("/request/postData/text"),
        status: entry
            .pointer("/response/status")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u16,
        reply_body: text("/response/content/text"),
    }
}

/// The deviations of one rule on one operation.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleReport {
    /// The rule.
    pub rule: String,
    /// How many deviations of it.
    pub count: u64,
    /// Its first deviation.
    pub first: Deviation,
    /// The exact request and reply of its first deviation.
    pub pair: Pair,
}

/// One operation's calls and deviations.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationReport {
    /// The operation (`null`: requests no operation of the documents has).
    pub operation_id: Option<String>,
    /// Exchanges recorded.
    pub calls: u64,
    /// Deviations found, all rules.
    pub deviations: u64,
    /// By rule, in the order first seen.
    pub rules: Vec<RuleReport>,
}

/// A recording's report, per operation.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Operations in the order first seen.
    pub operations: Vec<OperationReport>,
}

impl Report {
    /// The report for people: every value read from the recording (names, pointers,
    /// quotes, bodies) [`escape`]d, so that whatever the traffic held neither starts a
    /// line of its own nor reaches the terminal as a control sequence.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for op in &self.operations {
            let name = escape(op.operation_id.as_deref().unwrap_or("(no operation)"));
            let _ = writeln!(
                out,
                "{name}: {} calls, {} deviations",
                op.calls, op.deviations
            );
            for rule in &op.rules {
                let d = &rule.first;
                let _ = writeln!(out, "  {} x{}", escape(&rule.rule), rule.count);
                let _ = writeln!(
                    out,
                    "    first: {} {} {}: expected {}, got {}",
                    escape(&rule.pair.exchange),
                    match d.direction {
                        Direction::Request => "request",
                        Direction::Reply => "reply",
                    },
                    if d.pointer.is_empty() {
                        "(whole)".into()
                    } else {
                        escape(&d.pointer)
                    },
                    escape(&d.expected),
                    escape(&d.actual)
                );
                let _ = writeln!(out, "    > {}", escape(&rule.pair.request));
                if let Some(body) = &rule.pair.request_body {
                    let _ = writeln!(out, "    > {}", escape(body));
                }
                let _ = writeln!(out, "    < {}", rule.pair.status);
                if let Some(body) = &rule.pair.reply_body {
                    let _ = writeln!(out, "    < {}", escape(body));
                }
            }
        }
        if self.operations.is_empty() {
            out.push_str("no exchanges recorded\n");
        }
        out
    }
}

/// `licensing-proxy report FILE.har`, each entry at most
/// [`DEFAULT_MAX_ENTRY_BYTES`](licensing_coverage::exchange::DEFAULT_MAX_ENTRY_BYTES).
pub fn report(path: &Path) -> Result<Report, String> {
    report_with(path, licensing_coverage::exchange::DEFAULT_MAX_ENTRY_BYTES)
}

/// `licensing-proxy report FILE.har`: the recording read one entry at a time (an entry of
/// more than `max_entry_bytes` refused), each counted and dropped before the next is read;
/// what the report keeps is the first exchange of each rule.
pub fn report_with(path: &Path, max_entry_bytes: u64) -> Result<Report, String> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let limits = licensing_coverage::exchange::Limits { max_entry_bytes };
    let mut by_op: Vec<OperationReport> = Vec::new();
    licensing_coverage::exchange::har_entries(&name, file, &limits, &mut |_, entry| {
        count(&mut by_op, &entry).map_err(|e| format!("an entry's _deviations: {e}"))
    })?;
    Ok(Report { operations: by_op })
}

/// Counts one recorded entry into `by_op`.
fn count(by_op: &mut Vec<OperationReport>, entry: &Value) -> Result<(), serde_json::Error> {
    let operation = entry
        .get("_operationId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let index = match by_op.iter().position(|o| o.operation_id == operation) {
        Some(i) => i,
        None => {
            by_op.push(OperationReport {
                operation_id: operation,
                calls: 0,
                deviations: 0,
                rules: Vec::new(),
            });
            by_op.len() - 1
        }
    };
    let op = &mut by_op[index];
    op.calls += 1;
    let found: Vec<Deviation> = entry
        .get("_deviations")
        .cloned()
        .map(serde_json::from_value)
        .transpose()?
        .unwrap_or_default();
    for d in found {
        op.deviations += 1;
        match op.rules.iter_mut().find(|r| r.rule == d.rule) {
            Some(rule) => rule.count += 1,
            None => op.rules.push(RuleReport {
                rule: d.rule.clone(),
                count: 1,
                first: d,
                pair: pair(entry),
            }),
        }
    }
    Ok(())
}
