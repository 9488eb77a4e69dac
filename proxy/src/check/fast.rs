//! A reply read once against its compiled schema as it is parsed, building no JSON tree:
//! the common case, a reply that departs from nothing, costs no allocation per value. It
//! only ever answers "nothing departs"; anything it cannot settle that way (a departure,
//! a `oneOf` over objects or arrays, an `enum` of objects, a body that is not JSON) sends
//! the reply to the full check ([`super::reply`]), which finds and words every
//! departure. So the two cannot disagree on what is reported.

use std::{borrow::Cow, fmt};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use super::compiled::{Additional, Node, SchemaId, Schemas, Ty};
use super::scalar::{Scalar, visit_scalars};

/// The reply's top-level `code`, as far as the checks of `code` need it.
#[derive(Debug, Default, PartialEq)]
pub(crate) enum Code {
    #[default]
    Absent,
    Text(String),
    Zero,
    /// A number other than 0, or any other value.
    Other,
}

/// Whether `body` is a JSON object that schema `id` finds nothing wrong with, and its
/// top-level `code`; `None` when the full check must decide.
pub(crate) fn clean_object(schemas: &Schemas, id: SchemaId, body: &[u8]) -> Option<Code> {
    let mut verdict = Verdict {
        clean: true,
        code: Code::Absent,
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    let seed = Fast {
        schemas,
        id,
        verdict: &mut verdict,
        top: true,
    };
    seed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    verdict.clean.then_some(verdict.code)
}

struct Verdict {
    clean: bool,
    code: Code,
}

struct Fast<'a, 's> {
    schemas: &'s Schemas,
    id: SchemaId,
    verdict: &'a mut Verdict,
    /// The reply as a whole: it must be an object, and its `code` is noted.
    top: bool,
}

impl Fast<'_, '_> {
    fn node(&self) -> &Node {
        &self.schemas.nodes[self.id]
    }

    fn scalar(self, value: Scalar<'_>) {
        if self.top || !scalar_clean(self.schemas, self.id, &value) {
            self.verdict.clean = false;
        }
    }

    /// Whether a container may be walked here without deciding between `oneOf` branches
    /// or comparing it with `enum` members.
    fn container(&mut self, ty: Ty) -> bool {
        let node = self.node();
        let fits = node.one_of.is_none()
            && node.members.is_none()
            && matches!(node.ty, None | Some(Ty::Other)) | (node.ty == Some(ty));
        if !fits || (self.top && ty != Ty::Object) {
            self.verdict.clean = false;
        }
        fits
    }
}

impl Scalar<'_> {
    fn value(&self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Number(n) => Value::Number(n.clone()),
            Scalar::Text(t) => Value::String((*t).to_string()),
        }
    }
}

/// What [`super::walk::Walker`] decides for a scalar, without its findings.
fn scalar_clean(schemas: &Schemas, id: SchemaId, value: &Scalar<'_>) -> bool {
    let node = &schemas.nodes[id];
    if let Some(one_of) = &node.one_of {
        return one_of.discriminator.is_none()
            && one_of
                .branches
                .iter()
                .any(|b| scalar_clean(schemas, *b, value));
    }
    if let Scalar::Null = value {
        return node.ty.is_none() || node.nullable;
    }
    if !value.fits(node.ty) {
        return false;
    }
    if let Some((members, _)) = &node.members {
        let value = value.value();
        if !members.iter().any(|m| super::schema::same(m, &value)) {
            return false;
        }
    }
    match value {
        Scalar::Text(text) => {
            let chars = || text.chars().count() as u64;
            !(node.min_length.is_some_and(|min| chars() < min)
                || node.max_length.is_some_and(|max| chars() > max)
                || node
                    .pattern
                    .as_ref()
                    .and_then(|(_, re)| re.as_ref())
                    .is_some_and(|re| re.find(text).is_none()))
        }
        Scalar::Number(n) => {
            let f = n.as_f64().unwrap_or_default();
            !((node.int32 && n.as_i64().is_none_or(|i| i32::try_from(i).is_err()))
                || node.minimum.is_some_and(|min| f < min)
                || node.maximum.is_some_and(|max| f > max))
        }
        _ => true,
    }
}

impl<'de> DeserializeSeed<'de> for Fast<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Fast<'_, '_> {
    type Value = ();

    visit_scalars!();

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        match Number::from_f64(v) {
            Some(n) => self.scalar(Scalar::Number(n)),
            None => self.verdict.clean = false,
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        if !self.container(Ty::Array) {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let (schemas, id) = (self.schemas, self.id);
        let node = &schemas.nodes[id];
        let mut n = 0u64;
        loop {
            let more = match node.items {
                Some(item) => seq
                    .next_element_seed(Fast {
                        schemas,
                        id: item,
                        verdict: self.verdict,
                        top: false,
                    })?
                    .is_some(),
                None => seq.next_element::<IgnoredAny>()?.is_some(),
            };
            if !more {
                break;
            }
            n += 1;
        }
        if node.min_items.is_some_and(|min| n < min) || node.max_items.is_some_and(|max| n > max) {
            self.verdict.clean = false;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        if !self.container(Ty::Object) {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let (schemas, id, top) = (self.schemas, self.id, self.top);
        let node = &schemas.nodes[id];
        // Which required names were seen: one bit each (a longer list: the full check).
        if node.required.len() > 64 {
            self.verdict.clean = false;
        }
        let mut seen = 0u64;
        while let Some(key) = map.next_key_seed(Key)? {
            if let Some(i) = node.required.iter().position(|r| *r == *key) {
                seen |= 1 << (i % 64);
            }
            if top && key == "code" {
                let code: Value = map.next_value()?;
                self.verdict.code = match &code {
                    Value::String(text) => Code::Text(text.clone()),
                    Value::Number(n) if n.as_i64() == Some(0) => Code::Zero,
                    _ => Code::Other,
                };
                let sub = node.properties.as_ref().and_then(|p| p.get(&*key));
                let clean = match (sub, &node.additional) {
                    (Some(sub), _) | (None, Additional::Schema(sub)) => {
                        code_clean(schemas, *sub, &code)
                    }
                    (None, Additional::Forbidden(_)) => false,
                    (None, Additional::Any) => true,
                };
                if !clean {
                    self.verdict.clean = false;
                }
                continue;
            }
            let sub = match node.properties.as_ref().and_then(|p| p.get(&*key)) {
                Some(sub) => Some(*sub),
                None => match &node.additional {
                    Additional::Schema(sub) => Some(*sub),
                    Additional::Forbidden(_) => {
                        self.verdict.clean = false;
                        None
                    }
                    Additional::Any => None,
                },
            };
            match sub {
                Some(sub) => map.next_value_seed(Fast {
                    schemas,
                    id: sub,
                    verdict: self.verdict,
                    top: false,
                })?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let wanted = match node.required.len() {
            64.. => u64::MAX,
            n => (1u64 << n) - 1,
        };
        if seen != wanted {
            self.verdict.clean = false;
        }
        Ok(())
    }
}

/// The envelope's `code` against its schema (a scalar, or the full check decides).
fn code_clean(schemas: &Schemas, id: SchemaId, code: &Value) -> bool {
    let scalar = match code {
        Value::Null => Scalar::Null,
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Number(n) => Scalar::Number(n.clone()),
        Value::String(s) => Scalar::Text(s),
        _ => return false,
    };
    scalar_clean(schemas, id, &scalar)
}

/// An object's key, borrowed from the input when it holds no escape.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{compiled::Compiler, walk::Walker};
    use serde_json::json;

    /// The fast read says "clean" exactly when the full check finds nothing.
    #[test]
    fn it_agrees_with_the_full_check() {
        let doc = json!({"components": {"schemas": {
            "Code": {"oneOf": [{"type": "integer", "format": "int32"}, {"type": "string"}]},
            "Reply": {"type": "object", "required": ["code", "data"], "properties": {
                "code": {"$ref": "#/components/schemas/Code"},
                "message": {"type": "string"},
                "data": {"type": "object", "additionalProperties": false,
                    "required": ["list"], "properties": {
                    "list": {"type": "array", "maxItems": 2, "items": {"$ref": "#/components/schemas/Item"}},
                    "total": {"type": "integer", "minimum": 0}
                }}
            }},
            "Item": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string", "pattern": "^M-[0-9]+$"},
                "status": {"type": "integer", "enum": [1, 2]},
                "note": {"type": "string", "nullable": true, "maxLength": 3},
                "tags": {"type": "array", "items": {"type": "string"}},
                "kind": {"oneOf": [{"type": "object"}, {"type": "string"}]}
            }}
        }}});
        let components = serde_json::from_value(doc["components"].clone()).unwrap();
        let reply = serde_json::from_value(json!({"$ref": "#/components/schemas/Reply"})).unwrap();
        let mut compiler = Compiler::default();
        let id = compiler.compile(Some(&components), 0, &reply);
        let schemas = compiler.finish();
        let cases = [
            (json!({"code": 0, "data": {"list": []}}), true),
            (
                json!({"code": "60002", "message": "x", "data": {"list": [{"id": "M-1", "status": 2, "note": null, "tags": ["a"], "kind": "k"}], "total": 1}}),
                true,
            ),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1", "status\u{0}": 1}]}}),
                true,
            ),
            (json!({"code": 0, "data": {"list": [{"id": "X-1"}]}}), false),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1", "status": 7}]}}),
                false,
            ),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1", "status": 1.5}]}}),
                false,
            ),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1", "note": "long"}]}}),
                false,
            ),
            (json!({"code": 0, "data": {"list": [{"status": 1}]}}), false),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1", "tags": [1]}]}}),
                false,
            ),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1", "kind": {"a": 1}}]}}),
                true,
            ),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1", "kind": 3}]}}),
                false,
            ),
            (
                json!({"code": 0, "data": {"list": [{"id": "M-1"}, {"id": "M-2"}, {"id": "M-3"}]}}),
                false,
            ),
            (json!({"code": 0, "data": {"list": [], "extra": 1}}), false),
            (json!({"code": 0, "data": {"list": [], "total": -1}}), false),
            (json!({"code": 0, "data": null}), false),
            (json!({"code": true, "data": {"list": []}}), false),
            (
                json!({"code": 5_000_000_000u64, "data": {"list": []}}),
                false,
            ),
            (json!({"data": {"list": []}}), false),
            (json!([{"code": 0}]), false),
            (json!("text"), false),
        ];
        for (value, clean) in cases {
            let mut walker = Walker::new(&schemas);
            walker.check_value(id, &value, &mut String::new());
            let walked = walker.found.is_empty() && value.is_object();
            let fast = clean_object(&schemas, id, value.to_string().as_bytes()).is_some();
            // Where the fast read cannot settle a case it leaves it to the full check.
            assert!(
                !fast || walked,
                "{value}: fast says clean, the full check does not"
            );
            assert_eq!(walked, clean, "{value}: the full check");
            if clean && !value.to_string().contains("\"kind\":{") {
                assert!(fast, "{value}: a clean reply read the fast way");
            }
        }
        assert_eq!(
            clean_object(&schemas, id, br#"{"code":"13004","data":{"list":[]}}"#),
            Some(Code::Text("13004".into()))
        );
        assert_eq!(
            clean_object(&schemas, id, br#"{"code":0,"data":{"list":[]}} x"#),
            None
        );
        assert_eq!(clean_object(&schemas, id, b"{\"code\":0,"), None);
    }
}
