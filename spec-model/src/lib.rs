//! The one reader of the licensing platform's OpenAPI documents (`spec/order.yaml`,
//! `spec/member.yaml`, the sandbox's admin spec): every build script and tool of the
//! workspace that reads a spec does it through this crate.
//!
//! - [`load`]: the typed OpenAPI 3.0 model (`openapiv3`, re-exported), which the SDK's
//!   generator, the schema export, the simulator's console forms and the conformance proxy's
//!   checks all read;
//! - [`operations`]: the facts of every operation (method, path, idempotency, error codes,
//!   paging, request and reply schemas), checked to be there;
//! - [`raw`] and [`to_yaml`]: the same YAML as an untyped JSON value, for what the typed
//!   model drops (unknown keywords, extensions beside a `$ref`) and for tools that edit a
//!   document;
//! - [`schema`], [`parameter`], [`response`], [`request_body`]: a `$ref` to a component
//!   followed.

#![forbid(unsafe_code)]

mod operations;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use openapiv3;
pub use operations::{
    Data, Op, Pagination, object_property, operations, ref_name, resolve_parameter,
    response_schema, service_codes,
};

use openapiv3::{Components, OpenAPI, Parameter, ReferenceOr, RequestBody, Response, Schema};
use serde_json::Value;

/// Prefix of every reference to a component schema.
pub const SCHEMA_REF_PREFIX: &str = "#/components/schemas/";

/// Parses a spec's YAML text as OpenAPI 3.0.
pub fn load(text: &str) -> Result<OpenAPI, String> {
    serde_norway::from_str(text).map_err(|e| format!("not a valid OpenAPI 3.0 document: {e}"))
}

/// Parses a spec's YAML text as an untyped value: every keyword kept, keys sorted.
pub fn raw(text: &str) -> Result<Value, String> {
    serde_norway::from_str(text).map_err(|e| format!("not valid YAML: {e}"))
}

/// An untyped document written back as YAML.
pub fn to_yaml(document: &Value) -> Result<String, String> {
    serde_norway::to_string(document).map_err(|e| format!("cannot be written as YAML: {e}"))
}

/// The component `kind` (`schemas`, `parameters`, …) a local `$ref` names, if it is one.
fn component_name<'r>(reference: &'r str, kind: &str) -> Option<&'r str> {
    reference
        .strip_prefix("#/components/")?
        .strip_prefix(kind)?
        .strip_prefix('/')
        .filter(|name| !name.contains('/'))
}

/// A schema with its `$ref`s followed (at most 32 in a row, which ends a circle of
/// references); `None` when one names no component schema.
pub fn schema<'a>(
    components: Option<&'a Components>,
    mut schema: &'a ReferenceOr<Schema>,
) -> Option<&'a Schema> {
    for _ in 0..32 {
        match schema {
            ReferenceOr::Item(item) => return Some(item),
            ReferenceOr::Reference { reference } => {
                let name = component_name(reference, "schemas")?;
                schema = components?.schemas.get(name)?;
            }
        }
    }
    None
}

/// A boxed schema (a property's, an array's items) with its `$ref`s followed.
pub fn boxed_schema<'a>(
    components: Option<&'a Components>,
    schema: &'a ReferenceOr<Box<Schema>>,
) -> Option<&'a Schema> {
    match schema {
        ReferenceOr::Item(item) => Some(item),
        ReferenceOr::Reference { reference } => {
            let name = component_name(reference, "schemas")?;
            self::schema(components, components?.schemas.get(name)?)
        }
    }
}

/// A parameter with a `#/components/parameters/…` reference followed.
pub fn parameter<'a>(
    components: Option<&'a Components>,
    p: &'a ReferenceOr<Parameter>,
) -> Option<&'a Parameter> {
    resolve_parameter(p, components)
}

/// A response with a `#/components/responses/…` reference followed.
pub fn response<'a>(
    components: Option<&'a Components>,
    r: &'a ReferenceOr<Response>,
) -> Option<&'a Response> {
    match r {
        ReferenceOr::Item(r) => Some(r),
        ReferenceOr::Reference { reference } => components?
            .responses
            .get(component_name(reference, "responses")?)?
            .as_item(),
    }
}

/// A request body with a `#/components/requestBodies/…` reference followed.
pub fn request_body<'a>(
    components: Option<&'a Components>,
    b: &'a ReferenceOr<RequestBody>,
) -> Option<&'a RequestBody> {
    match b {
        ReferenceOr::Item(b) => Some(b),
        ReferenceOr::Reference { reference } => components?
            .request_bodies
            .get(component_name(reference, "requestBodies")?)?
            .as_item(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_followed_and_circles_end() {
        let api = load(&testing::fragment(
            "      x-error-codes: ['40000']",
            "    Alias: {$ref: '#/components/schemas/Thing'}\n    Loop: {$ref: '#/components/schemas/Loop'}",
        ))
        .unwrap();
        let components = api.components.as_ref();
        let alias = ReferenceOr::ref_("#/components/schemas/Alias");
        let thing = schema(components, &alias).unwrap();
        assert!(matches!(
            thing.schema_kind,
            openapiv3::SchemaKind::Type(openapiv3::Type::Object(_))
        ));
        assert!(schema(components, &ReferenceOr::ref_("#/components/schemas/Loop")).is_none());
        assert!(schema(components, &ReferenceOr::ref_("#/components/schemas/None")).is_none());
        assert!(schema(components, &ReferenceOr::ref_("other.yaml#/Thing")).is_none());
    }

    #[test]
    fn raw_keeps_what_the_typed_model_drops_and_writes_back() {
        let text = "openapi: 3.0.3\ninfo: {title: t, version: v1}\npaths: {}\nx-unknown: [1]\n";
        let value = raw(text).unwrap();
        assert_eq!(value["x-unknown"], serde_json::json!([1]));
        assert_eq!(raw(&to_yaml(&value).unwrap()).unwrap(), value);
        assert!(raw("a: [").unwrap_err().starts_with("not valid YAML"));
        assert!(
            load("openapi: 3.0.3\n")
                .unwrap_err()
                .starts_with("not a valid OpenAPI 3.0 document")
        );
    }
}
