//! What a conformance proxy reports: deviations of real requests and replies from the
//! specs, one JSON object per line, each naming the exchange it was found in. The sandbox
//! is given a [`DeviationSource`] when the simulator runs as such a proxy, and the admin
//! pages show what it holds.

use std::{
    collections::{HashMap, VecDeque},
    fmt,
    sync::{Mutex, PoisonError},
};

use serde::{Deserialize, Serialize};

/// Which half of an exchange a deviation is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The operation the exchange was matched to (`unknown-operation` deviations carry
    /// what the proxy could tell, e.g. the path).
    pub operation_id: String,
    /// Request or reply.
    pub direction: Direction,
    /// JSON Pointer to the offending value in the body (empty: the whole message).
    pub pointer: String,
    /// A short stable kebab-case name of the rule: `required`, `type`, `enum`,
    /// `undocumented-code`, `http-status`, `envelope`, `constraint`, `unknown-operation`.
    pub rule: String,
    /// What the spec allows.
    pub expected: String,
    /// What was there.
    pub actual: String,
    /// The exchange's id (also in the recording and the proxy's `x-licensing-exchange`).
    pub exchange: String,
    /// When it was found (RFC 3339).
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

/// Where the admin pages read a conformance proxy's findings from.
pub trait DeviationSource: Send + Sync + fmt::Debug + 'static {
    /// The deviations found so far, oldest first (the source bounds how many it keeps).
    fn deviations(&self) -> Vec<Deviation>;

    /// The exchange with this id, when the source still has it.
    fn exchange(&self, id: &str) -> Option<RecordedExchange>;
}

/// Exchanges and deviations [`DeviationLog`] keeps unless told otherwise.
pub const DEFAULT_DEVIATION_LOG_CAPACITY: usize = 10_000;

/// A [`DeviationSource`] in memory: a proxy pushes what it finds; the oldest exchanges
/// (and their deviations) go first once `capacity` exchanges are kept.
#[derive(Debug)]
pub struct DeviationLog {
    capacity: usize,
    inner: Mutex<LogInner>,
}

#[derive(Debug, Default)]
struct LogInner {
    order: VecDeque<String>,
    exchanges: HashMap<String, (RecordedExchange, Vec<Deviation>)>,
}

impl Default for DeviationLog {
    fn default() -> Self {
        Self::new(DEFAULT_DEVIATION_LOG_CAPACITY)
    }
}

impl DeviationLog {
    /// A log keeping at most `capacity` exchanges (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            inner: Mutex::default(),
        }
    }

    /// Keeps an exchange and the deviations found in it (each names `id` as its
    /// exchange; one that names another is kept under `id` all the same).
    pub fn push(&self, id: &str, exchange: RecordedExchange, deviations: Vec<Deviation>) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner
            .exchanges
            .insert(id.to_string(), (exchange, deviations))
            .is_none()
        {
            inner.order.push_back(id.to_string());
        }
        while inner.order.len() > self.capacity {
            if let Some(old) = inner.order.pop_front() {
                inner.exchanges.remove(&old);
            }
        }
    }
}

impl DeviationSource for DeviationLog {
    fn deviations(&self) -> Vec<Deviation> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner
            .order
            .iter()
            .filter_map(|id| inner.exchanges.get(id))
            .flat_map(|(_, found)| found.iter().cloned())
            .collect()
    }

    fn exchange(&self, id: &str) -> Option<RecordedExchange> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner
            .exchanges
            .get(id)
            .map(|(exchange, _)| exchange.clone())
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
}
