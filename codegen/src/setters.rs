//! Edit: a builder setter of an optional field takes what people have — the plain value
//! (`.remark("note")`, `.password_mobile("13900000000")`, `.department_id(7)`), `None`, or
//! `Some(value)` — instead of typify's `TryInto<Option<T>>`, which `"note"` does not
//! satisfy. A constrained value that breaks its rule still fails when the builder is
//! converted, with typify's message naming the field and the rule.
//!
//! The setters are bound by `crate::runtime::IntoOptional<T>`; the impls for plain values
//! of the constrained string types (`&str`, `String`) are generated here, next to them.
//! The list setters' edits, and the builders optional setters take, are in `lists`.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

mod lists;

pub use lists::{lists, string_lists, string_schemas, string_type_lists};

/// Rewrites every optional setter of the `builder` module; returns the impls to add to
/// the `types` module (for the string newtypes those setters take) and how many setters
/// it changed.
pub fn apply(
    builder: &mut [syn::Item],
    string_newtypes: &BTreeSet<String>,
) -> (TokenStream, usize) {
    let mut changed = 0;
    let mut targets = BTreeSet::new();
    for item in builder.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        for item in &mut imp.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let Some(inner) = optional_target(f) else {
                continue;
            };
            let inner_tokens: syn::Type = syn::parse2(inner.clone()).expect("a type");
            let Some(where_clause) = &mut f.sig.generics.where_clause else {
                continue;
            };
            where_clause.predicates = syn::parse_quote! {
                T: crate::runtime::IntoOptional<#inner_tokens>
            };
            let body = f.block.to_token_stream().to_string();
            let body = body.replace(". try_into ()", ". into_optional ()");
            f.block = syn::parse_str(&body).expect("the setter body parses");
            if let Some(name) = newtype_name(&inner.to_string())
                && string_newtypes.contains(&name)
            {
                targets.insert(name);
            }
            changed += 1;
        }
    }
    let impls = targets.iter().map(|name| {
        let ty = quote::format_ident!("{name}");
        quote! {
            impl crate::runtime::IntoOptional<#ty> for &str {
                fn into_optional(self) -> ::std::result::Result<::std::option::Option<#ty>, ::std::string::String> {
                    #ty::try_from(self).map(Some).map_err(|e| e.to_string())
                }
            }
            impl crate::runtime::IntoOptional<#ty> for ::std::string::String {
                fn into_optional(self) -> ::std::result::Result<::std::option::Option<#ty>, ::std::string::String> {
                    #ty::try_from(self).map(Some).map_err(|e| e.to_string())
                }
            }
        }
    });
    (quote!(#(#impls)*), changed)
}

/// `T` of a setter bound by `T: TryInto<Option<T>>`.
fn optional_target(f: &syn::ImplItemFn) -> Option<TokenStream> {
    wrapped_target(f, "Option")
}

/// `T` of a setter bound by `T: TryInto<W<T>>`.
fn wrapped_target(f: &syn::ImplItemFn, wrapper: &str) -> Option<TokenStream> {
    let where_clause = f.sig.generics.where_clause.as_ref()?;
    for predicate in &where_clause.predicates {
        let syn::WherePredicate::Type(p) = predicate else {
            continue;
        };
        for bound in &p.bounds {
            let syn::TypeParamBound::Trait(t) = bound else {
                continue;
            };
            let last = t.path.segments.last()?;
            if last.ident != "TryInto" {
                continue;
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                continue;
            };
            let Some(syn::GenericArgument::Type(syn::Type::Path(option))) = args.args.first()
            else {
                continue;
            };
            let seg = option.path.segments.last()?;
            if seg.ident != wrapper {
                continue;
            }
            let syn::PathArguments::AngleBracketed(inner) = &seg.arguments else {
                continue;
            };
            if let Some(syn::GenericArgument::Type(ty)) = inner.args.first() {
                return Some(ty.to_token_stream());
            }
        }
    }
    None
}

/// `Name` of `super :: Name`.
fn newtype_name(ty: &str) -> Option<String> {
    ty.strip_prefix("super :: ").map(str::to_string)
}

/// The types of a `types` module that are strings with rules (typify's newtypes with
/// `TryFrom<&str>`).
pub fn string_newtypes(types: &[syn::Item]) -> BTreeSet<String> {
    types
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp) => {
                let (path, _) = imp.trait_.as_ref()?;
                let last = path.segments.last()?;
                (last.ident == "TryFrom"
                    && last.arguments.to_token_stream().to_string() == "< & str >")
                    .then(|| imp.self_ty.to_token_stream().to_string())
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_setters_take_plain_values() {
        let types: Vec<syn::Item> = vec![syn::parse_quote! {
            impl ::std::convert::TryFrom<&str> for Remark {
                type Error = String;
                fn try_from(value: &str) -> Result<Self, String> { todo!() }
            }
        }];
        let newtypes = string_newtypes(&types);
        assert_eq!(newtypes.iter().collect::<Vec<_>>(), ["Remark"]);
        let mut builder: Vec<syn::Item> = vec![syn::parse_quote! {
            impl Edit {
                pub fn remark<T>(mut self, value: T) -> Self
                where
                    T: ::std::convert::TryInto<::std::option::Option<super::Remark>>,
                    T::Error: ::std::fmt::Display,
                {
                    self.remark = value.try_into().map_err(|e| format!("error converting supplied value for remark: {e}"));
                    self
                }
                pub fn name<T>(mut self, value: T) -> Self
                where
                    T: ::std::convert::TryInto<super::Name>,
                    T::Error: ::std::fmt::Display,
                {
                    self.name = value.try_into().map_err(|e| format!("{e}"));
                    self
                }
            }
        }];
        let (impls, changed) = apply(&mut builder, &newtypes);
        assert_eq!(changed, 1, "only the optional setter");
        let code = quote!(#(#builder)*).to_string();
        assert!(
            code.contains("T : crate :: runtime :: IntoOptional < super :: Remark >"),
            "{code}"
        );
        assert!(code.contains("value . into_optional ()"), "{code}");
        assert!(
            code.contains("T : :: std :: convert :: TryInto < super :: Name >"),
            "required setters stay: {code}"
        );
        let impls = impls.to_string();
        assert!(
            impls.contains("IntoOptional < Remark > for & str"),
            "{impls}"
        );
    }
}
