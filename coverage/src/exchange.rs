//! The exchanges a report reads, from either source: the conformance proxy's HAR
//! recording (`log.entries`) or the simulator's journal (`entries`, as its admin API and
//! console export it, or a bare list of entries).

use serde_json::Value;

/// One request and its reply, as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    /// Where it came from, as a report names it: `order.har#12` (the entry's index in
    /// the recording) or `journal.json#seq 57`.
    pub source: String,
    /// The `operationId`, when the recording names one.
    pub operation: Option<String>,
    /// HTTP method, upper case.
    pub method: String,
    /// The request path, without the query.
    pub path: String,
    /// Query parameters in order (secrets already redacted by the recorder).
    pub query: Vec<(String, String)>,
    /// The request body as JSON, when it was JSON and recorded whole.
    pub request: Option<Value>,
    /// The HTTP status answered; 0 when there was no reply.
    pub status: u16,
    /// The reply's business code (`"0"` for success), when it had one.
    pub code: Option<String>,
}

impl Exchange {
    /// The value of query parameter `name`, if sent.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the reply was a success: HTTP 200 with code `0`.
    pub fn succeeded(&self) -> bool {
        self.status == 200 && self.code.as_deref() == Some("0")
    }
}

/// The exchanges of one recording or journal, in order; `name` labels their sources. An
/// error says what the document is not.
pub fn read(name: &str, document: &Value) -> Result<Vec<Exchange>, String> {
    if let Some(entries) = document.pointer("/log/entries").and_then(Value::as_array) {
        return Ok(entries
            .iter()
            .enumerate()
            .map(|(i, e)| from_har(&format!("{name}#{i}"), e))
            .collect());
    }
    let entries = match document {
        Value::Array(entries) => entries,
        _ => document
            .get("entries")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                format!("{name}: neither a HAR recording (`log.entries`) nor a journal (`entries`)")
            })?,
    };
    entries
        .iter()
        .map(|e| {
            let seq = e
                .get("seq")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("{name}: a journal entry without `seq`: {}", short(e)))?;
            Ok(from_journal(&format!("{name}#seq {seq}"), e))
        })
        .collect()
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn pairs(list: Option<&Value>) -> Vec<(String, String)> {
    list.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|p| {
                    Some((
                        p.get("name")?.as_str()?.to_string(),
                        p.get("value")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A recorded body as JSON: the recorders keep JSON bodies whole (secrets redacted) and
/// replace others by a marker object (`omitted`, `notJson`), which is no body to read.
fn body(value: Option<&Value>) -> Option<Value> {
    let value = value?;
    let parsed = match value {
        Value::String(text) => serde_json::from_str(text).ok()?,
        other => other.clone(),
    };
    let marker = parsed
        .as_object()
        .is_some_and(|o| o.len() == 1 && (o.contains_key("omitted") || o.contains_key("notJson")));
    (!marker).then_some(parsed)
}

/// A reply's business code as text (the services send it as a number or a string).
fn code_of(reply: Option<&Value>) -> Option<String> {
    match reply?.get("code")? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One entry of a HAR recording (`log.entries[i]`), named `source`.
pub fn from_har(source: &str, entry: &Value) -> Exchange {
    let request = &entry["request"];
    let url = request["url"].as_str().unwrap_or_default();
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path_and_query = after_scheme.find('/').map_or("/", |at| &after_scheme[at..]);
    let path = path_and_query
        .split_once('?')
        .map_or(path_and_query, |(p, _)| p);
    let reply = body(entry.pointer("/response/content/text"));
    Exchange {
        source: source.to_string(),
        operation: entry["_operationId"].as_str().map(str::to_string),
        method: request["method"]
            .as_str()
            .unwrap_or_default()
            .to_uppercase(),
        path: path.to_string(),
        query: pairs(request.get("queryString")),
        request: body(request.pointer("/postData/text")),
        status: entry
            .pointer("/response/status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(0),
        code: code_of(reply.as_ref()),
    }
}

fn from_journal(source: &str, entry: &Value) -> Exchange {
    let reply = body(entry.get("replyBody"));
    Exchange {
        source: source.to_string(),
        operation: entry["operation"].as_str().map(str::to_string),
        method: entry["method"].as_str().unwrap_or_default().to_uppercase(),
        path: entry["path"].as_str().unwrap_or_default().to_string(),
        query: pairs(entry.get("query")),
        request: body(entry.get("requestBody")),
        status: entry
            .get("status")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(0),
        code: entry["code"]
            .as_str()
            .map(str::to_string)
            .or_else(|| code_of(reply.as_ref())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_har_entry_and_a_journal_entry_read_alike() {
        let har = json!({"log": {"entries": [{
            "request": {"method": "post", "url": "http://127.0.0.1:9/order/api/order/v1/shellnums?g_nonce=n1",
                "queryString": [{"name": "g_nonce", "value": "n1"}],
                "postData": {"mimeType": "application/json", "text": "{\"size\":1}"}},
            "response": {"status": 200, "content": {"text": "{\"code\":0,\"data\":[\"8000000001\"]}"}},
            "_operationId": "allocateShellNums"
        }]}});
        let journal = json!({"entries": [{
            "seq": 7, "operation": "allocateShellNums", "method": "POST",
            "path": "/order/api/order/v1/shellnums", "query": [{"name": "g_nonce", "value": "n1"}],
            "requestBody": {"size": 1}, "status": 200, "code": "0",
            "replyBody": {"code": 0, "data": ["8000000001"]}
        }]});
        let a = read("r.har", &har).unwrap().remove(0);
        let b = read("j.json", &journal).unwrap().remove(0);
        assert_eq!(a.source, "r.har#0");
        assert_eq!(b.source, "j.json#seq 7");
        assert_eq!(
            Exchange {
                source: String::new(),
                ..a
            },
            Exchange {
                source: String::new(),
                ..b
            }
        );
    }

    #[test]
    fn markers_are_no_body_and_other_documents_are_refused() {
        assert_eq!(body(Some(&json!({"omitted": 70000}))), None);
        assert_eq!(body(Some(&json!("{\"notJson\":3}"))), None);
        assert_eq!(
            body(Some(&json!({"omitted": 1, "x": 2}))),
            Some(json!({"omitted": 1, "x": 2}))
        );
        assert!(
            read("x.json", &json!({"a": 1}))
                .unwrap_err()
                .contains("neither a HAR")
        );
        assert!(
            read("x.json", &json!([{"method": "GET"}]))
                .unwrap_err()
                .contains("without `seq`")
        );
    }
}
