//! A service's spec as the probe reads it, through the spec model: its operations, their
//! parameters and credentials, pointers into it.

use licensing_sdk::operations::Service;
use licensing_spec::{
    Op,
    openapiv3::{
        OpenAPI, Operation, Parameter, ParameterSchemaOrContent, ReferenceOr, SchemaKind,
        SecurityScheme, Type,
    },
};
use serde::Serialize;

use super::quotes::Quote;

/// What a check rests on: a documented sentence, or a pointer into a spec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Source {
    /// A sentence (or table row) of a platform document, verbatim.
    Doc {
        /// The document's file name.
        document: &'static str,
        /// The words.
        quote: &'static str,
    },
    /// A JSON pointer into a spec file.
    Spec {
        /// The spec file, from the repository's root.
        spec: &'static str,
        /// The pointer.
        pointer: String,
    },
}

impl From<Quote> for Source {
    fn from(q: Quote) -> Self {
        Source::Doc {
            document: q.0,
            quote: q.1,
        }
    }
}

/// A credential header of an operation's security requirement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Credential {
    /// The header's name on the wire.
    pub header: String,
    /// Whether its value is `Bearer <token>`.
    pub bearer: bool,
    /// The spec's security scheme.
    pub scheme: String,
}

/// A service's spec: the document read by the spec model, and its operations' facts.
pub struct Spec {
    pub service: Service,
    pub file: &'static str,
    pub doc: OpenAPI,
    pub ops: Vec<Op>,
}

impl Spec {
    /// Both services' specs, as the SDK was generated from them.
    pub fn both() -> Result<Vec<Spec>, String> {
        [
            (Service::Order, "spec/order.yaml"),
            (Service::Member, "spec/member.yaml"),
        ]
        .into_iter()
        .map(|(service, file)| {
            let doc =
                licensing_spec::load(service.openapi()).map_err(|e| format!("{file}: {e}"))?;
            let ops = licensing_spec::operations(&doc).map_err(|e| format!("{file}: {e}"))?;
            Ok(Spec {
                service,
                file,
                doc,
                ops,
            })
        })
        .collect()
    }

    /// The operation with this id.
    pub fn op(&self, id: &str) -> Option<&Op> {
        self.ops.iter().find(|o| o.id == id)
    }

    /// The spec's own model of an operation.
    pub fn operation(&self, op: &Op) -> Option<&Operation> {
        self.doc
            .operations()
            .find(|(_, _, o)| o.operation_id.as_deref() == Some(op.id.as_str()))
            .map(|(_, _, o)| o)
    }

    /// A pointer to an operation in this spec, `#/paths/~1me~1…/get`, and `rest` after it.
    pub fn pointer(&self, op: &Op, rest: &str) -> Source {
        Source::Spec {
            spec: self.file,
            pointer: format!(
                "#/paths/{}/{}{rest}",
                op.path.replace('~', "~0").replace('/', "~1"),
                op.method.to_ascii_lowercase()
            ),
        }
    }

    /// A pointer to a component of this spec.
    pub fn component(&self, kind: &str, name: &str) -> Source {
        Source::Spec {
            spec: self.file,
            pointer: format!("#/components/{kind}/{name}"),
        }
    }

    /// An operation's parameters, references followed.
    pub fn params(&self, op: &Op) -> Vec<Param> {
        let components = self.doc.components.as_ref();
        let Some(operation) = self.operation(op) else {
            return Vec::new();
        };
        let path_item = self.doc.paths.paths.get(&op.path).and_then(|p| p.as_item());
        let inherited = path_item.into_iter().flat_map(|p| p.parameters.iter());
        inherited
            .chain(operation.parameters.iter())
            .filter_map(|p| licensing_spec::parameter(components, p))
            .map(|p| Param::of(self, p))
            .collect()
    }

    /// The credential headers an operation's security requirement names.
    pub fn credentials(&self, op: &Op) -> Vec<Credential> {
        let requirement = self
            .operation(op)
            .and_then(|o| o.security.as_ref())
            .or(self.doc.security.as_ref())
            .and_then(|all| all.first());
        let schemes = self.doc.components.as_ref().map(|c| &c.security_schemes);
        let mut found = Vec::new();
        for name in requirement.into_iter().flat_map(|r| r.keys()) {
            let Some(ReferenceOr::Item(scheme)) = schemes.and_then(|s| s.get(name)) else {
                continue;
            };
            let (header, bearer) = match scheme {
                SecurityScheme::HTTP { scheme, .. } if scheme.eq_ignore_ascii_case("bearer") => {
                    ("Authorization".to_string(), true)
                }
                SecurityScheme::APIKey { name, .. } => (name.clone(), false),
                _ => continue,
            };
            found.push(Credential {
                header,
                bearer,
                scheme: name.clone(),
            });
        }
        found
    }
}

/// Where a parameter goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Path,
    Query,
    Other,
}

/// An operation's parameter, as the probe fills it.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub place: Place,
    pub required: bool,
    /// The values a string enum allows, in the spec's order.
    pub values: Vec<String>,
}

impl Param {
    fn of(spec: &Spec, p: &Parameter) -> Param {
        let (place, data) = match p {
            Parameter::Path { parameter_data, .. } => (Place::Path, parameter_data),
            Parameter::Query { parameter_data, .. } => (Place::Query, parameter_data),
            Parameter::Header { parameter_data, .. } | Parameter::Cookie { parameter_data, .. } => {
                (Place::Other, parameter_data)
            }
        };
        let values = match &data.format {
            ParameterSchemaOrContent::Schema(s) => {
                licensing_spec::schema(spec.doc.components.as_ref(), s)
                    .map(|s| match &s.schema_kind {
                        SchemaKind::Type(Type::String(t)) => {
                            t.enumeration.iter().flatten().cloned().collect()
                        }
                        _ => Vec::new(),
                    })
                    .unwrap_or_default()
            }
            ParameterSchemaOrContent::Content(_) => Vec::new(),
        };
        Param {
            name: data.name.clone(),
            place,
            required: data.required,
            values,
        }
    }
}

/// The GET a service's refusal checks are sent as: the first GET of the spec whose
/// required parameters are the enterprise's id and its paging alone.
pub fn refusal_target(spec: &Spec) -> Option<&Op> {
    spec.ops.iter().filter(|o| o.method == "GET").find(|op| {
        let paging: Vec<&str> = op
            .pagination
            .iter()
            .flat_map(|p| [p.page_param.as_str(), p.size_param.as_str()])
            .collect();
        spec.params(op).iter().all(|p| {
            !p.required
                || p.name == "g_nonce"
                || p.name == "enterpriseGlobalId"
                || paging.contains(&p.name.as_str())
        })
    })
}
