//! A value checked against an OpenAPI 3.0 schema of the documents (compiled once, see
//! [`super::compiled`]), following the schema as
//! written (`$ref`, `type`, `nullable`, `properties`, `required`, `additionalProperties`,
//! `items`, `enum`, `oneOf` with or without a `discriminator`, lengths, bounds,
//! `pattern`, `int32`): each departure found once, at the deepest place it shows, as a JSON
//! Pointer with a rule name.

use std::borrow::Cow;

use licensing_sim::host::is_secret;
use serde_json::Value;

use super::compiled::{Additional, Node, OneOf, SchemaId, Schemas, Ty};

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
    if memchr::memchr2(b'~', b'/', name.as_bytes()).is_some() {
        Cow::Owned(name.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(name)
    }
}

/// Checks values against compiled schemas.
pub(crate) struct Walker<'s> {
    schemas: &'s Schemas,
    pub found: Vec<Finding>,
}

impl<'s> Walker<'s> {
    pub fn new(schemas: &'s Schemas) -> Self {
        Self {
            schemas,
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

    /// Checks `value` (found at pointer `at`) against schema `id`.
    pub fn check(&mut self, id: SchemaId, value: &Value, at: &mut String) {
        if self.found.len() >= MAX_FINDINGS {
            return;
        }
        let node = &self.schemas.nodes[id];
        if let Some(one_of) = &node.one_of {
            self.one_of(one_of, value, at);
            return;
        }
        if value.is_null() {
            if node.ty.is_some() && !node.nullable {
                self.push(at, "type", node.expected.clone(), "null".to_string());
            }
            return;
        }
        let fits = match node.ty {
            None | Some(Ty::Other) => true,
            Some(Ty::Object) => value.is_object(),
            Some(Ty::Array) => value.is_array(),
            Some(Ty::String) => value.is_string(),
            Some(Ty::Integer) => value.is_i64() || value.is_u64(),
            Some(Ty::Number) => value.is_number(),
            Some(Ty::Boolean) => value.is_boolean(),
        };
        if !fits {
            let actual = quote(at, value);
            self.push(at, "type", node.expected.clone(), actual);
            return;
        }
        if let Some((values, expected)) = &node.members
            && !values.iter().any(|v| same(v, value))
        {
            let actual = quote(at, value);
            self.push(at, "enum", expected.clone(), actual);
            return;
        }
        match value {
            Value::Object(object) => self.object(node, object, at),
            Value::Array(items) => self.array(node, items, at),
            Value::String(text) => self.string(node, text, at, value),
            Value::Number(_) => self.number(node, value, at),
            _ => {}
        }
    }

    fn one_of(&mut self, one_of: &OneOf, value: &Value, at: &mut String) {
        if let Some(discriminator) = &one_of.discriminator {
            let Some(object) = value.as_object() else {
                let actual = quote(at, value);
                self.push(at, "type", "object".to_string(), actual);
                return;
            };
            let len = at.len();
            at.push('/');
            at.push_str(&segment(&discriminator.property));
            match (object.get(&discriminator.property), &discriminator.mapping) {
                (None, _) => {
                    let p = at.clone();
                    self.push(&p, "required", "present".into(), "absent".into());
                }
                (Some(tag), Some((mapping, expected))) => {
                    match tag.as_str().and_then(|t| mapping.get(t)) {
                        Some(branch) => {
                            at.truncate(len);
                            self.check(*branch, value, at);
                        }
                        None => {
                            let p = at.clone();
                            let actual = quote(&p, tag);
                            self.push(&p, "enum", expected.clone(), actual);
                        }
                    }
                }
                (Some(_), None) => {}
            }
            at.truncate(len);
            return;
        }
        let mut best: Option<Vec<Finding>> = None;
        let mut all_type = true;
        for branch in &one_of.branches {
            let mut inner = Walker::new(self.schemas);
            let mut here = at.clone();
            inner.check(*branch, value, &mut here);
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
            let actual = quote(at, value);
            self.push(at, "type", one_of.names.clone(), actual);
        } else {
            for finding in best.unwrap_or_default() {
                if self.found.len() < MAX_FINDINGS {
                    self.found.push(finding);
                }
            }
        }
    }

    fn object(&mut self, node: &Node, object: &serde_json::Map<String, Value>, at: &mut String) {
        for name in &node.required {
            if !object.contains_key(name) {
                let p = format!("{at}/{}", segment(name));
                self.push(&p, "required", "present".into(), "absent".into());
            }
        }
        for (name, value) in object {
            let len = at.len();
            at.push('/');
            at.push_str(&segment(name));
            match node.properties.as_ref().and_then(|p| p.get(name)) {
                Some(sub) => self.check(*sub, value, at),
                None => match &node.additional {
                    Additional::Forbidden(expected) => {
                        let p = at.clone();
                        let actual = quote(&p, value);
                        self.push(&p, "additional-property", expected.clone(), actual);
                    }
                    Additional::Schema(sub) => self.check(*sub, value, at),
                    Additional::Any => {}
                },
            }
            at.truncate(len);
        }
    }

    fn array(&mut self, node: &Node, items: &[Value], at: &mut String) {
        let n = items.len() as u64;
        if let Some(min) = node.min_items
            && n < min
        {
            self.push(
                at,
                "constraint",
                format!("at least {min} items"),
                format!("{n} items"),
            );
        }
        if let Some(max) = node.max_items
            && n > max
        {
            self.push(
                at,
                "constraint",
                format!("at most {max} items"),
                format!("{n} items"),
            );
        }
        if let Some(item) = node.items {
            let mut index = itoa_buffer();
            for (i, value) in items.iter().enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(index.format(i));
                self.check(item, value, at);
                at.truncate(len);
                if self.found.len() >= MAX_FINDINGS {
                    return;
                }
            }
        }
    }

    fn string(&mut self, node: &Node, text: &str, at: &str, value: &Value) {
        let chars = || text.chars().count() as u64;
        if let Some(min) = node.min_length
            && chars() < min
        {
            let actual = quote(at, value);
            self.push(
                at,
                "constraint",
                format!("at least {min} characters"),
                actual,
            );
        } else if let Some(max) = node.max_length
            && chars() > max
        {
            let actual = quote(at, value);
            self.push(
                at,
                "constraint",
                format!("at most {max} characters"),
                actual,
            );
        } else if let Some((pattern, compiled)) = &node.pattern
            && compiled.as_ref().is_some_and(|re| re.find(text).is_none())
        {
            let actual = quote(at, value);
            self.push(at, "constraint", format!("matches {pattern}"), actual);
        }
    }

    fn number(&mut self, node: &Node, value: &Value, at: &str) {
        let n = value.as_f64().unwrap_or_default();
        if node.int32 && value.as_i64().is_none_or(|i| i32::try_from(i).is_err()) {
            let actual = quote(at, value);
            self.push(at, "constraint", "a 32-bit integer (int32)".into(), actual);
        } else if let Some(min) = node.minimum
            && n < min
        {
            let actual = quote(at, value);
            self.push(at, "constraint", format!("at least {min}"), actual);
        } else if let Some(max) = node.maximum
            && n > max
        {
            let actual = quote(at, value);
            self.push(at, "constraint", format!("at most {max}"), actual);
        }
    }
}

/// Array indexes written into a pointer without allocating.
fn itoa_buffer() -> Index {
    Index([0; 20])
}

struct Index([u8; 20]);

impl Index {
    fn format(&mut self, mut n: usize) -> &str {
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

/// The type a schema asks for, as a finding names it.
pub(super) fn expected_type(schema: &Value) -> String {
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    let nullable = schema.get("nullable").and_then(Value::as_bool) == Some(true);
    match (ty, schema.get("format").and_then(Value::as_str)) {
        ("integer", Some(format)) => format!("integer ({format})"),
        (ty, _) if nullable => format!("{ty} or null"),
        (ty, _) => ty.to_string(),
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
    use crate::check::compiled::Compiler;
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
        let doc = doc();
        let mut compiler = Compiler::default();
        let id = compiler.compile(&doc, 0, &schema);
        let schemas = compiler.finish();
        let mut walker = Walker::new(&schemas);
        walker.check(id, &value, &mut String::new());
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
