//! The walk over two versions of one spec: operations matched by `operationId` (or, when
//! that changed, by method and path), their parameters, bodies, replies and error codes,
//! then every component schema, property by property. Each difference becomes one
//! [`Change`] with its [`Kind`] and the direction its part travels in; [`rules`](super::rules) turns
//! that into verdicts.
//!
//! A component schema is compared once, where it is defined, and its changes name the
//! operations that use it. A schema or property removed while one of the same shape (its
//! documentation aside) is added is one rename, not a removal and an addition.

use std::collections::{BTreeMap, BTreeSet};

use openapiv3::{
    AdditionalProperties, OpenAPI, Operation, Parameter, ReferenceOr, Schema, SchemaKind,
    StatusCode, Type,
};
use serde_json::Value;

mod facts;

use super::rules::{Dir, Kind, Verdicts, verdicts};
use facts::{is_plain_list, kind_name, reachable, rust_integer, show};
use licensing_codegen::spec::{resolve_parameter, response_schema};

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
            v.schemas = super::rules::Verdict::Compatible;
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

    /// The document-level `x-error-codes` and `info`.
    fn document(&mut self) {
        let at = At {
            pointer: "/x-error-codes".into(),
            what: "x-error-codes".into(),
            operation: "*".into(),
            dir: Dir::Reply,
            required: true,
            parameter: false,
        };
        self.codes(
            &at,
            code_list(self.old.extensions.get("x-error-codes")),
            code_list(self.new.extensions.get("x-error-codes")),
            "every operation",
        );
        if to_json(&self.old.info) != to_json(&self.new.info) {
            let at = At {
                pointer: "/info".into(),
                ..at
            };
            self.push(&at, Kind::Documentation, "`info` changed".into());
        }
    }

    fn codes(&mut self, at: &At, old: Vec<String>, new: Vec<String>, whose: &str) {
        for code in &new {
            if !old.contains(code) {
                self.push(
                    at,
                    Kind::ErrorCodeAdded,
                    format!("error code `{code}` added for {whose}"),
                );
            }
        }
        for code in &old {
            if !new.contains(code) {
                self.push(
                    at,
                    Kind::ErrorCodeRemoved,
                    format!("error code `{code}` removed for {whose}"),
                );
            }
        }
    }

    fn operations(&mut self) {
        let old = ops_of(self.old);
        let new = ops_of(self.new);
        let mut new_only: Vec<&String> = new.keys().filter(|k| !old.contains_key(*k)).collect();
        for (id, (path, method, op)) in &old {
            let (new_id, (new_path, new_method, new_op)) = match new.get(id) {
                Some(found) => (id.clone(), found),
                None => {
                    let same_place = new_only.iter().position(|n| {
                        let (p, m, _) = &new[*n];
                        p == path && m == method
                    });
                    match same_place {
                        Some(i) => {
                            let n = new_only.remove(i);
                            let at = op_at(n, path, method);
                            self.push(
                                &at,
                                Kind::OperationRenamed,
                                format!("operation `{id}` renamed `{n}` ({} {path})", up(method)),
                            );
                            (n.clone(), &new[n])
                        }
                        None => {
                            let at = op_at(id, path, method);
                            self.push(
                                &at,
                                Kind::OperationRemoved,
                                format!("operation `{id}` ({} {path}) removed", up(method)),
                            );
                            continue;
                        }
                    }
                }
            };
            let at = op_at(&new_id, new_path, new_method);
            if new_path != path {
                self.push(
                    &at,
                    Kind::PathChanged,
                    format!("`{new_id}`: path `{path}` → `{new_path}`"),
                );
            }
            if new_method != method {
                self.push(
                    &at,
                    Kind::MethodChanged,
                    format!("`{new_id}`: method {} → {}", up(method), up(new_method)),
                );
            }
            self.operation(&at, op, new_op);
        }
        for id in new_only {
            let (path, method, _) = &new[id];
            let at = op_at(id, path, method);
            self.push(
                &at,
                Kind::OperationAdded,
                format!("operation `{id}` ({} {path}) added", up(method)),
            );
        }
    }

    fn operation(&mut self, at: &At, old: &Operation, new: &Operation) {
        let id = at.operation.clone();
        let docs = |o: &Operation| {
            let mut ext = o.extensions.clone();
            ext.retain(|k, _| matches!(k.as_str(), "x-idempotent-reason"));
            (
                o.summary.clone(),
                o.description.clone(),
                o.tags.clone(),
                to_json(&ext),
                o.deprecated,
            )
        };
        if docs(old) != docs(new) {
            self.push(
                at,
                Kind::Documentation,
                format!("`{id}`: summary, description or tags changed"),
            );
        }
        let ext = |o: &Operation, k: &str| o.extensions.get(k).cloned();
        if ext(old, "x-idempotent") != ext(new, "x-idempotent") {
            // A retry policy, not a shape: no consumer's code or data is refused.
            self.push(
                at,
                Kind::Documentation,
                format!("`{id}`: x-idempotent changed (retries)"),
            );
        }
        for key in ["x-pagination", "x-partial-success-code"] {
            if ext(old, key) != ext(new, key) {
                let at = At {
                    pointer: format!("{}/{key}", at.pointer),
                    ..at.clone()
                };
                self.push(&at, Kind::Other, format!("`{id}`: {key} changed"));
            }
        }
        let codes_at = At {
            pointer: format!("{}/x-error-codes", at.pointer),
            dir: Dir::Reply,
            ..at.clone()
        };
        self.codes(
            &codes_at,
            code_list(old.extensions.get("x-error-codes")),
            code_list(new.extensions.get("x-error-codes")),
            &format!("`{id}`"),
        );
        self.parameters(at, old, new);
        self.body(at, old, new);
        self.replies(at, old, new);
    }

    fn parameters(&mut self, at: &At, old: &Operation, new: &Operation) {
        let (old_params, new_params) = (params_of(self.old, old), params_of(self.new, new));
        let id = at.operation.clone();
        let mut added: Vec<&(String, String)> = new_params
            .keys()
            .filter(|k| !old_params.contains_key(*k))
            .collect();
        for (key, (_, op)) in &old_params {
            let data = op.parameter_data_ref();
            let Some((i, np)) = new_params.get(key) else {
                // Renamed: a new parameter in the same place of the same shape.
                let same = added.iter().position(|k| {
                    let n = new_params[*k].1.parameter_data_ref();
                    k.0 == key.0
                        && n.required == data.required
                        && shape(&to_json(&n.format), &self.renames)
                            == shape(&to_json(&data.format), &self.renames)
                });
                let param_at = At {
                    pointer: format!("{}/parameters", at.pointer),
                    dir: Dir::Request,
                    parameter: true,
                    ..at.clone()
                };
                match same {
                    Some(j) => {
                        let k = added.remove(j);
                        self.push(
                            &param_at,
                            Kind::PropertyRenamed {
                                required: data.required,
                                closed: false,
                                closed_before: false,
                            },
                            format!("`{id}`: {} parameter `{}` renamed `{}`", key.0, key.1, k.1),
                        );
                    }
                    None => self.push(
                        &param_at,
                        Kind::ParameterRemoved {
                            required: data.required,
                        },
                        format!("`{id}`: {} parameter `{}` removed", key.0, key.1),
                    ),
                }
                continue;
            };
            let n = np.parameter_data_ref();
            let p_at = At {
                pointer: format!("{}/parameters/{i}", at.pointer),
                what: format!("{id}({})", key.1),
                operation: id.clone(),
                dir: Dir::Request,
                required: n.required,
                parameter: true,
            };
            match (data.required, n.required) {
                (true, false) => self.push(
                    &p_at,
                    Kind::RequiredToOptional { rust_type: false },
                    format!("`{id}`: parameter `{}` now optional", key.1),
                ),
                (false, true) => self.push(
                    &p_at,
                    Kind::OptionalToRequired { rust_type: false },
                    format!("`{id}`: parameter `{}` now required", key.1),
                ),
                _ => {}
            }
            if data.description != n.description || to_json(&data.example) != to_json(&n.example) {
                self.push(
                    &p_at,
                    Kind::Documentation,
                    format!("`{id}`: parameter `{}` description changed", key.1),
                );
            }
            if let (
                openapiv3::ParameterSchemaOrContent::Schema(o),
                openapiv3::ParameterSchemaOrContent::Schema(s),
            ) = (&data.format, &n.format)
            {
                let s_at = p_at.child("schema", p_at.what.clone(), n.required);
                self.schema(&s_at, view(o), view(s));
            }
        }
        for key in added {
            let (i, p) = new_params[key];
            let required = p.parameter_data_ref().required;
            let p_at = At {
                pointer: format!("{}/parameters/{i}", at.pointer),
                dir: Dir::Request,
                parameter: true,
                ..at.clone()
            };
            self.push(
                &p_at,
                Kind::ParameterAdded { required },
                format!(
                    "`{id}`: {} {} parameter `{}` added",
                    if required { "required" } else { "optional" },
                    key.0,
                    key.1
                ),
            );
        }
    }

    fn body(&mut self, at: &At, old: &Operation, new: &Operation) {
        let b_at = At {
            pointer: format!("{}/requestBody", at.pointer),
            what: format!("{} request body", at.operation),
            dir: Dir::Request,
            ..at.clone()
        };
        let id = &at.operation;
        match (body_of(old), body_of(new)) {
            (None, None) => {}
            (Some(_), None) => self.push(
                &b_at,
                Kind::TypeChanged,
                format!("`{id}`: request body removed"),
            ),
            (None, Some(_)) => self.push(
                &b_at,
                Kind::TypeChanged,
                format!("`{id}`: request body added"),
            ),
            (Some((or, os)), Some((nr, ns))) => {
                if or && !nr {
                    self.push(
                        &b_at,
                        Kind::RequiredToOptional { rust_type: true },
                        format!("`{id}`: request body now optional"),
                    );
                }
                if !or && nr {
                    self.push(
                        &b_at,
                        Kind::OptionalToRequired { rust_type: true },
                        format!("`{id}`: request body now required"),
                    );
                }
                if let (Some(o), Some(n)) = (os, ns) {
                    let s_at = b_at.child("content", b_at.what.clone(), true);
                    let s_at = s_at.child("application/json", s_at.what.clone(), true);
                    let s_at = s_at.child("schema", s_at.what.clone(), true);
                    self.schema(&s_at, view(o), view(n));
                }
            }
        }
    }

    fn replies(&mut self, at: &At, old: &Operation, new: &Operation) {
        let statuses: BTreeSet<&StatusCode> = old
            .responses
            .responses
            .keys()
            .chain(new.responses.responses.keys())
            .collect();
        let id = &at.operation;
        for status in statuses {
            let r_at = At {
                pointer: format!("{}/responses/{status}", at.pointer),
                what: format!("{id} reply {status}"),
                dir: Dir::Reply,
                ..at.clone()
            };
            let o = old.responses.responses.get(status);
            let n = new.responses.responses.get(status);
            match (o, n) {
                (Some(o), Some(n)) => {
                    let (os, ns) = (response_schema(self.old, o), response_schema(self.new, n));
                    if os.as_ref().map(|s| self.renamed(s)) != ns {
                        self.push(
                            &r_at,
                            Kind::TypeChanged,
                            format!(
                                "`{id}`: HTTP {status} replies `{}` (was `{}`)",
                                ns.unwrap_or_default(),
                                os.unwrap_or_default()
                            ),
                        );
                    }
                }
                (Some(_), None) => self.push(
                    &r_at,
                    Kind::Other,
                    format!("`{id}`: HTTP {status} reply removed"),
                ),
                (None, Some(_)) => self.push(
                    &r_at,
                    Kind::Other,
                    format!("`{id}`: HTTP {status} reply added"),
                ),
                (None, None) => {}
            }
        }
    }

    fn components(&mut self) {
        let old_names: Vec<String> = schemas(self.old).map(|(n, _)| n.clone()).collect();
        let new_names: BTreeSet<String> = schemas(self.new).map(|(n, _)| n.clone()).collect();
        for name in &old_names {
            let new_name = self.renamed(name);
            let old_schema = schema(self.old, name).expect("listed");
            let Some(new_schema) = schema(self.new, &new_name) else {
                let at = self.component_at(name);
                self.push(&at, Kind::SchemaRemoved, format!("schema `{name}` removed"));
                continue;
            };
            let at = self.component_at(&new_name);
            if new_name != *name {
                self.push(
                    &at,
                    Kind::SchemaRenamed,
                    format!("schema `{name}` renamed `{new_name}`"),
                );
            }
            self.schema(&at, view(old_schema), view(new_schema));
        }
        for name in &new_names {
            if !old_names.contains(name) && !self.renames.values().any(|n| n == name) {
                let at = self.component_at(name);
                self.push(&at, Kind::SchemaAdded, format!("schema `{name}` added"));
            }
        }
    }

    /// Two schemas at the same place; a reference to a component is compared where the
    /// component is defined.
    fn schema(&mut self, at: &At, old: S<'_>, new: S<'_>) {
        match (old, new) {
            (S::Ref(o), S::Ref(n)) => {
                let o_name = o.strip_prefix(SCHEMAS).unwrap_or(o);
                let n_name = n.strip_prefix(SCHEMAS).unwrap_or(n);
                if self.renamed(o_name) != n_name {
                    self.push(
                        at,
                        Kind::TypeChanged,
                        format!("`{}`: now `{n_name}` (was `{o_name}`)", at.what),
                    );
                }
            }
            (S::Item(o), S::Item(n)) => self.inline(at, o, n),
            _ => self.push(
                at,
                Kind::TypeChanged,
                format!(
                    "`{}`: a reference replaced by an inline schema, or back",
                    at.what
                ),
            ),
        }
    }

    fn inline(&mut self, at: &At, o: &Schema, n: &Schema) {
        let what = at.what.clone();
        let (od, nd) = (&o.schema_data, &n.schema_data);
        // An enum's descriptions change with its values: that change is reported as the
        // values', not once more as documentation.
        let values_changed = |s: &Schema| match &s.schema_kind {
            SchemaKind::Type(Type::String(t)) => to_json(&t.enumeration),
            SchemaKind::Type(Type::Integer(t)) => to_json(&t.enumeration),
            _ => Value::Null,
        };
        let enum_changed = values_changed(o) != values_changed(n);
        let doc_ext = |s: &Schema| {
            if enum_changed {
                None
            } else {
                s.schema_data.extensions.get("x-enum-descriptions").cloned()
            }
        };
        if od.title != nd.title
            || od.description != nd.description
            || to_json(&od.example) != to_json(&nd.example)
            || to_json(&od.default) != to_json(&nd.default)
            || od.deprecated != nd.deprecated
            || doc_ext(o) != doc_ext(n)
        {
            self.push(
                at,
                Kind::Documentation,
                format!("`{what}`: description, example or default changed"),
            );
        }
        if od.nullable != nd.nullable {
            let rust_type = at.required;
            if nd.nullable {
                self.push(
                    at,
                    Kind::NullableAdded { rust_type },
                    format!("`{what}`: now nullable"),
                );
            } else {
                self.push(
                    at,
                    Kind::NullableRemoved { rust_type },
                    format!("`{what}`: no longer nullable"),
                );
            }
        }
        let names = |s: &Schema| s.schema_data.extensions.get("x-enum-varnames").cloned();
        match (&o.schema_kind, &n.schema_kind) {
            (SchemaKind::Type(Type::String(a)), SchemaKind::Type(Type::String(b))) => {
                if to_json(&a.format) != to_json(&b.format) {
                    self.push(
                        at,
                        Kind::TypeChanged,
                        format!(
                            "`{what}`: format {} → {}",
                            to_json(&a.format),
                            to_json(&b.format)
                        ),
                    );
                }
                let values =
                    |v: &[Option<String>]| -> Vec<String> { v.iter().flatten().cloned().collect() };
                self.enum_values(at, values(&a.enumeration), values(&b.enumeration));
                if names(o) != names(n) && a.enumeration == b.enumeration {
                    self.push(
                        at,
                        Kind::EnumVariantRenamed,
                        format!("`{what}`: x-enum-varnames changed"),
                    );
                }
                let constrained = |t: &openapiv3::StringType| {
                    t.pattern.is_some() || t.min_length.is_some() || t.max_length.is_some()
                };
                let rust_type = constrained(a) != constrained(b);
                if a.pattern != b.pattern {
                    let kind = match (&a.pattern, &b.pattern) {
                        (_, None) => Kind::Loosened { rust_type },
                        (None, _) => Kind::Tightened {
                            checked: true,
                            rust_type,
                        },
                        // Two patterns are not compared: either may accept what the other refuses.
                        _ => Kind::Changed {
                            checked: true,
                            rust_type,
                        },
                    };
                    self.push(
                        at,
                        kind,
                        format!(
                            "`{what}`: pattern {} → {}",
                            show(&a.pattern),
                            show(&b.pattern)
                        ),
                    );
                }
                let len = |x: Option<usize>| x.map(|v| v as i64);
                self.bound(
                    at,
                    "maxLength",
                    len(a.max_length),
                    len(b.max_length),
                    true,
                    rust_type,
                    true,
                );
                self.bound(
                    at,
                    "minLength",
                    len(a.min_length),
                    len(b.min_length),
                    false,
                    rust_type,
                    true,
                );
            }
            (SchemaKind::Type(Type::Integer(a)), SchemaKind::Type(Type::Integer(b))) => {
                let format = |t: &openapiv3::IntegerType| to_json(&t.format);
                let (fa, fb) = (format(a), format(b));
                if fa != fb {
                    let kind = match (fa.as_str(), fb.as_str()) {
                        (Some("int32"), Some("int64")) => Kind::FormatWidened,
                        (Some("int64"), Some("int32")) => Kind::FormatNarrowed,
                        _ => Kind::TypeChanged,
                    };
                    self.push(at, kind, format!("`{what}`: format {fa} → {fb}"));
                }
                let values = |v: &[Option<i64>]| -> Vec<String> {
                    v.iter().flatten().map(i64::to_string).collect()
                };
                self.enum_values(at, values(&a.enumeration), values(&b.enumeration));
                if names(o) != names(n) && a.enumeration == b.enumeration {
                    self.push(
                        at,
                        Kind::EnumVariantRenamed,
                        format!("`{what}`: x-enum-varnames changed"),
                    );
                }
                let rust_type = rust_integer(a) != rust_integer(b);
                let min = |t: &openapiv3::IntegerType| {
                    t.minimum.map(|m| m + i64::from(t.exclusive_minimum))
                };
                let max = |t: &openapiv3::IntegerType| {
                    t.maximum.map(|m| m - i64::from(t.exclusive_maximum))
                };
                self.bound(at, "maximum", max(a), max(b), true, rust_type, false);
                self.bound(at, "minimum", min(a), min(b), false, rust_type, false);
            }
            (SchemaKind::Type(Type::Number(a)), SchemaKind::Type(Type::Number(b))) => {
                if to_json(&a.format) != to_json(&b.format) {
                    self.push(at, Kind::TypeChanged, format!("`{what}`: format changed"));
                }
                if to_json(&(
                    a.minimum,
                    a.maximum,
                    a.exclusive_minimum,
                    a.exclusive_maximum,
                )) != to_json(&(
                    b.minimum,
                    b.maximum,
                    b.exclusive_minimum,
                    b.exclusive_maximum,
                )) {
                    // Not ordered here: either way round may refuse a value.
                    self.push(
                        at,
                        Kind::Changed {
                            checked: false,
                            rust_type: false,
                        },
                        format!("`{what}`: bounds changed"),
                    );
                }
            }
            (SchemaKind::Type(Type::Boolean(_)), SchemaKind::Type(Type::Boolean(_))) => {}
            (SchemaKind::Type(Type::Object(a)), SchemaKind::Type(Type::Object(b))) => {
                self.object(at, a, b);
            }
            (SchemaKind::Type(Type::Array(a)), SchemaKind::Type(Type::Array(b))) => {
                match (&a.items, &b.items) {
                    (Some(x), Some(y)) => {
                        let i_at = at.child("items", format!("{what}[]"), true);
                        self.schema(&i_at, view_boxed(x), view_boxed(y));
                    }
                    (None, None) => {}
                    _ => self.push(at, Kind::TypeChanged, format!("`{what}`: items changed")),
                }
                // typify ignores item counts; the SDK checks none from the spec.
                let counts = |x: Option<usize>| x.map(|v| v as i64);
                self.bound(
                    at,
                    "maxItems",
                    counts(a.max_items),
                    counts(b.max_items),
                    true,
                    false,
                    false,
                );
                self.bound(
                    at,
                    "minItems",
                    counts(a.min_items),
                    counts(b.min_items),
                    false,
                    false,
                    false,
                );
                if a.unique_items != b.unique_items {
                    self.push(at, Kind::Other, format!("`{what}`: uniqueItems changed"));
                }
            }
            (SchemaKind::OneOf { one_of: a }, SchemaKind::OneOf { one_of: b })
            | (SchemaKind::AnyOf { any_of: a }, SchemaKind::AnyOf { any_of: b })
            | (SchemaKind::AllOf { all_of: a }, SchemaKind::AllOf { all_of: b }) => {
                self.alternatives(at, a, b);
                if to_json(&od.discriminator) != to_json(&nd.discriminator) && a.len() == b.len() {
                    self.push(at, Kind::Other, format!("`{what}`: discriminator changed"));
                }
            }
            (SchemaKind::Any(a), SchemaKind::Any(b)) => {
                if shape(&to_json(a), &self.renames) != shape(&to_json(b), &self.renames) {
                    self.push(at, Kind::Other, format!("`{what}`: schema changed"));
                }
            }
            (a, b) => self.push(
                at,
                Kind::TypeChanged,
                format!("`{what}`: type {} → {}", kind_name(a), kind_name(b)),
            ),
        }
    }

    fn enum_values(&mut self, at: &At, old: Vec<String>, new: Vec<String>) {
        for v in &new {
            if !old.contains(v) {
                self.push(
                    at,
                    Kind::EnumValueAdded,
                    format!("`{}`: value `{v}` added", at.what),
                );
            }
        }
        for v in &old {
            if !new.contains(v) {
                self.push(
                    at,
                    Kind::EnumValueRemoved,
                    format!("`{}`: value `{v}` removed", at.what),
                );
            }
        }
    }

    /// A bound that is an upper one (`upper`) or a lower one; `checked` when the SDK's
    /// generated types enforce it.
    #[allow(clippy::too_many_arguments)]
    fn bound(
        &mut self,
        at: &At,
        name: &str,
        old: Option<i64>,
        new: Option<i64>,
        upper: bool,
        rust_type: bool,
        checked: bool,
    ) {
        let tightened = match (old, new) {
            (a, b) if a == b => return,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => (b < a) == upper,
            (None, None) => return,
        };
        let kind = if tightened {
            Kind::Tightened { checked, rust_type }
        } else {
            Kind::Loosened { rust_type }
        };
        let show = |v: Option<i64>| v.map_or("none".to_string(), |v| v.to_string());
        self.push(
            at,
            kind,
            format!(
                "`{}`: {name} {} → {} ({})",
                at.what,
                show(old),
                show(new),
                if tightened { "tightened" } else { "loosened" }
            ),
        );
    }

    fn object(&mut self, at: &At, a: &openapiv3::ObjectType, b: &openapiv3::ObjectType) {
        let what = at.what.clone();
        let closed = |o: &openapiv3::ObjectType| {
            matches!(
                o.additional_properties,
                Some(AdditionalProperties::Any(false))
            )
        };
        let (closed_before, closed_now) = (closed(a), closed(b));
        match (closed_before, closed_now) {
            (false, true) => self.push(
                at,
                Kind::Tightened {
                    checked: true,
                    rust_type: false,
                },
                format!("`{what}`: additionalProperties now false"),
            ),
            (true, false) => self.push(
                at,
                Kind::Loosened { rust_type: false },
                format!("`{what}`: additionalProperties no longer false"),
            ),
            _ => {}
        }
        let prop_json = |s: &ReferenceOr<Box<Schema>>| to_json(s);
        let mut added: Vec<&String> = b
            .properties
            .keys()
            .filter(|k| !a.properties.contains_key(*k))
            .collect();
        for (name, old_prop) in &a.properties {
            let was_required = a.required.contains(name);
            let Some(new_prop) = b.properties.get(name) else {
                let same = added.iter().position(|k| {
                    b.required.contains(*k) == was_required
                        && shape(&prop_json(&b.properties[*k]), &self.renames)
                            == shape(&prop_json(old_prop), &self.renames)
                });
                let p_at = at.child("properties", what.clone(), true);
                match same {
                    Some(i) => {
                        let k = added.remove(i);
                        let p_at = p_at.child(k, format!("{what}.{k}"), was_required);
                        self.push(
                            &p_at,
                            Kind::PropertyRenamed {
                                required: was_required,
                                closed: closed_now,
                                closed_before,
                            },
                            format!("`{what}.{name}` renamed `{k}`"),
                        );
                    }
                    None => {
                        let p_at = p_at.child(name, format!("{what}.{name}"), was_required);
                        self.push(
                            &p_at,
                            Kind::PropertyRemoved {
                                required: was_required,
                                closed: closed_now,
                            },
                            format!(
                                "`{what}.{name}` ({}) removed",
                                if was_required { "required" } else { "optional" }
                            ),
                        );
                    }
                }
                continue;
            };
            let is_required = b.required.contains(name);
            let p_at = at.child("properties", what.clone(), true).child(
                name,
                format!("{what}.{name}"),
                is_required,
            );
            // typify keeps an optional list a `Vec` (empty when absent): its type does not
            // follow its requiredness, unless it is nullable.
            let rust_type = !is_plain_list(new_prop) || !is_plain_list(old_prop);
            match (was_required, is_required) {
                (true, false) => self.push(
                    &p_at,
                    Kind::RequiredToOptional { rust_type },
                    format!("`{what}.{name}`: now optional"),
                ),
                (false, true) => self.push(
                    &p_at,
                    Kind::OptionalToRequired { rust_type },
                    format!("`{what}.{name}`: now required"),
                ),
                _ => {}
            }
            self.schema(&p_at, view_boxed(old_prop), view_boxed(new_prop));
        }
        for name in added {
            let required = b.required.contains(name);
            let p_at = at.child("properties", what.clone(), true).child(
                name,
                format!("{what}.{name}"),
                required,
            );
            self.push(
                &p_at,
                Kind::PropertyAdded {
                    required,
                    closed: closed_before,
                },
                format!(
                    "`{what}.{name}` ({}) added",
                    if required { "required" } else { "optional" }
                ),
            );
        }
    }

    fn alternatives(&mut self, at: &At, a: &[ReferenceOr<Schema>], b: &[ReferenceOr<Schema>]) {
        let what = at.what.clone();
        let refs = |v: &[ReferenceOr<Schema>], old: bool| -> Option<Vec<String>> {
            v.iter()
                .map(|s| match s {
                    ReferenceOr::Reference { reference } => {
                        let name = reference.strip_prefix(SCHEMAS)?.to_string();
                        Some(if old { self.renamed(&name) } else { name })
                    }
                    ReferenceOr::Item(_) => None,
                })
                .collect()
        };
        match (refs(a, true), refs(b, false)) {
            (Some(x), Some(y)) => {
                for r in y.iter().filter(|r| !x.contains(r)) {
                    self.push(
                        at,
                        Kind::EnumValueAdded,
                        format!("`{what}`: alternative `{r}` added"),
                    );
                }
                for r in x.iter().filter(|r| !y.contains(r)) {
                    self.push(
                        at,
                        Kind::EnumValueRemoved,
                        format!("`{what}`: alternative `{r}` removed"),
                    );
                }
            }
            _ if a.len() == b.len() => {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let i_at = at.child(&i.to_string(), format!("{what}|{i}"), at.required);
                    self.schema(&i_at, view(x), view(y));
                }
            }
            _ => self.push(at, Kind::Other, format!("`{what}`: alternatives changed")),
        }
    }
}

fn ops_of(api: &OpenAPI) -> BTreeMap<String, (String, String, &Operation)> {
    api.operations()
        .map(|(path, method, op)| {
            (
                op.operation_id
                    .clone()
                    .unwrap_or_else(|| format!("{method} {path}")),
                (path.to_string(), method.to_string(), op),
            )
        })
        .collect()
}

type Params<'a> = BTreeMap<(String, String), (usize, &'a Parameter)>;

/// An operation's parameters by (location, name), with their index in its list.
fn params_of<'a>(api: &'a OpenAPI, op: &'a Operation) -> Params<'a> {
    let components = api.components.as_ref();
    op.parameters
        .iter()
        .enumerate()
        .filter_map(|(i, p)| resolve_parameter(p, components).map(|p| (i, p)))
        .map(|(i, p)| ((location(p), p.parameter_data_ref().name.clone()), (i, p)))
        .collect()
}

/// Whether the request body is required, and its JSON schema.
fn body_of(op: &Operation) -> Option<(bool, Option<&ReferenceOr<Schema>>)> {
    match &op.request_body {
        Some(ReferenceOr::Item(b)) => Some((
            b.required,
            b.content
                .get("application/json")
                .and_then(|m| m.schema.as_ref()),
        )),
        _ => None,
    }
}

fn op_at(id: &str, path: &str, method: &str) -> At {
    At {
        pointer: format!("/paths/{}/{method}", escape(path)),
        what: id.to_string(),
        operation: id.to_string(),
        dir: Dir::Both,
        required: true,
        parameter: false,
    }
}

fn up(method: &str) -> String {
    method.to_uppercase()
}

fn location(p: &Parameter) -> String {
    match p {
        Parameter::Query { .. } => "query",
        Parameter::Header { .. } => "header",
        Parameter::Path { .. } => "path",
        Parameter::Cookie { .. } => "cookie",
    }
    .to_string()
}
