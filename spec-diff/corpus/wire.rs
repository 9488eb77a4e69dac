//! The proof of the two wire columns: the documents themselves, read as a validator that
//! follows them reads them (the conformance proxy's reading: JSON Schema, undeclared
//! properties allowed unless `additionalProperties: false`, `int32` bounding its values).
//!
//! Each side is a deployment and its clients. Old clients send requests valid under the
//! current specs (their examples, the mutation's `old_samples`, its `wire.old…`) and read
//! replies with them; new clients do the same with the mutated specs (`new_samples`,
//! `wire.new…`). Then:
//!
//! * `wire_old_clients` is breaking when the mutated specs refuse an old request, or the
//!   current ones refuse a new reply;
//! * `wire_new_clients` is breaking when the current specs refuse a new request, or the
//!   mutated ones refuse an old reply.
//!
//! A request is routed by method and path (a deployment answers another with 404), its
//! required parameters must be there, the parameters the deployment reads and its body
//! must validate; a parameter it does not declare is ignored, as a server ignores a query
//! parameter it does not read. Every request of each side's operations is written from
//! the documents (their required parameters, the request body's example); those that
//! their own side refuses witness nothing and are left out, while a sample a mutation
//! gives must be valid on its side or the proof stops.
//!
//! It reads no compiler, so it runs with `cargo test -p licensing-spec-diff` as well as in
//! the corpus, and is not recorded in `proven.json`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use anyhow::{Result, anyhow, bail};
use openapiv3::{OpenAPI, ParameterSchemaOrContent, ReferenceOr, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{Mutation, Sample, apply, example_samples, typescript};
use licensing_spec::resolve_parameter;
use licensing_spec_diff::load::{self, Side};
use licensing_spec_diff::rules::{Verdict, Verdicts};

/// Samples only the wire proof reads (the compilers' consumers never see them: a request
/// value a new client sends is no reply an old client reads).
#[derive(Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Samples {
    /// Valid under the current specs.
    #[serde(default)]
    pub old: Vec<Sample>,
    /// Valid under the mutated specs.
    #[serde(default)]
    pub new: Vec<Sample>,
    #[serde(default)]
    pub old_requests: Vec<Request>,
    #[serde(default)]
    pub new_requests: Vec<Request>,
}

/// One request as a deployment receives it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub service: String,
    pub method: String,
    /// The path template (`/a/{id}`): routing compares templates.
    pub path: String,
    /// Parameters by name, wherever they go (path, query or header).
    #[serde(default)]
    pub params: BTreeMap<String, Value>,
    #[serde(default)]
    pub body: Option<Value>,
}

/// What the documents said: each direction's verdict, and its first witness.
pub struct Proof {
    pub old_clients: Verdict,
    pub new_clients: Verdict,
    pub why: BTreeMap<&'static str, String>,
}

/// One side's documents, compiled on demand.
struct Docs<'a> {
    side: &'a Side,
    /// By service: `$defs` of the converted component schemas.
    defs: BTreeMap<&'static str, Value>,
    /// By service and schema: where it travels, (in requests, in replies).
    usage: BTreeMap<&'static str, BTreeMap<String, (bool, bool)>>,
    /// By service and schema: a validator compiles once per side.
    compiled: RefCell<HashMap<String, Rc<jsonschema::Validator>>>,
}

impl<'a> Docs<'a> {
    fn new(side: &'a Side) -> Docs<'a> {
        let defs = side
            .specs
            .iter()
            .map(|s| {
                let schemas = s.api.components.as_ref().map(|c| &c.schemas);
                let converted: Map<String, Value> = schemas
                    .into_iter()
                    .flatten()
                    .map(|(name, schema)| (name.clone(), convert(&to_json(schema))))
                    .collect();
                (s.service, Value::Object(converted))
            })
            .collect();
        let usage = side
            .specs
            .iter()
            .map(|s| (s.service, typescript::usage(&s.api)))
            .collect();
        Docs {
            side,
            defs,
            usage,
            compiled: RefCell::default(),
        }
    }

    fn api(&self, service: &str) -> Option<&'a OpenAPI> {
        self.side
            .specs
            .iter()
            .find(|s| s.service == service)
            .map(|s| &s.api)
    }

    /// `value` against `schema` (OpenAPI, converted here); the first error when refused.
    fn check(&self, service: &str, schema: &Value, value: &Value) -> Result<(), String> {
        let mut root = convert(schema);
        if let (Value::Object(map), Some(Value::Object(defs))) = (&mut root, self.defs.get(service))
        {
            // Only the definitions it reaches: a validator compiles what it is given.
            let mut used = Map::new();
            let mut pending = Vec::new();
            refs(&Value::Object(map.clone()), &mut pending);
            while let Some(name) = pending.pop() {
                if let Some(def) = defs.get(&name)
                    && !used.contains_key(&name)
                {
                    refs(def, &mut pending);
                    used.insert(name, def.clone());
                }
            }
            map.insert("$defs".into(), Value::Object(used));
        }
        let key = format!("{service}\n{schema}");
        let cached = self.compiled.borrow().get(&key).cloned();
        let validator = match cached {
            Some(v) => v,
            None => {
                let v = jsonschema::validator_for(&root)
                    .map_err(|e| format!("schema does not compile: {e}"))?;
                let v = Rc::new(v);
                self.compiled.borrow_mut().insert(key, v.clone());
                v
            }
        };
        validator.validate(value).map_err(|e| {
            let at = e.instance_path().to_string();
            format!("{}: {e}", if at.is_empty() { "/" } else { &at })
        })
    }

    /// A value of the component `schema`; `None` when this side has no such schema.
    fn valid(&self, s: &Sample) -> Option<Result<(), String>> {
        let api = self.api(&s.service)?;
        api.components.as_ref()?.schemas.get(&s.schema)?;
        let reference = json!({"$ref": format!("#/components/schemas/{}", s.schema)});
        Some(self.check(&s.service, &reference, &s.value))
    }

    /// Whether this side's deployment takes the request.
    fn accepts(&self, r: &Request) -> Result<(), String> {
        let api = self
            .api(&r.service)
            .ok_or_else(|| format!("no service `{}`", r.service))?;
        let template = routing(&r.path);
        let (_, _, op) = api
            .operations()
            .find(|(p, m, _)| m.eq_ignore_ascii_case(&r.method) && routing(p) == template)
            .ok_or("no such operation (404)")?;
        let components = api.components.as_ref();
        for p in &op.parameters {
            let Some(p) = resolve_parameter(p, components) else {
                continue;
            };
            let data = p.parameter_data_ref();
            match (r.params.get(&data.name), &data.format) {
                (None, _) if data.required => {
                    return Err(format!("parameter `{}` required", data.name));
                }
                (Some(v), ParameterSchemaOrContent::Schema(s)) => self
                    .check(&r.service, &to_json(s), v)
                    .map_err(|e| format!("parameter `{}`: {e}", data.name))?,
                _ => {}
            }
        }
        let body = match &op.request_body {
            Some(ReferenceOr::Item(b)) => Some((
                b.required,
                b.content
                    .get("application/json")
                    .and_then(|m| m.schema.as_ref()),
            )),
            _ => None,
        };
        match (&r.body, body) {
            (None, Some((true, _))) => Err("request body required".into()),
            (Some(_), None) => Err("no request body expected".into()),
            (Some(v), Some((_, Some(s)))) => self
                .check(&r.service, &to_json(s), v)
                .map_err(|e| format!("body {e}")),
            _ => Ok(()),
        }
    }

    /// A request of every operation, from the documents: its required parameters (and
    /// those with an example), and its body's example when it takes one.
    fn requests(&self) -> Vec<Request> {
        let mut out = Vec::new();
        for spec in &self.side.specs {
            let components = spec.api.components.as_ref();
            for (path, method, op) in spec.api.operations() {
                let mut params = BTreeMap::new();
                for p in &op.parameters {
                    let Some(p) = resolve_parameter(p, components) else {
                        continue;
                    };
                    let data = p.parameter_data_ref();
                    let ParameterSchemaOrContent::Schema(s) = &data.format else {
                        continue;
                    };
                    let example = data.example.clone().or_else(|| example(&spec.api, s));
                    if let Some(v) = example.or_else(|| data.required.then(|| value(&spec.api, s)))
                    {
                        params.insert(data.name.clone(), v);
                    }
                }
                let body = match &op.request_body {
                    Some(ReferenceOr::Item(b)) => b
                        .content
                        .get("application/json")
                        .and_then(|m| m.schema.as_ref())
                        .and_then(|s| example(&spec.api, s)),
                    _ => None,
                };
                out.push(Request {
                    service: spec.service.to_string(),
                    method: method.to_uppercase(),
                    path: path.to_string(),
                    params,
                    body,
                });
            }
        }
        out
    }
}

/// The names of the definitions `schema` refers to (`#/$defs/X`), added to `out`.
fn refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix("#/$defs/") {
                            out.push(name.to_string());
                        }
                    }
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// A path template with its parameters' names left out: `/a/{}/b`.
fn routing(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn item<'s>(api: &'s OpenAPI, s: &'s ReferenceOr<Schema>) -> Option<&'s Schema> {
    match s {
        ReferenceOr::Item(s) => Some(s),
        ReferenceOr::Reference { reference } => {
            let name = reference.strip_prefix("#/components/schemas/")?;
            api.components.as_ref()?.schemas.get(name)?.as_item()
        }
    }
}

fn example(api: &OpenAPI, s: &ReferenceOr<Schema>) -> Option<Value> {
    let s = item(api, s)?;
    s.schema_data
        .example
        .clone()
        .or_else(|| s.schema_data.default.clone())
}

/// A value for a parameter without an example: its first enum value, its minimum, or a
/// short string (a side that refuses it leaves the request out).
fn value(api: &OpenAPI, s: &ReferenceOr<Schema>) -> Value {
    use openapiv3::{SchemaKind, Type};
    let Some(s) = item(api, s) else {
        return Value::Null;
    };
    match &s.schema_kind {
        SchemaKind::Type(Type::String(t)) => t
            .enumeration
            .iter()
            .flatten()
            .next()
            .map_or_else(|| "x1".into(), |v| v.as_str().into()),
        SchemaKind::Type(Type::Integer(t)) => t
            .enumeration
            .iter()
            .flatten()
            .next()
            .copied()
            .unwrap_or_else(|| t.minimum.unwrap_or(1).max(1))
            .into(),
        SchemaKind::Type(Type::Number(_)) => 1.into(),
        SchemaKind::Type(Type::Boolean(_)) => true.into(),
        _ => Value::Null,
    }
}

/// An OpenAPI 3.0 Schema Object (as JSON) as JSON Schema 2020-12: references into
/// `$defs`, `nullable` as a `null` type (or an `anyOf` with one), boolean exclusive
/// bounds as numbers, the integer formats as their ranges; examples, discriminators and
/// `x-` extensions dropped (annotations only). Keywords are told from property names.
pub fn convert(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in map {
        let v = match k.as_str() {
            "$ref" => match v.as_str() {
                Some(r) => Value::from(r.replace("#/components/schemas/", "#/$defs/")),
                None => v.clone(),
            },
            "properties" => match v {
                Value::Object(p) => p.iter().map(|(n, s)| (n.clone(), convert(s))).collect(),
                _ => v.clone(),
            },
            "items" | "not" => convert(v),
            "additionalProperties" if v.is_object() => convert(v),
            "oneOf" | "anyOf" | "allOf" => match v {
                Value::Array(a) => a.iter().map(convert).collect(),
                _ => v.clone(),
            },
            "example" | "discriminator" | "nullable" | "exclusiveMinimum" | "exclusiveMaximum" => {
                continue;
            }
            k if k.starts_with("x-") => continue,
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    if map.contains_key("$ref") {
        // OpenAPI 3.0 ignores whatever stands beside a reference.
        out.retain(|k, _| k == "$ref");
    }
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if map.get(flag) == Some(&Value::Bool(true))
            && let Some(b) = out.remove(bound)
        {
            out.insert(flag.into(), b);
        }
    }
    let range = match map.get("format").and_then(Value::as_str) {
        Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
        Some("int64") => Some((i64::MIN, i64::MAX)),
        _ => None,
    };
    if let Some((lo, hi)) = range {
        out.entry("minimum").or_insert(lo.into());
        out.entry("maximum").or_insert(hi.into());
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        return nullable(out);
    }
    Value::Object(out)
}

fn nullable(mut out: Map<String, Value>) -> Value {
    match out.get("type").cloned() {
        Some(Value::String(t)) => {
            out.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(values)) = out.get_mut("enum") {
                values.push(Value::Null);
            }
            Value::Object(out)
        }
        _ => json!({"anyOf": [Value::Object(out), {"type": "null"}]}),
    }
}

impl Docs<'_> {
    /// Where a sample's schema travels on this side: (in requests, in replies). One that no
    /// operation uses is taken to travel both ways, as the rules take it.
    fn travels(&self, s: &Sample) -> (bool, bool) {
        self.usage
            .get(s.service.as_str())
            .and_then(|u| u.get(&s.schema).copied())
            .unwrap_or((true, true))
    }
}

/// Where the rules and the documents disagree on `m`'s wire verdicts.
pub fn check(m: &Mutation, worst: &Verdicts, proof: &Proof) -> Vec<String> {
    let mut problems = Vec::new();
    for (consumer, seen, rule) in [
        (
            "wire_old_clients",
            proof.old_clients,
            worst.wire_old_clients,
        ),
        (
            "wire_new_clients",
            proof.new_clients,
            worst.wire_new_clients,
        ),
    ] {
        if seen != rule {
            let why = proof
                .why
                .get(consumer)
                .map_or("no sample refused", String::as_str);
            problems.push(format!(
                "{}: {consumer}: spec-diff says {rule:?}, the documents {seen:?} ({why})",
                m.id
            ));
        }
    }
    problems
}

/// Both wire verdicts of `m`: the documents of `base` against those `m` makes of them.
pub fn prove(base: &Side, m: &Mutation) -> Result<Proof> {
    let head = load::parse(&m.id, apply(base, m)?).map_err(|e| anyhow!("{e}"))?;
    let head = &head;
    let (old, new) = (Docs::new(base), Docs::new(head));
    let mut proof = Proof {
        old_clients: Verdict::Compatible,
        new_clients: Verdict::Compatible,
        why: BTreeMap::new(),
    };
    let mut witness = |old_clients: bool, why: String| {
        let (verdict, key) = if old_clients {
            (&mut proof.old_clients, "wire_old_clients")
        } else {
            (&mut proof.new_clients, "wire_new_clients")
        };
        *verdict = Verdict::Breaking;
        proof.why.entry(key).or_insert(why);
    };
    // Values: an old one refused by the new documents, a new one by the old documents.
    // (`true`: given by the mutation, so it must be valid on its own side.)
    let examples = example_samples(base);
    fn given(list: &[Sample]) -> Vec<(&Sample, bool)> {
        list.iter().map(|s| (s, true)).collect()
    }
    let mut old_values = given(&m.old_samples);
    old_values.extend(given(&m.wire.old));
    old_values.extend(examples.iter().map(|s| (s, false)));
    let mut new_values = given(&m.new_samples);
    new_values.extend(given(&m.wire.new));
    let values = [
        (&old, &new, true, old_values),
        (&new, &old, false, new_values),
    ];
    for (own, other, is_old, samples) in values {
        for (s, given) in samples {
            match own.valid(s) {
                Some(Ok(())) => {}
                // An example its own documents refuse is no value of them.
                Some(Err(_)) | None if !given => continue,
                Some(Err(e)) => bail!(
                    "{}: sample of {}.{} refused by its own side: {e}",
                    m.id,
                    s.service,
                    s.schema
                ),
                None => bail!(
                    "{}: no schema {}.{} on the sample's own side",
                    m.id,
                    s.service,
                    s.schema
                ),
            }
            let Some(Err(e)) = other.valid(s) else {
                continue;
            };
            let (request, reply) = own.travels(s);
            let what = |how: &str| format!("{how} {}.{} refused: {e}", s.service, s.schema);
            // An old request value refused by the new deployment breaks old clients; an
            // old reply refused by new clients breaks them; and the other way round.
            if request {
                witness(
                    is_old,
                    what(if is_old {
                        "an old request's"
                    } else {
                        "a new request's"
                    }),
                );
            }
            if reply {
                witness(
                    !is_old,
                    what(if is_old {
                        "an old reply's"
                    } else {
                        "a new reply's"
                    }),
                );
            }
        }
    }
    // Requests: routes, parameters and bodies.
    let requests = [
        (&old, &new, true, &m.wire.old_requests),
        (&new, &old, false, &m.wire.new_requests),
    ];
    for (own, other, is_old, given) in requests {
        let written = own.requests().into_iter().map(|r| (r, false));
        for (r, given) in given.iter().cloned().map(|r| (r, true)).chain(written) {
            match own.accepts(&r) {
                Ok(()) => {}
                Err(_) if !given => continue,
                Err(e) => bail!(
                    "{}: request {} {} refused by its own side: {e}",
                    m.id,
                    r.method,
                    r.path
                ),
            }
            if let Err(e) = other.accepts(&r) {
                let who = if is_old {
                    "an old client's"
                } else {
                    "a new client's"
                };
                witness(is_old, format!("{who} {} {}: {e}", r.method, r.path));
            }
        }
    }
    Ok(proof)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_and_bounds_read_as_openapi_means_them() {
        let s = convert(&json!({
            "type": "integer", "format": "int32", "nullable": true,
            "minimum": 0, "exclusiveMinimum": true, "example": 3,
            "x-enum-varnames": ["A"]
        }));
        assert_eq!(
            s,
            json!({"type": ["integer", "null"], "format": "int32",
                   "exclusiveMinimum": 0, "minimum": i32::MIN, "maximum": i32::MAX})
        );
        let r = convert(
            &json!({"properties": {"example": {"$ref": "#/components/schemas/X", "description": "d"}}}),
        );
        assert_eq!(r, json!({"properties": {"example": {"$ref": "#/$defs/X"}}}));
        assert_eq!(routing("/a/{id}/b/{x}"), "/a/{}/b/{}");
    }
}
