//! The tolerant enums: every enum schema of both specs becomes one Rust enum with an
//! `Unknown` variant (`Other` for `ErrorCode`), shared by both services and swapped into
//! progenitor's output with `with_replacement`.

use std::collections::BTreeMap;

use openapiv3::{OpenAPI, ReferenceOr, Schema, SchemaKind, Type};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::names::pascal;

/// Every enum schema of both specs, merged by name: a name must mean the same values in
/// both services, so each becomes one Rust type.
#[derive(Default)]
pub struct EnumSet {
    enums: BTreeMap<String, EnumDef>,
}

#[derive(Clone, PartialEq)]
pub struct EnumDef {
    description: String,
    integer: bool,
    /// (wire value, variant name, description)
    values: Vec<(String, String, String)>,
}

impl EnumSet {
    pub fn collect(&mut self, spec: &OpenAPI) -> Result<(), String> {
        let Some(components) = &spec.components else {
            return Ok(());
        };
        for (name, schema) in &components.schemas {
            let ReferenceOr::Item(schema) = schema else {
                continue;
            };
            let Some(def) = enum_def(name, schema)? else {
                continue;
            };
            match self.enums.get_mut(name) {
                None => {
                    self.enums.insert(name.clone(), def);
                }
                // Error codes are per service: the union is the SDK's catalogue.
                Some(known) if name == "ErrorCode" => {
                    for v in def.values {
                        match known.values.iter().find(|k| k.0 == v.0) {
                            Some(k) if k.1 != v.1 => {
                                return Err(format!(
                                    "ErrorCode {}: variant name differs between specs",
                                    v.0
                                ));
                            }
                            Some(_) => {}
                            None => known.values.push(v),
                        }
                    }
                }
                Some(known)
                    if known
                        .values
                        .iter()
                        .map(|v| (&v.0, &v.1))
                        .eq(def.values.iter().map(|v| (&v.0, &v.1))) => {}
                Some(_) => {
                    return Err(format!(
                        "enum `{name}` has different values in the two specs"
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn names_in(&self, spec: &OpenAPI) -> Vec<String> {
        let Some(components) = &spec.components else {
            return Vec::new();
        };
        components
            .schemas
            .keys()
            .filter(|n| self.enums.contains_key(*n))
            .cloned()
            .collect()
    }

    /// The `ErrorCode` variant name and description of a documented code.
    pub fn error_code(&self, code: &str) -> Option<(&str, &str)> {
        self.enums
            .get("ErrorCode")?
            .values
            .iter()
            .find(|(v, _, _)| v == code)
            .map(|(_, n, d)| (n.as_str(), d.as_str()))
    }

    pub fn generate(&self) -> TokenStream {
        let items = self.enums.iter().map(|(name, def)| def.generate(name));
        quote! { #(#items)* }
    }
}

fn enum_def(name: &str, schema: &Schema) -> Result<Option<EnumDef>, String> {
    let (integer, values): (bool, Vec<String>) = match &schema.schema_kind {
        SchemaKind::Type(Type::String(t)) if !t.enumeration.is_empty() => {
            (false, t.enumeration.iter().flatten().cloned().collect())
        }
        SchemaKind::Type(Type::Integer(t)) if !t.enumeration.is_empty() => (
            true,
            t.enumeration
                .iter()
                .flatten()
                .map(|v| v.to_string())
                .collect(),
        ),
        _ => return Ok(None),
    };
    let list = |key: &str| -> Result<Option<Vec<String>>, String> {
        let Some(v) = schema.schema_data.extensions.get(key) else {
            return Ok(None);
        };
        let list: Vec<String> = v
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if list.len() != values.len() {
            return Err(format!("{name}: {key} must list one entry per enum value"));
        }
        Ok(Some(list))
    };
    let descriptions = list("x-enum-descriptions")?
        .ok_or(format!("{name}: x-enum-descriptions is required on enums"))?;
    let varnames = match list("x-enum-varnames")? {
        Some(v) => v,
        None if integer
            || values
                .iter()
                .any(|v| !v.starts_with(|c: char| c.is_ascii_alphabetic())) =>
        {
            return Err(format!(
                "{name}: x-enum-varnames is required when values are not identifiers"
            ));
        }
        None => values.iter().map(|v| pascal(v)).collect(),
    };
    Ok(Some(EnumDef {
        description: schema.schema_data.description.clone().unwrap_or_default(),
        integer,
        values: values
            .into_iter()
            .zip(varnames)
            .zip(descriptions)
            .map(|((v, n), d)| (v, n, d))
            .collect(),
    }))
}

/// What the integer and the string forms of an enum share.
struct Parts {
    ty: proc_macro2::Ident,
    doc: String,
    fallback: proc_macro2::Ident,
    fallback_doc: &'static str,
    variants: Vec<proc_macro2::Ident>,
    docs: Vec<String>,
    common: TokenStream,
}

impl EnumDef {
    fn generate(&self, name: &str) -> TokenStream {
        let parts = self.parts(name);
        if self.integer {
            self.integer_enum(parts)
        } else {
            self.string_enum(parts)
        }
    }

    fn parts(&self, name: &str) -> Parts {
        let ty = format_ident!("{name}");
        let doc = self.description.trim().to_string();
        let (fallback, fallback_doc) = if name == "ErrorCode" {
            (
                format_ident!("Other"),
                "A code the platform's documents do not list.",
            )
        } else {
            (
                format_ident!("Unknown"),
                "A value this SDK does not know (added by the platform later).",
            )
        };
        let variants: Vec<_> = self
            .values
            .iter()
            .map(|(_, n, _)| format_ident!("{n}"))
            .collect();
        let docs: Vec<_> = self
            .values
            .iter()
            .map(|(v, _, d)| format!("`{v}`: {d}"))
            .collect();
        let descs: Vec<_> = self.values.iter().map(|(_, _, d)| d.as_str()).collect();
        let count = self.values.len();
        let common = quote! {
            /// The documented values, in the documents' order.
            pub const KNOWN: [Self; #count] = [#(Self::#variants),*];
            /// Whether this is a documented value.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::#fallback(_))
            }
            /// The documented meaning of the value.
            pub fn description(&self) -> ::std::option::Option<&'static str> {
                match self {
                    #(Self::#variants => Some(#descs),)*
                    Self::#fallback(_) => None,
                }
            }
        };
        Parts {
            ty,
            doc,
            fallback,
            fallback_doc,
            variants,
            docs,
            common,
        }
    }

    /// An enum of `i32` wire values.
    fn integer_enum(&self, parts: Parts) -> TokenStream {
        let Parts {
            ty,
            doc,
            fallback,
            fallback_doc,
            variants,
            docs,
            common,
        } = parts;
        let lits: Vec<i32> = self
            .values
            .iter()
            .map(|(v, _, _)| v.parse().expect("integer enum"))
            .collect();
        quote! {
            #[doc = #doc]
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum #ty {
                #(#[doc = #docs] #variants,)*
                #[doc = #fallback_doc]
                #fallback(i32),
            }
            impl #ty {
                #common
                /// The wire value.
                pub fn value(&self) -> i32 {
                    match self {
                        #(Self::#variants => #lits,)*
                        Self::#fallback(v) => *v,
                    }
                }
            }
            impl ::std::convert::From<i32> for #ty {
                fn from(v: i32) -> Self {
                    match v {
                        #(#lits => Self::#variants,)*
                        other => Self::#fallback(other),
                    }
                }
            }
            impl ::std::fmt::Display for #ty {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    write!(f, "{}", self.value())
                }
            }
            impl ::std::str::FromStr for #ty {
                type Err = ::std::num::ParseIntError;
                fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                    s.parse::<i32>().map(Self::from)
                }
            }
            impl ::serde::Serialize for #ty {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                    s.serialize_i32(self.value())
                }
            }
            impl<'de> ::serde::Deserialize<'de> for #ty {
                fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                    i32::deserialize(d).map(Self::from)
                }
            }
        }
    }

    /// An enum of string wire values.
    fn string_enum(&self, parts: Parts) -> TokenStream {
        let Parts {
            ty,
            doc,
            fallback,
            fallback_doc,
            variants,
            docs,
            common,
        } = parts;
        let lits: Vec<_> = self.values.iter().map(|(v, _, _)| v.as_str()).collect();
        quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum #ty {
                #(#[doc = #docs] #variants,)*
                #[doc = #fallback_doc]
                #fallback(::std::string::String),
            }
            impl #ty {
                #common
                /// The wire value.
                pub fn as_str(&self) -> &str {
                    match self {
                        #(Self::#variants => #lits,)*
                        Self::#fallback(v) => v,
                    }
                }
            }
            impl ::std::convert::From<&str> for #ty {
                fn from(v: &str) -> Self {
                    match v {
                        #(#lits => Self::#variants,)*
                        other => Self::#fallback(other.to_string()),
                    }
                }
            }
            impl ::std::convert::From<::std::string::String> for #ty {
                fn from(v: ::std::string::String) -> Self {
                    match v.as_str() {
                        #(#lits => Self::#variants,)*
                        _ => Self::#fallback(v),
                    }
                }
            }
            impl ::std::fmt::Display for #ty {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str(self.as_str())
                }
            }
            impl ::std::str::FromStr for #ty {
                type Err = ::std::convert::Infallible;
                fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                    Ok(Self::from(s))
                }
            }
            impl ::serde::Serialize for #ty {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                    s.serialize_str(self.as_str())
                }
            }
            impl<'de> ::serde::Deserialize<'de> for #ty {
                fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                    ::std::string::String::deserialize(d).map(Self::from)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{load, testing::fragment};

    #[test]
    fn collects_and_generates_tolerant_enums() {
        let mut set = EnumSet::default();
        set.collect(&load(&fragment("", "")).unwrap()).unwrap();
        let spec = load(&fragment("", "")).unwrap();
        assert_eq!(set.names_in(&spec), ["ErrorCode"]);
        let code = set.generate().to_string();
        assert!(code.contains("pub enum ErrorCode"), "{code}");
        assert!(code.contains("NetworkException"), "{code}");
        assert!(
            code.contains("Other (:: std :: string :: String)"),
            "{code}"
        );
    }

    #[test]
    fn the_same_name_must_mean_the_same_values() {
        let mut set = EnumSet::default();
        let extra = "    Flag: {type: string, enum: [Y, N], x-enum-descriptions: [yes, no]}";
        set.collect(&load(&fragment("", extra)).unwrap()).unwrap();
        let other = extra.replace("[Y, N]", "[Y, M]");
        assert_eq!(
            set.collect(&load(&fragment("", &other)).unwrap()),
            Err("enum `Flag` has different values in the two specs".into())
        );
    }

    #[test]
    fn enums_need_descriptions() {
        let mut set = EnumSet::default();
        let extra = "    Flag: {type: string, enum: [Y, N]}";
        assert_eq!(
            set.collect(&load(&fragment("", extra)).unwrap()),
            Err("Flag: x-enum-descriptions is required on enums".into())
        );
    }
}
