//! The request journal: every request the services received and what they answered,
//! newest last, bounded, with secrets replaced by a marker.

use std::{
    collections::VecDeque,
    sync::{Mutex, PoisonError},
};

use serde_json::{Map, Value};

use crate::admin::types::{JournalEntry, JournalPage, QueryParam};

/// Entries kept unless configured otherwise (`--journal-capacity`).
pub const DEFAULT_JOURNAL_CAPACITY: usize = 1000;
/// Bodies up to this size are kept (as JSON); larger ones only by their size.
pub(crate) const MAX_KEPT_BODY: usize = 64 * 1024;
/// What a secret is replaced with.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// The journal of a running simulator.
#[derive(Debug)]
pub(crate) struct Journal {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: VecDeque<JournalEntry>,
    next_seq: i64,
    dropped: i64,
}

/// Which entries to read.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    pub operation: Option<String>,
    pub code: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub limit: Option<usize>,
}

impl Journal {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
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

    /// Appends an entry (its `seq` is assigned here), forgetting the oldest when full.
    pub fn push(&self, mut entry: JournalEntry) {
        if !self.enabled() {
            return;
        }
        let mut inner = self.inner();
        inner.next_seq += 1;
        entry.seq = inner.next_seq;
        if inner.entries.len() == self.capacity {
            inner.entries.pop_front();
            inner.dropped += 1;
        }
        inner.entries.push_back(entry);
    }

    /// The entries that match, oldest first (the newest `limit` of them).
    pub fn read(&self, filter: &Filter) -> JournalPage {
        let inner = self.inner();
        let mut entries: Vec<JournalEntry> = inner
            .entries
            .iter()
            .filter(|e| {
                filter
                    .operation
                    .as_ref()
                    .is_none_or(|op| e.operation.as_ref() == Some(op))
                    && filter
                        .code
                        .as_ref()
                        .is_none_or(|c| e.code.as_ref() == Some(c))
                    && filter.since.is_none_or(|t| e.time >= t)
                    && filter.until.is_none_or(|t| e.time < t)
            })
            .cloned()
            .collect();
        if let Some(limit) = filter.limit {
            let skip = entries.len().saturating_sub(limit);
            entries.drain(..skip);
        }
        JournalPage {
            entries,
            capacity: i64::try_from(self.capacity).unwrap_or(i64::MAX),
            dropped: inner.dropped,
        }
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        let mut inner = self.inner();
        inner.entries.clear();
        inner.dropped = 0;
    }
}

/// Whether a field or parameter name carries a secret: tokens, passwords (an employee's,
/// or the license passwords of a product), keys.
pub(crate) fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["password", "token", "secret", "appkey", "authorization"]
        .iter()
        .any(|s| name.contains(s))
}

/// A body as the journal keeps it: JSON with secrets redacted, a string when it is not
/// JSON, only its size when large, nothing when empty.
pub(crate) fn body(bytes: &[u8]) -> Option<Value> {
    if bytes.is_empty() {
        return None;
    }
    if bytes.len() > MAX_KEPT_BODY {
        let mut omitted = Map::new();
        omitted.insert("omitted".to_string(), Value::from(bytes.len()));
        return Some(Value::Object(omitted));
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

/// Replaces the value of every secret field, at any depth.
pub(crate) fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if is_secret(key) {
                    *v = Value::String(REDACTED.to_string());
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
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

    fn entry(operation: &str, code: &str, time: i64) -> JournalEntry {
        JournalEntry {
            code: Some(code.to_string()),
            duration_ms: 0.0,
            fault: None,
            method: "POST".into(),
            operation: Some(operation.to_string()),
            path: "/p".into(),
            query: Vec::new(),
            reply_body: None,
            request_body: None,
            seq: 0,
            status: 200,
            time,
        }
    }

    #[test]
    fn bounded_filtered_and_cleared() {
        let journal = Journal::new(3);
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
