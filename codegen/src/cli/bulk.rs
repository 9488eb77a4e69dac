//! The fields of one order of `batchOrder` (the items of its request's list, across the
//! union's variants), with how `licensing orders submit` reads a CSV cell of each: `s`
//! text, `i` integer, `n` number, `b` boolean, `j` JSON (lists and objects).

use openapiv3::{ObjectType, OpenAPI, ReferenceOr, SchemaKind, Type};
use proc_macro2::TokenStream;
use quote::quote;

use super::command::{Kind, kind, unboxed};
use crate::spec::{self, Op};

/// The operation whose orders a bulk file holds.
pub const OPERATION: &str = "batchOrder";

/// `pub static BULK_FIELDS: &[(&str, char)]`, or what keeps the spec from giving it.
pub fn fields(document: &OpenAPI, ops: &[Op]) -> Result<TokenStream, String> {
    let request = ops
        .iter()
        .find(|o| o.id == OPERATION)
        .and_then(|o| o.request.clone())
        .ok_or("no such operation with a body")?;
    let object = |name: &str| -> Option<ObjectType> {
        let schema = document.components.as_ref()?.schemas.get(name)?.as_item()?;
        match &schema.schema_kind {
            SchemaKind::Type(Type::Object(o)) => Some(o.clone()),
            _ => None,
        }
    };
    let request = object(&request).ok_or("the body is not an object")?;
    let item = request
        .properties
        .values()
        .find_map(|p| match p {
            ReferenceOr::Item(s) => match &s.schema_kind {
                SchemaKind::Type(Type::Array(a)) => a.items.as_ref().and_then(|i| match i {
                    ReferenceOr::Reference { reference } => reference
                        .strip_prefix(spec::SCHEMA_REF_PREFIX)
                        .map(str::to_string),
                    ReferenceOr::Item(_) => None,
                }),
                _ => None,
            },
            ReferenceOr::Reference { .. } => None,
        })
        .ok_or("the body has no list of orders")?;
    let variants: Vec<String> = match document
        .components
        .as_ref()
        .and_then(|c| c.schemas.get(&item))
        .and_then(ReferenceOr::as_item)
        .map(|s| &s.schema_kind)
    {
        Some(SchemaKind::OneOf { one_of }) => one_of.iter().filter_map(spec::ref_name).collect(),
        _ => vec![item.clone()],
    };
    let mut fields: Vec<(String, char)> = Vec::new();
    for variant in &variants {
        let object = object(variant).ok_or(format!("`{variant}` is not an object"))?;
        for (name, property) in &object.properties {
            if fields.iter().any(|(n, _)| n == name) {
                continue;
            }
            let code = match kind(document, &unboxed(property)) {
                Some((Kind::Str | Kind::Enum(_), _)) => 's',
                Some((Kind::Int { .. } | Kind::IntEnum(_), _)) => 'i',
                Some((Kind::Number, _)) => 'n',
                Some((Kind::Bool, _)) => 'b',
                None => 'j',
            };
            fields.push((name.clone(), code));
        }
    }
    let fields = fields.iter().map(|(name, code)| quote!((#name, #code)));
    let line =
        format!(" The fields of one order of a bulk file (`{item}`), with how a CSV cell is read:");
    Ok(quote! {
        #[doc = #line]
        /// `s` text, `i` integer, `n` number, `b` boolean, `j` JSON.
        pub static BULK_FIELDS: &[(&str, char)] = &[#(#fields),*];
    })
}
