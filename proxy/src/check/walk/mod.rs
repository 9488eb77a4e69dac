//! A JSON document checked against an OpenAPI 3.0 schema of the documents (compiled once,
//! see [`super::compiled`]) as it is parsed, following the schema as written (`$ref`,
//! `type`, `nullable`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
//! `oneOf` with or without a `discriminator`, lengths, bounds, `pattern`, `int32`): each
//! departure found once, at the deepest place it shows, as a JSON Pointer with a rule
//! name ([`Finding`]).
//!
//! No tree of the document is built: a `serde_json::Value` holds up to 30 times the text
//! it was parsed from (a 30 MiB list of numbers took a gigabyte), while this holds the
//! pointer, the findings (at most [`MAX_FINDINGS`]) and, where a value must be read twice
//! (a `oneOf` tries each branch, an `enum` compares), that value's text, borrowed from the
//! body. Findings come in the document's order; an object's missing `required` fields and
//! a list's item counts come before what is found inside it.

use std::{borrow::Cow, fmt};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, value::RawValue};

use super::{
    compiled::{OneOf, SchemaId, Schemas, Ty},
    scalar::Scalar,
    schema::{Finding, MAX_FINDINGS, quote, quote_raw, quote_str, same, segment},
};
use crate::conformance::json::{self, JsonOut};

mod seed;

use seed::Seed;

/// Nesting read at most, across the values read twice (as `serde_json`'s own limit).
const MAX_DEPTH: usize = 128;

/// Checks documents against compiled schemas.
pub(crate) struct Walker<'s> {
    schemas: &'s Schemas,
    pub found: Vec<Finding>,
    depth: usize,
}

/// The top level of a reply as the envelope's checks read it: its `code` when that is a
/// string or a number.
#[derive(Debug, Default)]
pub(crate) struct Top {
    pub code: Option<Value>,
}

impl Scalar<'_> {
    fn quote(&self, at: &str) -> String {
        match self {
            Scalar::Null => quote(at, &Value::Null),
            Scalar::Bool(b) => quote(at, &Value::Bool(*b)),
            Scalar::Number(n) => quote(at, &Value::Number(n.clone())),
            Scalar::Text(t) => quote_str(at, t),
        }
    }

    /// Whether it is one of an `enum`'s members (numbers by value, as [`same`] compares),
    /// without copying it into a value.
    fn is_one_of(&self, members: &[Value]) -> bool {
        members.iter().any(|m| match self {
            Scalar::Null => m.is_null(),
            Scalar::Bool(b) => m.as_bool() == Some(*b),
            Scalar::Number(n) => same(m, &Value::Number(n.clone())),
            Scalar::Text(t) => m.as_str() == Some(*t),
        })
    }
}

fn depth_error<E: de::Error>() -> E {
    E::custom("recursion limit exceeded")
}

impl<'s> Walker<'s> {
    pub fn new(schemas: &'s Schemas) -> Self {
        Self {
            schemas,
            found: Vec::new(),
            depth: 0,
        }
    }

    fn full(&self) -> bool {
        self.found.len() >= MAX_FINDINGS
    }

    fn push(&mut self, at: &str, rule: &'static str, expected: String, actual: String) {
        if !self.full() {
            self.found.push(Finding {
                pointer: at.to_string(),
                rule,
                expected,
                actual,
            });
        }
    }

    /// Findings made after those from `start` on but that come before them (an object's
    /// missing fields, a list's count): put in their place, within the bound.
    fn insert(&mut self, start: usize, before: Vec<Finding>) {
        if !before.is_empty() && start < MAX_FINDINGS {
            self.found.splice(start..start, before);
            self.found.truncate(MAX_FINDINGS);
        }
    }

    /// Checks the JSON document `body` (found at pointer `at`) against schema `id`. An
    /// error when it is not one JSON document; the findings are then to be dropped.
    pub fn check_json(
        &mut self,
        id: SchemaId,
        body: &[u8],
        at: &mut String,
    ) -> serde_json::Result<()> {
        let mut de = serde_json::Deserializer::from_slice(body);
        Seed::new(self, id, at).deserialize(&mut de)?;
        de.end()
    }

    /// Checks a reply's body, a JSON object, against schema `id`, and reads its `code`.
    pub fn check_reply(&mut self, id: SchemaId, body: &[u8]) -> serde_json::Result<Top> {
        let node = &self.schemas.nodes[id];
        if node.one_of.is_some() || node.members.is_some() {
            // Read as its text first: its fields are not walked here.
            let mut at = String::new();
            self.check_json(id, body, &mut at)?;
            return Ok(Top {
                code: top_code(body),
            });
        }
        let mut top = Top::default();
        let mut at = String::new();
        let mut de = serde_json::Deserializer::from_slice(body);
        Seed {
            top: Some(&mut top),
            ..Seed::new(self, id, &mut at)
        }
        .deserialize(&mut de)?;
        de.end()?;
        Ok(top)
    }

    /// Checks a value already read (a parameter's, a test's).
    pub fn check_value(&mut self, id: SchemaId, value: &Value, at: &mut String) {
        // A scalar (nearly every parameter) is checked as the parser would meet it, without
        // writing it out and reading it again; but where the schema reads values as their
        // text (a `oneOf`, an `enum`).
        let node = &self.schemas.nodes[id];
        if node.one_of.is_none() && node.members.is_none() {
            let scalar = match value {
                Value::Null => Some(Scalar::Null),
                Value::Bool(b) => Some(Scalar::Bool(*b)),
                Value::Number(n) => Some(Scalar::Number(n.clone())),
                Value::String(text) => Some(Scalar::Text(text)),
                Value::Array(_) | Value::Object(_) => None,
            };
            if let Some(scalar) = scalar {
                self.scalar(id, &scalar, at, true);
                return;
            }
        }
        // Its text is JSON: it parses.
        let _ = self.check_json(id, value.to_string().as_bytes(), at);
    }

    /// [`Self::check_value`] as it was before its scalar path: the value written out and
    /// parsed again, for the test that the two agree.
    #[cfg(test)]
    pub fn check_value_as_text(&mut self, id: SchemaId, value: &Value, at: &mut String) {
        let _ = self.check_json(id, value.to_string().as_bytes(), at);
    }

    /// Checks a value read as its text (`raw`, one valid JSON value): once more, from a
    /// parser of its own.
    fn check_raw(
        &mut self,
        id: SchemaId,
        raw: &str,
        at: &mut String,
        members_done: bool,
    ) -> serde_json::Result<()> {
        let mut de = serde_json::Deserializer::from_str(raw);
        Seed {
            members_done,
            ..Seed::new(self, id, at)
        }
        .deserialize(&mut de)
    }

    /// A value whose schema has a `oneOf`, or an `enum` not yet compared, read as its text.
    fn raw(&mut self, id: SchemaId, raw: &str, at: &mut String) -> serde_json::Result<()> {
        // Its first character says what it is (the parser's raw text starts at the value,
        // but nothing here relies on it).
        let raw = raw.trim_start();
        let schemas = self.schemas;
        let node = &schemas.nodes[id];
        if let Some(one_of) = &node.one_of {
            return self.one_of(one_of, raw, at);
        }
        let Some((members, expected)) = &node.members else {
            return self.check_raw(id, raw, at, true);
        };
        match raw.as_bytes().first() {
            Some(b'{' | b'[') => {}
            // A scalar, read as a value: a string is copied once (as the parser copies one
            // that holds escapes), a number or a literal is small.
            _ => {
                let value: Value = serde_json::from_str(raw)?;
                let scalar = match &value {
                    Value::Null => Scalar::Null,
                    Value::Bool(b) => Scalar::Bool(*b),
                    Value::Number(n) => Scalar::Number(n.clone()),
                    Value::String(s) => Scalar::Text(s),
                    _ => unreachable!("the text starts as a scalar's"),
                };
                self.scalar(id, &scalar, at, true);
                return Ok(());
            }
        }
        let object = raw.starts_with('{');
        let fits = match node.ty {
            None | Some(Ty::Other) => true,
            Some(Ty::Object) => object,
            Some(Ty::Array) => !object,
            _ => false,
        };
        if !fits {
            let actual = quote_raw(at, raw);
            self.push(at, "type", node.expected.clone(), actual);
            return Ok(());
        }
        // A member is short: a value whose compact text is longer is none of them, and is
        // not read as a value.
        let longest = members.iter().map(|m| m.to_string().len()).max();
        let mut out = JsonOut::new(longest.unwrap_or(0) + 16);
        json::rewrite(raw.as_bytes(), &mut out)?;
        let (text, cut) = out.finish();
        let member = !cut
            && serde_json::from_str::<Value>(&text)
                .is_ok_and(|value| members.iter().any(|m| same(m, &value)));
        if !member {
            let actual = quote_raw(at, raw);
            self.push(at, "enum", expected.clone(), actual);
            return Ok(());
        }
        self.check_raw(id, raw, at, true)
    }

    fn one_of(&mut self, one_of: &OneOf, raw: &str, at: &mut String) -> serde_json::Result<()> {
        if let Some(discriminator) = &one_of.discriminator {
            if !raw.starts_with('{') {
                let actual = quote_raw(at, raw);
                self.push(at, "type", "object".to_string(), actual);
                return Ok(());
            }
            let tag = field(raw, &discriminator.property)?;
            let len = at.len();
            at.push('/');
            at.push_str(&segment(&discriminator.property));
            match (tag, &discriminator.mapping) {
                (None, _) => {
                    let p = at.clone();
                    self.push(&p, "required", "present".into(), "absent".into());
                }
                (Some(tag), Some((mapping, expected))) => {
                    let name = serde_json::from_str::<String>(tag).ok();
                    match name.and_then(|t| mapping.get(&t)) {
                        Some(branch) => {
                            at.truncate(len);
                            self.check_raw(*branch, raw, at, false)?;
                        }
                        None => {
                            let p = at.clone();
                            let actual = quote_raw(&p, tag);
                            self.push(&p, "enum", expected.clone(), actual);
                        }
                    }
                }
                (Some(_), None) => {}
            }
            at.truncate(len);
            return Ok(());
        }
        let mut best: Option<Vec<Finding>> = None;
        let mut all_type = true;
        for branch in &one_of.branches {
            let mut inner = Walker {
                schemas: self.schemas,
                found: Vec::new(),
                depth: self.depth,
            };
            let mut here = at.clone();
            inner.check_raw(*branch, raw, &mut here, false)?;
            if inner.found.is_empty() {
                return Ok(());
            }
            all_type &= inner.found.len() == 1
                && inner.found[0].rule == "type"
                && inner.found[0].pointer == *at;
            if best.as_ref().is_none_or(|b| inner.found.len() < b.len()) {
                best = Some(inner.found);
            }
        }
        if all_type {
            let actual = quote_raw(at, raw);
            self.push(at, "type", one_of.names.clone(), actual);
        } else {
            for finding in best.unwrap_or_default() {
                if !self.full() {
                    self.found.push(finding);
                }
            }
        }
        Ok(())
    }

    /// A scalar against a schema without `oneOf`; its `enum` compared unless `members`
    /// is false (it was).
    fn scalar(&mut self, id: SchemaId, value: &Scalar<'_>, at: &str, members: bool) {
        let node = &self.schemas.nodes[id];
        if let Scalar::Null = value {
            if node.ty.is_some() && !node.nullable {
                self.push(at, "type", node.expected.clone(), "null".to_string());
            }
            return;
        }
        if !value.fits(node.ty) {
            let actual = value.quote(at);
            self.push(at, "type", node.expected.clone(), actual);
            return;
        }
        if members
            && let Some((values, expected)) = &node.members
            && !value.is_one_of(values)
        {
            let actual = value.quote(at);
            self.push(at, "enum", expected.clone(), actual);
            return;
        }
        match value {
            Scalar::Text(text) => {
                let chars = || text.chars().count() as u64;
                let rule = if let Some(min) = node.min_length
                    && chars() < min
                {
                    Some(format!("at least {min} characters"))
                } else if let Some(max) = node.max_length
                    && chars() > max
                {
                    Some(format!("at most {max} characters"))
                } else if let Some((pattern, compiled)) = &node.pattern
                    && compiled.as_ref().is_some_and(|re| re.find(text).is_none())
                {
                    Some(format!("matches {pattern}"))
                } else {
                    None
                };
                if let Some(expected) = rule {
                    let actual = value.quote(at);
                    self.push(at, "constraint", expected, actual);
                }
            }
            Scalar::Number(n) => {
                let f = n.as_f64().unwrap_or_default();
                let rule = if node.int32 && n.as_i64().is_none_or(|i| i32::try_from(i).is_err()) {
                    Some("a 32-bit integer (int32)".to_string())
                } else if let Some(min) = node.minimum
                    && f < min
                {
                    Some(format!("at least {min}"))
                } else if let Some(max) = node.maximum
                    && f > max
                {
                    Some(format!("at most {max}"))
                } else {
                    None
                };
                if let Some(expected) = rule {
                    let actual = value.quote(at);
                    self.push(at, "constraint", expected, actual);
                }
            }
            _ => {}
        }
    }
}

/// The top-level `code` of a JSON object when it is a string or a number, read without
/// reading anything else as a value; `None` for anything else.
pub(crate) fn top_code(body: &[u8]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let raw = de::Deserializer::deserialize_map(&mut de, Find("code")).ok()?;
    de.end().ok()?;
    let raw = raw?;
    match raw.as_bytes().first() {
        Some(b'"' | b'-' | b'0'..=b'9') => serde_json::from_str(raw).ok(),
        _ => None,
    }
}

/// Whether a body is a JSON object whose top-level `code` is a string (a business error),
/// reading nothing of it as a value.
pub(crate) fn code_is_text(body: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(body);
    let Ok(raw) = de::Deserializer::deserialize_map(&mut de, Find("code")) else {
        return false;
    };
    de.end().is_ok() && raw.is_some_and(|raw| raw.starts_with('"'))
}

/// Finds the text of the last value of one field of an object.
struct Find<'n>(&'n str);

impl<'de> Visitor<'de> for Find<'_> {
    type Value = Option<&'de str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == self.0 {
                found = Some(map.next_value::<&'de RawValue>()?.get());
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// The text of the last value of field `name` of the object `raw` (as a parsed tree keeps
/// the last of a repeated field), reading nothing else as a value.
fn field<'r>(raw: &'r str, name: &str) -> serde_json::Result<Option<&'r str>> {
    let mut de = serde_json::Deserializer::from_str(raw);
    de::Deserializer::deserialize_map(&mut de, Find(name))
}
