//! The operation table: one static record per operation, read from the spec alone, and a
//! macro that hands every operation to a callback (the simulator's router uses it). The
//! runtime, the simulator and the tests read operation facts here and nowhere else.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::{
    names::{pascal, screaming, snake},
    spec::{Data, Op},
};

/// The records of every service, in the specs' order.
#[derive(Default)]
pub struct Table {
    records: Vec<TokenStream>,
    names: Vec<syn::Ident>,
    entries: Vec<TokenStream>,
}

impl Table {
    /// Adds one service's operations.
    pub fn add(&mut self, service: &str, ops: &[Op]) -> Result<(), String> {
        let module = format_ident!("{service}");
        let variant = format_ident!("{}", pascal(service));
        for op in ops {
            let Op {
                id,
                method,
                path,
                idempotent,
                error_codes,
                partial_code,
                ..
            } = op;
            let name = format_ident!("{}", screaming(id));
            let method_variant = format_ident!("{}", pascal(&method.to_lowercase()));
            if !["GET", "POST", "PUT", "DELETE"].contains(&method.as_str()) {
                return Err(format!("{id}: method {method} is not supported"));
            }
            let partial = match partial_code {
                Some(code) => quote!(Some(#code)),
                None => quote!(None),
            };
            let pagination = match &op.pagination {
                Some(p) => {
                    let (page, size, items, has_next) =
                        (&p.page_param, &p.size_param, &p.items, &p.has_next);
                    quote!(Some(Pagination {
                        page_param: #page,
                        size_param: #size,
                        items: #items,
                        has_next: #has_next,
                    }))
                }
                None => quote!(None),
            };
            let request = match &op.request {
                Some(r) => {
                    let r = format!("{service}::types::{r}");
                    quote!(Some(#r))
                }
                None => quote!(None),
            };
            let reply = format!("{service}::types::{}", op.reply);
            let data = match &op.data {
                Data::Unit => "()".to_string(),
                Data::Named(n) => format!("{service}::types::{n}"),
                Data::List(n) => format!("Vec<{service}::types::{n}>"),
                Data::Strings => "Vec<String>".to_string(),
            };
            let doc = format!("`{id}`: `{method} {path}`.");
            self.records.push(quote! {
                #[doc = #doc]
                pub static #name: Operation = Operation {
                    service: Service::#variant,
                    id: #id,
                    method: Method::#method_variant,
                    path: #path,
                    idempotent: #idempotent,
                    error_codes: &[#(#error_codes),*],
                    partial_success_code: #partial,
                    pagination: #pagination,
                    request_type: #request,
                    reply_type: #reply,
                    data_type: #data,
                };
            });
            let builder = format_ident!("{}", op.builder());
            let function = format_ident!("{}", snake(id));
            let method_ident = format_ident!("{method}");
            let reply_ident = format_ident!("{}", op.reply);
            self.entries.push(quote! {
                (#module, #builder, #function, #method_ident, #path,
                 $crate::#module::types::#reply_ident, $crate::operations::#name);
            });
            self.names.push(name);
        }
        Ok(())
    }

    /// The generated `operations.rs`.
    pub fn generate(&self) -> TokenStream {
        let Table {
            records,
            names,
            entries,
        } = self;
        let count = names.len();
        quote! {
            #(#records)*

            /// Every operation of both services, in the specs' order.
            pub static ALL: [&Operation; #count] = [#(&#names),*];

            /// Calls `$callback!` once with an entry per operation, in the specs' order:
            /// `(service module, builder type, client method, METHOD, "path template",
            /// reply type, table record);`. The simulator builds its router with it, so
            /// an operation added to a spec cannot be forgotten there.
            #[macro_export]
            macro_rules! for_each_operation {
                ($callback:ident) => {
                    $callback! {
                        #(#entries)*
                    }
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{load, operations, testing::fragment};

    #[test]
    fn one_record_and_one_macro_entry_per_operation() {
        let spec = load(&fragment("      x-error-codes: ['40000']", "")).unwrap();
        let ops = operations(&spec).unwrap();
        let mut table = Table::default();
        table.add("order", &ops).unwrap();
        let code = table.generate().to_string();
        for expected in [
            "pub static LIST_THINGS : Operation",
            "service : Service :: Order",
            "method : Method :: Get",
            "path : \"/things\"",
            "error_codes : & [\"500\" , \"40000\"]",
            "reply_type : \"order::types::Reply\"",
            "data_type : \"order::types::Page\"",
            "pub static ALL : [& Operation ; 1usize] = [& LIST_THINGS]",
            "(order , ListThings , list_things , GET , \"/things\" , $ crate :: order :: types :: Reply , $ crate :: operations :: LIST_THINGS) ;",
        ] {
            assert!(code.contains(expected), "{expected}\nin\n{code}");
        }
    }
}
