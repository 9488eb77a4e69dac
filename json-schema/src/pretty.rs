//! Pretty JSON with a key order that does not depend on how `serde_json::Map` is built
//! (sorted, or in insertion order when some crate in the build enables serde_json's
//! `preserve_order`), so that the files and `--check` are stable.
//!
//! In a schema object the keywords come in a reading order (`$schema`, `$id`, `title`,
//! `description`, `type`, ..., `$defs` last); property names, `$defs` names and the keys of
//! instance data (examples, defaults) are sorted.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// What a JSON value is, which decides how its keys are ordered.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    /// A JSON Schema.
    Schema,
    /// A map from names to schemas (`properties`, `$defs`).
    SchemaMap,
    /// A list of schemas (`oneOf`, `anyOf`, `allOf`, `prefixItems`).
    SchemaList,
    /// Anything else: instance data, extension values.
    Data,
}

/// The order of the keywords of a schema object; unlisted keys (extensions) follow them,
/// sorted, and `$defs` comes last.
const KEYWORD_ORDER: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "title",
    "description",
    "type",
    "format",
    "const",
    "enum",
    "x-enum-varnames",
    "x-enum-descriptions",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "default",
    "readOnly",
    "writeOnly",
    "deprecated",
    "examples",
];

/// `value` as pretty-printed JSON (two-space indent) with a trailing newline.
pub fn to_pretty(value: &Value, ctx: Ctx) -> String {
    let mut text = serde_json::to_string_pretty(&Ordered { value, ctx })
        .expect("a serde_json::Value always serializes");
    text.push('\n');
    text
}

struct Ordered<'a> {
    value: &'a Value,
    ctx: Ctx,
}

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|(a, _), (b, _)| {
                    rank(self.ctx, a)
                        .cmp(&rank(self.ctx, b))
                        .then_with(|| a.cmp(b))
                });
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    let ctx = child_ctx(self.ctx, key);
                    out.serialize_entry(key, &Ordered { value, ctx })?;
                }
                out.end()
            }
            Value::Array(items) => {
                let ctx = match self.ctx {
                    Ctx::SchemaList => Ctx::Schema,
                    _ => Ctx::Data,
                };
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for value in items {
                    out.serialize_element(&Ordered { value, ctx })?;
                }
                out.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

/// Sort rank of a key: keywords by `KEYWORD_ORDER`, then other keys, then `$defs`.
fn rank(ctx: Ctx, key: &str) -> usize {
    if ctx != Ctx::Schema {
        return 0;
    }
    match KEYWORD_ORDER.iter().position(|k| *k == key) {
        Some(position) => position,
        None if key == "$defs" => KEYWORD_ORDER.len() + 1,
        None => KEYWORD_ORDER.len(),
    }
}

fn child_ctx(ctx: Ctx, key: &str) -> Ctx {
    match ctx {
        Ctx::SchemaMap => Ctx::Schema,
        Ctx::Schema => match key {
            "properties" | "$defs" | "patternProperties" | "dependentSchemas" => Ctx::SchemaMap,
            "oneOf" | "anyOf" | "allOf" | "prefixItems" => Ctx::SchemaList,
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "unevaluatedItems"
            | "unevaluatedProperties" => Ctx::Schema,
            _ => Ctx::Data,
        },
        Ctx::SchemaList | Ctx::Data => Ctx::Data,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    #[test]
    fn keywords_in_reading_order_names_and_data_sorted() {
        // Built in the reverse of the expected order, whatever `Map` keeps.
        let mut example = Map::new();
        example.insert(
            "type".into(),
            json!("data keys are sorted, keywords or not"),
        );
        example.insert("b".into(), json!(1));
        let mut properties = Map::new();
        properties.insert("zeta".into(), json!({"type": "string", "description": "z"}));
        properties.insert("alpha".into(), json!({}));
        let mut schema = Map::new();
        schema.insert("$defs".into(), json!({"D": {"type": "null"}}));
        schema.insert("x-extra".into(), json!(true));
        schema.insert("examples".into(), json!([example]));
        schema.insert("properties".into(), properties.into());
        schema.insert("type".into(), json!("object"));
        schema.insert("$schema".into(), json!("s"));

        let expected = r#"{
  "$schema": "s",
  "type": "object",
  "properties": {
    "alpha": {},
    "zeta": {
      "description": "z",
      "type": "string"
    }
  },
  "examples": [
    {
      "b": 1,
      "type": "data keys are sorted, keywords or not"
    }
  ],
  "x-extra": true,
  "$defs": {
    "D": {
      "type": "null"
    }
  }
}
"#;
        assert_eq!(to_pretty(&schema.into(), Ctx::Schema), expected);
    }
}
