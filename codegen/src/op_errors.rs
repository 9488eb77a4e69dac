//! Per-operation error codes: for each operation an enum of exactly the codes the
//! documents list for it (the service-wide ones and its own, from the operation table's
//! source, `x-error-codes`) plus `Other` for codes added later, so a `match` on an
//! operation's business errors is exhaustive over what it can answer.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::{enums::EnumSet, names::pascal, spec::Op};

/// The `errors` module of one service's client.
pub fn module(ops: &[Op], enums: &EnumSet) -> Result<TokenStream, String> {
    let mut items = Vec::new();
    for op in ops {
        let name = format_ident!("{}ErrorCode", pascal(&op.id));
        let id = &op.id;
        let mut variants = Vec::new();
        let mut docs = Vec::new();
        for code in &op.error_codes {
            let Some((variant, description)) = enums.error_code(code) else {
                return Err(format!(
                    "{id}: error code {code} is not in the ErrorCode catalogue"
                ));
            };
            variants.push(format_ident!("{variant}"));
            docs.push(format!("`{code}`: {description}"));
        }
        let doc = format!(
            "The business codes the documents list for `{id}`: the service-wide ones and its \
             own. Read from an [`Error`](crate::Error) with [`{name}::of`]."
        );
        let other_doc = format!("A code the documents do not list for `{id}`.");
        let of_doc = format!(
            "The code of a business error `{id}` answered; `None` for any other error \
             (transport, validation, another operation's)."
        );
        items.push(quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, PartialEq, Eq)]
            pub enum #name {
                #(#[doc = #docs] #variants,)*
                #[doc = #other_doc]
                Other(crate::ErrorCode),
            }

            impl #name {
                #[doc = #of_doc]
                pub fn of(error: &crate::Error) -> ::std::option::Option<Self> {
                    match error {
                        crate::Error::Api(e) | crate::Error::PartialFailure { error: e, .. }
                            if e.operation == #id =>
                        {
                            Some(Self::from(&e.code))
                        }
                        _ => None,
                    }
                }

                /// The code as the platform sends it.
                pub fn as_str(&self) -> &str {
                    match self {
                        #(Self::#variants => crate::ErrorCode::#variants.as_str(),)*
                        Self::Other(code) => code.as_str(),
                    }
                }
            }

            impl ::std::convert::From<&crate::ErrorCode> for #name {
                fn from(code: &crate::ErrorCode) -> Self {
                    match code {
                        #(crate::ErrorCode::#variants => Self::#variants,)*
                        other => Self::Other(other.clone()),
                    }
                }
            }

            impl ::std::fmt::Display for #name {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str(self.as_str())
                }
            }
        });
    }
    Ok(quote! {
        /// Per-operation business error codes: each operation's enum lists exactly the
        /// codes the documents give it, so a `match` is exhaustive over what it can answer.
        pub mod errors {
            #(#items)*
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{load, operations, testing::fragment};

    fn generated(op_extra: &str) -> Result<String, String> {
        let spec = load(&fragment(op_extra, "")).unwrap();
        let mut enums = EnumSet::default();
        enums.collect(&spec).unwrap();
        let ops = operations(&spec).unwrap();
        module(&ops, &enums).map(|t| t.to_string())
    }

    #[test]
    fn an_operation_lists_its_documented_codes_and_other() {
        let code = generated("      x-error-codes: ['40000']").unwrap();
        assert!(code.contains("pub enum ListThingsErrorCode"), "{code}");
        assert!(code.contains("NetworkException ,"), "service-wide: {code}");
        assert!(code.contains("ParameterEmpty ,"), "its own: {code}");
        assert!(code.contains("Other (crate :: ErrorCode)"), "{code}");
        let without = generated("      x-error-codes: []").unwrap();
        assert!(!without.contains("ParameterEmpty ,"), "{without}");
    }

    #[test]
    fn a_code_outside_the_catalogue_fails_naming_the_operation() {
        let spec = load(&fragment("      x-error-codes: []", "")).unwrap();
        let mut enums = EnumSet::default();
        enums.collect(&spec).unwrap();
        let mut ops = operations(&spec).unwrap();
        ops[0].error_codes.push("99999".into());
        let err = module(&ops, &enums).unwrap_err();
        assert!(err.contains("listThings") && err.contains("99999"), "{err}");
    }
}
