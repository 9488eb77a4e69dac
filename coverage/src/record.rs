//! An exchange as a report reads it, and the readers of a document already parsed
//! ([`read`], [`from_har`]); the streaming reader of a file (`read.rs`) builds the same
//! [`Exchange`]. Published as `exchange` from the crate root.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, value::RawValue};

use crate::lenient::{Lenient, reply_code};

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
    /// The request body, as recorded.
    pub request: Body,
    /// The HTTP status answered; 0 when there was no reply.
    pub status: u16,
    /// The reply's business code (`"0"` for success), when it had one.
    pub code: Option<String>,
}

/// A request body as a recording keeps it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Body {
    /// None sent, or not JSON (the recorders' `{"notJson": N}`, or text that does not
    /// parse).
    #[default]
    None,
    /// JSON recorded whole: its text.
    Json(Box<str>),
    /// Too large for the recorder, which kept its size (`{"omitted": N}`) and, when it
    /// could, a summary (`{"omitted": N, "summary": {…}}`: the body reduced to the keys
    /// that say what it applied, as the simulator's journal keeps one): its JSON text.
    Omitted {
        bytes: u64,
        summary: Option<Box<str>>,
    },
}

impl Body {
    /// A recorded body's JSON text, told apart from the recorders' markers.
    pub fn from_text(text: String) -> Body {
        let mut de = serde_json::Deserializer::from_str(&text);
        let shape = match de.deserialize_any(ShapeVisitor) {
            Ok(shape) if de.end().is_ok() => shape,
            _ => return Body::None,
        };
        match shape {
            Shape::Omitted { bytes, summary } => Body::Omitted {
                bytes,
                summary: summary.map(Into::into),
            },
            Shape::NotJson => Body::None,
            Shape::Plain => Body::Json(text.into_boxed_str()),
        }
    }

    /// A body as a parsed document holds it: JSON, or a string holding JSON text (a
    /// HAR's `postData.text`).
    pub fn from_value(value: Option<&Value>) -> Body {
        match value {
            None | Some(Value::Null) => Body::None,
            Some(Value::String(text)) => Body::from_text(text.clone()),
            Some(other) => Body::from_text(other.to_string()),
        }
    }

    /// The body's JSON, when it was recorded whole.
    pub fn json(&self) -> Option<Value> {
        match self {
            Body::Json(text) => serde_json::from_str(text).ok(),
            _ => None,
        }
    }
}

/// What the top of a body's text is.
enum Shape {
    Plain,
    NotJson,
    Omitted { bytes: u64, summary: Option<String> },
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    ignore_scalars!(Shape::Plain, str);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Plain)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let (mut omitted, mut not_json, mut summary, mut other) = (None, false, None, false);
        while let Some(key) = map.next_key::<MarkerKey>()? {
            match key {
                MarkerKey::Omitted => omitted = Some(map.next_value::<Lenient<u64>>()?.0),
                MarkerKey::NotJson => {
                    map.next_value::<IgnoredAny>()?;
                    not_json = true;
                }
                MarkerKey::Summary => {
                    let raw: &RawValue = map.next_value()?;
                    summary = Some(raw.get().to_string());
                }
                MarkerKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    other = true;
                }
            }
        }
        Ok(match (omitted, not_json, summary, other) {
            (Some(bytes), false, summary, false) => Shape::Omitted {
                bytes: bytes.unwrap_or(0),
                summary,
            },
            (None, true, None, false) => Shape::NotJson,
            _ => Shape::Plain,
        })
    }
}

keys! {
    /// The keys of the recorders' markers.
    MarkerKey { "omitted" => Omitted, "notJson" => NotJson, "summary" => Summary }
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

/// One entry of a HAR recording (`log.entries[i]`), named `source`.
pub fn from_har(source: &str, entry: &Value) -> Exchange {
    let request = &entry["request"];
    let query = request
        .get("queryString")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            Some((
                p.get("name")?.as_str()?.to_string(),
                p.get("value")?.as_str()?.to_string(),
            ))
        })
        .collect();
    let text = |p: &str| entry.pointer(p).and_then(Value::as_str);
    har_exchange(
        source.to_string(),
        text("/_operationId").map(str::to_string),
        text("/request/method").unwrap_or_default(),
        text("/request/url").unwrap_or_default(),
        query,
        Body::from_value(request.pointer("/postData/text")),
        entry.pointer("/response/status").and_then(Value::as_u64),
        text("/response/content/text").and_then(reply_code),
    )
}

/// An exchange of a HAR entry's parts.
#[allow(clippy::too_many_arguments)]
pub(crate) fn har_exchange(
    source: String,
    operation: Option<String>,
    method: &str,
    url: &str,
    query: Vec<(String, String)>,
    request: Body,
    status: Option<u64>,
    code: Option<String>,
) -> Exchange {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path_and_query = after_scheme.find('/').map_or("/", |at| &after_scheme[at..]);
    let path = path_and_query
        .split_once('?')
        .map_or(path_and_query, |(p, _)| p);
    Exchange {
        source,
        operation,
        method: method.to_uppercase(),
        path: path.to_string(),
        query,
        request,
        status: status.and_then(|s| u16::try_from(s).ok()).unwrap_or(0),
        code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::read;
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
        assert_eq!(a.request, Body::Json("{\"size\":1}".into()));
        let unnamed = |x: Exchange| Exchange {
            source: String::new(),
            ..x
        };
        assert_eq!(unnamed(a.clone()), unnamed(b));
        assert_eq!(
            unnamed(from_har("x", &har["log"]["entries"][0])),
            unnamed(a)
        );
    }

    #[test]
    fn markers_are_no_body_and_other_documents_are_refused() {
        let body = |v: Value| Body::from_value(Some(&v));
        assert_eq!(
            body(json!({"omitted": 70000})),
            Body::Omitted {
                bytes: 70000,
                summary: None
            }
        );
        assert_eq!(
            body(json!({"omitted": 70000, "summary": {"channelOrderId": "CO-A"}})),
            Body::Omitted {
                bytes: 70000,
                summary: Some("{\"channelOrderId\":\"CO-A\"}".into())
            }
        );
        assert_eq!(body(json!("{\"notJson\":3}")), Body::None);
        assert_eq!(body(json!("[12 bytes, not JSON]")), Body::None);
        assert_eq!(
            body(json!({"omitted": 1, "x": 2})),
            Body::Json("{\"omitted\":1,\"x\":2}".into())
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

    #[test]
    fn fields_of_another_type_are_read_as_absent() {
        let journal = json!([{"seq": 1, "method": 5, "path": ["x"], "status": "200",
            "code": {"a": 1}, "replyBody": "{\"code\": 40021}", "query": "q"}]);
        let x = read("j", &journal).unwrap().remove(0);
        assert_eq!((x.method.as_str(), x.path.as_str()), ("", ""));
        assert_eq!((x.status, x.code.as_deref()), (0, Some("40021")));
        assert!(x.query.is_empty());
    }
}
