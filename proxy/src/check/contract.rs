//! The documents as the proxy checks traffic against them: every operation of both
//! OpenAPI specs (the text the SDK was generated from), with its parameters, request body,
//! documented statuses and reply schemas, read once at start by the spec model
//! (`licensing-spec`), as the SDK's generator and the schema export read them.

use std::collections::BTreeMap;

use licensing_sdk::operations::{self, Operation, Service};
use licensing_spec::openapiv3::{
    APIKeyLocation, Components, OpenAPI, Parameter, PathItem, ReferenceOr, SecurityRequirement,
    SecurityScheme, StatusCode,
};

use super::compiled::{Compiler, SchemaId, Schemas};

/// Where a parameter is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum In {
    Path,
    Query,
    Header,
}

impl In {
    /// The part of a request a pointer names (`/query/g_nonce`).
    pub fn part(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
            In::Header => "headers",
        }
    }
}

/// One documented parameter, its schema resolved.
#[derive(Debug)]
pub(crate) struct Param {
    pub name: String,
    pub location: In,
    pub required: bool,
    pub schema: SchemaId,
}

/// A header the security requirement asks for.
#[derive(Debug)]
pub(crate) struct Credential {
    /// The header's name as documented.
    pub header: String,
    /// `Authorization: Bearer …` rather than the token alone.
    pub bearer: bool,
}

/// One operation of the documents.
#[derive(Debug)]
pub(crate) struct OpContract {
    pub op: &'static Operation,
    pub params: Vec<Param>,
    pub credentials: Vec<Credential>,
    /// The request body's schema, and whether a body is required.
    pub body: Option<(bool, SchemaId)>,
    /// Documented HTTP statuses with their JSON reply schema.
    pub replies: BTreeMap<u16, Option<SchemaId>>,
}

/// Both documents and their operations, routed by path and method.
pub(crate) struct Contract {
    pub schemas: Schemas,
    pub ops: Vec<OpContract>,
    router: matchit::Router<Vec<(String, usize)>>,
}

impl std::fmt::Debug for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contract")
            .field("operations", &self.ops.len())
            .finish_non_exhaustive()
    }
}

/// A matched operation with its path parameters.
pub(crate) struct Matched<'c> {
    pub contract: &'c OpContract,
    pub path: Vec<(String, String)>,
}

impl Contract {
    /// Reads both services' documents. An error names the document and what it lacks (a
    /// spec the SDK's generator accepted always loads).
    pub fn load() -> Result<Self, String> {
        let mut compiler = Compiler::default();
        let mut ops = Vec::new();
        let mut by_path: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
        for (index, service) in [Service::Order, Service::Member].into_iter().enumerate() {
            let doc = licensing_spec::load(service.openapi())
                .map_err(|e| format!("{service:?} document: {e}"))?;
            let mut paths: Vec<(&String, &ReferenceOr<PathItem>)> = doc.paths.iter().collect();
            paths.sort_by_key(|(path, _)| *path);
            for (path, item) in paths {
                let item = item
                    .as_item()
                    .ok_or_else(|| format!("{path}: a path item by reference"))?;
                let methods = [
                    ("GET", &item.get),
                    ("POST", &item.post),
                    ("PUT", &item.put),
                    ("DELETE", &item.delete),
                ];
                for (method, spec) in methods {
                    let Some(spec) = spec else {
                        continue;
                    };
                    let id = spec
                        .operation_id
                        .as_deref()
                        .ok_or_else(|| format!("{method} {path}: no operationId"))?;
                    let op = operations::find(id)
                        .ok_or_else(|| format!("{id}: not in the operation table"))?;
                    let contract = read_op(&mut compiler, &doc, index, op, item, spec)?;
                    by_path
                        .entry(path.clone())
                        .or_default()
                        .push((method.to_string(), ops.len()));
                    ops.push(contract);
                }
            }
        }
        let mut router = matchit::Router::new();
        for (path, methods) in by_path {
            router
                .insert(path.clone(), methods)
                .map_err(|e| format!("{path}: cannot be routed: {e}"))?;
        }
        Ok(Self {
            schemas: compiler.finish(),
            ops,
            router,
        })
    }

    /// The operation a method and path (percent-encoded, as sent) lead to.
    pub fn find(&self, method: &str, path: &str) -> Option<Matched<'_>> {
        let found = self.router.at(path).ok()?;
        let (_, index) = found.value.iter().find(|(m, _)| m == method)?;
        let path = found
            .params
            .iter()
            .map(|(k, v)| {
                let v = percent_encoding::percent_decode_str(v).decode_utf8_lossy();
                (k.to_string(), v.into_owned())
            })
            .collect();
        Some(Matched {
            contract: &self.ops[*index],
            path,
        })
    }
}

fn read_op(
    compiler: &mut Compiler,
    doc: &OpenAPI,
    index: usize,
    op: &'static Operation,
    item: &PathItem,
    spec: &licensing_spec::openapiv3::Operation,
) -> Result<OpContract, String> {
    let components = doc.components.as_ref();
    let unresolved = |what: &str| format!("{}: {what} not in the document", op.id);
    let mut params = Vec::new();
    for p in item.parameters.iter().chain(&spec.parameters) {
        let p = licensing_spec::parameter(components, p)
            .ok_or_else(|| unresolved("a parameter's reference"))?;
        let location = match p {
            Parameter::Path { .. } => In::Path,
            Parameter::Query { .. } => In::Query,
            Parameter::Header { .. } => In::Header,
            Parameter::Cookie { .. } => continue,
        };
        let data = p.parameter_data_ref();
        let schema = match &data.format {
            licensing_spec::openapiv3::ParameterSchemaOrContent::Schema(schema) => {
                compiler.compile(components, index, schema)
            }
            licensing_spec::openapiv3::ParameterSchemaOrContent::Content(_) => compiler.any(),
        };
        params.push(Param {
            name: data.name.clone(),
            location,
            required: data.required,
            schema,
        });
    }
    let body = spec
        .request_body
        .as_ref()
        .map(|b| {
            licensing_spec::request_body(components, b)
                .ok_or_else(|| unresolved("the request body's reference"))
        })
        .transpose()?
        .map(|b| {
            let schema = b
                .content
                .get("application/json")
                .and_then(|media| media.schema.as_ref());
            (
                b.required,
                match schema {
                    Some(schema) => compiler.compile(components, index, schema),
                    None => compiler.any(),
                },
            )
        });
    let mut replies = BTreeMap::new();
    for (status, reply) in &spec.responses.responses {
        let StatusCode::Code(status) = *status else {
            continue;
        };
        let reply = licensing_spec::response(components, reply)
            .ok_or_else(|| unresolved("a reply's reference"))?;
        let schema = reply
            .content
            .get("application/json")
            .and_then(|media| media.schema.as_ref())
            .map(|schema| compiler.compile(components, index, schema));
        replies.insert(status, schema);
    }
    let security = spec.security.as_ref().or(doc.security.as_ref());
    Ok(OpContract {
        op,
        params,
        credentials: credentials(components, security),
        body,
        replies,
    })
}

/// The headers of the first security requirement (the documents give one each).
fn credentials(
    components: Option<&Components>,
    security: Option<&Vec<SecurityRequirement>>,
) -> Vec<Credential> {
    let Some(first) = security.and_then(|alternatives| alternatives.first()) else {
        return Vec::new();
    };
    let mut names: Vec<&String> = first.keys().collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| components?.security_schemes.get(name)?.as_item())
        .filter_map(|scheme| match scheme {
            SecurityScheme::HTTP { scheme, .. } => Some(Credential {
                header: "Authorization".to_string(),
                bearer: scheme.eq_ignore_ascii_case("bearer"),
            }),
            SecurityScheme::APIKey {
                location: APIKeyLocation::Header,
                name,
                ..
            } => Some(Credential {
                header: name.clone(),
                bearer: false,
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_documents_load_with_every_operation() {
        let contract = Contract::load().unwrap();
        assert_eq!(contract.ops.len(), operations::ALL.len());
        let m = contract
            .find("GET", "/me/api/v1/enterprise/EG-1/members")
            .unwrap();
        assert_eq!(m.contract.op.id, "listMembers");
        assert_eq!(m.path, vec![("enterpriseGlobalId".into(), "EG-1".into())]);
        assert_eq!(
            m.contract.replies.keys().copied().collect::<Vec<_>>(),
            [200, 299]
        );
        let headers: Vec<&str> = m
            .contract
            .credentials
            .iter()
            .map(|c| c.header.as_str())
            .collect();
        assert_eq!(headers.len(), 3, "{headers:?}");
        assert!(
            contract
                .find("POST", "/me/api/v1/enterprise/EG-1/members")
                .is_none()
        );
    }
}
