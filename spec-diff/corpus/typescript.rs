//! The TypeScript consumer: code written against openapi-typescript's types of the current
//! specs (`old/<service>.ts`), type-checked with `tsc --noEmit` against the types of the
//! mutated ones (`new/<service>.ts`).
//!
//! Where the old code writes (request bodies, parameters, schemas that requests use) it
//! hands old values to the new types, once as a value of the old type and once as an
//! object literal holding every documented property (TypeScript refuses a literal's
//! unknown properties). Where it reads (replies, schemas that replies use) it assigns every
//! documented property, and the whole value, of the new type to the old type. Each
//! operation must still exist at its path and method.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use openapiv3::{OpenAPI, ReferenceOr, Schema, SchemaKind, Type};
use serde_json::{Map, Value};

use licensing_codegen::spec::{resolve_parameter, response_schema};

/// Where each component schema travels: (in requests, in replies).
pub fn usage(api: &OpenAPI) -> BTreeMap<String, (bool, bool)> {
    let mut out: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    let components = api.components.as_ref();
    for (_, _, op) in api.operations() {
        let mut request = Vec::new();
        for p in &op.parameters {
            if let Some(p) = resolve_parameter(p, components)
                && let openapiv3::ParameterSchemaOrContent::Schema(s) =
                    &p.parameter_data_ref().format
            {
                request.push(s.clone());
            }
        }
        if let Some(ReferenceOr::Item(b)) = &op.request_body {
            request.extend(b.content.values().filter_map(|m| m.schema.clone()));
        }
        let reply: Vec<ReferenceOr<Schema>> = op
            .responses
            .responses
            .values()
            .filter_map(|r| response_schema(api, r))
            .map(|n| ReferenceOr::ref_(&format!("#/components/schemas/{n}")))
            .collect();
        for (list, is_request) in [(request, true), (reply, false)] {
            let mut seen = BTreeSet::new();
            for s in &list {
                reach(api, s, &mut seen);
            }
            for name in seen {
                let e = out.entry(name).or_default();
                if is_request {
                    e.0 = true;
                } else {
                    e.1 = true;
                }
            }
        }
    }
    out
}

fn reach(api: &OpenAPI, s: &ReferenceOr<Schema>, seen: &mut BTreeSet<String>) {
    let v = serde_json::to_value(s).unwrap_or(Value::Null);
    let mut refs = Vec::new();
    collect_refs(&v, &mut refs);
    for r in refs {
        if seen.insert(r.clone())
            && let Some(s) = api.components.as_ref().and_then(|c| c.schemas.get(&r))
        {
            reach(api, s, seen);
        }
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref")
                && let Some(n) = r.strip_prefix("#/components/schemas/")
            {
                out.push(n.to_string());
            }
            m.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// A value of the schema with every documented property (to a depth), as TypeScript
/// accepts it: only the JSON types matter.
pub fn full_value(api: &OpenAPI, s: &ReferenceOr<Schema>, depth: usize) -> Value {
    let s = match s {
        ReferenceOr::Reference { reference } => {
            let name = reference.trim_start_matches("#/components/schemas/");
            match api.components.as_ref().and_then(|c| c.schemas.get(name)) {
                Some(s) => return full_value(api, s, depth),
                None => return Value::Null,
            }
        }
        ReferenceOr::Item(s) => s,
    };
    let boxed = |b: &ReferenceOr<Box<Schema>>| match b {
        ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
        ReferenceOr::Item(s) => ReferenceOr::Item((**s).clone()),
    };
    match &s.schema_kind {
        SchemaKind::Type(Type::String(t)) => t
            .enumeration
            .iter()
            .flatten()
            .next()
            .map_or_else(|| Value::from("2027-01-01"), |v| Value::from(v.as_str())),
        SchemaKind::Type(Type::Integer(t)) => t
            .enumeration
            .iter()
            .flatten()
            .next()
            .map_or(Value::from(1), |v| Value::from(*v)),
        SchemaKind::Type(Type::Number(_)) => Value::from(1.5),
        SchemaKind::Type(Type::Boolean(_)) => Value::Bool(true),
        SchemaKind::Type(Type::Array(a)) => match (&a.items, depth) {
            (Some(i), d) if d > 0 => Value::Array(vec![full_value(api, &boxed(i), d - 1)]),
            _ => Value::Array(vec![]),
        },
        SchemaKind::Type(Type::Object(o)) => {
            let mut m = Map::new();
            for (k, p) in &o.properties {
                let required = o.required.contains(k);
                if depth == 0 && !required {
                    continue;
                }
                m.insert(
                    k.clone(),
                    full_value(api, &boxed(p), depth.saturating_sub(1)),
                );
            }
            Value::Object(m)
        }
        SchemaKind::OneOf { one_of: v } | SchemaKind::AnyOf { any_of: v } => {
            v.first().map_or(Value::Null, |f| full_value(api, f, depth))
        }
        _ => Value::Null,
    }
}

/// The consumer of one service's old types.
pub fn consumer(service: &str, api: &OpenAPI) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Generated by `cargo xtask spec-diff-corpus` from the types of the current {service} spec.\n\
         import type {{ paths as OldPaths, components as OldComponents }} from \"./old/{service}.js\";\n\
         import type {{ paths as NewPaths, components as NewComponents }} from \"./new/{service}.js\";\n\
         type OS = OldComponents[\"schemas\"];\ntype NS = NewComponents[\"schemas\"];\n\
         type Exists<T> = [T] extends [never] ? false : [T] extends [undefined] ? false : true;\n"
    );
    let usage = usage(api);
    for (name, schema) in api.components.iter().flat_map(|c| c.schemas.iter()) {
        let (request, reply) = usage.get(name).copied().unwrap_or((true, true));
        let (request, reply) = if !request && !reply {
            (true, true)
        } else {
            (request, reply)
        };
        let id = ident(name);
        if request {
            let _ = writeln!(
                out,
                "export function w_{id}(v: OS[\"{name}\"]): NS[\"{name}\"] {{ return v; }}\n\
                 export const l_{id}: NS[\"{name}\"] = {};",
                full_value(api, schema, 3)
            );
        }
        if reply {
            let _ = writeln!(
                out,
                "export function r_{id}(v: NS[\"{name}\"]): OS[\"{name}\"] {{"
            );
            if let ReferenceOr::Item(s) = schema
                && let SchemaKind::Type(Type::Object(o)) = &s.schema_kind
            {
                for (i, p) in o.properties.keys().enumerate() {
                    let _ = writeln!(
                        out,
                        "  const p{i}: OS[\"{name}\"][\"{p}\"] = v[\"{p}\"]; void p{i};"
                    );
                }
            }
            out.push_str("  return v;\n}\n");
        }
    }
    let components = api.components.as_ref();
    for (path, method, op) in api.operations() {
        let id = ident(op.operation_id.as_deref().unwrap_or("op"));
        let at = format!("[\"{path}\"][\"{method}\"]");
        let _ = writeln!(out, "export const x_{id}: Exists<NewPaths{at}> = true;");
        let mut query = Map::new();
        let mut path_params = Map::new();
        for p in &op.parameters {
            let Some(p) = resolve_parameter(p, components) else {
                continue;
            };
            let data = p.parameter_data_ref();
            let openapiv3::ParameterSchemaOrContent::Schema(s) = &data.format else {
                continue;
            };
            let target = match p {
                openapiv3::Parameter::Path { .. } => &mut path_params,
                _ => &mut query,
            };
            target.insert(data.name.clone(), full_value(api, s, 1));
        }
        for (kind, values) in [("query", query), ("path", path_params)] {
            if values.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "export function {kind}_{id}(v: OldPaths{at}[\"parameters\"][\"{kind}\"]): NewPaths{at}[\"parameters\"][\"{kind}\"] {{ return v; }}\n\
                 export const {kind}l_{id}: NewPaths{at}[\"parameters\"][\"{kind}\"] = {};",
                Value::Object(values)
            );
        }
        if op.request_body.is_some() {
            let body = "[\"requestBody\"][\"content\"][\"application/json\"]";
            let _ = writeln!(
                out,
                "export function b_{id}(v: OldPaths{at}{body}): NewPaths{at}{body} {{ return v; }}"
            );
        }
        let reply = "[\"responses\"][200][\"content\"][\"application/json\"]";
        let _ = writeln!(
            out,
            "export function a_{id}(v: NewPaths{at}{reply}): OldPaths{at}{reply} {{ return v; }}"
        );
    }
    out
}

fn ident(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
