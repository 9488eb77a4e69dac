//! The facts of every operation (method, path, idempotency, error codes, paging, request
//! and reply schemas), taken from the spec alone, with the checks that each is there.

use std::collections::BTreeSet;

use heck::{ToSnakeCase, ToUpperCamelCase};
use openapiv3::{OpenAPI, Parameter, ReferenceOr, Schema, SchemaKind, StatusCode, Type};
use serde_json::Value;

/// What an operation's reply carries in `data`, as the SDK hands it to the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// No `data` (or documented as null): `()`.
    Unit,
    /// A named component schema.
    Named(String),
    /// A list of a named component schema.
    List(String),
    /// A list of strings.
    Strings,
}

/// The paging of a list operation (`x-pagination`), by wire name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pagination {
    /// The page-number query parameter.
    pub page_param: String,
    /// The page-size query parameter.
    pub size_param: String,
    /// The page size's documented `maximum`, when the spec gives one.
    pub size_max: Option<i64>,
    /// The page's list of items.
    pub items: String,
    /// The schema of one item.
    pub item_type: String,
    /// The page's "there is a next page" flag.
    pub has_next: String,
}

/// Everything the generator knows about one operation, read from the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// `operationId`.
    pub id: String,
    /// Upper-case HTTP method.
    pub method: String,
    /// The path template, as in the spec.
    pub path: String,
    /// `x-idempotent`.
    pub idempotent: bool,
    /// The document-level `x-error-codes` followed by the operation's own.
    pub error_codes: Vec<String>,
    /// `x-partial-success-code`.
    pub partial_code: Option<String>,
    /// `x-pagination`.
    pub pagination: Option<Pagination>,
    /// The request body's schema, if the operation takes one.
    pub request: Option<String>,
    /// The reply envelope's schema (the same for HTTP 200 and 299).
    pub reply: String,
    /// The reply's `data`.
    pub data: Data,
}

impl Op {
    /// progenitor's name for the operation's builder.
    pub fn builder(&self) -> String {
        self.id.to_upper_camel_case()
    }

    /// progenitor's name for the client method.
    pub fn method_name(&self) -> String {
        self.id.to_snake_case()
    }
}

/// The document-level `x-error-codes`: the codes every operation of the service may
/// answer.
pub fn service_codes(spec: &OpenAPI) -> Result<Vec<String>, String> {
    code_list(spec.extensions.get("x-error-codes")).ok_or_else(|| {
        "the document needs a top-level `x-error-codes` list (the codes every operation may \
         answer)"
            .to_string()
    })
}

fn code_list(value: Option<&Value>) -> Option<Vec<String>> {
    value?
        .as_array()?
        .iter()
        .map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// The values of the `ErrorCode` enum schema.
fn catalogue(spec: &OpenAPI) -> BTreeSet<String> {
    let Some(ReferenceOr::Item(s)) = spec
        .components
        .as_ref()
        .and_then(|c| c.schemas.get("ErrorCode"))
    else {
        return BTreeSet::new();
    };
    match &s.schema_kind {
        SchemaKind::Type(Type::String(t)) => t.enumeration.iter().flatten().cloned().collect(),
        _ => BTreeSet::new(),
    }
}

/// The facts of every operation, in the spec's order; fails on the first operation that
/// lacks one the SDK needs.
pub fn operations(spec: &OpenAPI) -> Result<Vec<Op>, String> {
    let service = service_codes(spec)?;
    let catalogue = catalogue(spec);
    for code in &service {
        if !catalogue.contains(code) {
            return Err(format!(
                "x-error-codes: `{code}` is not a value of the `ErrorCode` schema"
            ));
        }
    }
    let mut ops = Vec::new();
    let mut ids = BTreeSet::new();
    for (path, method, op) in spec.operations() {
        let at = format!("{} {path}", method.to_uppercase());
        let id = op
            .operation_id
            .clone()
            .ok_or(format!("{at}: no operationId"))?;
        if !ids.insert(id.clone()) {
            return Err(format!("{id}: operationId used twice"));
        }
        let ext = |key: &str| op.extensions.get(key);
        let idempotent = ext("x-idempotent").and_then(Value::as_bool).ok_or(format!(
            "{id}: `x-idempotent: true|false` is required (retry classification)"
        ))?;
        let error_codes = error_codes(&id, &service, &catalogue, ext("x-error-codes"))?;
        let partial_code = ext("x-partial-success-code")
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or(format!("{id}: x-partial-success-code must be a string"))
            })
            .transpose()?;
        if let Some(code) = &partial_code
            && !error_codes.contains(code)
        {
            return Err(format!(
                "{id}: x-partial-success-code `{code}` is not in its x-error-codes"
            ));
        }
        let reply = reply(spec, &id, op)?;
        let request = request(&id, op)?;
        let pagination = match ext("x-pagination") {
            None => None,
            Some(p) => Some(pagination(spec, &id, &reply, p, op)?),
        };
        ops.push(Op {
            data: data(spec, &id, &reply)?,
            method: method.to_uppercase(),
            path: path.to_string(),
            idempotent,
            error_codes,
            partial_code,
            pagination,
            request,
            reply,
            id,
        });
    }
    Ok(ops)
}

/// The document-level codes followed by the operation's own `x-error-codes`, each a value
/// of `ErrorCode` and listed once.
fn error_codes(
    id: &str,
    service: &[String],
    catalogue: &BTreeSet<String>,
    own: Option<&Value>,
) -> Result<Vec<String>, String> {
    let own = code_list(own).ok_or(format!(
        "{id}: `x-error-codes` (a list of the codes the document gives for it, beyond the \
         document-level ones) is required"
    ))?;
    let mut codes = service.to_vec();
    for code in own {
        if !catalogue.contains(&code) {
            return Err(format!(
                "{id}: x-error-codes: `{code}` is not a value of the `ErrorCode` schema"
            ));
        }
        if codes.contains(&code) {
            return Err(format!(
                "{id}: x-error-codes: `{code}` is listed twice (or is already document-wide)"
            ));
        }
        codes.push(code);
    }
    Ok(codes)
}

/// The reply envelope's schema: one for HTTP 200 and 299 alike.
fn reply(spec: &OpenAPI, id: &str, op: &openapiv3::Operation) -> Result<String, String> {
    let schema = |status| {
        op.responses
            .responses
            .get(&StatusCode::Code(status))
            .and_then(|r| response_schema(spec, r))
    };
    let reply = schema(200).ok_or(format!("{id}: no HTTP 200 reply schema"))?;
    for status in [200, 299] {
        if schema(status).as_deref() != Some(reply.as_str()) {
            return Err(format!(
                "{id}: HTTP {status} must reply with `{reply}` (one envelope per operation)"
            ));
        }
    }
    Ok(reply)
}

/// The request body's schema, if the operation takes one.
fn request(id: &str, op: &openapiv3::Operation) -> Result<Option<String>, String> {
    match &op.request_body {
        None => Ok(None),
        Some(ReferenceOr::Item(body)) => body
            .content
            .get("application/json")
            .and_then(|m| m.schema.as_ref())
            .and_then(ref_name)
            .map(Some)
            .ok_or(format!(
                "{id}: the request body must be an application/json named schema"
            )),
        Some(ReferenceOr::Reference { .. }) => {
            Err(format!("{id}: the request body must be inline"))
        }
    }
}

/// The schema name of a response's `application/json` body.
pub fn response_schema(spec: &OpenAPI, r: &ReferenceOr<openapiv3::Response>) -> Option<String> {
    let r = match r {
        ReferenceOr::Item(r) => r,
        ReferenceOr::Reference { reference } => {
            let name = reference.strip_prefix("#/components/responses/")?;
            spec.components.as_ref()?.responses.get(name)?.as_item()?
        }
    };
    r.content
        .get("application/json")?
        .schema
        .as_ref()
        .and_then(ref_name)
}

fn pagination(
    spec: &OpenAPI,
    id: &str,
    reply: &str,
    p: &Value,
    op: &openapiv3::Operation,
) -> Result<Pagination, String> {
    let field = |k: &str| {
        p.get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(format!("{id}: x-pagination.{k} is required"))
    };
    let page = object_property(spec, reply, "data")
        .and_then(|s| ref_name(&s))
        .ok_or(format!(
            "{id}: x-pagination needs `data` to reference a page schema"
        ))?;
    let items = field("items")?;
    let item_schema = object_property(spec, &page, &items).ok_or(format!(
        "{id}: x-pagination.items: page schema `{page}` has no `{items}`"
    ))?;
    let item_type = match item_schema {
        ReferenceOr::Item(s) => match s.schema_kind {
            SchemaKind::Type(Type::Array(a)) => a.items.and_then(|i| match i {
                ReferenceOr::Reference { reference } => reference
                    .strip_prefix("#/components/schemas/")
                    .map(str::to_string),
                ReferenceOr::Item(_) => None,
            }),
            _ => None,
        },
        ReferenceOr::Reference { .. } => None,
    }
    .ok_or(format!(
        "{id}: x-pagination.items: `{page}.{items}` must be an array of a named schema"
    ))?;
    let has_next = field("hasNext")?;
    if object_property(spec, &page, &has_next).is_none() {
        return Err(format!(
            "{id}: x-pagination.hasNext: page schema `{page}` has no `{has_next}`"
        ));
    }
    let page_param = field("pageParam")?;
    let size_param = field("sizeParam")?;
    let components = spec.components.as_ref();
    let query = |name: &str| {
        op.parameters.iter().find_map(|p| {
            resolve_parameter(p, components).filter(|p| {
                matches!(p, Parameter::Query { .. }) && p.parameter_data_ref().name == name
            })
        })
    };
    for (key, name) in [("pageParam", &page_param), ("sizeParam", &size_param)] {
        if query(name).is_none() {
            return Err(format!(
                "{id}: x-pagination.{key}: no query parameter `{name}`"
            ));
        }
    }
    let size_max = query(&size_param).and_then(|p| match &p.parameter_data_ref().format {
        openapiv3::ParameterSchemaOrContent::Schema(ReferenceOr::Item(schema)) => {
            match &schema.schema_kind {
                SchemaKind::Type(Type::Integer(int)) => int.maximum,
                _ => None,
            }
        }
        _ => None,
    });
    Ok(Pagination {
        page_param,
        size_param,
        size_max,
        items,
        item_type,
        has_next,
    })
}

fn data(spec: &OpenAPI, id: &str, reply: &str) -> Result<Data, String> {
    let schema_name = |reference: &str| {
        reference
            .strip_prefix("#/components/schemas/")
            .map(str::to_string)
    };
    Ok(match object_property(spec, reply, "data") {
        None => Data::Unit,
        Some(ReferenceOr::Reference { reference }) => Data::Named(
            schema_name(&reference).ok_or(format!("{id}: `{reply}.data`: unsupported $ref"))?,
        ),
        Some(ReferenceOr::Item(s)) => match &s.schema_kind {
            SchemaKind::Type(Type::Array(a)) => match a.items.as_ref() {
                Some(ReferenceOr::Reference { reference }) => Data::List(
                    schema_name(reference)
                        .ok_or(format!("{id}: `{reply}.data`: unsupported $ref"))?,
                ),
                Some(ReferenceOr::Item(i))
                    if matches!(i.schema_kind, SchemaKind::Type(Type::String(_))) =>
                {
                    Data::Strings
                }
                _ => {
                    return Err(format!(
                        "{id}: `{reply}.data` array items must be a named schema or a string"
                    ));
                }
            },
            // A schema without a type: the document says `data` is null.
            SchemaKind::Any(_) => Data::Unit,
            _ => return Err(format!("{id}: `{reply}.data`: unsupported schema")),
        },
    })
}

/// A parameter, following a `#/components/parameters/…` reference.
pub fn resolve_parameter<'a>(
    p: &'a ReferenceOr<Parameter>,
    components: Option<&'a openapiv3::Components>,
) -> Option<&'a Parameter> {
    match p {
        ReferenceOr::Item(p) => Some(p),
        ReferenceOr::Reference { reference } => {
            let name = reference.strip_prefix("#/components/parameters/")?;
            components?.parameters.get(name)?.as_item()
        }
    }
}

/// The component name a `$ref` points at.
pub fn ref_name(s: &ReferenceOr<Schema>) -> Option<String> {
    match s {
        ReferenceOr::Reference { reference } => reference
            .strip_prefix("#/components/schemas/")
            .map(str::to_string),
        ReferenceOr::Item(_) => None,
    }
}

/// A property of an object component schema.
pub fn object_property(
    spec: &OpenAPI,
    schema: &str,
    property: &str,
) -> Option<ReferenceOr<Schema>> {
    let s = spec.components.as_ref()?.schemas.get(schema)?.as_item()?;
    let SchemaKind::Type(Type::Object(o)) = &s.schema_kind else {
        return None;
    };
    Some(match o.properties.get(property)? {
        ReferenceOr::Item(b) => ReferenceOr::Item((**b).clone()),
        ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{load, testing::fragment};

    fn ops(op_extra: &str) -> Result<Vec<Op>, String> {
        operations(&load(&fragment(op_extra, "")).unwrap())
    }

    const CODES: &str = "      x-error-codes: ['40000']";

    #[test]
    fn reads_every_fact() {
        let ops = ops(&format!(
            "{CODES}\n      x-pagination: {{pageParam: pageNum, sizeParam: pageSize, items: list, hasNext: hasNextPage}}"
        ))
        .unwrap();
        let op = &ops[0];
        assert_eq!(op.id, "listThings");
        assert_eq!((op.method.as_str(), op.path.as_str()), ("GET", "/things"));
        assert!(op.idempotent);
        assert_eq!(op.error_codes, ["500", "40000"]);
        assert_eq!(op.reply, "Reply");
        assert_eq!(op.data, Data::Named("Page".into()));
        assert_eq!(op.request, None);
        let p = op.pagination.as_ref().unwrap();
        assert_eq!(p.item_type, "Thing");
        assert_eq!(op.builder(), "ListThings");
        assert_eq!(op.method_name(), "list_things");
    }

    #[test]
    fn missing_facts_name_the_operation() {
        assert_eq!(
            ops("").unwrap_err(),
            "listThings: `x-error-codes` (a list of the codes the document gives for it, \
             beyond the document-level ones) is required"
        );
        assert_eq!(
            ops("      x-error-codes: ['13004']").unwrap_err(),
            "listThings: x-error-codes: `13004` is not a value of the `ErrorCode` schema"
        );
        assert_eq!(
            ops("      x-error-codes: ['500']").unwrap_err(),
            "listThings: x-error-codes: `500` is listed twice (or is already document-wide)"
        );
        assert_eq!(
            ops(&format!("{CODES}\n      x-partial-success-code: '60027'")).unwrap_err(),
            "listThings: x-partial-success-code `60027` is not in its x-error-codes"
        );
        assert_eq!(
            ops(&format!(
                "{CODES}\n      x-pagination: {{pageParam: pageNum, sizeParam: pageSize, items: rows, hasNext: hasNextPage}}"
            ))
            .unwrap_err(),
            "listThings: x-pagination.items: page schema `Page` has no `rows`"
        );
        assert_eq!(
            ops(&format!(
                "{CODES}\n      x-pagination: {{pageParam: page, sizeParam: pageSize, items: list, hasNext: hasNextPage}}"
            ))
            .unwrap_err(),
            "listThings: x-pagination.pageParam: no query parameter `page`"
        );
    }

    #[test]
    fn document_level_codes_are_required() {
        let text = fragment(CODES, "").replace("x-error-codes: ['500']\n", "");
        assert!(
            operations(&load(&text).unwrap())
                .unwrap_err()
                .starts_with("the document needs a top-level `x-error-codes`")
        );
    }
}
