//! Transforms and an edit that keep the wire exactly as the documents describe it:
//!
//! - a property with a documented `default` that the caller may omit stays an `Option`
//!   (typify would make it the plain type and always send it), so the SDK sends only what
//!   the caller set and the receiver applies the default;
//! - a reply's list `data` is `Option<Vec<_>>` (typify would make it a `Vec` skipped when
//!   empty), so an empty list is written as `data: []` and an error reply has no `data`;
//! - an optional list accepts JSON `null` as absent (typify's defaulted `Vec` rejects it).

use openapiv3::{OpenAPI, ReferenceOr, SchemaKind, Type};

use crate::spec::{Data, Op};

/// Removes `default` from every optional property that has one; returns
/// `Schema.property` for each.
pub fn optional_defaults(spec: &mut OpenAPI) -> Vec<String> {
    let mut changed = Vec::new();
    let Some(components) = spec.components.as_mut() else {
        return changed;
    };
    for (name, schema) in components.schemas.iter_mut() {
        let ReferenceOr::Item(schema) = schema else {
            continue;
        };
        let SchemaKind::Type(Type::Object(object)) = &mut schema.schema_kind else {
            continue;
        };
        for (prop, value) in object.properties.iter_mut() {
            if let ReferenceOr::Item(p) = value
                && !object.required.contains(prop)
                && p.schema_data.default.take().is_some()
            {
                changed.push(format!("{name}.{prop}"));
            }
        }
    }
    changed
}

/// Makes the `data` of every list-returning operation's reply nullable; fails naming the
/// operation when its reply has no array `data`.
pub fn reply_lists(spec: &mut OpenAPI, ops: &[Op]) -> Result<usize, String> {
    let mut changed = 0;
    for op in ops {
        if !matches!(op.data, Data::List(_) | Data::Strings) {
            continue;
        }
        let at = |what: &str| format!("{}: reply `{}` {what}", op.id, op.reply);
        let schema = spec
            .components
            .as_mut()
            .and_then(|c| c.schemas.get_mut(&op.reply));
        let Some(ReferenceOr::Item(schema)) = schema else {
            return Err(at("is not an inline component schema"));
        };
        let SchemaKind::Type(Type::Object(object)) = &mut schema.schema_kind else {
            return Err(at("is not an object"));
        };
        match object.properties.get_mut("data") {
            Some(ReferenceOr::Item(data))
                if matches!(data.schema_kind, SchemaKind::Type(Type::Array(_))) =>
            {
                data.schema_data.nullable = true;
                changed += 1;
            }
            _ => return Err(at("has no array `data`")),
        }
    }
    Ok(changed)
}

/// Lets every optional list of the generated types read JSON `null` as empty; returns how
/// many fields it changed.
pub fn null_lists(types: &mut [syn::Item]) -> usize {
    let mut changed = 0;
    for item in types {
        let syn::Item::Struct(s) = item else { continue };
        for field in s.fields.iter_mut() {
            let defaulted_vec = field.attrs.iter().any(|a| {
                a.path().is_ident("serde")
                    && a.meta.require_list().is_ok_and(|l| {
                        let t = l.tokens.to_string();
                        t.contains("default") && t.contains("Vec::is_empty")
                    })
            });
            if defaulted_vec {
                field.attrs.push(syn::parse_quote!(
                    #[serde(deserialize_with = "crate::runtime::null_as_empty")]
                ));
                changed += 1;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_optional_defaults_go() {
        let mut spec = crate::spec::load(
            r#"
openapi: 3.0.3
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    P:
      type: object
      required: [kept]
      properties:
        kept: {type: boolean, default: false}
        strict: {type: boolean, default: false}
        plain: {type: string}
"#,
        )
        .unwrap();
        assert_eq!(optional_defaults(&mut spec), ["P.strict"]);
        assert_eq!(optional_defaults(&mut spec), Vec::<String>::new());
    }

    #[test]
    fn defaulted_lists_read_null() {
        let mut items: Vec<syn::Item> = vec![syn::parse_quote! {
            pub struct A {
                #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
                pub list: ::std::vec::Vec<String>,
                pub required: ::std::vec::Vec<String>,
            }
        }];
        assert_eq!(null_lists(&mut items), 1);
        let code = quote::quote!(#(#items)*).to_string();
        assert_eq!(code.matches("null_as_empty").count(), 1, "{code}");
    }
}
