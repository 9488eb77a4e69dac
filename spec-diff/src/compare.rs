//! The walk over two versions of one spec: operations matched by `operationId` (or, when
//! that changed, by method and path), their parameters, bodies, replies and error codes,
//! then every component schema, property by property. Each difference becomes one
//! [`Change`] with its [`Kind`] and the direction its part travels in; [`rules`](crate::rules)
//! turns that into verdicts.
//!
//! A component schema is compared once, where it is defined, and its changes name the
//! operations that use it. A schema or property removed while one of the same shape (its
//! documentation aside) is added is one rename, not a removal and an addition.
//!
//! The walk is one `Differ` whose methods are filed by what they compare: this file
//! holds its state and the matching of renamed schemas, `operations.rs` the operations
//! (parameters, bodies, replies, error codes), `schemas.rs` a schema's own keywords,
//! `objects.rs` an object's properties and a union's alternatives.

use std::collections::{BTreeMap, BTreeSet};

use openapiv3::{OpenAPI, ReferenceOr, Schema};
use serde_json::Value;

mod facts;
mod objects;
mod operations;
mod schemas;

use crate::rules::{Dir, Kind, Verdict, Verdicts, verdicts};
use facts::reachable;
use licensing_spec::{resolve_parameter, response_schema};

const SCHEMAS: &str = "#/components/schemas/";

/// One difference between the two versions.
#[derive(Clone, Debug)]
pub struct Change {
    pub spec: String,
    /// The `operationId` it touches; for a component schema, every operation that uses it
    /// (`, `-separated), or none; `*` for the document's own lists.
    pub operation: Option<String>,
    /// Where, as a JSON pointer into the new version (into the old one for what is gone).
    pub pointer: String,
    pub summary: String,
    pub verdicts: Verdicts,
}

/// Every change from `old` to `new`, the versions of the spec `service`.
pub fn diff(service: &str, old: &OpenAPI, new: &OpenAPI) -> Vec<Change> {
    let mut d = Differ {
        service,
        old,
        new,
        renames: BTreeMap::new(),
        usage: BTreeMap::new(),
        users: BTreeMap::new(),
        out: Vec::new(),
    };
    d.find_renames();
    d.usage();
    d.document();
    d.operations();
    d.components();
    d.out
}

struct Differ<'a> {
    service: &'a str,
    old: &'a OpenAPI,
    new: &'a OpenAPI,
    /// Old component name → new name, for the schemas renamed.
    renames: BTreeMap<String, String>,
    /// By new name (old name for the removed): where the schema travels.
    usage: BTreeMap<String, (bool, bool)>,
    /// By new name (old name for the removed): the operations that use it.
    users: BTreeMap<String, BTreeSet<String>>,
    out: Vec<Change>,
}

/// Where a schema is being compared.
#[derive(Clone)]
struct At {
    pointer: String,
    /// `Schema.property[]…`, for the summary.
    what: String,
    operation: String,
    dir: Dir,
    /// The value is always there (a required property, a list item, a whole body): a
    /// nullable change then changes the Rust type.
    required: bool,
    /// Parameters are not exported as JSON Schemas.
    parameter: bool,
}

impl At {
    fn child(&self, token: &str, what: String, required: bool) -> At {
        At {
            pointer: format!("{}/{}", self.pointer, escape(token)),
            what,
            operation: self.operation.clone(),
            dir: self.dir,
            required,
            parameter: self.parameter,
        }
    }
}

/// A schema or a reference to one, borrowed whatever box it comes in.
#[derive(Clone, Copy)]
enum S<'a> {
    Ref(&'a str),
    Item(&'a Schema),
}

fn view(s: &ReferenceOr<Schema>) -> S<'_> {
    match s {
        ReferenceOr::Reference { reference } => S::Ref(reference),
        ReferenceOr::Item(s) => S::Item(s),
    }
}

fn view_boxed(s: &ReferenceOr<Box<Schema>>) -> S<'_> {
    match s {
        ReferenceOr::Reference { reference } => S::Ref(reference),
        ReferenceOr::Item(s) => S::Item(s),
    }
}

/// Escapes one JSON Pointer token (RFC 6901).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn schemas(api: &OpenAPI) -> impl Iterator<Item = (&String, &ReferenceOr<Schema>)> {
    api.components.iter().flat_map(|c| c.schemas.iter())
}

fn schema<'a>(api: &'a OpenAPI, name: &str) -> Option<&'a ReferenceOr<Schema>> {
    api.components.as_ref()?.schemas.get(name)
}

fn code_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A schema as JSON without what only documents it, with references renamed: two schemas
/// of the same shape compare equal.
fn shape(value: &Value, renames: &BTreeMap<String, String>) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "description" | "title" | "example" | "examples" | "x-enum-descriptions"
                    )
                })
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("$ref", Value::String(r)) => {
                            let renamed = r
                                .strip_prefix(SCHEMAS)
                                .and_then(|n| renames.get(n))
                                .map(|n| format!("{SCHEMAS}{n}"));
                            Value::String(renamed.unwrap_or_else(|| r.clone()))
                        }
                        _ => shape(v, renames),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| shape(v, renames)).collect()),
        other => other.clone(),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl Differ<'_> {
    fn push(&mut self, at: &At, kind: Kind, summary: String) {
        let mut v = verdicts(&kind, at.dir);
        if at.parameter {
            v.schemas = Verdict::Compatible;
        }
        self.out.push(Change {
            spec: self.service.to_string(),
            operation: Some(at.operation.clone()).filter(|o| !o.is_empty()),
            pointer: at.pointer.clone(),
            summary,
            verdicts: v,
        });
    }

    fn renamed(&self, old: &str) -> String {
        self.renames
            .get(old)
            .cloned()
            .unwrap_or_else(|| old.to_string())
    }

    /// Pairs each removed component schema with an added one of the same shape.
    fn find_renames(&mut self) {
        let new_names: BTreeSet<&String> = schemas(self.new).map(|(n, _)| n).collect();
        let old_names: BTreeSet<&String> = schemas(self.old).map(|(n, _)| n).collect();
        let removed: Vec<&String> = old_names.difference(&new_names).copied().collect();
        let mut added: Vec<&String> = new_names.difference(&old_names).copied().collect();
        for r in removed {
            let old_schema = to_json(schema(self.old, r).expect("listed"));
            let found = added.iter().position(|a| {
                let mut map = self.renames.clone();
                map.insert(r.clone(), (*a).clone());
                let new_schema = to_json(schema(self.new, a).expect("listed"));
                shape(&old_schema, &map) == shape(&new_schema, &map)
            });
            if let Some(i) = found {
                self.renames.insert(r.clone(), added.remove(i).clone());
            }
        }
    }

    /// Which schemas travel in requests and which in replies, in either version, and the
    /// operations that use each.
    fn usage(&mut self) {
        for (api, old) in [(self.old, true), (self.new, false)] {
            let components = api.components.as_ref();
            for (_, _, op) in api.operations() {
                let id = op.operation_id.clone().unwrap_or_default();
                let mut request = BTreeSet::new();
                let mut reply = BTreeSet::new();
                for p in &op.parameters {
                    if let Some(p) = resolve_parameter(p, components)
                        && let openapiv3::ParameterSchemaOrContent::Schema(s) =
                            &p.parameter_data_ref().format
                    {
                        reachable(api, view(s), &mut request);
                    }
                }
                if let Some(ReferenceOr::Item(body)) = &op.request_body {
                    for media in body.content.values() {
                        if let Some(s) = &media.schema {
                            reachable(api, view(s), &mut request);
                        }
                    }
                }
                for r in op.responses.responses.values() {
                    if let Some(name) = response_schema(api, r) {
                        reachable(api, S::Ref(&format!("{SCHEMAS}{name}")), &mut reply);
                    }
                }
                for (names, is_request) in [(request, true), (reply, false)] {
                    for name in names {
                        let name = if old { self.renamed(&name) } else { name };
                        let entry = self.usage.entry(name.clone()).or_default();
                        if is_request {
                            entry.0 = true;
                        } else {
                            entry.1 = true;
                        }
                        self.users.entry(name).or_default().insert(id.clone());
                    }
                }
            }
        }
    }

    fn component_at(&self, name: &str) -> At {
        let dir = match self.usage.get(name) {
            Some((true, false)) => Dir::Request,
            Some((false, true)) => Dir::Reply,
            _ => Dir::Both,
        };
        let operation = match self.users.get(name) {
            Some(users) if !users.is_empty() => {
                users.iter().cloned().collect::<Vec<_>>().join(", ")
            }
            _ => String::new(), // no operation: `None` in the change
        };
        At {
            pointer: format!("/components/schemas/{}", escape(name)),
            what: name.to_string(),
            operation,
            dir,
            required: true,
            parameter: false,
        }
    }
}
