//! Transform and edit: a `oneOf` of `$ref`s with a `discriminator` (batch orders by
//! `orderType`) becomes a serde internally tagged enum, one newtype variant per mapping
//! entry (`LicenseOrder::NewBuy(NewBuyOrder)`), so that a wrong or missing tag fails with
//! serde's "unknown variant" and each variant's struct reports its own missing fields.
//!
//! typify makes an internally tagged enum only of inline variants, and an untagged one of
//! `$ref`s. The transform removes the tag property from each variant's schema (the enum
//! writes and reads it); the edit then turns typify's untagged enum into a tagged one.

use openapiv3::{OpenAPI, ReferenceOr, SchemaKind, Type};
use quote::quote;
use syn::visit_mut::VisitMut;

use crate::names::pascal;

/// One discriminated `oneOf`, as found in the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tagged {
    /// The `oneOf` schema's name (the Rust enum).
    pub name: String,
    /// The discriminator's property (its wire name).
    pub tag: String,
    /// `(tag value, variant schema name)`, in `oneOf` order.
    pub variants: Vec<(String, String)>,
}

const PREFIX: &str = "#/components/schemas/";

/// Finds every discriminated `oneOf`, checks that its mapping, its `oneOf` list and each
/// variant's single-valued, required tag property agree, and removes that property from
/// the variants.
pub fn prepare(spec: &mut OpenAPI) -> Result<Vec<Tagged>, String> {
    let Some(components) = spec.components.as_mut() else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for (name, schema) in &components.schemas {
        let ReferenceOr::Item(schema) = schema else {
            continue;
        };
        let Some(discriminator) = &schema.schema_data.discriminator else {
            continue;
        };
        let SchemaKind::OneOf { one_of } = &schema.schema_kind else {
            return Err(format!(
                "schema `{name}`: a discriminator is supported on a `oneOf` only"
            ));
        };
        let mut variants = Vec::new();
        for entry in one_of {
            let ReferenceOr::Reference { reference } = entry else {
                return Err(format!(
                    "schema `{name}`: every `oneOf` entry of a discriminated union must be a \
                     `$ref` to a component schema"
                ));
            };
            let Some((value, _)) = discriminator
                .mapping
                .iter()
                .find(|(_, target)| *target == reference)
            else {
                return Err(format!(
                    "schema `{name}`: `{reference}` is not in the discriminator's mapping"
                ));
            };
            let target = reference
                .strip_prefix(PREFIX)
                .ok_or_else(|| format!("schema `{name}`: `{reference}` is not a component"))?;
            variants.push((value.clone(), target.to_string()));
        }
        if variants.len() != discriminator.mapping.len() {
            return Err(format!(
                "schema `{name}`: the discriminator maps {} values but `oneOf` has {} entries",
                discriminator.mapping.len(),
                variants.len()
            ));
        }
        found.push(Tagged {
            name: name.clone(),
            tag: discriminator.property_name.clone(),
            variants,
        });
    }
    for tagged in &found {
        for (value, variant) in &tagged.variants {
            let at = |what: &str| format!("schema `{variant}` (in `{}`): {what}", tagged.name);
            let Some(ReferenceOr::Item(schema)) = components.schemas.get_mut(variant) else {
                return Err(at("not an inline component schema"));
            };
            let SchemaKind::Type(Type::Object(object)) = &mut schema.schema_kind else {
                return Err(at("not an object"));
            };
            let tag = &tagged.tag;
            let Some(position) = object.required.iter().position(|r| r == tag) else {
                return Err(at(&format!("the tag property `{tag}` is not required")));
            };
            let single = match object.properties.get(tag) {
                Some(ReferenceOr::Item(p)) => match &p.schema_kind {
                    SchemaKind::Type(Type::String(s)) => s.enumeration.clone(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            if single != [Some(value.clone())] {
                return Err(at(&format!(
                    "the tag property `{tag}` must be a string with the single value `{value}`"
                )));
            }
            object.required.remove(position);
            object.properties.shift_remove(tag);
        }
        if let Some(ReferenceOr::Item(schema)) = components.schemas.get_mut(&tagged.name) {
            schema.schema_data.discriminator = None;
        }
    }
    Ok(found)
}

/// Turns typify's untagged enum for each [`Tagged`] into `#[serde(tag = ..)]` with one
/// renamed variant per tag value. Fails when the enum or a variant is not where typify
/// puts them.
pub fn apply(types: &mut Vec<syn::Item>, tagged: &[Tagged]) -> Result<(), String> {
    for t in tagged {
        let at = |what: &str| format!("schema `{}`: {what}", t.name);
        let Some(e) = types.iter_mut().find_map(|item| match item {
            syn::Item::Enum(e) if e.ident == t.name => Some(e),
            _ => None,
        }) else {
            return Err(at(
                "typify generated no enum for this discriminated `oneOf`",
            ));
        };
        let untagged = e.attrs.iter().position(|a| {
            a.path().is_ident("serde")
                && a.meta
                    .require_list()
                    .is_ok_and(|l| l.tokens.to_string() == "untagged")
        });
        let Some(untagged) = untagged else {
            return Err(at("typify's enum is not `#[serde(untagged)]`"));
        };
        let tag = &t.tag;
        e.attrs[untagged] = syn::parse_quote!(#[serde(tag = #tag)]);
        // Serialize stays derived; Deserialize is generated below (`deserialize`).
        let mut derives = 0;
        for attr in &mut e.attrs {
            if !attr.path().is_ident("derive") {
                continue;
            }
            let Ok(list) = attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            ) else {
                continue;
            };
            let kept: Vec<_> = list
                .iter()
                .filter(|p| p.segments.last().is_none_or(|s| s.ident != "Deserialize"))
                .collect();
            derives += list.len() - kept.len();
            *attr = syn::parse_quote!(#[derive(#(#kept),*)]);
        }
        if derives != 1 {
            return Err(at("typify's enum does not derive `Deserialize` once"));
        }
        let mut renames = Renames::default();
        for (value, schema) in &t.variants {
            let Some(variant) = e.variants.iter_mut().find(|v| v.ident == schema) else {
                return Err(at(&format!("typify's enum has no variant `{schema}`")));
            };
            let new = syn::Ident::new(&pascal(value), variant.ident.span());
            let doc = format!("`{tag}: {value}`.");
            variant.attrs.push(syn::parse_quote!(#[doc = #doc]));
            variant
                .attrs
                .push(syn::parse_quote!(#[serde(rename = #value)]));
            renames.0.push((variant.ident.clone(), new.clone()));
            variant.ident = new;
        }
        if e.variants.len() != t.variants.len() {
            return Err(at("typify's enum has variants the mapping does not name"));
        }
        for item in types.iter_mut() {
            if let syn::Item::Impl(imp) = item
                && matches!(&*imp.self_ty, syn::Type::Path(p) if p.path.is_ident(&t.name))
            {
                renames.visit_item_impl_mut(imp);
            }
        }
        types.push(syn::Item::Verbatim(deserialize(t)));
    }
    Ok(())
}

/// `Deserialize` for a tagged enum through `__generated::read_tag`: the variant reads the
/// object's entries as they come instead of from serde's buffered copy of it. Errors are
/// serde's own: `missing field `orderType``, `unknown variant `x`, expected one of ...`.
fn deserialize(t: &Tagged) -> proc_macro2::TokenStream {
    let name = quote::format_ident!("{}", t.name);
    let tag = &t.tag;
    let values: Vec<&String> = t.variants.iter().map(|(value, _)| value).collect();
    let arms = t.variants.iter().map(|(value, schema)| {
        let variant = syn::Ident::new(&pascal(value), proc_macro2::Span::call_site());
        let schema = quote::format_ident!("{schema}");
        quote! {
            #value => <#schema as ::serde::Deserialize>::deserialize(
                ::serde::de::value::MapAccessDeserializer::new(rest),
            )
            .map(#name::#variant)
        }
    });
    let expecting = format!("an object with `{tag}`");
    quote! {
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
            where
                D: ::serde::Deserializer<'de>,
            {
                struct Visitor;
                impl<'de> ::serde::de::Visitor<'de> for Visitor {
                    type Value = #name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(#expecting)
                    }
                    fn visit_map<A>(self, map: A) -> ::std::result::Result<#name, A::Error>
                    where
                        A: ::serde::de::MapAccess<'de>,
                    {
                        const VARIANTS: &[&str] = &[#(#values),*];
                        let (tag, rest) = crate::__generated::read_tag(map, #tag)?;
                        match tag.as_str() {
                            #(#arms,)*
                            other => Err(::serde::de::Error::unknown_variant(other, VARIANTS)),
                        }
                    }
                }
                deserializer.deserialize_map(Visitor)
            }
        }
    }
}

/// The builder side of each [`Tagged`] enum, for the `builder` module: an enum of the
/// variants' builders (or an already built value) that converts with the outer builder,
/// so a list of the union takes `NewBuyOrder::builder()`s and built orders alike, and a
/// broken field deep in one is reported with its path. A list setter of the union then
/// takes a `Vec` of this enum (`setters::lists`), or of one variant's builders or values.
pub fn builders(tagged: &[Tagged]) -> proc_macro2::TokenStream {
    let mut out = proc_macro2::TokenStream::new();
    for t in tagged {
        let name = quote::format_ident!("{}", t.name);
        let doc = format!(
            "A [`{0}`](super::{0}) to be converted with the builder that holds it: one \
             variant's builder, or a value already built. `From` each makes it with `.into()`.",
            t.name
        );
        let variants: Vec<_> = t
            .variants
            .iter()
            .map(|(value, schema)| {
                (
                    syn::Ident::new(&pascal(value), proc_macro2::Span::call_site()),
                    quote::format_ident!("{schema}"),
                )
            })
            .collect();
        let decl = variants
            .iter()
            .zip(&t.variants)
            .map(|((v, s), (value, _))| {
                let doc = format!("`{}: {value}`, as its builder.", t.tag);
                quote! { #[doc = #doc] #v(#s) }
            });
        // A list setter of the union takes this enum (`setters::lists`): each member's
        // builder and built value converts into it, alone (`.into()`) or as a `Vec`.
        let from = variants.iter().map(|(v, s)| {
            quote! {
                impl ::std::convert::From<#s> for #name {
                    fn from(value: #s) -> Self { Self::#v(value) }
                }
                impl ::std::convert::From<super::#s> for #name {
                    fn from(value: super::#s) -> Self { Self::Built(super::#name::#v(value)) }
                }
                impl crate::runtime::IntoItems<#name> for ::std::vec::Vec<super::#s> {
                    fn into_items(self) -> ::std::result::Result<::std::vec::Vec<#name>, ::std::string::String> {
                        Ok(self.into_iter().map(#name::from).collect())
                    }
                }
                impl crate::runtime::IntoItems<#name> for ::std::vec::Vec<#s> {
                    fn into_items(self) -> ::std::result::Result<::std::vec::Vec<#name>, ::std::string::String> {
                        Ok(self.into_iter().map(#name::#v).collect())
                    }
                }
            }
        });
        let convert = variants
            .iter()
            .map(|(v, s)| quote! { #name::#v(b) => super::#s::try_from(b).map(super::#name::#v) });
        out.extend(quote! {
            #[doc = #doc]
            #[derive(Clone, Debug)]
            pub enum #name {
                #(#decl,)*
                /// A value already built.
                Built(super::#name),
            }
            #(#from)*
            impl ::std::convert::From<super::#name> for #name {
                fn from(value: super::#name) -> Self { Self::Built(value) }
            }
            impl crate::runtime::IntoItems<#name> for ::std::vec::Vec<super::#name> {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<#name>, ::std::string::String> {
                    Ok(self.into_iter().map(#name::Built).collect())
                }
            }
            impl crate::runtime::IntoItems<#name> for &[super::#name] {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<#name>, ::std::string::String> {
                    Ok(self.iter().cloned().map(#name::Built).collect())
                }
            }
            impl crate::runtime::IntoItems<#name> for &::std::vec::Vec<super::#name> {
                fn into_items(self) -> ::std::result::Result<::std::vec::Vec<#name>, ::std::string::String> {
                    Ok(self.iter().cloned().map(#name::Built).collect())
                }
            }
            impl ::std::convert::TryFrom<#name> for super::#name {
                type Error = super::error::ConversionError;
                fn try_from(value: #name) -> ::std::result::Result<Self, super::error::ConversionError> {
                    match value {
                        #(#convert,)*
                        #name::Built(value) => Ok(value),
                    }
                }
            }
        });
    }
    out
}

/// Renames `Self::Old` in the enum's own impls (typify's `From` conversions).
#[derive(Default)]
struct Renames(Vec<(syn::Ident, syn::Ident)>);

impl VisitMut for Renames {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        if path.segments.len() == 2 && path.segments[0].ident == "Self" {
            let last = &mut path.segments[1].ident;
            if let Some((_, new)) = self.0.iter().find(|(old, _)| last == old) {
                *last = new.clone();
            }
        }
        syn::visit_mut::visit_path_mut(self, path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    Order:
      oneOf:
        - $ref: '#/components/schemas/BuyOrder'
        - $ref: '#/components/schemas/DropOrder'
      discriminator:
        propertyName: kind
        mapping:
          buy: '#/components/schemas/BuyOrder'
          drop: '#/components/schemas/DropOrder'
    BuyOrder:
      type: object
      required: [kind, n]
      properties:
        kind: {type: string, enum: [buy]}
        n: {type: integer}
    DropOrder:
      type: object
      required: [kind]
      properties:
        kind: {type: string, enum: [drop]}
"##;

    fn spec(text: &str) -> OpenAPI {
        crate::spec::load(text).unwrap()
    }

    #[test]
    fn the_tag_leaves_the_variants() {
        let mut s = spec(SPEC);
        let found = prepare(&mut s).unwrap();
        assert_eq!(
            found,
            vec![Tagged {
                name: "Order".into(),
                tag: "kind".into(),
                variants: vec![
                    ("buy".into(), "BuyOrder".into()),
                    ("drop".into(), "DropOrder".into())
                ],
            }]
        );
        let schemas = &s.components.as_ref().unwrap().schemas;
        let ReferenceOr::Item(buy) = &schemas["BuyOrder"] else {
            panic!()
        };
        let SchemaKind::Type(Type::Object(o)) = &buy.schema_kind else {
            panic!()
        };
        assert_eq!(o.required, ["n"]);
        assert!(!o.properties.contains_key("kind"));
    }

    #[test]
    fn a_variant_without_its_single_valued_tag_fails() {
        let text = SPEC.replace("enum: [drop]", "enum: [drop, other]");
        let err = prepare(&mut spec(&text)).unwrap_err();
        assert!(err.contains("schema `DropOrder` (in `Order`)"), "{err}");
        assert!(err.contains("single value `drop`"), "{err}");
        let text = SPEC.replace("required: [kind]", "required: []");
        let err = prepare(&mut spec(&text)).unwrap_err();
        assert!(err.contains("`kind` is not required"), "{err}");
    }

    #[test]
    fn a_mapping_that_disagrees_with_one_of_fails() {
        let text = SPEC.replace(
            "drop: '#/components/schemas/DropOrder'",
            "drop: '#/components/schemas/BuyOrder'",
        );
        let err = prepare(&mut spec(&text)).unwrap_err();
        assert!(
            err.contains("`#/components/schemas/DropOrder` is not in the discriminator's mapping"),
            "{err}"
        );
    }

    #[test]
    fn the_builder_enum_takes_each_variants_builder() {
        let found = prepare(&mut spec(SPEC)).unwrap();
        let code = builders(&found).to_string();
        assert!(
            code.contains("pub enum Order { # [doc = \"`kind: buy`, as its builder.\"] Buy (BuyOrder) , # [doc = \"`kind: drop`, as its builder.\"] Drop (DropOrder) , # [doc = r\" A value already built.\"] Built (super :: Order) , }"),
            "{code}"
        );
        assert!(
            code.contains("impl :: std :: convert :: From < BuyOrder > for Order"),
            "{code}"
        );
        // A list of the union takes this enum: each member's builders and built values,
        // and built orders, alone or in a `Vec`.
        for taken in [
            ":: std :: vec :: Vec < DropOrder >",
            ":: std :: vec :: Vec < super :: DropOrder >",
            ":: std :: vec :: Vec < super :: Order >",
            "& [super :: Order]",
        ] {
            assert!(
                code.contains(&format!("IntoItems < Order > for {taken}")),
                "{taken}: {code}"
            );
        }
        assert!(
            !code.contains("IntoItems < super :: Order >"),
            "nothing targets the built union any more: {code}"
        );
        assert!(
            code.contains(
                "impl :: std :: convert :: From < super :: DropOrder > for Order { fn from (value : super :: DropOrder) -> Self { Self :: Built (super :: Order :: Drop (value)) } }"
            ),
            "{code}"
        );
        assert!(
            code.contains("Order :: Drop (b) => super :: DropOrder :: try_from (b) . map (super :: Order :: Drop)"),
            "{code}"
        );
        assert!(
            code.contains("Order :: Built (value) => Ok (value)"),
            "{code}"
        );
    }

    #[test]
    fn the_untagged_enum_becomes_tagged() {
        let mut items: Vec<syn::Item> = vec![
            syn::parse_quote! {
                #[derive(::serde::Deserialize, ::serde::Serialize, Clone)]
                #[serde(untagged)]
                pub enum Order { BuyOrder(BuyOrder), DropOrder(DropOrder) }
            },
            syn::parse_quote! {
                impl From<BuyOrder> for Order { fn from(value: BuyOrder) -> Self { Self::BuyOrder(value) } }
            },
        ];
        let mut s = spec(SPEC);
        apply(&mut items, &prepare(&mut s).unwrap()).unwrap();
        let code = quote::quote!(#(#items)*).to_string();
        assert!(code.contains("# [serde (tag = \"kind\")]"), "{code}");
        assert!(
            code.contains("# [doc = \"`kind: buy`.\"] # [serde (rename = \"buy\")] Buy (BuyOrder)"),
            "{code}"
        );
        assert!(code.contains("Self :: Buy (value)"), "{code}");
        assert!(!code.contains("untagged"), "{code}");
        assert!(
            code.contains("# [derive (:: serde :: Serialize , Clone)]"),
            "Deserialize is not derived: {code}"
        );
        assert!(
            code.contains("impl < 'de > :: serde :: Deserialize < 'de > for Order"),
            "{code}"
        );
        assert!(
            code.contains("crate :: __generated :: read_tag (map , \"kind\")"),
            "{code}"
        );

        let mut plain: Vec<syn::Item> =
            vec![syn::parse_quote! { pub enum Order { BuyOrder(BuyOrder) } }];
        let err = apply(&mut plain, &prepare(&mut spec(SPEC)).unwrap()).unwrap_err();
        assert!(err.contains("not `#[serde(untagged)]`"), "{err}");
    }
}
