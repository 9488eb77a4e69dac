//! A reply read against its schema in the spec: types, `nullable`, required properties,
//! enums, bounds, `oneOf`/`anyOf`/`allOf`, references followed through the spec model
//! (a `pattern` is not checked: the one the replies have, the asset numbers', is the
//! check `order.shellnums.digits` of its own). Each finding names where in the reply it is and the schema rule it breaks, as a
//! pointer into the spec. Bounded: at most [`MAX_FINDINGS`] findings, [`MAX_DEPTH`] levels.

use licensing_spec::openapiv3::{
    AnySchema, ArrayType, Components, OpenAPI, ReferenceOr, Schema, SchemaKind, Type,
};

use serde_json::Value;

/// The most findings kept of one reply.
pub const MAX_FINDINGS: usize = 20;
/// The deepest a reply is followed.
pub const MAX_DEPTH: usize = 64;

/// A place where a reply departs from its schema.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Where in the reply: a JSON pointer (`/data/0/assetNum`).
    pub at: String,
    /// What the schema says there, with the pointer of the rule.
    pub rule: String,
}

/// How `value` departs from the component schema `name` of `spec` (empty: it conforms).
pub fn check(spec: &OpenAPI, name: &str, value: &Value) -> Vec<Finding> {
    let mut walk = Walk {
        components: spec.components.as_ref(),
        findings: Vec::new(),
    };
    let reference = ReferenceOr::<Schema>::Reference {
        reference: format!("{}{name}", licensing_spec::SCHEMA_REF_PREFIX),
    };
    walk.any(&reference, "#/components/schemas", value, String::new(), 0);
    walk.findings
}

struct Walk<'a> {
    components: Option<&'a Components>,
    findings: Vec<Finding>,
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn escape_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl<'a> Walk<'a> {
    fn find(&mut self, at: &str, rule: String) {
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(Finding {
                at: if at.is_empty() { "/".into() } else { at.into() },
                rule,
            });
        }
    }

    fn full(&self) -> bool {
        self.findings.len() >= MAX_FINDINGS
    }

    /// A schema or a reference to one; `from` is the pointer of where it is written.
    fn any(
        &mut self,
        schema: &'a ReferenceOr<Schema>,
        from: &str,
        value: &Value,
        at: String,
        depth: usize,
    ) {
        let from = match schema {
            ReferenceOr::Reference { reference } => reference.clone(),
            ReferenceOr::Item(_) => from.to_string(),
        };
        match licensing_spec::schema(self.components, schema) {
            Some(s) => self.schema(s, &from, value, at, depth),
            None => self.find(&at, format!("{from}: the reference leads to no schema")),
        }
    }

    fn boxed(
        &mut self,
        schema: &'a ReferenceOr<Box<Schema>>,
        from: String,
        value: &Value,
        at: String,
        depth: usize,
    ) {
        let from = match schema {
            ReferenceOr::Reference { reference } => reference.clone(),
            ReferenceOr::Item(_) => from,
        };
        match licensing_spec::boxed_schema(self.components, schema) {
            Some(s) => self.schema(s, &from, value, at, depth),
            None => self.find(&at, format!("{from}: the reference leads to no schema")),
        }
    }

    /// How many findings `schema` has for `value` on its own, without keeping them.
    fn count(&self, schema: &'a ReferenceOr<Schema>, from: &str, value: &Value, at: &str) -> usize {
        let mut alone = Walk {
            components: self.components,
            findings: Vec::new(),
        };
        alone.any(schema, from, value, at.to_string(), 0);
        alone.findings.len()
    }

    fn schema(&mut self, s: &'a Schema, from: &str, value: &Value, at: String, depth: usize) {
        if depth > MAX_DEPTH || self.full() {
            return;
        }
        if value.is_null() {
            let untyped = matches!(&s.schema_kind, SchemaKind::Any(a) if a.typ.is_none());
            if !s.schema_data.nullable && !untyped {
                self.find(&at, format!("{from}: null, but the schema is not nullable"));
            }
            return;
        }
        match &s.schema_kind {
            SchemaKind::Type(t) => self.typed(t, from, value, at, depth),
            SchemaKind::OneOf { one_of } | SchemaKind::AnyOf { any_of: one_of } => {
                let one = matches!(&s.schema_kind, SchemaKind::OneOf { .. });
                let matching = one_of
                    .iter()
                    .enumerate()
                    .filter(|(i, alt)| self.count(alt, &format!("{from}/{i}"), value, &at) == 0)
                    .count();
                let keyword = if one { "oneOf" } else { "anyOf" };
                if matching == 0 || (one && matching > 1) {
                    self.find(
                        &at,
                        format!(
                            "{from}/{keyword}: {} matches {matching} of its {} alternatives",
                            kind_of(value),
                            one_of.len()
                        ),
                    );
                }
            }
            SchemaKind::AllOf { all_of } => {
                for (i, part) in all_of.iter().enumerate() {
                    self.any(
                        part,
                        &format!("{from}/allOf/{i}"),
                        value,
                        at.clone(),
                        depth + 1,
                    );
                }
            }
            SchemaKind::Not { .. } => {}
            SchemaKind::Any(a) => self.untyped(a, from, value, at, depth),
        }
    }

    fn typed(&mut self, t: &'a Type, from: &str, value: &Value, at: String, depth: usize) {
        let wrong = |expected: &str| format!("{from}/type: {} where {expected} is", kind_of(value));
        match t {
            Type::String(t) => {
                let Some(text) = value.as_str() else {
                    return self.find(&at, wrong("a string"));
                };
                let values: Vec<&str> =
                    t.enumeration.iter().flatten().map(String::as_str).collect();
                if !values.is_empty() && !values.contains(&text) {
                    self.find(
                        &at,
                        format!("{from}/enum: {text:?} is not one of {values:?}"),
                    );
                }
                let chars = text.chars().count();
                if t.min_length.is_some_and(|m| chars < m)
                    || t.max_length.is_some_and(|m| chars > m)
                {
                    self.find(
                        &at,
                        format!("{from}: {chars} characters, outside its length bounds"),
                    );
                }
            }
            Type::Integer(t) => {
                let Some(n) = value.as_i64() else {
                    return self.find(&at, wrong("an integer"));
                };
                let values: Vec<i64> = t.enumeration.iter().flatten().copied().collect();
                if !values.is_empty() && !values.contains(&n) {
                    self.find(&at, format!("{from}/enum: {n} is not one of {values:?}"));
                }
                if t.minimum.is_some_and(|m| n < m) || t.maximum.is_some_and(|m| n > m) {
                    self.find(&at, format!("{from}: {n} is outside its bounds"));
                }
            }
            Type::Number(_) => {
                if !value.is_number() {
                    self.find(&at, wrong("a number"));
                }
            }
            Type::Boolean(_) => {
                if !value.is_boolean() {
                    self.find(&at, wrong("a boolean"));
                }
            }
            Type::Array(a) => {
                let Some(items) = value.as_array() else {
                    return self.find(&at, wrong("an array"));
                };
                self.array(a, from, items, &at, depth);
            }
            Type::Object(o) => {
                let Some(map) = value.as_object() else {
                    return self.find(&at, wrong("an object"));
                };
                self.object(&o.properties, &o.required, from, map, &at, depth);
            }
        }
    }

    fn array(&mut self, a: &'a ArrayType, from: &str, items: &[Value], at: &str, depth: usize) {
        if a.min_items.is_some_and(|m| items.len() < m) {
            self.find(at, format!("{from}/minItems: {} items", items.len()));
        }
        if a.max_items.is_some_and(|m| items.len() > m) {
            self.find(at, format!("{from}/maxItems: {} items", items.len()));
        }
        if let Some(schema) = &a.items {
            for (i, item) in items.iter().enumerate() {
                if self.full() {
                    break;
                }
                self.boxed(
                    schema,
                    format!("{from}/items"),
                    item,
                    format!("{at}/{i}"),
                    depth + 1,
                );
            }
        }
    }

    fn object(
        &mut self,
        properties: impl IntoIterator<Item = (&'a String, &'a ReferenceOr<Box<Schema>>)>,
        required: &'a [String],
        from: &str,
        map: &serde_json::Map<String, Value>,
        at: &str,
        depth: usize,
    ) {
        for name in required {
            if !map.contains_key(name) {
                self.find(at, format!("{from}/required: `{name}` is missing"));
            }
        }
        for (name, schema) in properties {
            if let Some(v) = map.get(name) {
                self.boxed(
                    schema,
                    format!("{from}/properties/{}", escape_token(name)),
                    v,
                    format!("{at}/{}", escape_token(name)),
                    depth + 1,
                );
            }
        }
    }

    /// A schema of no single type: only what it does say is checked.
    fn untyped(&mut self, a: &'a AnySchema, from: &str, value: &Value, at: String, depth: usize) {
        if let Some(typ) = &a.typ {
            let fits = match typ.as_str() {
                "string" => value.is_string(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => true,
            };
            if !fits {
                return self.find(
                    &at,
                    format!("{from}/type: {} where {typ} is", kind_of(value)),
                );
            }
        }
        if !a.enumeration.is_empty() && !a.enumeration.contains(value) {
            self.find(
                &at,
                format!("{from}/enum: {value} is not one of its values"),
            );
        }
        if let Some(map) = value.as_object() {
            self.object(&a.properties, &a.required, from, map, &at, depth);
        }
        if let (Some(items), Some(schema)) = (value.as_array(), &a.items) {
            for (i, item) in items.iter().enumerate() {
                self.boxed(
                    schema,
                    format!("{from}/items"),
                    item,
                    format!("{at}/{i}"),
                    depth + 1,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use licensing_sdk::operations::Service;
    use serde_json::json;

    fn order() -> OpenAPI {
        licensing_spec::load(Service::Order.openapi()).unwrap()
    }

    /// The spec's own example of a reply.
    fn example(name: &str) -> Value {
        let raw = licensing_spec::raw(Service::Order.openapi()).unwrap();
        raw.pointer(&format!("/components/schemas/{name}/example"))
            .cloned()
            .unwrap()
    }

    #[test]
    fn a_documented_reply_conforms_and_each_departure_is_named() {
        let spec = order();
        let ok = example("ListVirtualAssetsReply");
        assert!(check(&spec, "ListVirtualAssetsReply", &ok).is_empty());
        let mut dropped = ok.clone();
        dropped["data"][0]
            .as_object_mut()
            .unwrap()
            .remove("assetNum");
        let findings = check(&spec, "ListVirtualAssetsReply", &dropped);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].at, "/data/0");
        assert_eq!(
            findings[0].rule,
            "#/components/schemas/VirtualAsset/required: `assetNum` is missing"
        );
        let mut retyped = ok.clone();
        retyped["data"][0]["keyChipType"] = json!(7);
        retyped["code"] = json!(true);
        retyped["data"][0]["locked"] = Value::Null;
        let findings = check(&spec, "ListVirtualAssetsReply", &retyped);
        let at: Vec<&str> = findings.iter().map(|f| f.at.as_str()).collect();
        assert_eq!(
            at,
            ["/code", "/data/0/keyChipType", "/data/0/locked"],
            "{findings:?}"
        );
        assert!(findings[0].rule.contains("oneOf"), "{findings:?}");
        assert!(findings[2].rule.contains("not nullable"), "{findings:?}");
    }

    #[test]
    fn findings_are_bounded_however_large_the_reply() {
        let spec = order();
        let many: Vec<Value> = (0..10_000).map(|_| json!({})).collect();
        let reply = json!({"code": 0, "message": "success", "data": many});
        assert_eq!(
            check(&spec, "ListVirtualAssetsReply", &reply).len(),
            MAX_FINDINGS
        );
        // Nesting far deeper than any schema ends at the schema's own depth.
        let mut deep = json!(1);
        for _ in 0..(MAX_DEPTH * 3) {
            deep = json!([deep]);
        }
        let reply = json!({"code": 0, "message": "success", "data": deep});
        assert!(!check(&spec, "ListVirtualAssetsReply", &reply).is_empty());
    }
}
