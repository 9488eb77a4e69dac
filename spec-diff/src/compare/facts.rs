//! What the walk reads off a schema: the Rust type typify gives it, its kind's name, the
//! component schemas it reaches.

use std::collections::BTreeSet;

use openapiv3::{AdditionalProperties, OpenAPI, ReferenceOr, Schema, SchemaKind, Type};

use super::{S, SCHEMAS, schema, view, view_boxed};

pub(super) fn show(v: &Option<String>) -> String {
    v.as_ref().map_or("none".to_string(), |p| format!("`{p}`"))
}

pub(super) fn kind_name(k: &SchemaKind) -> &'static str {
    match k {
        SchemaKind::Type(Type::String(_)) => "string",
        SchemaKind::Type(Type::Number(_)) => "number",
        SchemaKind::Type(Type::Integer(_)) => "integer",
        SchemaKind::Type(Type::Object(_)) => "object",
        SchemaKind::Type(Type::Array(_)) => "array",
        SchemaKind::Type(Type::Boolean(_)) => "boolean",
        SchemaKind::OneOf { .. } => "oneOf",
        SchemaKind::AllOf { .. } => "allOf",
        SchemaKind::AnyOf { .. } => "anyOf",
        SchemaKind::Not { .. } => "not",
        SchemaKind::Any(_) => "any",
    }
}

/// An inline array that is not nullable: typify's `Vec<T>` whether required or not.
pub(super) fn is_plain_list(s: &ReferenceOr<Box<Schema>>) -> bool {
    matches!(s, ReferenceOr::Item(s)
        if matches!(s.schema_kind, SchemaKind::Type(Type::Array(_))) && !s.schema_data.nullable)
}

/// A property oapi-codegen types the same whether required or not: a nullable one (a
/// pointer either way) or one of no type (`interface{}`, which is nil when absent).
pub(super) fn go_same_either_way(s: &ReferenceOr<Box<Schema>>) -> bool {
    matches!(s, ReferenceOr::Item(s) if s.schema_data.nullable
        || matches!(&s.schema_kind, SchemaKind::Any(a) if a.typ.is_none() && a.properties.is_empty()))
}

/// The Rust type typify 0.8 gives an integer (`convert_integer`): with a format, its own
/// type, or `NonZero` when the minimum is exactly 1 (any other bound changes nothing, and
/// is not checked); without one, `NonZeroU64` for a minimum of 1, `u64` for 0, else `i64`.
pub(super) fn rust_integer(t: &openapiv3::IntegerType) -> &'static str {
    use openapiv3::{IntegerFormat, VariantOrUnknownOrEmpty::Item};
    let one = t.minimum == Some(1) && !t.exclusive_minimum;
    match (&t.format, one) {
        (Item(IntegerFormat::Int32), true) => "NonZeroU32",
        (Item(IntegerFormat::Int32), false) => "i32",
        (Item(IntegerFormat::Int64) | _, true) => "NonZeroU64",
        (Item(IntegerFormat::Int64), false) => "i64",
        (_, false) if t.minimum == Some(0) && t.maximum.is_none() => "u64",
        (_, false) => "i64",
    }
}

/// The schemas reachable from `s`, by component name.
pub(super) fn reachable(api: &OpenAPI, s: S<'_>, seen: &mut BTreeSet<String>) {
    match s {
        S::Ref(reference) => {
            let Some(name) = reference.strip_prefix(SCHEMAS) else {
                return;
            };
            if !seen.insert(name.to_string()) {
                return;
            }
            if let Some(s) = schema(api, name) {
                reachable(api, view(s), seen);
            }
        }
        S::Item(s) => match &s.schema_kind {
            SchemaKind::Type(Type::Object(o)) => {
                for p in o.properties.values() {
                    reachable(api, view_boxed(p), seen);
                }
                if let Some(AdditionalProperties::Schema(p)) = &o.additional_properties {
                    reachable(api, view(p), seen);
                }
            }
            SchemaKind::Type(Type::Array(a)) => {
                if let Some(i) = &a.items {
                    reachable(api, view_boxed(i), seen);
                }
            }
            SchemaKind::OneOf { one_of: v }
            | SchemaKind::AnyOf { any_of: v }
            | SchemaKind::AllOf { all_of: v } => {
                for x in v {
                    reachable(api, view(x), seen);
                }
            }
            SchemaKind::Not { not } => reachable(api, view(not), seen),
            _ => {}
        },
    }
}
