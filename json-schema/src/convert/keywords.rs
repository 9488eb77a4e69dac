//! The keywords shared by several kinds of schema: those of objects and those of arrays,
//! each also allowed on an untyped schema.

use std::collections::BTreeSet;

use anyhow::{Context, Result, bail};
use licensing_spec::openapiv3::{
    self, AdditionalProperties, AnySchema, ReferenceOr, Schema as OaSchema,
};
use schemars::Schema;
use serde_json::{Map, Value};

use super::{Converter, Node};
use crate::escape;
use crate::write::{Bound, child, number, numeric_keywords, set, set_enum, string_keywords};

impl Converter<'_> {
    pub(crate) fn object_keywords(
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
                    self.doc.location(at)
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

    pub(crate) fn array_keywords(
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

    pub(crate) fn any_keywords(
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
        .with_context(|| self.doc.location(at))?;
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
pub(crate) struct ObjectKeywords<'s> {
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
pub(crate) struct ArrayKeywords<'s> {
    pub(crate) items: Option<Node<'s>>,
    pub(crate) min_items: Option<usize>,
    pub(crate) max_items: Option<usize>,
    pub(crate) unique_items: bool,
}
