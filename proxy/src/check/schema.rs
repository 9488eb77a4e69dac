//! What a check finds and how it words it: a departure ([`Finding`]) at a JSON Pointer,
//! with a rule name, what the schema allows and the value quoted (compact JSON cut at 200
//! bytes, never a secret field's). The walk that finds them reads a document against its
//! compiled schema as it is parsed ([`super::walk::Walker`]).

use std::borrow::Cow;

use licensing_host::is_secret;
use serde_json::Value;

use crate::conformance::json::{self, JsonOut};

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

/// What stands for a quoted secret.
const REDACTED: &str = "[REDACTED]";

/// Whether a pointer leads through a field whose name says it holds a secret.
fn secret_at(pointer: &str) -> bool {
    pointer.split('/').any(is_secret)
}

/// `value` as it appears in a finding: compact JSON, cut at [`MAX_QUOTE`] bytes; never the
/// value of a field whose name says it is a secret (at the pointer or within the value).
/// For small values (a parameter, a scalar): a large one is quoted from its text
/// ([`quote_raw`]).
pub(crate) fn quote(pointer: &str, value: &Value) -> String {
    quote_raw(pointer, &value.to_string())
}

/// A string quoted as [`quote`] quotes it, reading no more of it than is shown.
pub(crate) fn quote_str(pointer: &str, text: &str) -> String {
    if secret_at(pointer) {
        return REDACTED.to_string();
    }
    let mut out = JsonOut::new(MAX_QUOTE + 1);
    out.string_value(text);
    let (text, more) = out.finish();
    cut(text, more)
}

/// A value quoted from its JSON text (`raw`, valid JSON), as [`quote`] quotes it, writing
/// no more than is shown however large the value.
pub(crate) fn quote_raw(pointer: &str, raw: &str) -> String {
    if secret_at(pointer) {
        return REDACTED.to_string();
    }
    let mut out = JsonOut::new(MAX_QUOTE + 1);
    // The text was read as JSON once already.
    let _ = json::rewrite(raw.as_bytes(), &mut out);
    let (text, more) = out.finish();
    cut(text, more)
}

/// A quote written while reading a list or an object (its start, `out`), finished.
pub(crate) fn quoted(pointer: &str, out: JsonOut<'_>) -> String {
    if secret_at(pointer) {
        return REDACTED.to_string();
    }
    let (text, more) = out.finish();
    cut(text, more)
}

/// A writer for [`quoted`].
pub(crate) fn quote_out() -> JsonOut<'static> {
    JsonOut::new(MAX_QUOTE + 1)
}

/// Compact JSON cut at [`MAX_QUOTE`] bytes (on a character boundary) and marked `…` when
/// it was longer (`more`: it was cut already).
fn cut(mut text: String, more: bool) -> String {
    if more || text.len() > MAX_QUOTE {
        let mut end = MAX_QUOTE.min(text.len());
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
    if memchr::memchr2(b'~', b'/', name.as_bytes()).is_some() {
        Cow::Owned(name.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(name)
    }
}

/// Array indexes written into a pointer without allocating.
pub(super) fn itoa_buffer() -> Index {
    Index([0; 20])
}

pub(super) struct Index([u8; 20]);

impl Index {
    pub(super) fn format(&mut self, mut n: usize) -> &str {
        let mut at = self.0.len();
        loop {
            at -= 1;
            self.0[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        std::str::from_utf8(&self.0[at..]).expect("ASCII digits")
    }
}

/// Enum members compare as JSON values, integers by value.
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// The JSON type of a value, for findings that name it.
pub(crate) fn json_type(value: &Value) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{compiled::Compiler, walk::Walker};
    use serde_json::json;

    fn doc() -> Value {
        json!({"components": {"schemas": {
            "Code": {"oneOf": [{"type": "integer", "format": "int32"}, {"type": "string"}]},
            "Tree": {"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}
            }},
            "Order": {"oneOf": [{"$ref": "#/components/schemas/Buy"}, {"$ref": "#/components/schemas/Drop"}],
                "discriminator": {"propertyName": "kind", "mapping": {
                    "buy": "#/components/schemas/Buy", "drop": "Drop"}}},
            "Buy": {"type": "object", "required": ["kind", "count"], "properties": {
                "kind": {"type": "string"}, "count": {"type": "integer", "minimum": 1}}},
            "Drop": {"type": "object", "required": ["kind", "id"], "properties": {
                "kind": {"type": "string"}, "id": {"type": "string", "pattern": "^A[0-9]+$"}}},
            "Item": {"type": "object", "required": ["id", "status"], "properties": {
                "id": {"type": "string", "minLength": 1},
                "status": {"type": "integer", "enum": [1, 2]},
                "note": {"type": "string", "nullable": true},
                "password": {"type": "string", "minLength": 6}
            }}
        }}})
    }

    fn run(schema: Value, value: Value) -> Vec<Finding> {
        let components = serde_json::from_value(doc()["components"].clone()).unwrap();
        let schema = serde_json::from_value(schema).unwrap();
        let mut compiler = Compiler::default();
        let id = compiler.compile(Some(&components), 0, &schema);
        let schemas = compiler.finish();
        let mut walker = Walker::new(&schemas);
        walker.check_value(id, &value, &mut String::new());
        walker.found
    }

    /// A scalar checked on its own path finds what the same value written out and parsed
    /// again finds, under every kind of schema a parameter has.
    #[test]
    fn scalars_are_checked_as_their_text_is() {
        let schemas = [
            json!({"type": "string"}),
            json!({"type": "string", "minLength": 2, "maxLength": 3}),
            json!({"type": "string", "pattern": "^A[0-9]+$"}),
            json!({"type": "string", "nullable": true}),
            json!({"type": "string", "format": "date-time"}),
            json!({"type": "integer"}),
            json!({"type": "integer", "format": "int32", "minimum": 1, "maximum": 10}),
            json!({"type": "integer", "enum": [1, 2]}),
            json!({"type": "string", "enum": ["Y", "N"]}),
            json!({"type": "number", "exclusiveMinimum": true, "minimum": 0}),
            json!({"type": "boolean"}),
            json!({"$ref": "#/components/schemas/Code"}),
            json!({"$ref": "#/components/schemas/Item"}),
            json!({}),
        ];
        let values = [
            json!(null),
            json!(true),
            json!(0),
            json!(-3),
            json!(7),
            json!(11),
            json!(4_294_967_296_u64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(0.5),
            json!(-2.5e300),
            json!(""),
            json!("A"),
            json!("A12"),
            json!("中文字"),
            json!("Y"),
            json!("a \"quoted\" \\ line\n"),
            json!("2026-11-28T10:00:00Z"),
            json!([1]),
            json!({"id": "x"}),
        ];
        let components = serde_json::from_value(doc()["components"].clone()).unwrap();
        for schema in &schemas {
            let mut compiler = Compiler::default();
            let id = compiler.compile(
                Some(&components),
                0,
                &serde_json::from_value(schema.clone()).unwrap(),
            );
            let compiled = compiler.finish();
            for value in &values {
                let (mut direct, mut as_text) = (Walker::new(&compiled), Walker::new(&compiled));
                let (mut at, mut at_text) = (String::from("/query/q"), String::from("/query/q"));
                direct.check_value(id, value, &mut at);
                as_text.check_value_as_text(id, value, &mut at_text);
                let show = |w: &Walker<'_>| {
                    w.found
                        .iter()
                        .map(|f| {
                            (
                                f.pointer.clone(),
                                f.rule,
                                f.expected.clone(),
                                f.actual.clone(),
                            )
                        })
                        .collect::<Vec<_>>()
                };
                assert_eq!(show(&direct), show(&as_text), "{value} against {schema}");
                assert_eq!(at, at_text);
            }
        }
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

    #[test]
    fn references_recurse_and_a_discriminator_picks_its_branch() {
        let tree = json!({"$ref": "#/components/schemas/Tree"});
        let found = run(
            tree,
            json!({"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}),
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pointer, "/children/0/children/0/name");
        let order = json!({"type": "array", "items": {"$ref": "#/components/schemas/Order"}});
        let found = run(
            order,
            json!([{"kind": "buy", "count": 0}, {"kind": "drop", "id": "B7"}, {"kind": "sell"}, {"count": 1}]),
        );
        let got: Vec<(&str, &str)> = found.iter().map(|f| (f.pointer.as_str(), f.rule)).collect();
        assert_eq!(
            got,
            [
                ("/0/count", "constraint"),
                ("/1/id", "constraint"),
                ("/2/kind", "enum"),
                ("/3/kind", "required")
            ]
        );
        assert_eq!(found[2].expected, "one of [\"buy\", \"drop\"]");
        assert_eq!(found[1].expected, "matches ^A[0-9]+$");
    }
}
