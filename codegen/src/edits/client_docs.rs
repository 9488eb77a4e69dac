//! Edits of progenitor's `impl Client`, for the documentation a partner reads: the
//! constructors only the SDK's builder may call are hidden, and each method's example
//! awaits the builder instead of calling the raw `send()`.

use std::collections::BTreeSet;

use crate::{names::snake, spec::Op};

/// Hides progenitor's constructors of `Client` (`new`, `new_with_client`) from the docs:
/// they take the runtime only the SDK's `Client::builder` makes, and `new` would build
/// an HTTP client of its own, without the SDK's transport settings. The client's page
/// then opens with `builder`. Fails when either is not where progenitor puts them.
pub fn hide_constructors(file: &mut syn::File) -> Result<(), String> {
    let mut hidden = BTreeSet::new();
    for item in &mut file.items {
        let syn::Item::Impl(imp) = item else { continue };
        let is_client = imp.trait_.is_none()
            && matches!(&*imp.self_ty, syn::Type::Path(p) if p.path.is_ident("Client"));
        if !is_client {
            continue;
        }
        for item in &mut imp.items {
            if let syn::ImplItem::Fn(f) = item {
                let name = f.sig.ident.to_string();
                if name == "new" || name == "new_with_client" {
                    f.attrs.push(syn::parse_quote!(#[doc(hidden)]));
                    hidden.insert(name);
                }
            }
        }
    }
    if hidden.len() == 2 {
        Ok(())
    } else {
        Err(format!(
            "progenitor's `impl Client` has not both `new` and `new_with_client` (found {hidden:?})"
        ))
    }
}

/// progenitor's example on each `Client` method calls `.send()`, the raw call without
/// retries that returns the envelope; the example awaits the builder instead, as the
/// crate's documentation teaches: the call with the client's retries, returning `data`.
/// Fails naming the operation whose method has no such example.
pub fn await_examples(file: &mut syn::File, ops: &[Op]) -> Result<usize, String> {
    const SEND: &str = "\n    .send()\n    .await;\n```";
    const AWAIT: &str = "\n    .await?;\n```\n\nAwaiting the builder sends the request, \
        retrying as the client's policy allows, and returns the reply's `data`.";
    let mut done = BTreeSet::new();
    for item in &mut file.items {
        let syn::Item::Impl(imp) = item else { continue };
        if imp.trait_.is_some()
            || !matches!(&*imp.self_ty, syn::Type::Path(p) if p.path.is_ident("Client"))
        {
            continue;
        }
        for item in &mut imp.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let name = f.sig.ident.to_string();
            for attr in &mut f.attrs {
                let syn::Meta::NameValue(doc) = &mut attr.meta else {
                    continue;
                };
                let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) = &mut doc.value
                else {
                    continue;
                };
                let value = text.value();
                let call = format!("let response = client.{name}()");
                if !doc.path.is_ident("doc") || !value.contains(&call) || !value.contains(SEND) {
                    continue;
                }
                let value = value
                    .replace(&call, &format!("let data = client.{name}()"))
                    .replace(SEND, AWAIT);
                *text = syn::LitStr::new(&value, text.span());
                done.insert(name.clone());
            }
        }
    }
    for op in ops {
        let method = snake(&op.id);
        if !done.contains(&method) {
            return Err(format!(
                "{}: `Client::{method}` has no example calling `.send()` to rewrite \
                 (progenitor's output changed?)",
                op.id
            ));
        }
    }
    Ok(done.len())
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;
    use crate::edits::tests::op;

    #[test]
    fn the_client_constructors_are_hidden_and_their_absence_is_an_error() {
        let mut file: syn::File = syn::parse_quote! {
            pub struct Client;
            impl Client {
                pub fn new() -> Self { Client }
                pub fn new_with_client() -> Self { Client }
                pub fn other(&self) {}
            }
            impl Clone for Client { fn clone(&self) -> Self { Client } }
        };
        hide_constructors(&mut file).unwrap();
        let code = quote::quote!(#file).to_string();
        assert_eq!(code.matches("# [doc (hidden)]").count(), 2, "{code}");
        assert!(code.contains("# [doc (hidden)] pub fn new ()"), "{code}");
        assert!(!code.contains("# [doc (hidden)] pub fn other"), "{code}");
        let mut reshaped: syn::File = syn::parse_quote! {
            impl Client { pub fn new() -> Self { Client } }
        };
        let error = hide_constructors(&mut reshaped).unwrap_err();
        assert!(error.contains("new_with_client"), "{error}");
    }

    #[test]
    fn method_examples_await_the_builder() {
        let mut file: syn::File = syn::parse_quote! {
            impl Client {
                #[doc = "Allocate\n\nSends a `POST` request to `/x`\n\n```ignore\nlet response = client.do_thing()\n    .body(body)\n    .send()\n    .await;\n```"]
                pub fn do_thing(&self) {}
            }
        };
        assert_eq!(
            await_examples(&mut file, &[op("doThing", None, false)]),
            Ok(1)
        );
        let code = quote!(#file).to_string();
        assert!(
            code.contains("let data = client.do_thing()\\n    .body(body)\\n    .await?;\\n```"),
            "{code}"
        );
        assert!(!code.contains("send()"), "{code}");
        assert_eq!(
            await_examples(&mut file, &[op("doThing", None, false)]),
            Err(
                "doThing: `Client::do_thing` has no example calling `.send()` to rewrite \
                 (progenitor's output changed?)"
                    .into()
            )
        );
    }
}
