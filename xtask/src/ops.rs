//! The operations of the three specs as `clients --test` and `docs --check` need them:
//! read from the raw YAML, extensions included, so that what the checks expect comes from
//! the committed documents and nowhere else.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;

/// A spec the other-language clients and the reference pages are made from.
pub struct Document {
    /// `order`, `member` or `sandbox`: the reference page's and the generated module's name.
    pub name: &'static str,
    /// Path relative to the repository root.
    pub spec: &'static str,
    /// Whether the platform's envelope (HTTP 200/299, business codes) applies: the two
    /// services, not the simulator's admin API.
    pub service: bool,
}

/// The two services, then the simulator's sandbox admin API.
pub const DOCUMENTS: &[Document] = &[
    Document {
        name: "order",
        spec: "spec/order.yaml",
        service: true,
    },
    Document {
        name: "member",
        spec: "spec/member.yaml",
        service: true,
    },
    Document {
        name: "sandbox",
        spec: "sim/spec/sandbox.yaml",
        service: false,
    },
];

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One operation of a spec.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// The name the clients, the simulator's journal and its fault rules use.
    pub operation_id: String,
    /// Upper case, as the reference pages show it.
    pub method: String,
    /// The path template (`/me/api/v1/enterprise/{enterpriseGlobalId}/member`).
    pub path: String,
    /// The one-line summary, the operation's title on the reference page.
    pub summary: String,
    /// The documented business codes (the document's `x-error-codes` and the operation's)
    /// for a service; the documented non-2xx HTTP statuses for the admin API.
    pub codes: Vec<String>,
}

/// What a spec documents.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalogue {
    /// One per operation (path and method) of the spec.
    pub operations: Vec<Operation>,
    /// Every code of the document: the union of the operations' codes and, for a service,
    /// every value of its `ErrorCode` schema.
    pub codes: Vec<String>,
}

/// Reads and lists one document.
pub fn load(root: &Path, document: &Document) -> Result<Catalogue> {
    let path = root.join(document.spec);
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let raw = licensing_spec::raw(&text).map_err(|e| anyhow::anyhow!("{}: {e}", document.spec))?;
    catalogue(&raw, document)
}

/// Lists the operations of a parsed document.
pub fn catalogue(raw: &Value, document: &Document) -> Result<Catalogue> {
    let common = strings(raw.get("x-error-codes"));
    let paths = raw
        .get("paths")
        .and_then(Value::as_object)
        .with_context(|| format!("{}: no paths", document.spec))?;
    let mut operations = Vec::new();
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(*method) else {
                continue;
            };
            let operation_id = op
                .get("operationId")
                .and_then(Value::as_str)
                .with_context(|| format!("{}: {method} {path} has no operationId", document.spec))?
                .to_owned();
            let codes = if document.service {
                let mut codes = strings(op.get("x-error-codes"));
                codes.extend(
                    common
                        .iter()
                        .filter(|c| !codes.contains(c))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
                codes
            } else {
                op.get("responses")
                    .and_then(Value::as_object)
                    .map(|r| r.keys().filter(|s| !s.starts_with('2')).cloned().collect())
                    .unwrap_or_default()
            };
            operations.push(Operation {
                operation_id,
                method: method.to_uppercase(),
                path: path.clone(),
                summary: op
                    .get("summary")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                codes,
            });
        }
    }
    if operations.is_empty() {
        bail!("{}: no operations", document.spec);
    }
    let mut codes: BTreeSet<String> = operations.iter().flat_map(|o| o.codes.clone()).collect();
    if document.service {
        let listed = strings(raw.pointer("/components/schemas/ErrorCode/enum"));
        if listed.is_empty() {
            bail!("{}: no ErrorCode schema with an enum", document.spec);
        }
        codes.extend(listed);
    }
    Ok(Catalogue {
        operations,
        codes: codes.into_iter().collect(),
    })
}

/// A list of codes, written as strings or numbers.
fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str, document: &Document) -> Catalogue {
        catalogue(&licensing_spec::raw(yaml).unwrap(), document).unwrap()
    }

    #[test]
    fn a_service_operation_has_its_codes_and_the_documents() {
        let yaml = "
x-error-codes: ['13004', '500']
paths:
  /a:
    parameters: []
    post:
      operationId: makeA
      summary: Make an A
      x-error-codes: ['60027', '500']
components:
  schemas:
    ErrorCode:
      enum: ['13004', '500', '60027', '99999']
";
        let c = parse(yaml, &DOCUMENTS[0]);
        assert_eq!(c.operations.len(), 1);
        let op = &c.operations[0];
        assert_eq!(
            (op.operation_id.as_str(), op.method.as_str()),
            ("makeA", "POST")
        );
        assert_eq!(op.codes, ["60027", "500", "13004"]);
        assert_eq!(c.codes, ["13004", "500", "60027", "99999"]);
    }

    #[test]
    fn an_admin_operation_has_its_error_statuses() {
        let yaml = "
paths:
  /b/{id}:
    get:
      operationId: getB
      responses: {'200': {}, '401': {}, '404': {}}
    delete:
      operationId: deleteB
      responses: {'204': {}, '401': {}}
";
        let c = parse(yaml, &DOCUMENTS[2]);
        let ids: Vec<_> = c
            .operations
            .iter()
            .map(|o| o.operation_id.as_str())
            .collect();
        assert_eq!(ids, ["getB", "deleteB"]);
        assert_eq!(c.operations[0].codes, ["401", "404"]);
        assert_eq!(c.codes, ["401", "404"]);
    }

    #[test]
    fn the_committed_specs_list_nineteen_service_operations() {
        let root = crate::workspace_root();
        let count: usize = DOCUMENTS
            .iter()
            .filter(|d| d.service)
            .map(|d| load(&root, d).unwrap().operations.len())
            .sum();
        assert_eq!(count, 19);
    }
}
