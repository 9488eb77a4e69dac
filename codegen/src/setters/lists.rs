//! Edits of the list setters: a list of a type with a builder takes those builders, a
//! list of a tagged union takes the union's builder enum, and a required list of strings
//! takes the spec's named string types too. An optional setter of a generated type takes
//! that type's builder. The impls those bounds need are generated here, next to them.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

use super::{newtype_name, wrapped_target};

/// Lets a list setter whose items have a builder take a `Vec` of those builders too:
/// each is converted when the outer builder is, and the first that fails is reported with
/// its index (`[1] …`), so the message carries the whole path down to the field. Returns
/// the impls to add to the `builder` module and how many setters it changed.
///
/// A list of a tagged union (`tagged`: their names) takes the union's builder enum
/// instead, built item by item when the outer builder is (`runtime::build_items`): so an
/// array of members' builders and built values, each `.into()`, has one type to become.
pub fn lists(builder: &mut [syn::Item], tagged: &BTreeSet<String>) -> (TokenStream, usize) {
    let builders: BTreeSet<String> = builder
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut changed = 0;
    let mut items = BTreeSet::new();
    for item in builder.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        for item in &mut imp.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let Some(inner) = wrapped_target(f, "Vec") else {
                continue;
            };
            let Some(name) = newtype_name(&inner.to_string()).filter(|n| builders.contains(n))
            else {
                continue;
            };
            let ty: syn::Type = syn::parse2(inner).expect("a type");
            let Some(where_clause) = &mut f.sig.generics.where_clause else {
                continue;
            };
            let union = tagged.contains(&name);
            let body = f.block.to_token_stream().to_string();
            let body = if union {
                let builder = quote::format_ident!("{name}");
                where_clause.predicates = syn::parse_quote! {
                    T: crate::runtime::IntoItems<#builder>
                };
                body.replace(
                    ". try_into ()",
                    ". into_items () . and_then (crate :: runtime :: build_items)",
                )
            } else {
                where_clause.predicates = syn::parse_quote! {
                    T: crate::runtime::IntoItems<#ty>
                };
                body.replace(". try_into ()", ". into_items ()")
            };
            f.block = syn::parse_str(&body).expect("the setter body parses");
            if !union {
                items.insert(name);
            }
            changed += 1;
        }
    }
    let impls = items.iter().map(|name| {
        let ty = quote::format_ident!("{name}");
        quote! {
            impl crate::runtime::IntoItems<super::#ty> for ::std::vec::Vec<#ty> {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<super::#ty>, ::std::string::String> {
                    self.into_iter()
                        .enumerate()
                        .map(|(i, b)| super::#ty::try_from(b).map_err(|e| format!("[{i}] {e}")))
                        .collect()
                }
            }
        }
    });
    let optional = optional_builders(builder, &builders);
    (quote!(#(#impls)* #optional), changed)
}

/// Lets a required list-of-strings setter (`asset_nos`, `asset_nums`, `add_assets`, …)
/// take the spec's named string types as well as strings: its bound becomes
/// `crate::runtime::IntoItems<String>`, which `Vec<String>` and `[String; N]` (so `[]` for
/// an empty list) satisfy, and so do the impls [`string_type_lists`] generates. Returns how
/// many setters it changed.
pub fn string_lists(builder: &mut [syn::Item]) -> usize {
    let mut changed = 0;
    for item in builder.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        for item in &mut imp.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let Some(inner) = wrapped_target(f, "Vec") else {
                continue;
            };
            if inner.to_string() != ":: std :: string :: String" {
                continue;
            }
            let Some(where_clause) = &mut f.sig.generics.where_clause else {
                continue;
            };
            where_clause.predicates = syn::parse_quote! {
                T: crate::runtime::IntoItems<::std::string::String>
            };
            let body = f.block.to_token_stream().to_string();
            let body = body.replace(". try_into ()", ". into_items ()");
            f.block = syn::parse_str(&body).expect("the setter body parses");
            changed += 1;
        }
    }
    changed
}

/// The spec's named string schemas that are not enums (`ShellNumber`), and how many
/// required list-of-strings properties its object schemas have: [`string_lists`] must
/// change at least that many setters.
pub fn string_schemas(spec: &openapiv3::OpenAPI) -> (BTreeSet<String>, usize) {
    use openapiv3::{ReferenceOr, SchemaKind, Type};
    let mut names = BTreeSet::new();
    let mut required_lists = 0;
    let Some(components) = &spec.components else {
        return (names, 0);
    };
    for (name, schema) in &components.schemas {
        let ReferenceOr::Item(schema) = schema else {
            continue;
        };
        match &schema.schema_kind {
            SchemaKind::Type(Type::String(s)) if s.enumeration.is_empty() => {
                names.insert(name.clone());
            }
            SchemaKind::Type(Type::Object(object)) => {
                required_lists += object
                    .properties
                    .iter()
                    .filter(|(field, _)| object.required.contains(field))
                    .filter(|(_, property)| {
                        let ReferenceOr::Item(property) = property else {
                            return false;
                        };
                        let SchemaKind::Type(Type::Array(array)) = &property.schema_kind else {
                            return false;
                        };
                        !property.schema_data.nullable
                            && matches!(
                                array.items.as_ref().and_then(|i| i.as_item()),
                                Some(item) if matches!(
                                    &item.schema_kind,
                                    SchemaKind::Type(Type::String(_))
                                )
                            )
                    })
                    .count();
            }
            _ => {}
        }
    }
    (names, required_lists)
}

/// For each named string type of a spec (`ShellNumber`), what a list-of-strings setter
/// takes besides strings: a `Vec` of them (what an operation returned), a slice, a
/// reference to a `Vec` or to an array (`&[number]`). Arrays by value stay strings only, so
/// that `[]` keeps one meaning. A borrowed one converts into a `String` too, as an owned
/// one does.
pub fn string_type_lists(names: &BTreeSet<String>) -> TokenStream {
    let impls = names.iter().map(|name| {
        let ty = quote::format_ident!("{name}");
        quote! {
            impl ::std::convert::From<&#ty> for ::std::string::String {
                fn from(value: &#ty) -> Self {
                    value.to_string()
                }
            }
            impl crate::runtime::IntoItems<::std::string::String> for ::std::vec::Vec<#ty> {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<::std::string::String>, ::std::string::String> {
                    Ok(self.into_iter().map(::std::string::String::from).collect())
                }
            }
            impl crate::runtime::IntoItems<::std::string::String> for &[#ty] {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<::std::string::String>, ::std::string::String> {
                    Ok(self.iter().map(|n| n.to_string()).collect())
                }
            }
            impl crate::runtime::IntoItems<::std::string::String> for &::std::vec::Vec<#ty> {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<::std::string::String>, ::std::string::String> {
                    self.as_slice().into_items()
                }
            }
            impl<const N: usize> crate::runtime::IntoItems<::std::string::String> for &[#ty; N] {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<::std::string::String>, ::std::string::String> {
                    self.as_slice().into_items()
                }
            }
        }
    });
    quote!(#(#impls)*)
}

/// An optional setter of a generated type (`children: Option<Vec<Merchandise>>`, a
/// reply's `data: Option<MemberPage>`) takes that type's builder too, or a `Vec` of them:
/// the `IntoOptional` impls for the builders, converted with the outer builder.
fn optional_builders(builder: &[syn::Item], builders: &BTreeSet<String>) -> TokenStream {
    let mut singles = BTreeSet::new();
    let mut lists = BTreeSet::new();
    for item in builder {
        let syn::Item::Impl(imp) = item else { continue };
        for item in &imp.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let Some(bound) = f
                .sig
                .generics
                .where_clause
                .as_ref()
                .map(|w| w.predicates.to_token_stream().to_string())
            else {
                continue;
            };
            let Some(target) = bound
                .trim_end_matches([' ', ','])
                .strip_prefix("T : crate :: runtime :: IntoOptional < ")
                .and_then(|t| t.strip_suffix(" >"))
            else {
                continue;
            };
            if let Some(name) = target
                .strip_prefix(":: std :: vec :: Vec < ")
                .and_then(|t| t.strip_suffix(" >"))
                .and_then(newtype_name)
                .filter(|n| builders.contains(n))
            {
                lists.insert(name);
            } else if let Some(name) = newtype_name(target).filter(|n| builders.contains(n)) {
                singles.insert(name);
            }
        }
    }
    let singles = singles.iter().map(|name| {
        let ty = quote::format_ident!("{name}");
        quote! {
            impl crate::runtime::IntoOptional<super::#ty> for #ty {
                fn into_optional(self) -> ::std::result::Result<::std::option::Option<super::#ty>, ::std::string::String> {
                    super::#ty::try_from(self).map(Some).map_err(|e| e.to_string())
                }
            }
        }
    });
    let lists = lists.iter().map(|name| {
        let ty = quote::format_ident!("{name}");
        quote! {
            impl crate::runtime::IntoOptional<::std::vec::Vec<super::#ty>> for ::std::vec::Vec<#ty> {
                fn into_optional(self) -> ::std::result::Result<::std::option::Option<::std::vec::Vec<super::#ty>>, ::std::string::String> {
                    self.into_iter()
                        .enumerate()
                        .map(|(i, b)| super::#ty::try_from(b).map_err(|e| format!("[{i}] {e}")))
                        .collect::<::std::result::Result<_, _>>()
                        .map(Some)
                }
            }
        }
    });
    quote!(#(#singles)* #(#lists)*)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_setters_take_builders() {
        let mut builder: Vec<syn::Item> = vec![
            syn::parse_quote! { pub struct Product { a: Result<String, String> } },
            syn::parse_quote! {
                impl Asset {
                    pub fn products<T>(mut self, value: T) -> Self
                    where
                        T: ::std::convert::TryInto<::std::vec::Vec<super::Product>>,
                        T::Error: ::std::fmt::Display,
                    {
                        self.products = value.try_into().map_err(|e| format!("{e}"));
                        self
                    }
                    pub fn names<T>(mut self, value: T) -> Self
                    where
                        T: ::std::convert::TryInto<::std::vec::Vec<::std::string::String>>,
                        T::Error: ::std::fmt::Display,
                    {
                        self.names = value.try_into().map_err(|e| format!("{e}"));
                        self
                    }
                }
            },
        ];
        let (impls, changed) = lists(&mut builder, &BTreeSet::new());
        assert_eq!(changed, 1, "only lists of types with builders");
        let code = quote!(#(#builder)*).to_string();
        assert!(code.contains("IntoItems < super :: Product >"), "{code}");
        let impls = impls.to_string();
        assert!(
            impls.contains("IntoItems < super :: Product > for :: std :: vec :: Vec < Product >"),
            "{impls}"
        );
    }

    #[test]
    fn a_union_list_takes_the_union_builder_and_builds_each_item() {
        let mut builder: Vec<syn::Item> = vec![
            syn::parse_quote! { pub enum Order { Built(super::Order) } },
            syn::parse_quote! {
                impl Batch {
                    pub fn orders<T>(mut self, value: T) -> Self
                    where
                        T: ::std::convert::TryInto<::std::vec::Vec<super::Order>>,
                        T::Error: ::std::fmt::Display,
                    {
                        self.orders = value.try_into().map_err(|e| format!("{e}"));
                        self
                    }
                }
            },
        ];
        let unions = BTreeSet::from(["Order".to_string()]);
        let (impls, changed) = lists(&mut builder, &unions);
        assert_eq!(changed, 1);
        let code = quote!(#(#builder)*).to_string();
        assert!(
            code.contains("T : crate :: runtime :: IntoItems < Order >"),
            "{code}"
        );
        assert!(
            code.contains(". into_items () . and_then (crate :: runtime :: build_items)"),
            "{code}"
        );
        assert!(
            impls.is_empty(),
            "the generic impls take a Vec of the enum: {impls}"
        );
    }

    #[test]
    fn string_list_setters_take_items() {
        let mut builder: Vec<syn::Item> = vec![syn::parse_quote! {
            impl Asset {
                pub fn asset_nos<T>(mut self, value: T) -> Self
                where
                    T: ::std::convert::TryInto<::std::vec::Vec<::std::string::String>>,
                    T::Error: ::std::fmt::Display,
                {
                    self.asset_nos = value.try_into().map_err(|e| format!("{e}"));
                    self
                }
                pub fn products<T>(mut self, value: T) -> Self
                where
                    T: ::std::convert::TryInto<::std::vec::Vec<super::Product>>,
                    T::Error: ::std::fmt::Display,
                {
                    self.products = value.try_into().map_err(|e| format!("{e}"));
                    self
                }
                pub fn name<T>(mut self, value: T) -> Self
                where
                    T: ::std::convert::TryInto<::std::string::String>,
                    T::Error: ::std::fmt::Display,
                {
                    self.name = value.try_into().map_err(|e| format!("{e}"));
                    self
                }
            }
        }];
        assert_eq!(string_lists(&mut builder), 1, "only the list of strings");
        let code = quote!(#(#builder)*).to_string();
        assert!(
            code.contains("T : crate :: runtime :: IntoItems < :: std :: string :: String >"),
            "{code}"
        );
        assert!(code.contains("value . into_items ()"), "{code}");
        assert!(
            code.contains("TryInto < :: std :: vec :: Vec < super :: Product > >"),
            "other lists stay: {code}"
        );
        let impls = string_type_lists(&["ShellNumber".to_string()].into()).to_string();
        for taken in [
            ":: std :: vec :: Vec < ShellNumber >",
            "& [ShellNumber]",
            "& :: std :: vec :: Vec < ShellNumber >",
            "& [ShellNumber ; N]",
        ] {
            assert!(
                impls.contains(&format!(
                    "IntoItems < :: std :: string :: String > for {taken}"
                )),
                "{taken}: {impls}"
            );
        }
        assert!(
            !impls.contains("for [ShellNumber ; N]"),
            "[] stays unambiguous"
        );
    }

    #[test]
    fn optional_setters_of_generated_types_take_builders() {
        let builder: Vec<syn::Item> = vec![
            syn::parse_quote! { pub struct Merchandise { a: Result<String, String> } },
            syn::parse_quote! { pub struct Page { a: Result<String, String> } },
            syn::parse_quote! {
                impl Merchandise {
                    pub fn children<T>(mut self, value: T) -> Self
                    where
                        T: crate::runtime::IntoOptional<::std::vec::Vec<super::Merchandise>>,
                    { self }
                    pub fn page<T>(mut self, value: T) -> Self
                    where
                        T: crate::runtime::IntoOptional<super::Page>,
                    { self }
                    pub fn remark<T>(mut self, value: T) -> Self
                    where
                        T: crate::runtime::IntoOptional<super::Remark>,
                    { self }
                }
            },
        ];
        let builders = ["Merchandise", "Page"].map(String::from).into();
        let code = optional_builders(&builder, &builders).to_string();
        assert!(
            code.contains("IntoOptional < :: std :: vec :: Vec < super :: Merchandise >> for :: std :: vec :: Vec < Merchandise >"),
            "{code}"
        );
        assert!(
            code.contains("IntoOptional < super :: Page > for Page"),
            "{code}"
        );
        assert!(!code.contains("Remark"), "no builder, no impl: {code}");
    }
}
