//! The documents as the proxy checks traffic against them: every operation of both
//! OpenAPI specs (the text the SDK was generated from), with its parameters, request body,
//! documented statuses and reply schemas, read once at start.

use std::collections::BTreeMap;

use licensing_sdk::operations::{self, Operation, Service};
use serde_json::Value;

use super::compiled::{Compiler, SchemaId, Schemas, resolve};

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

const METHODS: [&str; 4] = ["get", "post", "put", "delete"];

impl Contract {
    /// Reads both services' documents. An error names the document and what it lacks (a
    /// spec the SDK's generator accepted always loads).
    pub fn load() -> Result<Self, String> {
        let mut compiler = Compiler::default();
        let mut ops = Vec::new();
        let mut by_path: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
        for (index, service) in [Service::Order, Service::Member].into_iter().enumerate() {
            let doc: Value = serde_norway::from_str(service.openapi())
                .map_err(|e| format!("{service:?} document: {e}"))?;
            let paths = doc
                .get("paths")
                .and_then(Value::as_object)
                .ok_or_else(|| format!("{service:?} document: no `paths`"))?;
            for (path, item) in paths {
                let shared = item.get("parameters").and_then(Value::as_array);
                for method in METHODS {
                    let Some(spec) = item.get(method) else {
                        continue;
                    };
                    let id = spec
                        .get("operationId")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("{method} {path}: no operationId"))?;
                    let op = operations::find(id)
                        .ok_or_else(|| format!("{id}: not in the operation table"))?;
                    let contract = read_op(&mut compiler, &doc, index, op, shared, spec)?;
                    by_path
                        .entry(path.clone())
                        .or_default()
                        .push((method.to_ascii_uppercase(), ops.len()));
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

/// `value` with a top-level `$ref` followed.
fn deref<'d>(doc: &'d Value, value: &'d Value) -> Result<&'d Value, String> {
    match value.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(doc, r).ok_or_else(|| format!("{r}: not in the document")),
        None => Ok(value),
    }
}

fn read_op(
    compiler: &mut Compiler,
    doc: &Value,
    index: usize,
    op: &'static Operation,
    shared: Option<&Vec<Value>>,
    spec: &Value,
) -> Result<OpContract, String> {
    let mut params = Vec::new();
    let own = spec.get("parameters").and_then(Value::as_array);
    for p in shared.into_iter().chain(own).flatten() {
        let p = deref(doc, p).map_err(|e| format!("{}: {e}", op.id))?;
        let location = match p.get("in").and_then(Value::as_str) {
            Some("path") => In::Path,
            Some("query") => In::Query,
            Some("header") => In::Header,
            _ => continue,
        };
        params.push(Param {
            name: p["name"].as_str().unwrap_or_default().to_string(),
            location,
            required: p.get("required").and_then(Value::as_bool) == Some(true),
            schema: compiler.compile(doc, index, p.get("schema").unwrap_or(&Value::Null)),
        });
    }
    let body = spec
        .get("requestBody")
        .map(|b| deref(doc, b))
        .transpose()
        .map_err(|e| format!("{}: {e}", op.id))?
        .map(|b| {
            (
                b.get("required").and_then(Value::as_bool) == Some(true),
                compiler.compile(
                    doc,
                    index,
                    b.pointer("/content/application~1json/schema")
                        .unwrap_or(&Value::Null),
                ),
            )
        });
    let mut replies = BTreeMap::new();
    if let Some(responses) = spec.get("responses").and_then(Value::as_object) {
        for (status, reply) in responses {
            let Ok(status) = status.parse::<u16>() else {
                continue;
            };
            let reply = deref(doc, reply).map_err(|e| format!("{}: {e}", op.id))?;
            let schema = reply
                .pointer("/content/application~1json/schema")
                .map(|schema| compiler.compile(doc, index, schema));
            replies.insert(status, schema);
        }
    }
    let security = spec.get("security").or_else(|| doc.get("security"));
    let credentials = credentials(doc, security);
    Ok(OpContract {
        op,
        params,
        credentials,
        body,
        replies,
    })
}

/// The headers of the first security requirement (the documents give one each).
fn credentials(doc: &Value, security: Option<&Value>) -> Vec<Credential> {
    let Some(first) = security
        .and_then(Value::as_array)
        .and_then(|alternatives| alternatives.first())
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    first
        .keys()
        .filter_map(|name| doc.pointer(&format!("/components/securitySchemes/{name}")))
        .filter_map(|scheme| match scheme.get("type").and_then(Value::as_str) {
            Some("http") => Some(Credential {
                header: "Authorization".to_string(),
                bearer: scheme.get("scheme").and_then(Value::as_str) == Some("bearer"),
            }),
            Some("apiKey") if scheme.get("in").and_then(Value::as_str) == Some("header") => {
                Some(Credential {
                    header: scheme.get("name")?.as_str()?.to_string(),
                    bearer: false,
                })
            }
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
