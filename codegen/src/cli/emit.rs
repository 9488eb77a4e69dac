//! The tokens of the generated code: one `CliOp` record and one dispatch arm per
//! operation, and a conversion of a command-line value into each shared enum a builder
//! takes. The types they name (`CliOp`, `Flag`, `Kind`, …) are the CLI's own
//! (`cli/src/ops.rs`), which includes the generated file.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::command::{Command, Flag, Kind, Location};
use crate::{names::snake, spec::Op};

/// `CliOp { service, id, name, method, path, about, long_about, params, body, paged }`.
pub fn record(command: &Command, service: &str, op: &Op) -> Result<TokenStream, String> {
    let variant = heck::ToUpperCamelCase::to_upper_camel_case(service);
    let service = ident(&variant, "service")?;
    let (id, method, path) = (&op.id, &op.method, &op.path);
    let (name, about, long_about) = (&command.name, &command.about, &command.long_about);
    let params = command.params.iter().map(flag);
    let body = match &op.request {
        None => quote!(None),
        Some(schema) => {
            let required = command.body_required;
            let fields = command.body_fields.iter().map(flag);
            quote!(Some(Body { schema: #schema, required: #required, fields: &[#(#fields),*] }))
        }
    };
    let paged = match &op.pagination {
        Some(p) => {
            let (page, size) = (&p.page_param, &p.size_param);
            quote!(Some(Paged { page: #page, size: #size }))
        }
        None => quote!(None),
    };
    Ok(quote! {
        CliOp {
            service: Service::#service,
            id: #id,
            name: #name,
            method: #method,
            path: #path,
            about: #about,
            long_about: #long_about,
            params: &[#(#params),*],
            body: #body,
            paged: #paged,
        }
    })
}

fn flag(flag: &Flag) -> TokenStream {
    let (wire, name, required, help) = (&flag.wire, &flag.flag, flag.required, &flag.help);
    let location = match flag.location {
        Location::Path => quote!(Path),
        Location::Query => quote!(Query),
        Location::Body => quote!(Body),
    };
    let kind = kind(&flag.kind);
    quote! {
        Flag {
            wire: #wire,
            flag: #name,
            location: Location::#location,
            required: #required,
            kind: #kind,
            help: #help,
        }
    }
}

fn kind(kind: &Kind) -> TokenStream {
    match kind {
        Kind::Str => quote!(Kind::Str),
        Kind::Int { min, max } => {
            let (min, max) = (optional(*min), optional(*max));
            quote!(Kind::Int { min: #min, max: #max })
        }
        Kind::Number => quote!(Kind::Number),
        Kind::Bool => quote!(Kind::Bool),
        Kind::Enum(values) => quote!(Kind::Enum(&[#(#values),*])),
        Kind::IntEnum(values) => {
            let values = values.iter().copied().map(integer);
            quote!(Kind::IntEnum(&[#(#values),*]))
        }
    }
}

fn optional(value: Option<i64>) -> TokenStream {
    match value {
        Some(v) => {
            let v = integer(v);
            quote!(Some(#v))
        }
        None => quote!(None),
    }
}

/// An integer without a suffix (the field's type gives it), a negative one as `-n`.
fn integer(value: i64) -> TokenStream {
    let magnitude = Literal::u64_unsuffixed(value.unsigned_abs());
    if value < 0 {
        quote!(-#magnitude)
    } else {
        quote!(#magnitude)
    }
}

/// The dispatch arm of `op`: the builder of the service's client, each parameter given,
/// the body, the stream under `--paginate`, the call awaited (with the client's retries).
pub fn arm(command: &Command, service: &str, op: &Op) -> Result<TokenStream, String> {
    let id = &op.id;
    let client = ident(&format!("{service}_client"), "service")?;
    let method = ident(&op.method_name(), "builder method")?;
    let params = command
        .params
        .iter()
        .map(|param| {
            let wire = &param.wire;
            let setter = ident(&snake(wire), &format!("parameter `{wire}`: setter"))?;
            Ok(quote! {
                if let Some(value) = input.param(#wire) {
                    call = call.#setter(crate::input::Arg::new(value));
                }
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let body = match &op.request {
        Some(request) => {
            let module = ident(service, "service")?;
            let request = ident(request, "request schema")?;
            Some(quote! {
                call = call.body(input.body::<licensing_sdk::#module::types::#request>(op)?);
            })
        }
        None => None,
    };
    let paginate = op.pagination.as_ref().map(|_| {
        quote! {
            if input.paginate {
                return crate::output::items(sink, call.stream()).await;
            }
        }
    });
    Ok(quote! {
        #id => {
            let client = ctx.#client()?;
            #[allow(unused_mut)]
            let mut call = client.#method();
            #(#params)*
            #body
            #paginate
            crate::output::data(sink, call.await)
        }
    })
}

/// `name` as an identifier, or what is wrong with it: a keyword or a name with
/// characters Rust does not allow would make generated code that does not compile.
pub fn ident(name: &str, what: &str) -> Result<syn::Ident, String> {
    syn::parse_str(name).map_err(|_| format!("{what} `{name}` is not a Rust identifier"))
}

/// How a command-line value becomes the shared tolerant enum `name` a setter takes.
pub fn enum_conversion(name: &syn::Ident) -> TokenStream {
    quote! {
        impl TryFrom<crate::input::Arg<'_>> for licensing_sdk::#name {
            type Error = ();
            fn try_from(arg: crate::input::Arg<'_>) -> Result<Self, ()> {
                arg.value().parse().map_err(|_| ())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_unsuffixed_and_negative_ones_stay_in_range() {
        let bounds = kind(&Kind::Int {
            min: Some(-3),
            max: Some(i64::MAX),
        });
        syn::parse2::<syn::Expr>(bounds.clone()).expect("an expression");
        assert_eq!(
            bounds.to_string(),
            "Kind :: Int { min : Some (- 3) , max : Some (9223372036854775807) }"
        );
        let values = kind(&Kind::IntEnum(vec![i64::MIN, 0, 2]));
        assert_eq!(
            values.to_string(),
            "Kind :: IntEnum (& [- 9223372036854775808 , 0 , 2])"
        );
    }
}
