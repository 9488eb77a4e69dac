//! The translation of one component schema, keyword by keyword (see the crate's
//! documentation for what changes on the way).

mod discriminator;
mod keywords;

use std::collections::BTreeSet;

use anyhow::{Context, Result, anyhow, bail};
use licensing_spec::openapiv3::{AnySchema, ReferenceOr, Schema as OaSchema, SchemaKind, Type};
use schemars::Schema;
use serde_json::{Map, Value, json};

use crate::write::{
    Bound, KNOWN_KEYWORDS, child, make_nullable, number, numeric_keywords, set, set_enum,
    set_format, string_keywords,
};
use crate::{Document, escape};
use keywords::{ArrayKeywords, ObjectKeywords};

/// A component schema translated to JSON Schema.
pub struct Converted {
    pub schema: Schema,
    /// The other component schemas it refers to directly (never the export root).
    pub refs: BTreeSet<String>,
}

/// Translates the component schemas of one spec for the file of one exported schema.
pub struct Converter<'a> {
    pub(crate) doc: Document<'a>,
    /// The component whose file is being written: references to it become `#`.
    root: &'a str,
}

/// A schema position: a reference or an inline schema.
#[derive(Clone, Copy)]
pub(crate) enum Node<'s> {
    Ref(&'s str),
    Item(&'s OaSchema),
}

impl<'s> From<&'s ReferenceOr<OaSchema>> for Node<'s> {
    fn from(value: &'s ReferenceOr<OaSchema>) -> Self {
        match value {
            ReferenceOr::Reference { reference } => Node::Ref(reference),
            ReferenceOr::Item(schema) => Node::Item(schema),
        }
    }
}

impl<'s> From<&'s ReferenceOr<Box<OaSchema>>> for Node<'s> {
    fn from(value: &'s ReferenceOr<Box<OaSchema>>) -> Self {
        match value {
            ReferenceOr::Reference { reference } => Node::Ref(reference),
            ReferenceOr::Item(schema) => Node::Item(schema),
        }
    }
}

impl<'a> Converter<'a> {
    pub fn new(doc: Document<'a>, root: &'a str) -> Self {
        Converter { doc, root }
    }

    /// Translates the component schema `name`, titled with its name.
    pub fn component(&self, name: &str) -> Result<Converted> {
        let (typed, raw) = self.doc.schema(name)?;
        let at = format!("/components/schemas/{}", escape(name));
        let mut refs = BTreeSet::new();
        let mut schema = self.convert(typed.into(), raw, &at, &mut refs)?;
        // The title names the generated type in TypeScript and Python: it must be the
        // component name, which is also the file name.
        if let Some(title) = schema.get("title").and_then(Value::as_str)
            && title != name
        {
            bail!(
                "{}: title `{title}` differs from the component name; remove it or make them equal",
                self.doc.location(&at)
            );
        }
        schema.insert("title".into(), name.into());
        Ok(Converted { schema, refs })
    }

    /// The schema at JSON Pointer `pointer` of the document (an operation's parameter,
    /// written inline), translated as a component's is: the schema and the components it
    /// refers to.
    pub fn at(&self, pointer: &str) -> Result<Converted> {
        let raw = self
            .doc
            .raw
            .pointer(pointer)
            .ok_or_else(|| anyhow!("{}: no schema there", self.doc.location(pointer)))?;
        let typed: ReferenceOr<OaSchema> = serde_json::from_value(raw.clone())
            .with_context(|| format!("{}: not a schema", self.doc.location(pointer)))?;
        let mut refs = BTreeSet::new();
        let schema = self.convert((&typed).into(), raw, pointer, &mut refs)?;
        Ok(Converted { schema, refs })
    }

    pub(crate) fn convert(
        &self,
        node: Node<'_>,
        raw: &Value,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<Schema> {
        let raw_map = raw
            .as_object()
            .ok_or_else(|| anyhow!("{}: a schema must be a mapping", self.doc.location(at)))?;
        match node {
            Node::Ref(reference) => self.reference(reference, raw_map, at, refs),
            Node::Item(schema) => self.item(schema, raw, raw_map, at, refs),
        }
    }

    fn reference(
        &self,
        reference: &str,
        raw_map: &Map<String, Value>,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<Schema> {
        let name = self.doc.schema_ref_name(reference, at)?;
        self.doc
            .schema(name)
            .with_context(|| format!("{}: dangling `$ref`", self.doc.location(at)))?;
        let target = if name == self.root {
            "#".to_owned()
        } else {
            refs.insert(name.to_owned());
            format!("#/$defs/{}", escape(name))
        };
        let mut out = Schema::new_ref(target);
        for (key, value) in raw_map {
            if key == "$ref" {
                continue;
            }
            if !key.starts_with("x-") {
                bail!(
                    "{}: `{key}` beside `$ref` is ignored by OpenAPI 3.0 (and by the generated \
                     clients); put the reference in `allOf: [$ref]` to qualify it",
                    self.doc.location(at)
                );
            }
            out.insert(key.clone(), value.clone());
        }
        Ok(out)
    }

    fn item(
        &self,
        schema: &OaSchema,
        raw: &Value,
        raw_map: &Map<String, Value>,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<Schema> {
        let location = || self.doc.location(at);
        if let Some(key) = raw_map
            .keys()
            .find(|k| !k.starts_with("x-") && !KNOWN_KEYWORDS.contains(&k.as_str()))
        {
            bail!(
                "{}: keyword `{key}` has no JSON Schema translation in licensing-json-schema",
                location()
            );
        }
        let data = &schema.schema_data;

        let mut out = Schema::default();
        match &schema.schema_kind {
            SchemaKind::Type(Type::String(s)) => {
                set(&mut out, "type", "string");
                set_format(&mut out, &s.format)?;
                string_keywords(&mut out, s.pattern.as_deref(), s.min_length, s.max_length);
                set_enum(&mut out, s.enumeration.iter().map(|v| json!(v)));
            }
            SchemaKind::Type(Type::Number(n)) => {
                set(&mut out, "type", "number");
                set_format(&mut out, &n.format)?;
                numeric_keywords(
                    &mut out,
                    Bound(n.minimum.map(number), n.exclusive_minimum),
                    Bound(n.maximum.map(number), n.exclusive_maximum),
                    n.multiple_of.map(number),
                )
                .with_context(location)?;
                set_enum(&mut out, n.enumeration.iter().map(|v| json!(v)));
            }
            SchemaKind::Type(Type::Integer(i)) => {
                set(&mut out, "type", "integer");
                set_format(&mut out, &i.format)?;
                numeric_keywords(
                    &mut out,
                    Bound(i.minimum.map(Value::from), i.exclusive_minimum),
                    Bound(i.maximum.map(Value::from), i.exclusive_maximum),
                    i.multiple_of.map(Value::from),
                )
                .with_context(location)?;
                set_enum(&mut out, i.enumeration.iter().map(|v| json!(v)));
            }
            SchemaKind::Type(Type::Boolean(b)) => {
                set(&mut out, "type", "boolean");
                set_enum(&mut out, b.enumeration.iter().map(|v| json!(v)));
            }
            SchemaKind::Type(Type::Object(o)) => {
                set(&mut out, "type", "object");
                self.object_keywords(&mut out, &ObjectKeywords::from(o), raw, at, refs)?;
            }
            SchemaKind::Type(Type::Array(a)) => {
                set(&mut out, "type", "array");
                let keywords = ArrayKeywords {
                    items: a.items.as_ref().map(Node::from),
                    min_items: a.min_items,
                    max_items: a.max_items,
                    unique_items: a.unique_items,
                };
                self.array_keywords(&mut out, &keywords, raw, at, refs)?;
            }
            SchemaKind::OneOf { one_of } => self.list(&mut out, "oneOf", one_of, raw, at, refs)?,
            SchemaKind::AllOf { all_of } => self.list(&mut out, "allOf", all_of, raw, at, refs)?,
            SchemaKind::AnyOf { any_of } => self.list(&mut out, "anyOf", any_of, raw, at, refs)?,
            SchemaKind::Not { not } => {
                let not = self.convert(
                    (&**not).into(),
                    child(raw, "not", at)?,
                    &format!("{at}/not"),
                    refs,
                )?;
                set(&mut out, "not", not.to_value());
            }
            // No `type`, or a combination openapiv3 does not model (say `type: object` with
            // `oneOf`): translate whatever is there, keyword by keyword.
            SchemaKind::Any(any) => self.any_keywords(&mut out, any, raw, at, refs)?,
        }

        if let Some(discriminator) = &data.discriminator {
            self.discriminator(discriminator, &schema.schema_kind, raw_map, at)
                .with_context(|| format!("{}: `discriminator`", location()))?;
        }
        if data.external_docs.is_some() {
            bail!(
                "{}: `externalDocs` has no JSON Schema translation in licensing-json-schema",
                location()
            );
        }
        if data.nullable {
            make_nullable(&mut out).with_context(location)?;
        }
        if let Some(title) = &data.title {
            set(&mut out, "title", title.as_str());
        }
        if let Some(description) = &data.description {
            // YAML block scalars end with a line break that belongs to the layout, not the text.
            set(&mut out, "description", description.trim_end());
        }
        if let Some(default) = &data.default {
            set(&mut out, "default", default.clone());
        }
        if let Some(example) = &data.example {
            set(&mut out, "examples", json!([example]));
        }
        for (flag, keyword) in [
            (data.read_only, "readOnly"),
            (data.write_only, "writeOnly"),
            (data.deprecated, "deprecated"),
        ] {
            if flag {
                set(&mut out, keyword, true);
            }
        }
        for (key, value) in &data.extensions {
            out.insert(key.clone(), value.clone());
        }
        if matches!(&schema.schema_kind, SchemaKind::Any(any) if *any == AnySchema::default())
            && out.as_object().is_some_and(|o| !o.is_empty())
        {
            set(&mut out, "tsType", "unknown");
        }
        Ok(out)
    }

    /// `keyword: [members…]`, each member translated; nothing when there are none.
    pub(crate) fn list(
        &self,
        out: &mut Schema,
        keyword: &str,
        members: &[ReferenceOr<OaSchema>],
        raw: &Value,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<()> {
        if members.is_empty() {
            return Ok(());
        }
        let raw_members = child(raw, keyword, at)?;
        let converted = members
            .iter()
            .enumerate()
            .map(|(i, member)| {
                let raw_member = raw_members
                    .get(i)
                    .ok_or_else(|| anyhow!("{}: {keyword}[{i}] missing", self.doc.location(at)))?;
                let member = self.convert(
                    member.into(),
                    raw_member,
                    &format!("{at}/{keyword}/{i}"),
                    refs,
                )?;
                Ok(member.to_value())
            })
            .collect::<Result<Vec<_>>>()?;
        set(out, keyword, converted);
        Ok(())
    }
}
