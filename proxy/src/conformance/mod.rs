//! What a conformance proxy reports: deviations of real requests and replies from the
//! specs, one JSON object per line, each naming the exchange it was found in. This is the
//! one format of a deviation: the proxy's report lines, its recordings' `_deviations` and
//! the console's Conformance page all use [`Deviation`]. The proxy keeps what it finds in
//! a [`DeviationLog`] and serves its console's Conformance page from it. What is kept of
//! an exchange is rewritten without building its JSON tree, every credential it carried
//! replaced wherever it appears; what is written for people is [`escape`]d.

pub(crate) mod json;
pub(crate) mod secrets;
mod text;

pub use text::escape;

use std::{
    collections::{HashMap, VecDeque},
    fmt,
    sync::{Mutex, PoisonError},
};

use serde::{Deserialize, Serialize};

/// Which half of an exchange a deviation is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// What the client sent.
    Request,
    /// What the service answered.
    Reply,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Request => "request",
            Direction::Reply => "reply",
        })
    }
}

/// One deviation, as one line of the proxy's report (JSON Lines):
///
/// ```json
/// {"operationId":"listMembers","direction":"reply","pointer":"/data/list/0/status",
///  "rule":"enum","expected":"one of [1, 2]","actual":"7","exchange":"x-17",
///  "time":"2026-01-01T00:00:00Z"}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Deviation {
    /// The operation the request's method and path lead to; `null` for none (an
    /// `unknown-operation` deviation, whose `actual` names the method and path).
    pub operation_id: Option<String>,
    /// Request or reply.
    pub direction: Direction,
    /// Where, as a JSON Pointer: into the reply's body (`/data/list/0/status`), or into
    /// `{"path", "query", "headers", "body"}` for a request (`/query/g_nonce`); empty for
    /// the message as a whole.
    pub pointer: String,
    /// A short stable kebab-case name of the rule: `required`, `type`, `enum`,
    /// `constraint`, `additional-property`, `undocumented-code`, `http-status`,
    /// `envelope`, `unknown-operation`; and `not-checked` for a body the proxy forwarded
    /// without checking it (larger than what its check budget had left).
    pub rule: String,
    /// What the spec allows.
    pub expected: String,
    /// What was there (never a credential's or a password's value).
    pub actual: String,
    /// The exchange's id (also in the recording and the proxy's `x-licensing-exchange`).
    pub exchange: String,
    /// When the exchange started (RFC 3339).
    pub time: String,
}

impl Deviation {
    /// Reads a report in JSON Lines; blank lines are skipped. The error names the line
    /// and the field.
    pub fn parse_lines(text: &str) -> Result<Vec<Deviation>, String> {
        text.lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| {
                let mut de = serde_json::Deserializer::from_str(line);
                serde_path_to_error::deserialize(&mut de).map_err(|e| {
                    let path = e.path().to_string();
                    format!("line {}: {path}: {}", i + 1, e.inner())
                })
            })
            .collect()
    }
}

/// One message of an exchange, as the proxy recorded it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordedMessage {
    /// The request's method (empty for a reply).
    pub method: String,
    /// The request's URL (empty for a reply).
    pub url: String,
    /// The reply's HTTP status (0 for a request).
    pub status: u16,
    /// Headers in order; the pages redact credentials before showing them.
    pub headers: Vec<(String, String)>,
    /// The body as text (empty when there was none).
    pub body: String,
}

/// A request and the reply it got, as recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordedExchange {
    /// What the client sent.
    pub request: RecordedMessage,
    /// What the service answered.
    pub reply: RecordedMessage,
}

/// Exchanges and deviations [`DeviationLog`] keeps unless told otherwise.
pub const DEFAULT_DEVIATION_LOG_CAPACITY: usize = 10_000;

/// Bytes of text (bodies, headers, deviations) [`DeviationLog`] keeps unless told
/// otherwise.
pub const DEFAULT_DEVIATION_LOG_BYTES: usize = 64 * 1024 * 1024;

/// What a proxy has found, in memory: it pushes each deviating exchange; the oldest exchanges
/// (and their deviations) go first once `capacity` exchanges, or `max_bytes` of their
/// text, are kept.
#[derive(Debug)]
pub struct DeviationLog {
    capacity: usize,
    max_bytes: usize,
    inner: Mutex<LogInner>,
}

#[derive(Debug, Default)]
struct LogInner {
    order: VecDeque<String>,
    exchanges: HashMap<String, Kept>,
    bytes: usize,
}

#[derive(Debug)]
struct Kept {
    exchange: RecordedExchange,
    deviations: Vec<Deviation>,
    bytes: usize,
}

impl Default for DeviationLog {
    fn default() -> Self {
        Self::new(DEFAULT_DEVIATION_LOG_CAPACITY)
    }
}

/// The text an exchange and its deviations hold, as the log counts it.
fn size(exchange: &RecordedExchange, deviations: &[Deviation]) -> usize {
    let message = |m: &RecordedMessage| {
        m.method.len()
            + m.url.len()
            + m.body.len()
            + m.headers
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
    };
    let deviation = |d: &Deviation| {
        d.operation_id.as_ref().map_or(0, String::len)
            + d.pointer.len()
            + d.rule.len()
            + d.expected.len()
            + d.actual.len()
            + d.exchange.len()
            + d.time.len()
    };
    message(&exchange.request)
        + message(&exchange.reply)
        + deviations.iter().map(deviation).sum::<usize>()
}

impl DeviationLog {
    /// A log keeping at most `capacity` exchanges (at least one), and at most
    /// [`DEFAULT_DEVIATION_LOG_BYTES`] of their text.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            max_bytes: DEFAULT_DEVIATION_LOG_BYTES,
            inner: Mutex::default(),
        }
    }

    /// Keeps at most `bytes` of text (bodies, headers, deviations): the oldest exchanges
    /// go first; the newest is kept even when it alone is larger.
    #[must_use]
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Keeps an exchange and the deviations found in it (each names `id` as its
    /// exchange; one that names another is kept under `id` all the same).
    pub fn push(&self, id: &str, exchange: RecordedExchange, deviations: Vec<Deviation>) {
        let bytes = size(&exchange, &deviations);
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = Kept {
            exchange,
            deviations,
            bytes,
        };
        inner.bytes += bytes;
        match inner.exchanges.insert(id.to_string(), kept) {
            Some(old) => inner.bytes -= old.bytes,
            None => inner.order.push_back(id.to_string()),
        }
        while inner.order.len() > self.capacity
            || (inner.bytes > self.max_bytes && inner.order.len() > 1)
        {
            let Some(old) = inner.order.pop_front() else {
                break;
            };
            if let Some(gone) = inner.exchanges.remove(&old) {
                inner.bytes -= gone.bytes;
            }
        }
    }
}

impl DeviationLog {
    /// The deviations found so far, oldest first (of the exchanges still kept).
    pub fn deviations(&self) -> Vec<Deviation> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner
            .order
            .iter()
            .filter_map(|id| inner.exchanges.get(id))
            .flat_map(|kept| kept.deviations.iter().cloned())
            .collect()
    }

    /// The exchange with this id, when the log still has it.
    pub fn exchange(&self, id: &str) -> Option<RecordedExchange> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.exchanges.get(id).map(|kept| kept.exchange.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"operationId":"listMembers","direction":"reply","pointer":"/data/list/0/status","rule":"enum","expected":"one of [1, 2]","actual":"7","exchange":"x-1","time":"2026-01-01T00:00:00Z"}"#;

    #[test]
    fn the_shared_format_reads_and_names_bad_fields() {
        let found = Deviation::parse_lines(&format!("{LINE}\n\n{LINE}\n")).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].direction, Direction::Reply);
        assert_eq!(serde_json::to_string(&found[0]).unwrap(), LINE);
        let bad = LINE.replace("\"reply\"", "\"response\"");
        let error = Deviation::parse_lines(&format!("{LINE}\n{bad}")).unwrap_err();
        assert!(
            error.starts_with("line 2: direction: unknown variant"),
            "{error}"
        );
    }

    #[test]
    fn the_log_is_bounded_by_exchanges() {
        let log = DeviationLog::new(2);
        let one: Deviation = serde_json::from_str(LINE).unwrap();
        for id in ["a", "b", "c"] {
            let deviation = Deviation {
                exchange: id.into(),
                ..one.clone()
            };
            log.push(id, RecordedExchange::default(), vec![deviation]);
        }
        let kept: Vec<String> = log.deviations().into_iter().map(|d| d.exchange).collect();
        assert_eq!(kept, ["b", "c"]);
        assert!(log.exchange("a").is_none());
        assert!(log.exchange("c").is_some());
    }

    #[test]
    fn the_log_is_bounded_by_bytes() {
        let one: Deviation = serde_json::from_str(LINE).unwrap();
        let body = |n: usize| RecordedExchange {
            reply: RecordedMessage {
                status: 200,
                body: "x".repeat(n),
                ..RecordedMessage::default()
            },
            ..RecordedExchange::default()
        };
        let log = DeviationLog::new(100).max_bytes(2_500);
        for id in ["a", "b", "c"] {
            log.push(id, body(1_000), vec![one.clone()]);
        }
        assert!(log.exchange("a").is_none(), "the oldest went first");
        assert!(log.exchange("b").is_some() && log.exchange("c").is_some());
        log.push("d", body(10_000), vec![one.clone()]);
        assert_eq!(log.deviations().len(), 1, "only the newest is left");
        assert_eq!(log.exchange("d").unwrap().reply.body.len(), 10_000);
    }
}
