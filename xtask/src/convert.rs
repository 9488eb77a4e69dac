//! OpenAPI 3.0 Schema Objects → JSON Schema draft 2020-12.
//!
//! Every keyword is copied as is, except:
//!
//! * `$ref: '#/components/schemas/X'` → `#/$defs/X`, or `#` when X is the schema being
//!   exported (its file's root);
//! * `nullable: true` → `"type": [T, "null"]`; a nullable schema without `type` that
//!   combines others (`oneOf`, `anyOf`, `allOf`, `not`) becomes
//!   `anyOf: [<the combination>, {"type": "null"}]`; one with neither already admits null;
//! * `exclusiveMinimum: true` beside `minimum: m` → `exclusiveMinimum: m` (and the same for
//!   the maximum);
//! * `example` → `examples: [example]`;
//! * a component schema gets its component name as `title`;
//! * `discriminator` is dropped, once checked to add nothing (see [`Converter::discriminator`]):
//!   it is an OpenAPI annotation for code generators, not a JSON Schema keyword, and Ajv in
//!   strict mode rejects it;
//! * a schema without any validation keyword but with annotations (`{description: ...}`,
//!   any value) also gets `"tsType": "unknown"`: json-schema-to-typescript reads such a
//!   schema as an object unless told (`{}` alone it reads right). No validator uses it.
//!
//! `x-` extensions are kept as they are (2020-12 allows unknown keywords), including those
//! beside a `$ref`. A keyword this converter does not translate (`externalDocs`, `xml`, a
//! typo) fails the export instead of vanishing: `openapiv3` drops unknown keywords
//! silently, so the raw YAML value is checked next to the typed model.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, anyhow, bail};
use openapiv3::{
    AdditionalProperties, AnySchema, Discriminator, ReferenceOr, Schema as OaSchema, SchemaKind,
    Type, VariantOrUnknownOrEmpty,
};
use schemars::Schema;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::spec::{SCHEMA_REF_PREFIX, Spec, escape, schema_ref_name};

/// The keywords of an OpenAPI 3.0.3 Schema Object that this converter translates.
const KNOWN_KEYWORDS: &[&str] = &[
    "title",
    "description",
    "type",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "enum",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
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
    "nullable",
    "readOnly",
    "writeOnly",
    "deprecated",
    "default",
    "example",
    "discriminator",
];

/// The keywords that combine subschemas; a nullable combination is wrapped, see module docs.
const COMBINATORS: &[&str] = &["oneOf", "anyOf", "allOf", "not"];

/// A component schema translated to JSON Schema.
pub struct Converted {
    pub schema: Schema,
    /// The other component schemas it refers to directly (never the export root).
    pub refs: BTreeSet<String>,
}

/// Translates the component schemas of one spec for the file of one exported schema.
pub struct Converter<'a> {
    spec: &'a Spec,
    /// The component whose file is being written: references to it become `#`.
    root: &'a str,
}

/// A schema position: a reference or an inline schema.
#[derive(Clone, Copy)]
enum Node<'s> {
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
    pub fn new(spec: &'a Spec, root: &'a str) -> Self {
        Converter { spec, root }
    }

    /// Translates the component schema `name`, titled with its name.
    pub fn component(&self, name: &str) -> Result<Converted> {
        let (typed, raw) = self.spec.schema(name)?;
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
                self.spec.location(&at)
            );
        }
        schema.insert("title".into(), name.into());
        Ok(Converted { schema, refs })
    }

    fn convert(
        &self,
        node: Node<'_>,
        raw: &Value,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<Schema> {
        let raw_map = raw
            .as_object()
            .ok_or_else(|| anyhow!("{}: a schema must be a mapping", self.spec.location(at)))?;
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
        let name = schema_ref_name(self.spec, reference, at)?;
        self.spec
            .schema(name)
            .with_context(|| format!("{}: dangling `$ref`", self.spec.location(at)))?;
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
                    self.spec.location(at)
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
        let location = || self.spec.location(at);
        if let Some(key) = raw_map
            .keys()
            .find(|k| !k.starts_with("x-") && !KNOWN_KEYWORDS.contains(&k.as_str()))
        {
            bail!(
                "{}: keyword `{key}` has no JSON Schema translation in xtask/src/convert.rs",
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
                "{}: `externalDocs` has no JSON Schema translation in xtask/src/convert.rs",
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

    /// Checks that a `discriminator` adds nothing to the `oneOf`/`anyOf` beside it, so that
    /// the export can drop it (JSON Schema has no such keyword; Ajv in strict mode and
    /// other validators would reject or ignore it). That holds when every member is a
    /// `$ref` to a component that requires the property and restricts it with `enum` to
    /// exactly the values that map to that member (the explicit `mapping`, else the
    /// component name): the members then accept disjoint sets of payloads, and the
    /// combination alone picks the member the discriminator would.
    fn discriminator(
        &self,
        discriminator: &Discriminator,
        kind: &SchemaKind,
        raw_map: &Map<String, Value>,
        at: &str,
    ) -> Result<()> {
        if let Some(key) = raw_map
            .get("discriminator")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Map::keys)
            .find(|k| !k.starts_with("x-") && !["propertyName", "mapping"].contains(&k.as_str()))
        {
            bail!("unknown field `{key}`");
        }
        let members = match kind {
            SchemaKind::OneOf { one_of } => one_of,
            SchemaKind::AnyOf { any_of } => any_of,
            SchemaKind::Any(any) if !any.one_of.is_empty() && any.any_of.is_empty() => &any.one_of,
            SchemaKind::Any(any) if any.one_of.is_empty() && !any.any_of.is_empty() => &any.any_of,
            _ => bail!("only beside `oneOf` or `anyOf` (not `allOf`) is it translated"),
        };
        let names = members
            .iter()
            .map(|member| match member {
                ReferenceOr::Reference { reference } => schema_ref_name(self.spec, reference, at),
                ReferenceOr::Item(_) => Err(anyhow!(
                    "an inline member cannot be picked; make it a component"
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (value, target) in &discriminator.mapping {
            let name = target.strip_prefix(SCHEMA_REF_PREFIX).unwrap_or(target);
            if !names.contains(&name) {
                bail!("mapping `{value}: {target}` is not a member of the combination");
            }
            values.entry(name).or_default().insert(value);
        }
        let property = &discriminator.property_name;
        for name in names {
            let expected = values
                .remove(name)
                .unwrap_or_else(|| BTreeSet::from([name]));
            let (_, raw) = self.spec.schema(name)?;
            let required = raw
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|p| p == property.as_str()));
            let mut declared = raw.pointer(&format!("/properties/{}", escape(property)));
            if let Some(reference) = declared.and_then(|d| d.get("$ref")).and_then(Value::as_str) {
                let target = schema_ref_name(self.spec, reference, at)?;
                declared = Some(self.spec.schema(target)?.1);
            }
            let allowed = declared
                .and_then(|d| d.get("enum"))
                .and_then(Value::as_array)
                .map(|e| e.iter().filter_map(Value::as_str).collect::<BTreeSet<_>>());
            if !required || allowed.as_ref() != Some(&expected) {
                let expected = expected.into_iter().collect::<Vec<_>>().join(", ");
                bail!(
                    "member `{name}` must require `{property}` and declare it with \
                     `enum: [{expected}]`, or the schema without the discriminator would \
                     accept more than with it"
                );
            }
        }
        Ok(())
    }

    fn list(
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
                    .ok_or_else(|| anyhow!("{}: {keyword}[{i}] missing", self.spec.location(at)))?;
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

    fn object_keywords(
        &self,
        out: &mut Schema,
        object: &ObjectKeywords<'_>,
        raw: &Value,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<()> {
        if !object.properties.is_empty() {
            let raw_properties = child(raw, "properties", at)?;
            let mut properties = Map::new();
            for (name, property) in object.properties {
                let raw_property = child(raw_properties, name, at)?;
                let at = format!("{at}/properties/{}", escape(name));
                let property = self.convert(property.into(), raw_property, &at, refs)?;
                properties.insert(name.clone(), property.to_value());
            }
            set(out, "properties", properties);
        }
        if !object.required.is_empty() {
            // A required name that no property declares is almost always a typo.
            if let Some(name) = object
                .required
                .iter()
                .find(|name| !object.properties.contains_key(*name))
            {
                bail!(
                    "{}: required property `{name}` is not declared in `properties`",
                    self.spec.location(at)
                );
            }
            set(out, "required", object.required);
        }
        match object.additional_properties {
            None => {}
            Some(AdditionalProperties::Any(allowed)) => set(out, "additionalProperties", *allowed),
            Some(AdditionalProperties::Schema(schema)) => {
                let schema = self.convert(
                    (&**schema).into(),
                    child(raw, "additionalProperties", at)?,
                    &format!("{at}/additionalProperties"),
                    refs,
                )?;
                set(out, "additionalProperties", schema.to_value());
            }
        }
        if let Some(n) = object.min_properties {
            set(out, "minProperties", n);
        }
        if let Some(n) = object.max_properties {
            set(out, "maxProperties", n);
        }
        Ok(())
    }

    fn array_keywords(
        &self,
        out: &mut Schema,
        array: &ArrayKeywords<'_>,
        raw: &Value,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<()> {
        if let Some(items) = array.items {
            let items = self.convert(
                items,
                child(raw, "items", at)?,
                &format!("{at}/items"),
                refs,
            )?;
            set(out, "items", items.to_value());
        }
        if let Some(n) = array.min_items {
            set(out, "minItems", n);
        }
        if let Some(n) = array.max_items {
            set(out, "maxItems", n);
        }
        if array.unique_items {
            set(out, "uniqueItems", true);
        }
        Ok(())
    }

    fn any_keywords(
        &self,
        out: &mut Schema,
        any: &AnySchema,
        raw: &Value,
        at: &str,
        refs: &mut BTreeSet<String>,
    ) -> Result<()> {
        if let Some(typ) = &any.typ {
            set(out, "type", typ.as_str());
        }
        if let Some(format) = &any.format {
            set(out, "format", format.as_str());
        }
        string_keywords(out, any.pattern.as_deref(), any.min_length, any.max_length);
        numeric_keywords(
            out,
            Bound(
                any.minimum.map(number),
                any.exclusive_minimum.unwrap_or(false),
            ),
            Bound(
                any.maximum.map(number),
                any.exclusive_maximum.unwrap_or(false),
            ),
            any.multiple_of.map(number),
        )
        .with_context(|| self.spec.location(at))?;
        set_enum(out, any.enumeration.iter().cloned());
        let object = ObjectKeywords {
            properties: &any.properties,
            required: &any.required,
            additional_properties: &any.additional_properties,
            min_properties: any.min_properties,
            max_properties: any.max_properties,
        };
        self.object_keywords(out, &object, raw, at, refs)?;
        let array = ArrayKeywords {
            items: any.items.as_ref().map(Node::from),
            min_items: any.min_items,
            max_items: any.max_items,
            unique_items: any.unique_items.unwrap_or(false),
        };
        self.array_keywords(out, &array, raw, at, refs)?;
        self.list(out, "oneOf", &any.one_of, raw, at, refs)?;
        self.list(out, "allOf", &any.all_of, raw, at, refs)?;
        self.list(out, "anyOf", &any.any_of, raw, at, refs)?;
        if let Some(not) = &any.not {
            let not = self.convert(
                (&**not).into(),
                child(raw, "not", at)?,
                &format!("{at}/not"),
                refs,
            )?;
            set(out, "not", not.to_value());
        }
        Ok(())
    }
}

/// The object keywords, shared by `type: object` and untyped schemas.
struct ObjectKeywords<'s> {
    properties: &'s indexmap::IndexMap<String, ReferenceOr<Box<OaSchema>>>,
    required: &'s [String],
    additional_properties: &'s Option<AdditionalProperties>,
    min_properties: Option<usize>,
    max_properties: Option<usize>,
}

impl<'s> From<&'s openapiv3::ObjectType> for ObjectKeywords<'s> {
    fn from(o: &'s openapiv3::ObjectType) -> Self {
        ObjectKeywords {
            properties: &o.properties,
            required: &o.required,
            additional_properties: &o.additional_properties,
            min_properties: o.min_properties,
            max_properties: o.max_properties,
        }
    }
}

/// The array keywords, shared by `type: array` and untyped schemas.
struct ArrayKeywords<'s> {
    items: Option<Node<'s>>,
    min_items: Option<usize>,
    max_items: Option<usize>,
    unique_items: bool,
}

/// A lower or upper bound and whether it is exclusive (OpenAPI 3.0's boolean form).
struct Bound(Option<Value>, bool);

fn set(out: &mut Schema, keyword: &str, value: impl Into<Value>) {
    out.insert(keyword.to_owned(), value.into());
}

fn set_format<F: Serialize>(out: &mut Schema, format: &VariantOrUnknownOrEmpty<F>) -> Result<()> {
    match format {
        VariantOrUnknownOrEmpty::Item(known) => set(out, "format", serde_json::to_value(known)?),
        VariantOrUnknownOrEmpty::Unknown(other) => set(out, "format", other.as_str()),
        VariantOrUnknownOrEmpty::Empty => {}
    }
    Ok(())
}

fn string_keywords(
    out: &mut Schema,
    pattern: Option<&str>,
    min_length: Option<usize>,
    max_length: Option<usize>,
) {
    if let Some(pattern) = pattern {
        set(out, "pattern", pattern);
    }
    if let Some(n) = min_length {
        set(out, "minLength", n);
    }
    if let Some(n) = max_length {
        set(out, "maxLength", n);
    }
}

/// Writes the bounds in 2020-12 form: an exclusive bound is a number of its own.
fn numeric_keywords(
    out: &mut Schema,
    minimum: Bound,
    maximum: Bound,
    multiple_of: Option<Value>,
) -> Result<()> {
    for (Bound(value, exclusive), inclusive_keyword, exclusive_keyword) in [
        (minimum, "minimum", "exclusiveMinimum"),
        (maximum, "maximum", "exclusiveMaximum"),
    ] {
        match (value, exclusive) {
            (Some(value), false) => set(out, inclusive_keyword, value),
            (Some(value), true) => set(out, exclusive_keyword, value),
            (None, true) => bail!("`{exclusive_keyword}: true` without `{inclusive_keyword}`"),
            (None, false) => {}
        }
    }
    if let Some(value) = multiple_of {
        set(out, "multipleOf", value);
    }
    Ok(())
}

fn set_enum(out: &mut Schema, values: impl Iterator<Item = Value>) {
    let values: Vec<Value> = values.collect();
    if !values.is_empty() {
        set(out, "enum", values);
    }
}

/// `nullable: true`, see the module documentation. An `enum` keeps its values: by OpenAPI
/// 3.0.3 a nullable enum admits null only when null is one of them, and so it is here.
fn make_nullable(out: &mut Schema) -> Result<()> {
    let combined: Map<String, Value> = COMBINATORS
        .iter()
        .filter_map(|k| out.remove(*k).map(|v| ((*k).to_owned(), v)))
        .collect();
    match out.get("type").cloned() {
        Some(Value::String(typ)) => {
            if !combined.is_empty() {
                bail!(
                    "`nullable` on a schema with both `type` and `oneOf`/`anyOf`/`allOf`/`not` is not translated"
                );
            }
            set(out, "type", json!([typ, "null"]));
        }
        Some(other) => bail!("unexpected `type` {other}"),
        // Without `type` and without a combination the schema already admits null.
        None if combined.is_empty() => {}
        None => set(out, "anyOf", json!([combined, {"type": "null"}])),
    }
    Ok(())
}

/// A number as JSON, integral values without a fraction (`1`, not `1.0`).
fn number(value: f64) -> Value {
    // Exact for every integral value that fits an i64.
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}

/// The raw value below `key` of a raw schema, for the typed node being converted.
fn child<'r>(raw: &'r Value, key: &str, at: &str) -> Result<&'r Value> {
    raw.get(key)
        .ok_or_else(|| anyhow!("#{at}: `{key}` parsed but not found in the raw document"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::spec::Service;

    const TEST: Service = Service {
        name: "test",
        spec: "test.yaml",
    };

    /// Converts component `name` of a spec whose `components.schemas` is `schemas` (YAML).
    fn convert(schemas: &str, name: &str) -> Result<Converted> {
        let schemas = schemas.replace('\n', "\n    ");
        let text = format!(
            "openapi: 3.0.3\ninfo: {{title: t, version: v}}\npaths: {{}}\ncomponents:\n  schemas:\n    {schemas}"
        );
        let spec = Spec::parse(&TEST, &text)?;
        Converter::new(&spec, name).component(name)
    }

    fn value(schemas: &str, name: &str) -> Value {
        convert(schemas, name).unwrap().schema.to_value()
    }

    #[test]
    fn nullable_type_becomes_a_type_list() {
        let schema = value("N: {type: integer, format: int64, nullable: true}", "N");
        assert_eq!(
            schema,
            json!({"title": "N", "type": ["integer", "null"], "format": "int64"})
        );
    }

    #[test]
    fn nullable_combination_is_wrapped_in_any_of() {
        let schema = value(
            "N:\n  description: d\n  nullable: true\n  oneOf: [{type: string}, {type: integer}]",
            "N",
        );
        assert_eq!(
            schema,
            json!({
                "title": "N",
                "description": "d",
                "anyOf": [
                    {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                    {"type": "null"}
                ]
            })
        );
    }

    #[test]
    fn references_point_into_defs_or_at_the_root() {
        let schemas = "Tree:\n  type: object\n  properties:\n    children: {type: array, items: {$ref: '#/components/schemas/Tree'}}\n    leaf: {$ref: '#/components/schemas/Leaf'}\nLeaf: {type: string}";
        let converted = convert(schemas, "Tree").unwrap();
        let schema = converted.schema.to_value();
        assert_eq!(
            schema["properties"]["children"]["items"],
            json!({"$ref": "#"})
        );
        assert_eq!(
            schema["properties"]["leaf"],
            json!({"$ref": "#/$defs/Leaf"})
        );
        assert_eq!(converted.refs, BTreeSet::from(["Leaf".to_owned()]));
    }

    #[test]
    fn exclusive_bounds_become_numbers() {
        let schema = value(
            "B: {type: integer, minimum: 0, exclusiveMinimum: true, maximum: 9}",
            "B",
        );
        assert_eq!(
            schema,
            json!({"title": "B", "type": "integer", "exclusiveMinimum": 0, "maximum": 9})
        );
    }

    #[test]
    fn annotations_examples_and_extensions_are_kept() {
        let schema = value(
            "E:\n  type: integer\n  enum: [1, 2]\n  default: 1\n  example: 2\n  x-enum-varnames: [One, Two]\n  description: |\n    Two lines\n    of text.\n",
            "E",
        );
        assert_eq!(
            schema,
            json!({
                "title": "E",
                "description": "Two lines\nof text.",
                "type": "integer",
                "enum": [1, 2],
                "default": 1,
                "examples": [2],
                "x-enum-varnames": ["One", "Two"]
            })
        );
    }

    #[test]
    fn an_untyped_schema_with_a_description_is_any_value() {
        let schema = value(
            "A:\n  type: object\n  properties:\n    any: {description: d}\n    bare: {}",
            "A",
        );
        assert_eq!(
            schema["properties"]["any"],
            json!({"description": "d", "tsType": "unknown"})
        );
        assert_eq!(schema["properties"]["bare"], json!({}));
    }

    #[test]
    fn unknown_keywords_fail() {
        let error = convert("S: {type: string, maxlength: 3}", "S")
            .err()
            .unwrap();
        assert!(
            format!("{error:#}").contains("keyword `maxlength`"),
            "{error:#}"
        );
        let error = convert("S: {type: object, xml: {name: s}}", "S")
            .err()
            .unwrap();
        assert!(format!("{error:#}").contains("keyword `xml`"), "{error:#}");
    }

    /// A `oneOf` of two order shapes told apart by `kind`, with `extra` appended to the
    /// union's own schema and `b_kind` as the `enum` of the second member.
    fn discriminated(extra: &str, b_kind: &str) -> String {
        format!(
            "U:\n  oneOf: [{{$ref: '#/components/schemas/A'}}, {{$ref: '#/components/schemas/B'}}]\n  \
             discriminator:\n    propertyName: kind\n{extra}\
             A:\n  type: object\n  required: [kind]\n  properties:\n    kind: {{type: string, enum: [a]}}\n\
             B:\n  type: object\n  required: [kind]\n  properties:\n    kind: {{$ref: '#/components/schemas/BKind'}}\n\
             BKind: {{type: string, enum: {b_kind}}}"
        )
    }

    #[test]
    fn a_discriminator_that_the_members_imply_is_dropped() {
        let mapping = "    mapping: {a: '#/components/schemas/A', b: '#/components/schemas/B'}\n";
        let converted = convert(&discriminated(mapping, "[b]"), "U").unwrap();
        assert_eq!(
            converted.schema.to_value(),
            json!({"title": "U", "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]})
        );
        assert_eq!(
            converted.refs,
            BTreeSet::from(["A".to_owned(), "B".to_owned()])
        );
        // Without `mapping` the values are the component names.
        let schemas = discriminated("", "[B]").replace("enum: [a]", "enum: [A]");
        let schema = value(&schemas, "U");
        assert!(schema.get("discriminator").is_none(), "{schema}");
    }

    #[test]
    fn a_discriminator_that_adds_a_constraint_fails() {
        let mapping = "    mapping: {a: '#/components/schemas/A', b: '#/components/schemas/B'}\n";
        // `B` admits `kind: a` as well: the oneOf alone cannot tell the members apart.
        let error = convert(&discriminated(mapping, "[a, b]"), "U")
            .err()
            .unwrap();
        assert!(
            format!("{error:#}")
                .contains("member `B` must require `kind` and declare it with `enum: [b]`"),
            "{error:#}"
        );
        // The mapping names no member.
        let mapping = "    mapping: {c: '#/components/schemas/BKind'}\n";
        let error = convert(&discriminated(mapping, "[b]"), "U").err().unwrap();
        assert!(
            format!("{error:#}").contains("is not a member"),
            "{error:#}"
        );
        // Beside `allOf` the discriminator means inheritance, which JSON Schema cannot say.
        let schemas = discriminated("", "[B]").replace("oneOf", "allOf");
        let error = convert(&schemas, "U").err().unwrap();
        assert!(format!("{error:#}").contains("not `allOf`"), "{error:#}");
        // A misspelt field of the discriminator object.
        let error = convert(&discriminated("    maping: {}\n", "[b]"), "U")
            .err()
            .unwrap();
        assert!(
            format!("{error:#}").contains("unknown field `maping`"),
            "{error:#}"
        );
    }

    #[test]
    fn siblings_of_a_reference_fail_unless_extensions() {
        let schemas = "A:\n  type: object\n  properties:\n    b: {$ref: '#/components/schemas/B', description: lost}\nB: {type: string}";
        let error = convert(schemas, "A").err().unwrap();
        assert!(
            format!("{error:#}").contains("`description` beside `$ref`"),
            "{error:#}"
        );
        let schemas = "A:\n  type: object\n  properties:\n    b: {$ref: '#/components/schemas/B', x-note: kept}\nB: {type: string}";
        let schema = value(schemas, "A");
        assert_eq!(
            schema["properties"]["b"],
            json!({"$ref": "#/$defs/B", "x-note": "kept"})
        );
    }

    #[test]
    fn dangling_references_and_undeclared_required_properties_fail() {
        let error = convert("A: {$ref: '#/components/schemas/Missing'}", "A")
            .err()
            .unwrap();
        assert!(format!("{error:#}").contains("dangling"), "{error:#}");
        let error = convert("A: {type: object, required: [a], properties: {b: {}}}", "A")
            .err()
            .unwrap();
        assert!(
            format!("{error:#}").contains("`a` is not declared"),
            "{error:#}"
        );
    }
}
