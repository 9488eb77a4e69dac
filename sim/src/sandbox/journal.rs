//! The request journal: every request the services received and what they answered,
//! newest last, bounded, with secrets replaced by a marker.
//!
//! Recording is on every request's path, reading is rare: an exchange is kept as it went
//! over the wire (the request's method, URI and body, the reply's status and body, each
//! shared, not copied) and is parsed and redacted only when the journal is read. Nothing
//! leaves the journal unredacted: [`Journal::read`] is its only way out.

use std::{
    collections::VecDeque,
    sync::{Mutex, PoisonError},
    time::Duration,
};

use axum::{
    body::Bytes,
    http::{Method, StatusCode},
};
use serde_json::{Map, Value};

use super::client::types::{JournalEntry, QueryParam};
pub(crate) use crate::ops::is_secret;
use crate::protocol::hooks::Exchange;
// What replaces a secret, in every field named for one: the server layer's, which the
// proxy's recordings use too.
pub(crate) use licensing_host::{REDACTED, redact};

pub(crate) mod export;
mod summary;

/// Entries kept unless configured otherwise (`--journal-capacity`).
pub const DEFAULT_JOURNAL_CAPACITY: usize = 1000;
/// Bodies up to this size are kept (as JSON); larger ones only by their size, and a
/// request's by its summary too.
pub(crate) const MAX_KEPT_BODY: usize = 64 * 1024;
/// The largest summary kept of a request body too large to keep (see [`summary`]): room
/// for some 1,500 orders of a batch, so that `licensing orders submit`'s batches of 500
/// keep theirs.
pub(crate) const MAX_SUMMARY: usize = 256 * 1024;

/// Bytes of requests and replies kept at once unless configured otherwise
/// (`--journal-max-bytes`).
pub const DEFAULT_JOURNAL_BYTES: usize = 32 * 1024 * 1024;

/// The journal of a running simulator.
#[derive(Debug)]
pub(crate) struct Journal {
    capacity: usize,
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: VecDeque<Kept>,
    /// What the entries hold, in bytes (targets and kept bodies).
    bytes: usize,
    next_seq: i64,
    dropped: i64,
}

/// An exchange as the journal holds it (its bodies shared, not copied, when cloned).
#[derive(Clone, Debug)]
struct Kept {
    seq: i64,
    time: i64,
    operation: &'static str,
    method: Method,
    target: Box<str>,
    request_body: Raw,
    status: Option<StatusCode>,
    reply_body: Raw,
    /// The reply's business code when it was read as the exchange was recorded (a reply
    /// too large to keep, or none); otherwise it is read from the kept reply when shown.
    code: Option<Option<String>>,
    fault: Option<i64>,
    duration: Duration,
}

/// A body up to [`MAX_KEPT_BODY`] as received; a larger one only by its size, and a
/// request's also by its summary (compact JSON) when it has one.
#[derive(Clone, Debug)]
enum Raw {
    Kept(Bytes),
    Omitted(usize, Option<Box<str>>),
}

impl Raw {
    /// The bytes it holds.
    fn size(&self) -> usize {
        match self {
            Raw::Kept(bytes) => bytes.len(),
            Raw::Omitted(_, summary) => summary.as_deref().map_or(0, str::len),
        }
    }

    /// A request body.
    fn request(bytes: Bytes) -> Self {
        if bytes.len() > MAX_KEPT_BODY {
            Raw::Omitted(bytes.len(), summary::summary(&bytes))
        } else {
            Raw::Kept(bytes)
        }
    }

    /// As the journal shows it ([`body`]; `{"omitted": N, "summary": {…}}` for a request
    /// body kept by its summary).
    fn shown(&self) -> Option<Value> {
        match self {
            Raw::Kept(bytes) => body(bytes),
            Raw::Omitted(len, summary) => {
                let mut shown = omitted(*len);
                // Written by the journal as JSON; a summary that would not read back is
                // left out rather than shown as something else.
                if let (Value::Object(map), Some(Ok(summary))) = (
                    &mut shown,
                    summary.as_deref().map(serde_json::from_str::<Value>),
                ) {
                    map.insert("summary".to_string(), summary);
                }
                Some(shown)
            }
        }
    }
}

impl Kept {
    /// The bytes it holds, as the journal's byte bound counts them.
    fn size(&self) -> usize {
        self.target.len() + self.request_body.size() + self.reply_body.size()
    }

    fn code(&self) -> Option<String> {
        match (&self.code, &self.reply_body) {
            (Some(code), _) => code.clone(),
            (None, Raw::Kept(bytes)) => reply_code(bytes),
            (None, Raw::Omitted(..)) => None,
        }
    }

    fn entry(&self, code: Option<String>) -> JournalEntry {
        let (path, query_string) = self.target.split_once('?').unwrap_or((&self.target, ""));
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query_string.as_bytes())
            .into_owned()
            .collect();
        JournalEntry {
            seq: self.seq,
            time: self.time,
            operation: Some(self.operation.to_string()),
            method: self.method.to_string(),
            path: path.to_string(),
            query: query(&pairs),
            request_body: self.request_body.shown(),
            status: self.status.map_or(0, |s| i32::from(s.as_u16())),
            code,
            reply_body: self.status.and_then(|_| self.reply_body.shown()),
            fault: self.fault,
            duration_ms: self.duration.as_secs_f64() * 1000.0,
        }
    }
}

/// Which entries to read.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    pub operation: Option<String>,
    pub code: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub limit: Option<usize>,
    /// Only entries after this sequence number (what a page showing the journal has not
    /// seen yet).
    pub after: Option<i64>,
}

impl Journal {
    pub fn new(capacity: usize, max_bytes: usize) -> Self {
        Self {
            capacity,
            max_bytes,
            inner: Mutex::default(),
        }
    }

    /// Whether entries are kept at all (a capacity of 0 turns the journal off).
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends an exchange (its `seq` is assigned here), forgetting the oldest when full.
    pub fn push(&self, exchange: Exchange) {
        if !self.enabled() {
            return;
        }
        // A reply too large to keep keeps its code, read now; others are read when shown.
        let (status, reply_body, code) = match exchange.reply {
            None => (None, Raw::Omitted(0, None), Some(None)),
            Some((status, body)) if body.len() > MAX_KEPT_BODY => (
                Some(status),
                Raw::Omitted(body.len(), None),
                Some(reply_code(&body)),
            ),
            Some((status, body)) => (Some(status), Raw::Kept(body), None),
        };
        let mut kept = Kept {
            seq: 0,
            time: exchange.time,
            operation: exchange.operation,
            method: exchange.method,
            target: exchange.target,
            request_body: Raw::request(exchange.request_body),
            status,
            reply_body,
            code,
            fault: exchange.fault,
            duration: exchange.duration,
        };
        let size = kept.size();
        let evicted = {
            let mut inner = self.inner();
            inner.next_seq += 1;
            kept.seq = inner.next_seq;
            // Bounded in entries and in bytes: the oldest go first. A full journal evicts
            // one entry per push, kept without a list (an allocation per request else).
            let mut evicted = (None, Vec::new());
            while !inner.entries.is_empty()
                && (inner.entries.len() >= self.capacity || inner.bytes + size > self.max_bytes)
            {
                let Some(old) = inner.entries.pop_front() else {
                    break;
                };
                inner.bytes -= old.size();
                inner.dropped += 1;
                match evicted.0 {
                    None => evicted.0 = Some(old),
                    Some(_) => evicted.1.push(old),
                }
            }
            inner.bytes += size;
            inner.entries.push_back(kept);
            evicted
        };
        // Freed outside the lock.
        drop(evicted);
    }

    /// The entries that match, oldest first (the newest `limit` of them): the console's.
    #[cfg(feature = "console")]
    pub fn read(&self, filter: &Filter) -> super::client::types::JournalPage {
        let listing = self.listing(filter);
        super::client::types::JournalPage {
            entries: listing
                .entries
                .into_iter()
                .map(|(e, code)| e.entry(code))
                .collect(),
            capacity: listing.capacity,
            dropped: listing.dropped,
        }
    }

    /// The entry `seq`, parsed and redacted, while it is kept: the console's opened row.
    #[cfg(feature = "console")]
    pub fn entry(&self, seq: i64) -> Option<super::client::types::JournalEntry> {
        let kept = {
            let inner = self.inner();
            // Sequence numbers are consecutive from the oldest kept entry.
            let first = inner.entries.front()?.seq;
            let at = usize::try_from(seq.checked_sub(first)?).ok()?;
            inner.entries.get(at).filter(|e| e.seq == seq)?.clone()
        };
        let code = kept.code();
        Some(kept.entry(code))
    }

    /// What [`Journal::read`] returns, its entries parsed and redacted only as each is
    /// serialized: a large journal's export never holds all of them parsed at once, and
    /// the journal is locked only to pick them.
    pub fn listing(&self, filter: &Filter) -> Listing {
        let inner = self.inner();
        let mut entries: Vec<(&Kept, Option<String>)> = inner
            .entries
            .iter()
            .filter(|e| {
                filter.after.is_none_or(|seq| e.seq > seq)
                    && filter.operation.as_ref().is_none_or(|op| e.operation == op)
                    && filter.since.is_none_or(|t| e.time >= t)
                    && filter.until.is_none_or(|t| e.time < t)
            })
            .map(|e| (e, e.code()))
            .filter(|(_, code)| {
                filter
                    .code
                    .as_ref()
                    .is_none_or(|c| code.as_ref() == Some(c))
            })
            .collect();
        if let Some(limit) = filter.limit {
            let skip = entries.len().saturating_sub(limit);
            entries.drain(..skip);
        }
        Listing {
            entries: entries
                .into_iter()
                .map(|(e, code)| (e.clone(), code))
                .collect(),
            capacity: i64::try_from(self.capacity).unwrap_or(i64::MAX),
            dropped: inner.dropped,
        }
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        let mut inner = self.inner();
        inner.entries.clear();
        inner.bytes = 0;
        inner.dropped = 0;
    }
}

/// A [`JournalPage`](super::client::types::JournalPage) whose entries are shown as they
/// are serialized (see [`Journal::listing`]); serialized, the same document.
pub(crate) struct Listing {
    entries: Vec<(Kept, Option<String>)>,
    capacity: i64,
    dropped: i64,
}

impl Listing {
    /// No entry matched.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl serde::Serialize for Listing {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeStruct};
        struct Entries<'l>(&'l [(Kept, Option<String>)]);
        impl serde::Serialize for Entries<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
                for (kept, code) in self.0 {
                    seq.serialize_element(&kept.entry(code.clone()))?;
                }
                seq.end()
            }
        }
        // The fields of `JournalPage`, in its order.
        let mut page = serializer.serialize_struct("JournalPage", 3)?;
        page.serialize_field("capacity", &self.capacity)?;
        page.serialize_field("dropped", &self.dropped)?;
        page.serialize_field("entries", &Entries(&self.entries))?;
        page.end()
    }
}

/// The business code of a reply body, as a string (`"0"` for success).
fn reply_code(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Code {
        code: Value,
    }
    match serde_json::from_slice::<Code>(body).ok()?.code {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn omitted(len: usize) -> Value {
    let mut omitted = Map::new();
    omitted.insert("omitted".to_string(), Value::from(len));
    Value::Object(omitted)
}

/// A body as the journal keeps it: JSON with secrets redacted, a string when it is not
/// JSON, only its size when large, nothing when empty.
pub(crate) fn body(bytes: &[u8]) -> Option<Value> {
    if bytes.is_empty() {
        return None;
    }
    if bytes.len() > MAX_KEPT_BODY {
        return Some(omitted(bytes.len()));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(mut value) => {
            redact(&mut value);
            Some(value)
        }
        // Not JSON: it cannot be searched for secret fields, so it is not kept verbatim.
        Err(_) => Some(Value::String(format!("[{} bytes, not JSON]", bytes.len()))),
    }
}

/// Query parameters with secret values redacted.
pub(crate) fn query(pairs: &[(String, String)]) -> Vec<QueryParam> {
    pairs
        .iter()
        .map(|(name, value)| QueryParam {
            name: name.clone(),
            value: if is_secret(name) {
                REDACTED.to_string()
            } else {
                value.clone()
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(operation: &'static str, code: &str, time: i64) -> Exchange {
        Exchange {
            time,
            operation,
            method: Method::POST,
            target: "/p".into(),
            request_body: Bytes::new(),
            reply: Some((
                StatusCode::OK,
                Bytes::from(format!(r#"{{"code":"{code}"}}"#)),
            )),
            fault: None,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn bounded_in_bytes_as_well_as_entries() {
        let journal = Journal::new(1000, 200 * 1024);
        let body = Bytes::from(vec![b'x'; 60 * 1024]);
        for i in 0..10 {
            journal.push(Exchange {
                request_body: body.clone(),
                ..entry("op", "0", i)
            });
        }
        let page = journal.read(&Filter::default());
        assert_eq!(page.entries.len(), 3, "three 60 KiB bodies fit in 200 KiB");
        assert_eq!(page.entries[0].time, 7, "the oldest went first");
        let inner = journal.inner();
        assert!(inner.bytes <= 200 * 1024, "{} bytes held", inner.bytes);
        assert_eq!(inner.dropped, 7);
    }

    #[test]
    fn read_as_received_shown_redacted() {
        let journal = Journal::new(4, DEFAULT_JOURNAL_BYTES);
        journal.push(Exchange {
            target: "/p/q?g_nonce=n1&appKey=k-secret".into(),
            request_body: Bytes::from_static(br#"{"password":"pw-secret","size":1}"#),
            reply: Some((
                StatusCode::from_u16(299).unwrap(),
                Bytes::from_static(br#"{"code":13004,"message":"m","token":"t-secret"}"#),
            )),
            fault: Some(7),
            duration: Duration::from_micros(1500),
            ..entry("op", "0", 5)
        });
        let mut large = Vec::from(&br#"{"code":"60027","data":""#[..]);
        large.resize(MAX_KEPT_BODY + 10, b'x');
        large.extend_from_slice(br#""}"#);
        journal.push(Exchange {
            reply: Some((StatusCode::OK, Bytes::from(large))),
            ..entry("big", "0", 6)
        });
        journal.push(Exchange {
            reply: None,
            ..entry("dropped", "0", 7)
        });
        let page = journal.read(&Filter::default());
        let shown = serde_json::to_string(&page).unwrap();
        // The export's listing is the same document, shown as it is serialized.
        let listed = serde_json::to_string(&journal.listing(&Filter::default())).unwrap();
        assert_eq!(listed, shown);
        for secret in ["k-secret", "pw-secret", "t-secret"] {
            assert!(!shown.contains(secret), "{secret} shown: {shown}");
        }
        let [first, big, dropped] = &page.entries[..] else {
            panic!("three entries: {shown}");
        };
        assert_eq!(first.path, "/p/q");
        assert_eq!(
            first
                .query
                .iter()
                .map(|q| (&*q.name, &*q.value))
                .collect::<Vec<_>>(),
            [("g_nonce", "n1"), ("appKey", REDACTED)]
        );
        assert_eq!(first.request_body.as_ref().unwrap()["size"], 1);
        assert_eq!((first.status, first.code.as_deref()), (299, Some("13004")));
        assert_eq!((first.fault, first.duration_ms), (Some(7), 1.5));
        assert_eq!(big.code.as_deref(), Some("60027"));
        assert_eq!(
            big.reply_body.as_ref().unwrap()["omitted"],
            MAX_KEPT_BODY + 12
        );
        assert_eq!((dropped.status, dropped.code.as_ref()), (0, None));
        assert!(dropped.reply_body.is_none());
        let failed = journal.read(&Filter {
            code: Some("60027".into()),
            ..Filter::default()
        });
        assert_eq!(failed.entries.len(), 1);
    }

    #[test]
    fn bounded_filtered_and_cleared() {
        let journal = Journal::new(3, DEFAULT_JOURNAL_BYTES);
        for (i, op) in ["a", "b", "a", "b"].into_iter().enumerate() {
            journal.push(entry(op, if i == 3 { "500" } else { "0" }, i as i64));
        }
        let all = journal.read(&Filter::default());
        assert_eq!(
            all.entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 3, 4]
        );
        assert_eq!(all.dropped, 1);
        let a = journal.read(&Filter {
            operation: Some("a".into()),
            ..Filter::default()
        });
        assert_eq!(a.entries.len(), 1);
        let failed = journal.read(&Filter {
            code: Some("500".into()),
            ..Filter::default()
        });
        assert_eq!(failed.entries[0].seq, 4);
        let window = journal.read(&Filter {
            since: Some(2),
            until: Some(3),
            ..Filter::default()
        });
        assert_eq!(window.entries[0].seq, 3);
        let newest = journal.read(&Filter {
            limit: Some(1),
            ..Filter::default()
        });
        assert_eq!(newest.entries[0].seq, 4);
        journal.clear();
        assert!(journal.read(&Filter::default()).entries.is_empty());
    }

    #[test]
    fn secrets_never_kept() {
        let raw = br#"{"userList":[{"userName":"a","password":"Secret-1"}],"products":[{"passwords":["x"]}],"clientToken":"t"}"#;
        let kept = body(raw).unwrap().to_string();
        assert!(
            !kept.contains("Secret-1") && !kept.contains("\"x\"") && !kept.contains("\"t\""),
            "{kept}"
        );
        assert_eq!(kept.matches(REDACTED).count(), 3, "{kept}");
        let q = query(&[
            ("appKey".into(), "k".into()),
            ("g_nonce".into(), "n".into()),
        ]);
        assert_eq!(q[0].value, REDACTED);
        assert_eq!(q[1].value, "n");
        assert_eq!(
            body(&vec![b' '; MAX_KEPT_BODY + 1]).unwrap()["omitted"],
            MAX_KEPT_BODY + 1
        );
        assert!(
            body(b"not json, password=x")
                .unwrap()
                .as_str()
                .unwrap()
                .contains("not JSON")
        );
    }
}
