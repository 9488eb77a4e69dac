//! `cargo xtask export-samples DIR`: the examples of the specs as files, for checking them
//! against the exported schemas with other languages' validators (`.ci/schemas.sh`).
//!
//! * `DIR/valid/<service>/<Schema>/<n>.json`: each example, filed under the component
//!   schema that describes it: the schema's own `example` first (n = 1), then the
//!   `example`/`examples` of every request body and response whose schema is a `$ref` to
//!   it, in spec order.
//! * `DIR/samples.json`: for each of those files, where in which spec it comes from.
//! * `DIR/constraints.json`: every validation keyword of every exported schema (outside
//!   `$defs`, which are covered by their own files), plus each JSON type a service uses;
//!   each must be hit by at least one committed invalid sample.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use indexmap::IndexMap;
use licensing_json_schema::{Ctx, to_pretty};
use openapiv3::{MediaType, ReferenceOr};
use serde::Serialize;
use serde_json::Value;

use crate::export::{Exported, export_all};
use crate::spec::{Spec, escape, schema_ref_name};

/// The keywords that reject instances and that the invalid samples must exercise, each
/// where it occurs. `type` is covered per service and JSON type instead (it occurs almost
/// everywhere), and `additionalProperties` only where it is `false`.
const CONSTRAINT_KEYWORDS: &[&str] = &[
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "required",
    "enum",
    "const",
    "oneOf",
];

struct Sample {
    value: Value,
    /// `spec/x.yaml#/pointer` of the example.
    source: String,
}

#[derive(Serialize)]
struct ManifestEntry<'a> {
    /// Relative to DIR.
    file: String,
    service: &'static str,
    schema: &'a str,
    source: &'a str,
}

#[derive(Serialize)]
struct Constraint {
    service: &'static str,
    keyword: String,
    /// The schema file and the JSON Pointer of the keyword in it (absent for `type`).
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pointer: Option<String>,
    /// For `type`: the JSON type an invalid sample must fail to be.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    json_type: Option<String>,
}

pub fn export(root: &Path, dir: &Path) -> Result<()> {
    let valid_dir = dir.join("valid");
    if valid_dir.exists() {
        bail!(
            "{} exists already; export-samples writes a fresh one",
            valid_dir.display()
        );
    }
    let specs = Spec::load_all(root)?;
    let exported = export_all(&specs)?;

    let mut all: Vec<(&'static str, String, Sample)> = Vec::new();
    for spec in &specs {
        let mut by_schema: IndexMap<String, Vec<Sample>> = IndexMap::new();
        schema_examples(spec, &mut by_schema)?;
        media_examples(spec, &mut by_schema)?;
        let count: usize = by_schema.values().map(Vec::len).sum();
        println!(
            "{}: {count} examples for {} of {} schemas",
            spec.service.name,
            by_schema.len(),
            spec.schema_names().count()
        );
        for (schema, samples) in by_schema {
            all.extend(
                samples
                    .into_iter()
                    .map(|s| (spec.service.name, schema.clone(), s)),
            );
        }
    }

    let mut manifest = Vec::new();
    let mut numbers: IndexMap<(&str, &str), usize> = IndexMap::new();
    for (service, schema, sample) in &all {
        let n = numbers.entry((service, schema)).or_default();
        *n += 1;
        let file = format!("valid/{service}/{schema}/{n}.json");
        write(&dir.join(&file), &to_pretty(&sample.value, Ctx::Data))?;
        manifest.push(ManifestEntry {
            file,
            service,
            schema,
            source: &sample.source,
        });
    }
    write(&dir.join("samples.json"), &pretty(&manifest)?)?;
    let constraints = constraints(&exported);
    write(&dir.join("constraints.json"), &pretty(&constraints)?)?;
    println!(
        "wrote {} samples and {} constraints to {}",
        manifest.len(),
        constraints.len(),
        dir.display()
    );
    Ok(())
}

/// The `example` of each component schema.
fn schema_examples(spec: &Spec, out: &mut IndexMap<String, Vec<Sample>>) -> Result<()> {
    for name in spec.schema_names() {
        if let (ReferenceOr::Item(schema), _) = spec.schema(name)?
            && let Some(example) = &schema.schema_data.example
        {
            let at = format!("/components/schemas/{}/example", escape(name));
            out.entry(name.to_owned()).or_default().push(Sample {
                value: example.clone(),
                source: spec.location(&at),
            });
        }
    }
    Ok(())
}

/// The examples of the request bodies and responses, in components and in operations.
fn media_examples(spec: &Spec, out: &mut IndexMap<String, Vec<Sample>>) -> Result<()> {
    if let Some(components) = &spec.api.components {
        for (name, response) in &components.responses {
            if let ReferenceOr::Item(response) = response {
                let at = format!("/components/responses/{}/content", escape(name));
                content_examples(spec, &response.content, &at, out)?;
            }
        }
        for (name, body) in &components.request_bodies {
            if let ReferenceOr::Item(body) = body {
                let at = format!("/components/requestBodies/{}/content", escape(name));
                content_examples(spec, &body.content, &at, out)?;
            }
        }
    }
    for (path, item) in spec.api.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for (method, operation) in item.iter() {
            let at = format!("/paths/{}/{method}", escape(path));
            if let Some(ReferenceOr::Item(body)) = &operation.request_body {
                content_examples(
                    spec,
                    &body.content,
                    &format!("{at}/requestBody/content"),
                    out,
                )?;
            }
            let responses = &operation.responses;
            let statuses = responses
                .default
                .iter()
                .map(|r| ("default".to_owned(), r))
                .chain(responses.responses.iter().map(|(s, r)| (s.to_string(), r)));
            for (status, response) in statuses {
                if let ReferenceOr::Item(response) = response {
                    let at = format!("{at}/responses/{status}/content");
                    content_examples(spec, &response.content, &at, out)?;
                }
            }
        }
    }
    Ok(())
}

fn content_examples(
    spec: &Spec,
    content: &IndexMap<String, MediaType>,
    at: &str,
    out: &mut IndexMap<String, Vec<Sample>>,
) -> Result<()> {
    for (media_type, media) in content {
        let at = format!("{at}/{}", escape(media_type));
        let mut found = Vec::new();
        if let Some(example) = &media.example {
            found.push((example.clone(), format!("{at}/example")));
        }
        for (name, example) in &media.examples {
            let example = match example {
                ReferenceOr::Item(example) => example,
                ReferenceOr::Reference { reference } => reference
                    .strip_prefix("#/components/examples/")
                    .and_then(|n| spec.api.components.as_ref()?.examples.get(n)?.as_item())
                    .ok_or_else(|| anyhow!("{}: cannot resolve {reference}", spec.location(&at)))?,
            };
            if example.external_value.is_some() {
                bail!(
                    "{}: `externalValue` examples cannot be checked",
                    spec.location(&at)
                );
            }
            if let Some(value) = &example.value {
                found.push((
                    value.clone(),
                    format!("{at}/examples/{}/value", escape(name)),
                ));
            }
        }
        if found.is_empty() {
            continue;
        }
        let Some(ReferenceOr::Reference { reference }) = &media.schema else {
            bail!(
                "{}: an example needs a `$ref` to a component schema to be checked against",
                spec.location(&at)
            );
        };
        let schema = schema_ref_name(spec, reference, &at)?;
        for (value, source) in found {
            out.entry(schema.to_owned()).or_default().push(Sample {
                value,
                source: spec.location(&source),
            });
        }
    }
    Ok(())
}

/// The constraints of every exported schema (see the module documentation).
fn constraints(exported: &[Exported]) -> Vec<Constraint> {
    let mut found = Vec::new();
    let mut types: BTreeSet<(&'static str, String)> = BTreeSet::new();
    for schema in exported {
        walk(&schema.schema, "#", &mut |keyword, pointer, value| {
            if keyword == "type" {
                let names = value
                    .as_array()
                    .map_or_else(|| vec![value], |v| v.iter().collect());
                for name in names.into_iter().filter_map(Value::as_str) {
                    if name != "null" {
                        types.insert((schema.service, name.to_owned()));
                    }
                }
            } else if CONSTRAINT_KEYWORDS.contains(&keyword)
                || (keyword == "additionalProperties" && *value == Value::Bool(false))
            {
                found.push(Constraint {
                    service: schema.service,
                    keyword: keyword.to_owned(),
                    schema: Some(schema.name.clone()),
                    pointer: Some(pointer.to_owned()),
                    json_type: None,
                });
            }
        });
    }
    found.extend(types.into_iter().map(|(service, json_type)| Constraint {
        service,
        keyword: "type".to_owned(),
        schema: None,
        pointer: None,
        json_type: Some(json_type),
    }));
    found
}

/// Calls `visit(keyword, pointer of the keyword, value)` for every keyword of `schema` and
/// of its subschemas, except those under `$defs`.
fn walk(schema: &Value, pointer: &str, visit: &mut impl FnMut(&str, &str, &Value)) {
    let Some(map) = schema.as_object() else {
        return;
    };
    for (keyword, value) in map {
        let at = format!("{pointer}/{}", escape(keyword));
        visit(keyword, &at, value);
        match (keyword.as_str(), value) {
            ("properties" | "patternProperties", Value::Object(named)) => {
                for (name, subschema) in named {
                    walk(subschema, &format!("{at}/{}", escape(name)), visit);
                }
            }
            ("items" | "additionalProperties" | "not", Value::Object(_)) => walk(value, &at, visit),
            ("oneOf" | "anyOf" | "allOf", Value::Array(list)) => {
                for (i, subschema) in list.iter().enumerate() {
                    walk(subschema, &format!("{at}/{i}"), visit);
                }
            }
            _ => {}
        }
    }
}

fn pretty(value: &impl Serialize) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(text)
}

fn write(path: &Path, content: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    fs::write(path, content).with_context(|| format!("cannot write {}", path.display()))
}
