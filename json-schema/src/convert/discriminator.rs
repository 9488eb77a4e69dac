//! `discriminator`, which the export drops once it is shown to add nothing.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, anyhow, bail};
use licensing_spec::SCHEMA_REF_PREFIX;
use licensing_spec::openapiv3::{Discriminator, ReferenceOr, SchemaKind};
use serde_json::{Map, Value};

use super::Converter;
use crate::escape;

impl Converter<'_> {
    /// Checks that a `discriminator` adds nothing to the `oneOf`/`anyOf` beside it, so that
    /// the export can drop it (JSON Schema has no such keyword; Ajv in strict mode and
    /// other validators would reject or ignore it). That holds when every member is a
    /// `$ref` to a component that requires the property and restricts it with `enum` to
    /// exactly the values that map to that member (the explicit `mapping`, else the
    /// component name): the members then accept disjoint sets of payloads, and the
    /// combination alone picks the member the discriminator would.
    pub(crate) fn discriminator(
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
                ReferenceOr::Reference { reference } => self.doc.schema_ref_name(reference, at),
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
            let (_, raw) = self.doc.schema(name)?;
            let required = raw
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|p| p == property.as_str()));
            let mut declared = raw.pointer(&format!("/properties/{}", escape(property)));
            if let Some(reference) = declared.and_then(|d| d.get("$ref")).and_then(Value::as_str) {
                let target = self.doc.schema_ref_name(reference, at)?;
                declared = Some(self.doc.schema(target)?.1);
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
}
