//! Per-operation glue added to progenitor's output: `IntoFuture` for each builder
//! (envelope → `Result`, retries, driven by the operation's record in the table),
//! `stream()` for operations with `x-pagination`, and an `Envelope` impl for each reply
//! type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::{
    names::{screaming, snake},
    spec::{Data, Op, Pagination},
};

/// The Rust type of an operation's `data`, relative to the client module.
pub fn data_type(data: &Data) -> TokenStream {
    match data {
        Data::Unit => quote!(()),
        Data::Named(name) => {
            let name = format_ident!("{name}");
            quote!(types::#name)
        }
        Data::List(name) => {
            let name = format_ident!("{name}");
            quote!(::std::vec::Vec<types::#name>)
        }
        Data::Strings => quote!(::std::vec::Vec<::std::string::String>),
    }
}

/// `IntoFuture` (and `stream()` when paged) for the operation's builder; pushed into
/// progenitor's `builder` module.
pub fn builder(op: &Op) -> TokenStream {
    let builder = format_ident!("{}", op.builder());
    let reply = format_ident!("{}", op.reply);
    let record = format_ident!("{}", screaming(&op.id));
    let data = quote!(<types::#reply as crate::runtime::Envelope>::Data);
    let (prepare, prepared) = prepare(op, &builder);
    let mut out = quote! {
        #prepare
        impl<'a> #builder<'a> {
            /// This call with per-call overrides of the client's timeout, deadline and
            /// retry policy; await the result to send it.
            pub fn call_options(
                self,
                options: crate::CallOptions,
            ) -> crate::runtime::Configured<Self> {
                crate::__generated::configure(self, options)
            }
        }
        impl<'a> ::std::future::IntoFuture for #builder<'a> {
            type Output = ::std::result::Result<#data, crate::Error>;
            type IntoFuture = crate::runtime::CallFuture<'a, #data>;
            /// Sends the request (with retries per the client's policy, within its
            /// deadline) and turns the reply envelope into `Result`.
            fn into_future(self) -> Self::IntoFuture {
                ::std::boxed::Box::pin(crate::__generated::call(
                    &self.client.inner,
                    &crate::operations::#record,
                    self #prepared,
                    Self::send,
                    crate::CallOptions::default(),
                ))
            }
        }
        impl<'a> ::std::future::IntoFuture for crate::runtime::Configured<#builder<'a>> {
            type Output = ::std::result::Result<#data, crate::Error>;
            type IntoFuture = crate::runtime::CallFuture<'a, #data>;
            /// Sends the request with the call's own options.
            fn into_future(self) -> Self::IntoFuture {
                let (builder, options) = crate::__generated::configured_parts(self);
                ::std::boxed::Box::pin(crate::__generated::call(
                    &builder.client.inner,
                    &crate::operations::#record,
                    builder #prepared,
                    #builder::send,
                    options,
                ))
            }
        }
    };
    if let Some(pagination) = &op.pagination {
        out.extend(stream(&builder, pagination));
    }
    out
}

/// For an operation with a body: the builder's `prepare()` and the call that makes each
/// `IntoFuture` use it. A body is converted, checked and serialized once per call, not
/// once per attempt.
fn prepare(op: &Op, builder: &proc_macro2::Ident) -> (TokenStream, TokenStream) {
    match &op.request {
        Some(request) => {
            let request = format_ident!("{request}");
            (
                quote! {
                    impl<'a> #builder<'a> {
                        /// Converts, checks and serializes the body, keeping the bytes (or
                        /// the broken rule) for every attempt's `send()`.
                        fn prepare(mut self) -> Self {
                            if self.prepared.is_none() {
                                // What stays behind is never read once `prepared` is set:
                                // an empty error, which costs no allocation to make or to
                                // clone for each attempt (a default builder holds one
                                // message per field).
                                let body = ::std::mem::replace(
                                    &mut self.body,
                                    Err(::std::string::String::new()),
                                );
                                let converted = body.and_then(|v| {
                                    types::#request::try_from(v).map_err(|e| e.to_string())
                                });
                                match crate::__generated::PreparedBody::new(converted) {
                                    Ok(prepared) => self.prepared = Some(prepared),
                                    Err(e) => self.body = Err(e),
                                }
                            }
                            self
                        }
                    }
                },
                quote!(.prepare()),
            )
        }
        None => (quote!(), quote!()),
    }
}

/// `stream()` for a paged operation's builder: every item of every page, fetched as the
/// stream is consumed.
fn stream(builder: &proc_macro2::Ident, pagination: &Pagination) -> TokenStream {
    let Pagination {
        page_param,
        size_param,
        size_max,
        items,
        item_type,
        has_next,
    } = pagination;
    let page_param = format_ident!("{}", snake(page_param));
    let size_param = format_ident!("{}", snake(size_param));
    let size_doc = match size_max {
        Some(max) => format!("the documents' maximum, {max}"),
        None => "[`DEFAULT_PAGE_SIZE`](crate::DEFAULT_PAGE_SIZE), the documents giving no maximum"
            .to_string(),
    };
    let doc = wrap(&format!(
        "Every item across all pages, fetched page by page from the page number set \
         on this builder (default 1) as the stream is consumed, with the page size set on \
         it (default {size_doc}). An invalid request yields one error item and sends \
         nothing."
    ));
    let default_size = match size_max {
        Some(max) => {
            let max = u32::try_from(*max).unwrap_or(u32::MAX);
            quote!(#max)
        }
        None => quote!(crate::DEFAULT_PAGE_SIZE),
    };
    let items = format_ident!("{}", snake(items));
    let item_type = format_ident!("{item_type}");
    let has_next = format_ident!("{}", snake(has_next));
    quote! {
        impl<'a> #builder<'a> {
            #(#[doc = #doc])*
            pub fn stream(
                self,
            ) -> impl ::futures_core::Stream<
                Item = ::std::result::Result<types::#item_type, crate::Error>,
            > + Unpin + 'a {
                // Unset (an empty message, see `unset`) means page 1; a rejected
                // value is reported, not replaced.
                let first = match &self.#page_param {
                    Ok(n) => Ok(n.get()),
                    Err(e) if e.is_empty() => Ok(1),
                    Err(e) => Err(crate::Error::Validation(
                        crate::ValidationError::from_builder_message(e),
                    )),
                };
                // Unset, the page size is the default; a rejected value is reported
                // by the first request.
                let builder = match &self.#size_param {
                    Err(e) if e.is_empty() => self.#size_param(#default_size),
                    _ => self,
                };
                crate::__generated::paginate(builder, first, |builder, page| {
                    let builder = builder.#page_param(page);
                    async move {
                        let data = builder.await?;
                        Ok((data.#items, data.#has_next))
                    }
                })
            }
        }
    }
}

/// `text` as doc lines of at most 80 characters (each with its leading space).
fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= 80 => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(format!(" {word}")),
        }
    }
    lines
}

/// The `Envelope` impl of the operation's reply type; appended after the client module.
pub fn envelope(op: &Op) -> TokenStream {
    let reply = format_ident!("{}", op.reply);
    let data_type = data_type(&op.data);
    let take = match &op.data {
        Data::Unit => quote!(Some(())),
        Data::Named(_) => quote!(self.data),
        // `wire::reply_lists` makes list data optional; absent on a success reads as empty.
        Data::List(_) | Data::Strings => quote!(Some(self.data.unwrap_or_default())),
    };
    let partial = op.partial_code.as_ref().map(|code| {
        quote! {
            const PARTIAL_CODE: ::std::option::Option<&'static str> = Some(#code);
            fn partial(error: crate::ApiError, data: Self::Data) -> crate::Error {
                crate::Error::PartialFailure {
                    error,
                    result: ::std::boxed::Box::new(data),
                }
            }
        }
    });
    quote! {
        impl crate::runtime::Envelope for types::#reply {
            type Data = #data_type;
            fn into_parts(self) -> crate::runtime::Parts<Self::Data> {
                crate::runtime::Parts {
                    code: self.code,
                    message: self.message,
                    cause: self.cause,
                    data: #take,
                }
            }
            #partial
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{load, operations, testing::fragment};

    fn op(extra: &str) -> Op {
        let spec = load(&fragment(&format!("      x-error-codes: []\n{extra}"), "")).unwrap();
        operations(&spec).unwrap().remove(0)
    }

    #[test]
    fn builders_are_driven_by_their_table_record() {
        let glue = builder(&op("")).to_string();
        assert!(glue.contains("IntoFuture for ListThings"), "{glue}");
        assert!(
            glue.contains("crate :: operations :: LIST_THINGS"),
            "{glue}"
        );
        assert!(!glue.contains("fn stream"), "{glue}");
    }

    #[test]
    fn paged_operations_get_a_stream() {
        let glue = builder(
            &op("      x-pagination: {pageParam: pageNum, sizeParam: pageSize, items: list, hasNext: hasNextPage}"),
        )
        .to_string();
        assert!(glue.contains("pub fn stream"), "{glue}");
        assert!(glue.contains("builder . page_num (page)"), "{glue}");
        assert!(glue.contains("data . has_next_page"), "{glue}");
        assert!(glue.contains("types :: Thing"), "{glue}");
    }

    #[test]
    fn envelopes_carry_the_data_type() {
        let glue = envelope(&op("")).to_string();
        assert!(glue.contains("Envelope for types :: Reply"), "{glue}");
        assert!(glue.contains("type Data = types :: Page"), "{glue}");
        assert!(!glue.contains("PARTIAL_CODE"), "{glue}");
    }
}
