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

/// The shapes a field whose schema the documents leave open (`{}`, `items: {}`) takes in
/// typify's output, by the field type's tokens.
const OPAQUE_SHAPES: [&str; 4] = [
    ":: serde_json :: Value",
    ":: std :: option :: Option < :: serde_json :: Value >",
    ":: std :: vec :: Vec < :: serde_json :: Value >",
    ":: std :: option :: Option < :: std :: vec :: Vec < :: serde_json :: Value > >",
];

/// Makes every field of the generated types whose shape the documents do not show read
/// through `crate::__generated::opaque`, which counts its JSON values against a bound per
/// reply (a `serde_json::Value` costs 32 bytes or more however short its JSON). Each field
/// gets a small function naming its wire name, added to `types`. A `serde_json::Value` in
/// any other shape fails, naming the type and the field: it would escape the bound.
pub fn opaque_fields(types: &mut Vec<syn::Item>) -> Result<usize, String> {
    let mut readers = Vec::new();
    for item in types.iter_mut() {
        let syn::Item::Struct(s) = item else { continue };
        let derives_deserialize = s.attrs.iter().any(|a| {
            a.path().is_ident("derive")
                && a.meta
                    .require_list()
                    .is_ok_and(|l| l.tokens.to_string().contains("Deserialize"))
        });
        for field in s.fields.iter_mut() {
            let ty = field.ty.clone();
            let tokens = quote::quote!(#ty).to_string();
            if !tokens.contains("serde_json :: Value") {
                continue;
            }
            let name = field
                .ident
                .as_ref()
                .map_or_else(|| "0".to_string(), ToString::to_string);
            if !OPAQUE_SHAPES.contains(&tokens.as_str()) {
                return Err(format!(
                    "{}.{name}: a field of unknown shape `{tokens}` holds `serde_json::Value`",
                    s.ident
                ));
            }
            if !derives_deserialize {
                continue;
            }
            let mut wire = name.clone();
            let mut had_reader = false;
            let mut has_default = false;
            for attr in field
                .attrs
                .iter_mut()
                .filter(|a| a.path().is_ident("serde"))
            {
                let metas = attr
                    .parse_args_with(
                        syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                    )
                    .map_err(|e| format!("{}.{name}: serde attribute: {e}", s.ident))?;
                let mut kept = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::new();
                for meta in metas {
                    if meta.path().is_ident("deserialize_with") {
                        had_reader = true;
                        continue;
                    }
                    if meta.path().is_ident("default") {
                        has_default = true;
                    }
                    if let syn::Meta::NameValue(nv) = &meta
                        && nv.path.is_ident("rename")
                        && let syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(lit),
                            ..
                        }) = &nv.value
                    {
                        wire = lit.value();
                    }
                    kept.push(meta);
                }
                *attr = syn::parse_quote!(#[serde(#kept)]);
            }
            field.attrs.retain(|a| {
                !(a.path().is_ident("serde")
                    && a.meta.require_list().is_ok_and(|l| l.tokens.is_empty()))
            });
            let reader = quote::format_ident!("opaque_{}_{name}", s.ident);
            let path = reader.to_string();
            field
                .attrs
                .push(syn::parse_quote!(#[serde(deserialize_with = #path)]));
            // Without a reader of its own an optional field is `None` when absent; a
            // nullable one that must be present (it had a reader) stays required.
            if !had_reader && !has_default && tokens.starts_with(":: std :: option") {
                field.attrs.push(syn::parse_quote!(#[serde(default)]));
            }
            readers.push(syn::parse_quote! {
                #[allow(non_snake_case)]
                fn #reader<'de, D: ::serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> ::std::result::Result<#ty, D::Error> {
                    crate::__generated::opaque(deserializer, #wire)
                }
            });
        }
    }
    let changed = readers.len();
    types.extend(readers);
    Ok(changed)
}

/// Lets every optional list of the generated types read JSON `null` as empty; returns how
/// many fields it changed. Fields with a reader of their own ([`opaque_fields`]) keep it.
pub fn null_lists(types: &mut [syn::Item]) -> usize {
    let mut changed = 0;
    for item in types {
        let syn::Item::Struct(s) = item else { continue };
        for field in s.fields.iter_mut() {
            let own_reader = field.attrs.iter().any(|a| {
                a.path().is_ident("serde")
                    && a.meta
                        .require_list()
                        .is_ok_and(|l| l.tokens.to_string().contains("deserialize_with"))
            });
            if own_reader {
                continue;
            }
            let defaulted_vec = field.attrs.iter().any(|a| {
                a.path().is_ident("serde")
                    && a.meta.require_list().is_ok_and(|l| {
                        let t = l.tokens.to_string();
                        t.contains("default") && t.contains("Vec::is_empty")
                    })
            });
            if defaulted_vec {
                field.attrs.push(syn::parse_quote!(
                    #[serde(deserialize_with = "crate::__generated::null_as_empty")]
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
    fn opaque_fields_read_through_the_bound() {
        let mut items: Vec<syn::Item> = vec![syn::parse_quote! {
            #[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug)]
            pub struct A {
                #[serde(rename = "assetLimits", deserialize_with = "::std::option::Option::deserialize")]
                pub asset_limits: ::std::option::Option<::std::vec::Vec<::serde_json::Value>>,
                #[serde(default, skip_serializing_if = "::std::vec::Vec::is_empty")]
                pub list: ::std::vec::Vec<::serde_json::Value>,
                #[serde(skip_serializing_if = "::std::option::Option::is_none")]
                pub data: ::std::option::Option<::serde_json::Value>,
                pub plain: ::std::string::String,
            }
        }];
        assert_eq!(opaque_fields(&mut items), Ok(3));
        assert_eq!(
            null_lists(&mut items),
            0,
            "the opaque list keeps its own reader"
        );
        let code = quote::quote!(#(#items)*).to_string();
        assert_eq!(
            code.matches("crate :: __generated :: opaque").count(),
            3,
            "{code}"
        );
        assert!(
            code.contains("crate :: __generated :: opaque (deserializer , \"assetLimits\")"),
            "{code}"
        );
        assert!(!code.contains("Option :: deserialize"), "replaced: {code}");
        // `data` was optional by serde's rule for `Option`; with a reader it needs `default`.
        assert_eq!(code.matches("serde (default)").count(), 1, "{code}");

        let mut items: Vec<syn::Item> = vec![syn::parse_quote! {
            pub struct B {
                pub map: ::std::collections::HashMap<String, ::serde_json::Value>,
            }
        }];
        let e = opaque_fields(&mut items).unwrap_err();
        assert!(e.starts_with("B.map: a field of unknown shape"), "{e}");
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
