//! The component schemas of an OpenAPI 3.0 document as JSON Schema draft 2020-12: what
//! `cargo xtask export-schemas` writes into `schemas/`, one self-contained file per schema.
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
//! * `discriminator` is dropped, once checked to add nothing (see `convert/discriminator.rs`): it is
//!   an OpenAPI annotation for code generators, not a JSON Schema keyword, and Ajv in strict
//!   mode rejects it;
//! * a schema without any validation keyword but with annotations (`{description: ...}`,
//!   any value) also gets `"tsType": "unknown"`: json-schema-to-typescript reads such a
//!   schema as an object unless told (`{}` alone it reads right). No validator uses it.
//!
//! `x-` extensions are kept as they are (2020-12 allows unknown keywords), including those
//! beside a `$ref`. A keyword this crate does not translate (`externalDocs`, `xml`, a typo)
//! fails the export instead of vanishing: `openapiv3` drops unknown keywords silently, so
//! the raw YAML value is checked next to the typed model.
//!
//! [`to_pretty`] writes the files with a key order of their own, so that they, and `--check`
//! against them, do not depend on how `serde_json` keeps a map.
//!
//! Not a dependency of the SDK or of any build script: the specs are read by
//! `licensing-spec`, and only the export needs this translation.

#![forbid(unsafe_code)]

mod convert;
mod pretty;
#[cfg(test)]
mod tests;
mod write;

use std::collections::BTreeSet;

use anyhow::{Result, anyhow};
use licensing_spec::openapiv3::{OpenAPI, ReferenceOr, Schema};
use serde_json::{Map, Value};

pub use convert::{Converted, Converter};
pub use pretty::{Ctx, to_pretty};

/// The JSON Schema dialect of every file [`self_contained`] makes.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// One OpenAPI document as the translation reads it: the typed model, and the raw value
/// of the same YAML for what the typed model drops (unknown keywords, extensions beside a
/// `$ref`), both from `licensing-spec`.
#[derive(Clone, Copy)]
pub struct Document<'a> {
    /// The document's path (`spec/order.yaml`), which messages name.
    pub file: &'a str,
    pub api: &'a OpenAPI,
    pub raw: &'a Value,
}

impl<'a> Document<'a> {
    /// The names of the component schemas, in document order.
    pub fn schema_names(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.api
            .components
            .iter()
            .flat_map(|c| c.schemas.keys())
            .map(String::as_str)
    }

    /// A component schema, typed and raw.
    pub fn schema(&self, name: &str) -> Result<(&'a ReferenceOr<Schema>, &'a Value)> {
        let typed = self
            .api
            .components
            .as_ref()
            .and_then(|c| c.schemas.get(name))
            .ok_or_else(|| anyhow!("{}: no component schema `{name}`", self.file))?;
        let raw = self
            .raw
            .pointer(&format!("/components/schemas/{}", escape(name)))
            .ok_or_else(|| anyhow!("{}: no raw component schema `{name}`", self.file))?;
        Ok((typed, raw))
    }

    /// `spec/x.yaml#/a/b`, for messages.
    pub fn location(&self, pointer: &str) -> String {
        format!("{}#{pointer}", self.file)
    }

    /// The component name a `$ref` points at, or an error for any other kind of reference.
    pub fn schema_ref_name<'r>(&self, reference: &'r str, at: &str) -> Result<&'r str> {
        reference
            .strip_prefix(licensing_spec::SCHEMA_REF_PREFIX)
            .filter(|name| !name.contains('/'))
            .ok_or_else(|| {
                anyhow!(
                    "{}: `$ref: {reference}` is not a reference to a component schema",
                    self.location(at)
                )
            })
    }
}

/// The self-contained file of component `name`: the component at the root, titled with
/// its name, and everything it refers to, transitively, under `$defs`; `$schema` is
/// [`DIALECT`] and `$id` is `id`.
pub fn self_contained(document: Document<'_>, name: &str, id: &str) -> Result<Value> {
    let converter = Converter::new(document, name);
    let root = converter.component(name)?;
    let mut defs = Map::new();
    let mut pending: BTreeSet<String> = root.refs;
    while let Some(dependency) = pending.pop_first() {
        let converted = converter.component(&dependency)?;
        pending.extend(
            converted
                .refs
                .into_iter()
                .filter(|r| !defs.contains_key(r) && *r != dependency),
        );
        defs.insert(dependency, converted.schema.to_value());
    }
    let mut schema = root.schema;
    schema.insert("$schema".into(), DIALECT.into());
    schema.insert("$id".into(), id.into());
    if !defs.is_empty() {
        schema.insert("$defs".into(), defs.into());
    }
    Ok(schema.to_value())
}

/// Escapes one JSON Pointer reference token (RFC 6901).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
