//! What a tool call answers: the reply's `data` as structured content (and as its JSON
//! text), a business error as a tool error with the code and its documented meaning,
//! lists cut to a byte cap with a note of what was left out, every text from the
//! platform escaped, and no configured secret anywhere.

use std::sync::{Arc, Mutex};

use licensing_escape::terminal;
use serde_json::{Map, Value, json};

use crate::error::CliError;

/// The most a result's structured content may hold, as JSON, when `--max-result-bytes`
/// is not given: about 64,000 tokens, within what an assistant's context takes in.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 256 * 1024;

/// A tool's answer, as the protocol module sends it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The structured content: `data`, `error`, `omitted`, `note`.
    pub structured: Map<String, Value>,
    /// The text content: the structured content as JSON, or the error's message.
    pub text: String,
    /// Whether it is a tool error.
    pub error: bool,
}

impl Reply {
    /// A call refused or invalid before anything was sent: `error` holds `message` and,
    /// as `key`, what it names (the flag or the field).
    pub fn refused(message: String, key: &str, named: Option<&str>) -> Self {
        let mut error = Map::new();
        error.insert("message".into(), message.clone().into());
        if let Some(named) = named {
            error.insert(key.into(), named.into());
        }
        let mut structured = Map::new();
        structured.insert("error".into(), error.into());
        Reply {
            structured,
            text: message,
            error: true,
        }
    }

    /// The answer to a call that was sent: its data (bounded to `max_bytes`), or the
    /// error and, for a partial success, the data that came with it.
    pub fn of(data: Option<Value>, result: Result<(), CliError>, max_bytes: usize) -> Self {
        let mut structured = Map::new();
        let mut text = None;
        if let Some(mut data) = data {
            escape_all(&mut data);
            match bound(data, max_bytes) {
                (Some(data), omitted) => {
                    structured.insert("data".into(), data);
                    if let Some(omitted) = omitted {
                        structured.insert("omitted".into(), omitted);
                    }
                }
                (None, omitted) => {
                    structured.insert("omitted".into(), omitted.expect("left out"));
                }
            }
        }
        let error = result.is_err();
        if let Err(e) = result {
            let mut error = Map::new();
            if let Some(code) = &e.business {
                error.insert("code".into(), terminal::escape(code).into_owned().into());
                let meaning = licensing_sdk::ErrorCode::from(code.as_str()).description();
                if let Some(meaning) = meaning {
                    error.insert("meaning".into(), meaning.into());
                }
            }
            // The SDK's message shows the platform's text escaped and bounded.
            let message = terminal::escape(&e.message).into_owned();
            error.insert("message".into(), message.clone().into());
            structured.insert("error".into(), error.into());
            text = Some(message);
        }
        let text = text.unwrap_or_else(|| Value::Object(structured.clone()).to_string());
        Reply {
            structured,
            text,
            error,
        }
    }

    /// A note added for the assistant.
    pub fn with_note(mut self, note: &str) -> Self {
        self.structured.insert("note".into(), note.into());
        if !self.error {
            self.text = Value::Object(self.structured.clone()).to_string();
        }
        self
    }

    /// Every configured secret in the answer replaced: the platform could echo one (a
    /// query string in an error, a token in a message).
    pub fn redact(mut self, secrets: &[String]) -> Self {
        let mut value = Value::Object(std::mem::take(&mut self.structured));
        redact_value(&mut value, secrets);
        if let Value::Object(object) = value {
            self.structured = object;
        }
        self.text = redact(&self.text, secrets);
        self
    }
}

/// `text` with each secret (of at least 4 characters, to replace no common word)
/// replaced by `[redacted]`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "[redacted]");
        }
    }
    out
}

/// [`redact`] in every string and key of a value.
pub fn redact_value(value: &mut Value, secrets: &[String]) {
    walk_strings(value, &mut |s| redact(s, secrets));
}

/// Every string and key of a value made inert for a person's terminal: control and
/// bidirectional characters shown as `\u{…}`.
fn escape_all(value: &mut Value) {
    walk_strings(value, &mut |s| terminal::escape(s).into_owned());
}

fn walk_strings(value: &mut Value, f: &mut dyn FnMut(&str) -> String) {
    match value {
        Value::String(s) => *s = f(s),
        Value::Array(items) => items.iter_mut().for_each(|i| walk_strings(i, f)),
        Value::Object(object) => {
            let entries = std::mem::take(object);
            for (key, mut child) in entries {
                walk_strings(&mut child, f);
                object.insert(f(&key), child);
            }
        }
        _ => {}
    }
}

fn size(value: &Value) -> usize {
    serde_json::to_string(value).map_or(usize::MAX, |t| t.len())
}

/// `data` within `max_bytes`: whole, or with its list (the data itself, or the longest
/// list among its fields: a page's items) cut to the items that fit, or left out when
/// even that is too large; and the note of what was left out.
pub fn bound(mut data: Value, max_bytes: usize) -> (Option<Value>, Option<Value>) {
    let whole = size(&data);
    if whole <= max_bytes {
        return (Some(data), None);
    }
    let key = match &data {
        Value::Object(fields) => fields
            .iter()
            .filter_map(|(k, v)| Some((k, v.as_array()?.len())))
            .max_by_key(|(_, len)| *len)
            .map(|(k, _)| k.clone()),
        _ => None,
    };
    if let Some(items) = list(&mut data, key.as_deref()).map(std::mem::take) {
        let total = items.len();
        let rest = size(&data);
        let mut used = rest;
        let mut kept = Vec::new();
        for item in items {
            let cost = size(&item) + 1;
            if used + cost > max_bytes {
                break;
            }
            used += cost;
            kept.push(item);
        }
        if rest <= max_bytes {
            let shown = kept.len();
            *list(&mut data, key.as_deref()).expect("found above") = kept;
            let note = format!(
                "{} of {total} items left out: the reply was {whole} bytes, more than the \
                 {max_bytes} a result holds (--max-result-bytes); ask for fewer (a smaller \
                 page, a narrower query)",
                total - shown
            );
            let omitted = json!({
                "items": total - shown, "of": total, "bytes": whole - size(&data), "note": note,
            });
            return (Some(data), Some(omitted));
        }
    }
    let note = format!(
        "the reply's data was left out: {whole} bytes, more than the {max_bytes} a result holds \
         (--max-result-bytes), with no list to shorten"
    );
    (None, Some(json!({"bytes": whole, "note": note})))
}

/// The data's list: itself, or its field `key`.
fn list<'a>(data: &'a mut Value, key: Option<&str>) -> Option<&'a mut Vec<Value>> {
    match (data, key) {
        (Value::Array(items), _) => Some(items),
        (Value::Object(fields), Some(key)) => fields.get_mut(key)?.as_array_mut(),
        _ => None,
    }
}

/// A writer whose bytes are kept, for the command's output.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    /// What was written, as the JSON value it is (none when nothing was).
    pub fn json(&self) -> Option<Value> {
        let bytes = std::mem::take(&mut *self.0.lock().expect("not poisoned"));
        serde_json::from_slice(&bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_is_cut_to_the_cap_with_a_note() {
        let items: Vec<Value> = (0..100_000).map(|i| json!({"id": i})).collect();
        let page = json!({"total": 100_000, "list": items, "hasNextPage": false});
        let (data, omitted) = bound(page, 4096);
        let data = data.unwrap();
        assert!(size(&data) <= 4096, "{}", size(&data));
        let shown = data["list"].as_array().unwrap().len();
        assert!(shown > 100, "{shown}");
        let omitted = omitted.unwrap();
        assert_eq!(omitted["items"], 100_000 - shown);
        assert_eq!(omitted["of"], 100_000);
        assert_eq!(data["total"], 100_000);
    }

    #[test]
    fn a_reply_with_nothing_to_cut_is_left_out_with_a_note() {
        let (data, omitted) = bound(json!({"name": "x".repeat(10_000)}), 1000);
        assert!(data.is_none());
        assert!(
            omitted.unwrap()["note"]
                .as_str()
                .unwrap()
                .contains("left out")
        );
        let (data, omitted) = bound(json!([1, 2]), 1000);
        assert_eq!((data, omitted), (Some(json!([1, 2])), None));
    }

    #[test]
    fn text_is_escaped_and_secrets_replaced() {
        let reply = Reply::of(
            Some(json!({"enterpriseName": "A\u{1b}[2J\u{202e}cba", "k\u{7}": "sek-ret-1"})),
            Ok(()),
            DEFAULT_MAX_RESULT_BYTES,
        )
        .redact(&["sek-ret-1".to_string()]);
        let data = &reply.structured["data"];
        assert_eq!(data["enterpriseName"], "A\\u{1b}[2J\\u{202e}cba");
        assert_eq!(data["k\\u{7}"], "[redacted]");
        assert!(!reply.text.contains("sek-ret-1") && !reply.text.contains('\u{1b}'));
    }
}
