//! A request as the operations see it: path parameters, query, media type and body,
//! decoded into the generated request types with errors that name the field.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
};

use axum::http::HeaderValue;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::Query;

/// A request as the handlers see it, read by the gate. Reading it never fails: whatever
/// cannot be read is reported by the handler in the envelope, never as a bare HTTP 4xx.
#[derive(Debug)]
pub(crate) struct Call {
    path: HashMap<String, String>,
    query: Query,
    /// The header as received (a clone shares its bytes).
    content_type: Option<HeaderValue>,
    body: Result<Bytes, String>,
    /// A body that did not decode: the short cause the handler was given, and how to
    /// name the field it is about, done once the change's lock is released
    /// ([`Call::name_the_field`]).
    naming: Mutex<Option<Naming>>,
}

/// The short cause of a body that did not decode, and the work that names its field.
struct Naming {
    short: String,
    name: Box<dyn FnOnce() -> String + Send>,
}

impl std::fmt::Debug for Naming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.short)
    }
}

impl Call {
    /// A call made by the simulator itself (seeds): path parameters, query and a JSON body
    /// (any serializable value: a seed's batch is written straight to bytes, with no
    /// `Value` of it built first).
    pub fn internal(
        path: &[(&str, &str)],
        query: &[(&str, &str)],
        body: Option<&impl serde::Serialize>,
    ) -> Self {
        Self {
            path: path
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            query: Query::from_pairs(query.iter().copied()),
            content_type: Some(HeaderValue::from_static("application/json")),
            body: Ok(body.map_or_else(Bytes::new, |b| {
                Bytes::from(serde_json::to_vec(b).expect("a call's body serializes"))
            })),
            naming: Mutex::new(None),
        }
    }

    /// A call as received, read by the gate.
    pub fn received(
        path: HashMap<String, String>,
        query: Query,
        content_type: Option<HeaderValue>,
        body: Result<Bytes, String>,
    ) -> Self {
        Self {
            path,
            query,
            content_type,
            body,
            naming: Mutex::new(None),
        }
    }

    /// A call read back from the state file's log, to replay.
    pub fn recorded(
        path: HashMap<String, String>,
        query: &[(String, String)],
        content_type: Option<&str>,
        body: Result<Bytes, String>,
    ) -> Self {
        Self {
            path,
            query: Query::from_pairs(query.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
            // A recorded type was readable as text when received, so it converts back.
            content_type: content_type.and_then(|ct| HeaderValue::from_str(ct).ok()),
            body,
            naming: Mutex::new(None),
        }
    }

    /// The path parameters, for the state file's log (replay needs the call as the
    /// handler saw it; the credentials were checked before and are not part of it).
    pub fn path_params(&self) -> &HashMap<String, String> {
        &self.path
    }

    /// The query's parameters, in order.
    pub fn query_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.query.pairs()
    }

    /// The `Content-Type` header, if it is text.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_ref().and_then(|v| v.to_str().ok())
    }

    /// The body, or why it could not be read.
    pub fn raw_body(&self) -> Result<&Bytes, &str> {
        self.body.as_ref().map_err(String::as_str)
    }

    /// A path parameter (always present: the route matched).
    pub fn path(&self, name: &str) -> &str {
        self.path.get(name).map_or("", String::as_str)
    }

    /// The first value of a query parameter.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query.get(name)
    }

    /// The raw JSON body, once its presence and media type are checked.
    fn json(&self) -> Result<&Bytes, String> {
        let body = self.body.as_ref().map_err(Clone::clone)?;
        if body.is_empty() {
            return Err("the request body is required".to_string());
        }
        let json = self.content_type().is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
        });
        if !json {
            return Err("Content-Type must be application/json".to_string());
        }
        Ok(body)
    }

    /// The body as a JSON object; the error says what is wrong with it.
    pub fn object(&self) -> Result<Map<String, Value>, String> {
        match serde_json::from_slice(self.json()?) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("the request body must be a JSON object".to_string()),
            Err(e) => Err(format!("the request body is not valid JSON: {e}")),
        }
    }

    /// The body as a generated request type, checked as strictly as the spec's schema.
    pub fn body<T: DeserializeOwned + 'static>(&self) -> Result<T, String> {
        // Straight into the typed request: one pass over large batches. A failure gets
        // serde's message now; the path of the field it is about is found by more work,
        // which [`Call::name_the_field`] does once no lock is held.
        let json = self.json()?;
        let error = match serde_json::from_slice(json) {
            Ok(typed) => return Ok(typed),
            Err(e) => e,
        };
        let mut short = format!("the request body does not match the schema: {error}");
        // A body that holds a credential may fail on it: its value is never quoted.
        if crate::ops::is_secret(&String::from_utf8_lossy(json)) {
            short = without_value(&short);
        }
        // serde's message quotes the value it refused: a reply echoes only an excerpt.
        if short.len() > MAX_SHORT {
            let mut end = MAX_SHORT;
            while !short.is_char_boundary(end) {
                end -= 1;
            }
            short.truncate(end);
            short.push('…');
        }
        // Finding the path reads the body a few times: bounded to bodies whose trees stay
        // small; a larger one keeps serde's message with its line and column.
        if json.len() <= MAX_LOCATED_BODY {
            let bytes = json.clone();
            let name = Box::new(move || named::<T>(&bytes).unwrap_or_default());
            *self.naming.lock().unwrap_or_else(PoisonError::into_inner) = Some(Naming {
                short: short.clone(),
                name,
            });
        }
        Err(short)
    }

    /// Puts the path of the field a body failed on into `failure`, where the handler put
    /// the short cause ([`Call::body`]); nothing for a call whose body decoded.
    pub fn name_the_field(&self, failure: &mut crate::ops::Failure) {
        let Some(naming) = self
            .naming
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        if !failure.cause.contains(&naming.short) && !failure.message.contains(&naming.short) {
            return;
        }
        let named = (naming.name)();
        if named.is_empty() {
            return;
        }
        let partial = failure.partial.take();
        *failure = crate::ops::Failure::with_message(
            failure.code.clone(),
            failure.message.replace(&naming.short, &named),
            failure.cause.replace(&naming.short, &named),
        );
        failure.partial = partial;
    }
}

/// The error of reading `bytes` as `T`, with the path of the field it is about.
fn named<T: DeserializeOwned>(bytes: &[u8]) -> Option<String> {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(bytes) else {
        return None;
    };
    // One pass that tracks where it is names the field in most cases; the search below
    // goes further (into the variants of tagged orders) within a fixed number of reads,
    // so that no body makes this slower than a few reads of itself.
    let tracked = match serde_path_to_error::deserialize::<_, T>(Value::Object(object.clone())) {
        Ok(_) => return None,
        Err(e) => {
            let path = e.path().to_string();
            let mut message = e.into_inner().to_string();
            if names_a_secret(&path) {
                message = without_value(&message);
            }
            if path == "." {
                message
            } else {
                format!("{path}: {message}")
            }
        }
    };
    let Err(e) = serde_json::from_value::<T>(Value::Object(object.clone())) else {
        return Some(tracked);
    };
    let found = name_the_field::<T>(&object, &e).unwrap_or(tracked);
    // `path: message`: the path's last field says whether the message may quote a value.
    Some(match found.split_once(": ") {
        Some((path, message)) if names_a_secret(path) => {
            format!("{path}: {}", without_value(message))
        }
        _ => found,
    })
}

/// Whether the last field of a path (`orderList[3].passwordMobile`) holds a credential.
fn names_a_secret(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    let last = last.split('[').next().unwrap_or(last);
    !last.is_empty() && crate::ops::is_secret(last)
}

/// serde's message without the value it quotes (`` invalid type: integer `5`, expected a
/// string ``): what a credential's field is refused with, so that no reply, journal or log
/// repeats the credential. What it expected is kept.
fn without_value(message: &str) -> String {
    let (head, tail) = match message.find(", expected") {
        Some(at) => message.split_at(at),
        None => (message, ""),
    };
    let mut out = String::with_capacity(message.len());
    let mut rest = head;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest.as_bytes()[open] as char;
        let Some(close) = rest[open + 1..].find(quote) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str("(value not shown)");
        rest = &rest[open + 1 + close + 1..];
    }
    out.push_str(rest);
    out.push_str(tail);
    out
}

/// The most of serde's message a refused body's cause quotes.
const MAX_SHORT: usize = 512;

/// The most documents [`locate`] reads to find a field: a body whose search would need
/// more is named by the one-pass path instead.
const MAX_PROBES: usize = 256;

/// Bodies up to this size get their error's field path ([`name_the_field`]).
const MAX_LOCATED_BODY: usize = 4 * 1024 * 1024;

/// The error of reading `object` as `T`, prefixed with the path of the field it is about
/// (`orderList[3].assets[0].products[1].productUri: invalid type: ...`).
///
/// serde's errors name a missing or unknown field but not where it is, nor the field of a
/// wrong type. The derived deserializers read fields in the object's order and stop at the
/// first bad one, reporting missing fields only at the end, so the path is found by
/// reading smaller documents: in an object, the shortest prefix of its fields (scalars
/// first) that fails for another reason than a missing field ends with the culprit; in an array, the
/// shortest failing prefix of its items ends with it (found by bisection); an object
/// whose own fields are all fine is blamed on the list inside it that, emptied, stops the
/// failure. This runs only for a body that failed, and parses it a few times per level.
fn name_the_field<T: DeserializeOwned>(
    object: &Map<String, Value>,
    error: &serde_json::Error,
) -> Option<String> {
    let probes = std::cell::Cell::new(0);
    let (path, message) = locate_within::<T>(object, error, &probes)?;
    Some(match path {
        Some(path) => format!("{path}: {message}"),
        None => message,
    })
}

/// [`name_the_field`]'s path (`None` for the document itself) and serde's message.
pub(crate) fn locate<T: DeserializeOwned>(
    object: &Map<String, Value>,
    error: &serde_json::Error,
) -> (Option<String>, String) {
    let probes = std::cell::Cell::new(0);
    locate_within::<T>(object, error, &probes).unwrap_or_else(|| (None, error.to_string()))
}

/// [`locate`] within [`MAX_PROBES`] reads of the document; `None` past them.
fn locate_within<T: DeserializeOwned>(
    object: &Map<String, Value>,
    error: &serde_json::Error,
    probes: &std::cell::Cell<usize>,
) -> Option<(Option<String>, String)> {
    let exhausted = std::cell::Cell::new(false);
    let fails = |doc: &Value| {
        if probes.get() >= MAX_PROBES {
            exhausted.set(true);
            return None;
        }
        probes.set(probes.get() + 1);
        serde_json::from_value::<T>(doc.clone())
            .err()
            .map(|e| e.to_string())
    };
    let mut doc = Value::Object(object.clone());
    let mut path: Vec<Step> = Vec::new();
    let mut message = error.to_string();
    while let Some(node) = at(&mut doc, &path) {
        let step = match node.clone() {
            Value::Array(items) if !items.is_empty() => {
                // What the document says without any item: a failure that is not this.
                *at(&mut doc, &path).expect("the node exists") = Value::Array(Vec::new());
                let baseline = fails(&doc);
                if baseline.as_ref() == Some(&message) {
                    // Not about an item: the list itself (an unknown field, say).
                    *at(&mut doc, &path).expect("the node exists") = Value::Array(items);
                    break;
                }
                let (mut lo, mut hi) = (1, items.len());
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    *at(&mut doc, &path).expect("the node exists") =
                        Value::Array(items[..mid].to_vec());
                    if fails(&doc).is_some_and(|e| Some(&e) != baseline.as_ref()) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                *at(&mut doc, &path).expect("the node exists") = Value::Array(items[..lo].to_vec());
                Some(Step::Index(lo - 1))
            }
            Value::Object(full) => culprit(&mut doc, &path, &full, &message, &fails, &exhausted),
            _ => None,
        };
        let Some(step) = step else { break };
        path.push(step);
        if let Some(m) = fails(&doc) {
            message = m;
        }
    }
    if exhausted.get() {
        return None;
    }
    if path.is_empty() {
        return Some((None, message));
    }
    let mut at_path = String::new();
    for step in &path {
        match step {
            Step::Key(k) if at_path.is_empty() => at_path.push_str(k),
            Step::Key(k) => {
                at_path.push('.');
                at_path.push_str(k);
            }
            Step::Index(i) => at_path.push_str(&format!("[{i}]")),
        }
    }
    Some((Some(at_path), message))
}

/// One step of a path into a JSON document.
enum Step {
    Key(String),
    Index(usize),
}

fn at<'v>(doc: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(doc, |node, step| match step {
        Step::Key(k) => node.get_mut(k.as_str()),
        Step::Index(i) => node.get_mut(*i),
    })
}

/// The field of the object at `path` that the failure is about, leaving `doc` failing
/// with that field last (see [`name_the_field`]); `None` when it is the object itself, or
/// when the reads ran out (`exhausted`).
///
/// The shortest failing prefix is found by bisection: a prefix that holds the culprit fails
/// on it whatever follows (the fields are read in order and the first bad one stops the
/// read), one that does not fails only for a field it lacks. So a few reads of the object
/// name a field among thousands, where trying each prefix in turn cost a copy of the object
/// per field: quadratic in the number of fields before the bad one.
fn culprit(
    doc: &mut Value,
    path: &[Step],
    full: &Map<String, Value>,
    message: &str,
    fails: &impl Fn(&Value) -> Option<String>,
    exhausted: &std::cell::Cell<bool>,
) -> Option<Step> {
    // Scalars first: a discriminator (`orderType`) must be present before the fields it
    // selects can fail, and a scalar is never itself blamed for a field inside a list.
    let (scalars, containers): (Vec<_>, Vec<_>) = full
        .iter()
        .partition(|(_, v)| !matches!(v, Value::Array(_) | Value::Object(_)));
    *at(doc, path)? = Value::Object(Map::new());
    let outside = fails(doc).is_some_and(|e| e == message);
    *at(doc, path)? = Value::Object(full.clone());
    if outside || exhausted.get() {
        return None;
    }
    let fields: Vec<(&String, &Value)> = scalars.into_iter().chain(containers).collect();
    // Whether the first `k` fields fail for another reason than a missing field; `None`
    // once the reads ran out.
    let mut prefix_fails = |k: usize| -> Option<bool> {
        let prefix: Map<String, Value> = fields[..k]
            .iter()
            .map(|(key, value)| ((*key).clone(), (*value).clone()))
            .collect();
        *at(doc, path)? = Value::Object(prefix);
        let failed = fails(doc).is_some_and(|e| !e.starts_with("missing field"));
        (!exhausted.get()).then_some(failed)
    };
    if !fields.is_empty() && prefix_fails(fields.len())? {
        let (mut lo, mut hi) = (1, fields.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if prefix_fails(mid)? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        // The whole object again: the fields after the culprit are read after it, so it
        // still fails first, and no missing field of a prefix blurs what follows.
        *at(doc, path)? = Value::Object(full.clone());
        return Some(Step::Key(fields[lo - 1].0.clone()));
    }
    *at(doc, path)? = Value::Object(full.clone());
    for (key, value) in full {
        if !matches!(value, Value::Array(items) if !items.is_empty()) {
            continue;
        }
        *at(doc, path)?.get_mut(key.as_str())? = Value::Array(Vec::new());
        let still = fails(doc).is_some_and(|e| e == message);
        *at(doc, path)?.get_mut(key.as_str())? = value.clone();
        if exhausted.get() {
            return None;
        }
        if !still {
            return Some(Step::Key(key.clone()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credentials_value_is_never_quoted_in_a_refusal() {
        assert_eq!(
            without_value("invalid type: integer `13800000000`, expected a string"),
            "invalid type: integer (value not shown), expected a string"
        );
        assert_eq!(
            without_value("invalid value: string \"hunter2\", expected `x` or `y`"),
            "invalid value: string (value not shown), expected `x` or `y`"
        );
        assert!(names_a_secret("orderList[3].passwordMobile"));
        assert!(names_a_secret("passwordMobile"));
        assert!(!names_a_secret("orderList[3].customerName"));
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Bind {
            #[serde(rename = "passwordMobile")]
            password_mobile: String,
        }
        let named = named::<Bind>(br#"{"passwordMobile": 13812345678}"#).unwrap();
        assert!(named.starts_with("passwordMobile: "), "{named}");
        assert!(!named.contains("13812345678"), "{named}");
    }

    /// Thousands of fields the schema does not know, then the bad one: named in a number of
    /// reads that grows with the logarithm of the fields, not with the fields.
    #[test]
    fn a_field_among_thousands_is_named_in_a_few_reads() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Create {
            #[serde(rename = "customerName")]
            customer_name: String,
            #[serde(rename = "branchName")]
            branch_name: String,
        }
        for fields in [100usize, 2_000, 20_000] {
            let mut object = Map::new();
            for i in 0..fields {
                object.insert(format!("a{i:05}"), Value::from(i));
            }
            object.insert("customerName".into(), Value::from(5));
            object.insert("branchName".into(), Value::from("North"));
            let error =
                serde_json::from_value::<Create>(Value::Object(object.clone())).unwrap_err();
            let probes = std::cell::Cell::new(0);
            let (path, message) = locate_within::<Create>(&object, &error, &probes).unwrap();
            assert_eq!(path.as_deref(), Some("customerName"), "{message}");
            let bound = 2 * (usize::BITS - fields.leading_zeros()) as usize + 8;
            assert!(
                probes.get() <= bound,
                "{fields} fields: {} reads, more than {bound}",
                probes.get()
            );
        }
    }
}
