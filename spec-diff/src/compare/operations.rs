//! The operations of two versions: matched by `operationId` (or, when that changed, by
//! method and path), then their documentation, extensions, error codes, parameters,
//! request body and replies; a schema met on the way is handed to `schemas.rs`.

use std::collections::{BTreeMap, BTreeSet};

use openapiv3::{OpenAPI, Operation, Parameter, ReferenceOr, Schema, StatusCode};

use super::{At, Differ, code_list, escape, shape, to_json, view};
use crate::rules::{Dir, Kind};
use licensing_spec::{resolve_parameter, response_schema};

impl Differ<'_> {
    /// The document-level `x-error-codes` and `info`.
    pub(super) fn document(&mut self) {
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

    pub(super) fn operations(&mut self) {
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
                    Kind::RequiredToOptional {
                        rust_type: false,
                        go_type: true,
                    },
                    format!("`{id}`: parameter `{}` now optional", key.1),
                ),
                (false, true) => self.push(
                    &p_at,
                    Kind::OptionalToRequired {
                        rust_type: false,
                        go_type: true,
                    },
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
                        Kind::RequiredToOptional {
                            rust_type: true,
                            go_type: false,
                        },
                        format!("`{id}`: request body now optional"),
                    );
                }
                if !or && nr {
                    self.push(
                        &b_at,
                        Kind::OptionalToRequired {
                            rust_type: true,
                            go_type: false,
                        },
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
