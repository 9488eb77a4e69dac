//! One value read against its schema as the parser meets it: scalars checked at once,
//! lists and objects walked item by item, a value whose schema has a `oneOf` or an
//! `enum` taken as its text for [`Walker::raw`].

use std::borrow::Cow;

use serde::de::{self, Deserialize, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, value::RawValue};

use super::{MAX_DEPTH, Scalar, Top, Walker, depth_error};
use crate::check::scalar::visit_scalars;
use crate::{
    check::{
        compiled::{Additional, SchemaId, Ty},
        schema::{Finding, itoa_buffer, quote_out, quote_raw, quoted, segment},
    },
    conformance::json::{self, emit_map, emit_seq},
};

/// One value to check: its schema and where it is.
pub(super) struct Seed<'w, 's> {
    pub(super) w: &'w mut Walker<'s>,
    pub(super) id: SchemaId,
    pub(super) at: &'w mut String,
    /// Its `enum` was compared already.
    pub(super) members_done: bool,
    /// The reply's top level, whose `code` is read.
    pub(super) top: Option<&'w mut Top>,
}

impl<'w, 's> Seed<'w, 's> {
    pub(super) fn new(w: &'w mut Walker<'s>, id: SchemaId, at: &'w mut String) -> Self {
        Self {
            w,
            id,
            at,
            members_done: false,
            top: None,
        }
    }

    fn scalar(self, value: Scalar<'_>) {
        self.w.scalar(self.id, &value, self.at, !self.members_done);
    }

    /// Where the field `key` of this object is checked against.
    fn field_schema(&self, key: &str) -> Result<Option<SchemaId>, String> {
        let node = &self.w.schemas.nodes[self.id];
        match node.properties.as_ref().and_then(|p| p.get(key)) {
            Some(sub) => Ok(Some(*sub)),
            None => match &node.additional {
                Additional::Schema(sub) => Ok(Some(*sub)),
                Additional::Forbidden(expected) => Err(expected.clone()),
                Additional::Any => Ok(None),
            },
        }
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.w.full() {
            IgnoredAny::deserialize(deserializer)?;
            return Ok(());
        }
        let node = &self.w.schemas.nodes[self.id];
        if node.one_of.is_some() || (node.members.is_some() && !self.members_done) {
            let raw = <&RawValue>::deserialize(deserializer)?;
            return self
                .w
                .raw(self.id, raw.get(), self.at)
                .map_err(de::Error::custom);
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = ();

    visit_scalars!();

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let n = Number::from_f64(v).ok_or_else(|| E::custom("a number JSON cannot hold"))?;
        self.scalar(Scalar::Number(n));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let schemas = self.w.schemas;
        let node = &schemas.nodes[self.id];
        if !matches!(node.ty, None | Some(Ty::Other) | Some(Ty::Array)) {
            let mut out = quote_out();
            emit_seq(&mut out, seq)?;
            let actual = quoted(self.at, out);
            self.w.push(self.at, "type", node.expected.clone(), actual);
            return Ok(());
        }
        if self.w.depth >= MAX_DEPTH {
            return Err(depth_error());
        }
        self.w.depth += 1;
        let start = self.w.found.len();
        let mut index = itoa_buffer();
        let mut n = 0u64;
        loop {
            if self.w.full() {
                // Nothing more is reported: the rest is only counted.
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                break;
            }
            let len = self.at.len();
            self.at.push('/');
            self.at.push_str(index.format(n as usize));
            let more = match node.items {
                Some(item) => seq
                    .next_element_seed(Seed::new(&mut *self.w, item, &mut *self.at))?
                    .is_some(),
                None => seq.next_element::<IgnoredAny>()?.is_some(),
            };
            self.at.truncate(len);
            if !more {
                break;
            }
            n += 1;
        }
        self.w.depth -= 1;
        let mut counted = Vec::new();
        if let Some(min) = node.min_items
            && n < min
        {
            counted.push((format!("at least {min} items"), format!("{n} items")));
        }
        if let Some(max) = node.max_items
            && n > max
        {
            counted.push((format!("at most {max} items"), format!("{n} items")));
        }
        let counted = counted
            .into_iter()
            .map(|(expected, actual)| Finding {
                pointer: self.at.clone(),
                rule: "constraint",
                expected,
                actual,
            })
            .collect();
        self.w.insert(start, counted);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let schemas = self.w.schemas;
        let node = &schemas.nodes[self.id];
        if !matches!(node.ty, None | Some(Ty::Other) | Some(Ty::Object)) {
            let mut out = quote_out();
            emit_map(&mut out, map)?;
            let actual = quoted(self.at, out);
            self.w.push(self.at, "type", node.expected.clone(), actual);
            return Ok(());
        }
        if self.w.depth >= MAX_DEPTH {
            return Err(depth_error());
        }
        self.w.depth += 1;
        let start = self.w.found.len();
        let mut seen = vec![false; node.required.len()];
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if let Some(i) = node.required.iter().position(|r| *r == *key) {
                seen[i] = true;
            }
            let len = self.at.len();
            self.at.push('/');
            self.at.push_str(&segment(&key));
            let schema = self.field_schema(&key);
            if let Some(top) = self.top.as_deref_mut()
                && key == "code"
            {
                // The envelope's `code`: checked as any field, and kept for the checks of
                // the envelope.
                let raw = map.next_value::<&'de RawValue>()?.get();
                top.code = match raw.as_bytes().first() {
                    Some(b'"' | b'-' | b'0'..=b'9') => serde_json::from_str(raw).ok(),
                    _ => None,
                };
                match schema {
                    Ok(Some(sub)) if !self.w.full() => {
                        let at = &mut *self.at;
                        self.w
                            .check_raw(sub, raw, at, false)
                            .map_err(de::Error::custom)?;
                    }
                    Err(expected) => {
                        let actual = quote_raw(self.at, raw);
                        self.w
                            .push(self.at, "additional-property", expected, actual);
                    }
                    _ => {}
                }
            } else {
                match schema {
                    Ok(Some(sub)) => {
                        map.next_value_seed(Seed::new(&mut *self.w, sub, &mut *self.at))?;
                    }
                    Ok(None) => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    Err(_) if self.w.full() => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    Err(expected) => {
                        let mut out = quote_out();
                        map.next_value_seed(json::Emit { out: &mut out })?;
                        let actual = quoted(self.at, out);
                        self.w
                            .push(self.at, "additional-property", expected, actual);
                    }
                }
            }
            self.at.truncate(len);
        }
        self.w.depth -= 1;
        let missing = node
            .required
            .iter()
            .zip(seen)
            .filter(|(_, seen)| !seen)
            .map(|(name, _)| Finding {
                pointer: format!("{}/{}", self.at, segment(name)),
                rule: "required",
                expected: "present".into(),
                actual: "absent".into(),
            })
            .collect();
        self.w.insert(start, missing);
        Ok(())
    }
}
