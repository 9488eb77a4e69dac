//! A value checked against an OpenAPI 3.0 schema of the documents, walking the schema as
//! written (`$ref`, `type`, `nullable`, `properties`, `required`, `additionalProperties`,
//! `items`, `enum`, `oneOf` with or without a `discriminator`, lengths, bounds,
//! `pattern`, `int32`): each departure found once, at the deepest place it shows, as a JSON
//! Pointer with a rule name.

use std::{borrow::Cow, collections::HashMap, sync::Mutex};

use serde_json::Value;

use super::contract::resolve;
use crate::ops::is_secret;

/// The most findings one document yields: a systematic departure in a 50,000-item batch
/// is reported by its first occurrences, not 50,000 times.
pub(crate) const MAX_FINDINGS: usize = 100;

/// Where a value departs from its schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    pub pointer: String,
    pub rule: &'static str,
    pub expected: String,
    pub actual: String,
}

/// The longest `actual` quoted in a finding.
const MAX_QUOTE: usize = 200;

/// `value` as it appears in a finding: compact JSON, cut at [`MAX_QUOTE`] bytes; never the
/// value of a field whose name says it is a secret.
pub(crate) fn quote(pointer: &str, value: &Value) -> String {
    if pointer.split('/').any(is_secret) {
        return "[REDACTED]".to_string();
    }
    let text = value.to_string();
    cut(text)
}

fn cut(mut text: String) -> String {
    if text.len() > MAX_QUOTE {
        let mut end = MAX_QUOTE;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// A pointer segment with `~` and `/` escaped (RFC 6901); borrowed when there is none,
/// as for every name the documents use (a check builds one per field it walks).
pub(crate) fn segment(name: &str) -> Cow<'_, str> {
    if name.contains(['~', '/']) {
        Cow::Owned(name.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(name)
    }
}

/// Compiled `pattern`s, shared by every check of a process.
static PATTERNS: Mutex<Option<HashMap<String, Option<regress::Regex>>>> = Mutex::new(None);

fn matches(pattern: &str, text: &str) -> bool {
    let mut cache = PATTERNS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if !cache.contains_key(pattern) {
        cache.insert(pattern.to_string(), regress::Regex::new(pattern).ok());
    }
    let compiled = &cache[pattern];
    // A pattern the engine cannot read is no rule the value could break.
    compiled.as_ref().is_none_or(|re| re.find(text).is_some())
}

/// Checks values against the schemas of one document.
pub(crate) struct Walker<'d> {
    doc: &'d Value,
    pub found: Vec<Finding>,
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl<'d> Walker<'d> {
    pub fn new(doc: &'d Value) -> Self {
        Self {
            doc,
            found: Vec::new(),
        }
    }

    fn push(&mut self, at: &str, rule: &'static str, expected: String, actual: String) {
        if self.found.len() < MAX_FINDINGS {
            self.found.push(Finding {
                pointer: at.to_string(),
                rule,
                expected,
                actual,
            });
        }
    }

    /// `schema` with its `$ref`s followed.
    fn target(&self, mut schema: &'d Value) -> &'d Value {
        for _ in 0..32 {
            match schema.get("$ref").and_then(Value::as_str) {
                Some(r) => match resolve(self.doc, r) {
                    Some(next) => schema = next,
                    None => return &Value::Null,
                },
                None => break,
            }
        }
        schema
    }

    /// Checks `value` (found at pointer `at`) against `schema`.
    pub fn check(&mut self, schema: &'d Value, value: &Value, at: &mut String) {
        if self.found.len() >= MAX_FINDINGS {
            return;
        }
        let schema = self.target(schema);
        if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
            self.one_of(schema, branches, value, at);
            return;
        }
        let ty = schema.get("type").and_then(Value::as_str);
        if value.is_null() {
            if ty.is_some() && schema.get("nullable").and_then(Value::as_bool) != Some(true) {
                self.push(at, "type", expected_type(schema), "null".to_string());
            }
            return;
        }
        let fits = match ty {
            None => true,
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            Some("string") => value.is_string(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("number") => value.is_number(),
            Some("boolean") => value.is_boolean(),
            Some(_) => true,
        };
        if !fits {
            let actual = quote(at, value);
            self.push(at, "type", expected_type(schema), actual);
            return;
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array)
            && !values.iter().any(|v| same(v, value))
        {
            let listed: Vec<String> = values.iter().map(Value::to_string).collect();
            let actual = quote(at, value);
            self.push(
                at,
                "enum",
                format!("one of [{}]", listed.join(", ")),
                actual,
            );
            return;
        }
        match value {
            Value::Object(object) => self.object(schema, object, at),
            Value::Array(items) => self.array(schema, items, at),
            Value::String(text) => self.string(schema, text, at, value),
            Value::Number(_) => self.number(schema, value, at),
            _ => {}
        }
    }

    fn one_of(&mut self, schema: &'d Value, branches: &'d [Value], value: &Value, at: &mut String) {
        if let Some(discriminator) = schema.get("discriminator") {
            let property = discriminator
                .get("propertyName")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mapping = discriminator.get("mapping").and_then(Value::as_object);
            let Some(object) = value.as_object() else {
                let actual = quote(at, value);
                self.push(at, "type", "object".to_string(), actual);
                return;
            };
            let len = at.len();
            at.push('/');
            at.push_str(&segment(property));
            match (object.get(property), mapping) {
                (None, _) => {
                    let p = at.clone();
                    self.push(&p, "required", "present".into(), "absent".into());
                }
                (Some(tag), Some(mapping)) => match tag.as_str().and_then(|t| mapping.get(t)) {
                    Some(target) => {
                        at.truncate(len);
                        let branch = self.target(target);
                        self.check(branch, value, at);
                    }
                    None => {
                        let keys: Vec<String> = mapping.keys().map(|k| format!("{k:?}")).collect();
                        let p = at.clone();
                        let actual = quote(&p, tag);
                        self.push(&p, "enum", format!("one of [{}]", keys.join(", ")), actual);
                    }
                },
                (Some(_), None) => {}
            }
            at.truncate(len);
            return;
        }
        let mut best: Option<Vec<Finding>> = None;
        let mut all_type = true;
        for branch in branches {
            let mut inner = Walker::new(self.doc);
            let mut here = at.clone();
            inner.check(branch, value, &mut here);
            if inner.found.is_empty() {
                return;
            }
            all_type &= inner.found.len() == 1
                && inner.found[0].rule == "type"
                && inner.found[0].pointer == *at;
            if best.as_ref().is_none_or(|b| inner.found.len() < b.len()) {
                best = Some(inner.found);
            }
        }
        if all_type {
            let names: Vec<String> = branches
                .iter()
                .map(|b| expected_type(self.target(b)))
                .collect();
            let actual = quote(at, value);
            self.push(at, "type", names.join(" or "), actual);
        } else {
            for finding in best.unwrap_or_default() {
                if self.found.len() < MAX_FINDINGS {
                    self.found.push(finding);
                }
            }
        }
    }

    fn object(
        &mut self,
        schema: &'d Value,
        object: &serde_json::Map<String, Value>,
        at: &mut String,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    let p = format!("{at}/{}", segment(name));
                    self.push(&p, "required", "present".into(), "absent".into());
                }
            }
        }
        let extra = schema.get("additionalProperties");
        for (name, value) in object {
            let len = at.len();
            at.push('/');
            at.push_str(&segment(name));
            match properties.and_then(|p| p.get(name)) {
                Some(sub) => self.check(sub, value, at),
                None => match extra {
                    Some(Value::Bool(false)) => {
                        let listed: Vec<&String> =
                            properties.map(|p| p.keys().collect()).unwrap_or_default();
                        let p = at.clone();
                        let actual = quote(&p, value);
                        self.push(
                            &p,
                            "additional-property",
                            format!("only {listed:?}"),
                            actual,
                        );
                    }
                    Some(sub @ Value::Object(_)) => self.check(sub, value, at),
                    _ => {}
                },
            }
            at.truncate(len);
        }
    }

    fn array(&mut self, schema: &'d Value, items: &[Value], at: &mut String) {
        let n = items.len() as u64;
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && n < min
        {
            self.push(
                at,
                "constraint",
                format!("at least {min} items"),
                format!("{n} items"),
            );
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && n > max
        {
            self.push(
                at,
                "constraint",
                format!("at most {max} items"),
                format!("{n} items"),
            );
        }
        if let Some(item) = schema.get("items") {
            for (i, value) in items.iter().enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                self.check(item, value, at);
                at.truncate(len);
                if self.found.len() >= MAX_FINDINGS {
                    return;
                }
            }
        }
    }

    fn string(&mut self, schema: &Value, text: &str, at: &str, value: &Value) {
        let chars = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && chars < min
        {
            let actual = quote(at, value);
            self.push(
                at,
                "constraint",
                format!("at least {min} characters"),
                actual,
            );
        } else if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && chars > max
        {
            let actual = quote(at, value);
            self.push(
                at,
                "constraint",
                format!("at most {max} characters"),
                actual,
            );
        } else if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && !matches(pattern, text)
        {
            let actual = quote(at, value);
            self.push(at, "constraint", format!("matches {pattern}"), actual);
        }
    }

    fn number(&mut self, schema: &Value, value: &Value, at: &str) {
        let n = value.as_f64().unwrap_or_default();
        let int32 = schema.get("format").and_then(Value::as_str) == Some("int32");
        if int32 && value.as_i64().is_none_or(|i| i32::try_from(i).is_err()) {
            let actual = quote(at, value);
            self.push(at, "constraint", "a 32-bit integer (int32)".into(), actual);
        } else if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            let actual = quote(at, value);
            self.push(at, "constraint", format!("at least {min}"), actual);
        } else if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            let actual = quote(at, value);
            self.push(at, "constraint", format!("at most {max}"), actual);
        }
    }
}

/// Enum members compare as JSON values, integers by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// The type a schema asks for, as a finding names it.
fn expected_type(schema: &Value) -> String {
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    let nullable = schema.get("nullable").and_then(Value::as_bool) == Some(true);
    match (ty, schema.get("format").and_then(Value::as_str)) {
        ("integer", Some(format)) => format!("integer ({format})"),
        (ty, _) if nullable => format!("{ty} or null"),
        (ty, _) => ty.to_string(),
    }
}

/// A scalar parameter's text read as its schema's type (query and path parameters are
/// text on the wire); `None` when it cannot be.
pub(crate) fn coerce(schema: &Value, text: &str) -> Option<Value> {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => text
            .parse::<i64>()
            .ok()
            .map(Value::from)
            .or_else(|| text.parse::<u64>().ok().map(Value::from)),
        Some("number") => text.parse::<f64>().ok().map(Value::from),
        Some("boolean") => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => Some(Value::String(text.to_string())),
    }
}

/// A finding about a parameter whose text is not of its schema's type.
pub(crate) fn uncoerced(schema: &Value, at: &str, text: &str) -> Finding {
    Finding {
        pointer: at.to_string(),
        rule: "type",
        expected: expected_type(schema),
        actual: quote(at, &Value::String(text.to_string())),
    }
}

/// The JSON type of a value, for findings that name it.
pub(crate) fn json_type(value: &Value) -> &'static str {
    type_name(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"components": {"schemas": {
            "Code": {"oneOf": [{"type": "integer", "format": "int32"}, {"type": "string"}]},
            "Item": {"type": "object", "required": ["id", "status"], "properties": {
                "id": {"type": "string", "minLength": 1},
                "status": {"type": "integer", "enum": [1, 2]},
                "note": {"type": "string", "nullable": true},
                "password": {"type": "string", "minLength": 6}
            }}
        }}})
    }

    fn run(schema: Value, value: Value) -> Vec<Finding> {
        let doc = doc();
        let mut walker = Walker::new(&doc);
        walker.check(&schema, &value, &mut String::new());
        walker.found
    }

    #[test]
    fn each_departure_once_at_its_pointer() {
        let list = json!({"type": "array", "items": {"$ref": "#/components/schemas/Item"}});
        let found = run(
            list.clone(),
            json!([{"id": "a", "status": 1, "note": null}, {"status": 7}, {"id": 5, "status": 2}]),
        );
        let got: Vec<(&str, &str)> = found.iter().map(|f| (f.pointer.as_str(), f.rule)).collect();
        assert_eq!(
            got,
            [
                ("/1/id", "required"),
                ("/1/status", "enum"),
                ("/2/id", "type")
            ]
        );
        assert_eq!(found[1].expected, "one of [1, 2]");
        assert_eq!(found[1].actual, "7");
        assert!(run(list, json!([])).is_empty());
    }

    #[test]
    fn one_of_types_secrets_and_int32() {
        let code = json!({"$ref": "#/components/schemas/Code"});
        assert!(run(code.clone(), json!(0)).is_empty());
        assert!(run(code.clone(), json!("13004")).is_empty());
        let found = run(code.clone(), json!(true));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].expected, "integer (int32) or string");
        assert_eq!(run(code, json!(5_000_000_000u64))[0].rule, "constraint");
        let item = json!({"$ref": "#/components/schemas/Item"});
        let found = run(item, json!({"id": "x", "status": 1, "password": "abc"}));
        assert_eq!(found[0].pointer, "/password");
        assert_eq!(found[0].actual, "[REDACTED]", "a secret is never quoted");
    }
}
