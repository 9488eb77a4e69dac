//! Edits of progenitor's output. Each one looks for a shape of progenitor's code, counts
//! what it changed, and fails naming the operation when the spec says it must have found
//! something and it did not, so a progenitor release that reshapes its output stops the
//! build rather than silently dropping a rule.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;

use crate::{names::snake, spec::Op};

/// What the edits changed, for the checks and the tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Builders whose `send()` now validates and serializes the body (or takes it
    /// prepared).
    pub validated: BTreeSet<String>,
    /// Builders whose `send()` no longer adds progenitor's `api-version` header.
    pub unversioned: BTreeSet<String>,
    /// Glue items pushed into the `builder` module.
    pub glued: usize,
    /// Re-exports pushed into the `types` module.
    pub reexported: usize,
}

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

/// Applies every edit and checks each against the operations.
pub fn apply(
    file: &mut syn::File,
    ops: &[Op],
    replaced: &[String],
    reexport: syn::Item,
    builder_glue: Vec<TokenStream>,
) -> Result<Report, String> {
    let mut report = Report::default();
    let mut builders: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut found = BTreeSet::new();
    for item in &mut file.items {
        let syn::Item::Mod(module) = item else {
            continue;
        };
        let Some((_, items)) = &mut module.content else {
            continue;
        };
        let name = module.ident.to_string();
        match name.as_str() {
            "types" => {
                for item in items.iter() {
                    if let Some(defined) = defined_name(item)
                        && replaced.contains(&defined)
                    {
                        return Err(format!(
                            "schema `{defined}`: progenitor generated its own type although a \
                             replacement with the shared tolerant enum was configured"
                        ));
                    }
                }
                items.push(reexport.clone());
                report.reexported += 1;
            }
            "builder" => {
                for item in items.iter_mut() {
                    match item {
                        syn::Item::Impl(imp) => {
                            if let Some(builder) = drop_api_version(imp)? {
                                report.unversioned.insert(builder);
                            }
                            if let Some(builder) = prepare_body(imp)?
                                && !report.validated.insert(builder.clone())
                            {
                                return Err(format!("builder `{builder}`: two `send()` functions"));
                            }
                        }
                        syn::Item::Struct(s) => {
                            let fields: BTreeSet<String> = s
                                .fields
                                .iter()
                                .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
                                .collect();
                            if fields.contains("body")
                                && let syn::Fields::Named(named) = &mut s.fields
                            {
                                named.named.push(syn::parse_quote! {
                                    prepared: ::std::option::Option<crate::__generated::PreparedBody>
                                });
                            }
                            builders.insert(s.ident.to_string(), fields);
                        }
                        _ => {}
                    }
                }
                for glue in &builder_glue {
                    items.push(syn::Item::Verbatim(glue.clone()));
                    report.glued += 1;
                }
            }
            _ => {}
        }
        found.insert(name);
    }
    for module in ["types", "builder"] {
        if !found.contains(module) {
            return Err(format!(
                "progenitor's output has no `{module}` module (progenitor's output changed?)"
            ));
        }
    }
    check(ops, &builders, &report)?;
    Ok(report)
}

/// Every operation has its builder; every body is validated; every paged operation's
/// builder has the page parameter its `stream()` sets.
fn check(
    ops: &[Op],
    builders: &BTreeMap<String, BTreeSet<String>>,
    report: &Report,
) -> Result<(), String> {
    for op in ops {
        let id = &op.id;
        let name = op.builder();
        let Some(fields) = builders.get(&name) else {
            return Err(format!(
                "{id}: progenitor generated no builder `{name}` (progenitor's output changed?)"
            ));
        };
        if !report.unversioned.contains(&name) {
            return Err(format!(
                "{id}: builder `{name}` has no `send()` (progenitor's output changed?)"
            ));
        }
        match (&op.request, report.validated.contains(&name)) {
            (Some(_), false) => {
                return Err(format!(
                    "{id}: the body validation was not injected: `{name}::send()` has no \
                     `let body = …;` (progenitor's output changed?)"
                ));
            }
            (None, true) => {
                return Err(format!(
                    "{id}: takes no body in the spec, but its builder validates one"
                ));
            }
            _ => {}
        }
        if let Some(p) = &op.pagination {
            let field = snake(&p.page_param);
            if !fields.contains(&field) {
                return Err(format!(
                    "{id}: x-pagination: builder `{name}` has no `{field}` field, so no \
                     `stream()` can be generated"
                ));
            }
        }
    }
    Ok(())
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

fn defined_name(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Enum(e) => Some(e.ident.to_string()),
        syn::Item::Struct(s) => Some(s.ident.to_string()),
        syn::Item::Type(t) => Some(t.ident.to_string()),
        _ => None,
    }
}

/// progenitor adds an `api-version` header (the spec's `info.version`) to every request.
/// The platform's documents define no such header, so `send()` does not send it: the
/// `header_map.append(…"api-version"…)` statement goes, and with it the header map when
/// nothing else is put in it (no operation has header parameters), which also saves
/// building and merging a map on every call. Returns the builder's name when it has a
/// `send()`; a `send()` without that statement fails, naming the builder.
fn drop_api_version(imp: &mut syn::ItemImpl) -> Result<Option<String>, String> {
    let syn::Type::Path(self_ty) = &*imp.self_ty else {
        return Ok(None);
    };
    let Some(builder) = self_ty.path.segments.last().map(|s| s.ident.to_string()) else {
        return Ok(None);
    };
    let Some(send) = imp.items.iter_mut().find_map(|item| match item {
        syn::ImplItem::Fn(f) if f.sig.ident == "send" => Some(f),
        _ => None,
    }) else {
        return Ok(None);
    };
    let text = |stmt: &syn::Stmt| quote::quote!(#stmt).to_string();
    let stmts = &mut send.block.stmts;
    let before = stmts.len();
    stmts.retain(|s| {
        let t = text(s);
        !(t.starts_with("header_map . append") && t.contains("\"api-version\""))
    });
    if stmts.len() + 1 != before {
        return Err(format!(
            "builder `{builder}`: `send()` has {} `header_map.append(…\"api-version\"…)` \
             statements, not one (progenitor's output changed?)",
            before - stmts.len()
        ));
    }
    let is_map = |s: &syn::Stmt| text(s).starts_with("let mut header_map =");
    let used = stmts
        .iter()
        .any(|s| !is_map(s) && text(s).starts_with("header_map"));
    if !used {
        stmts.retain(|s| !is_map(s));
        let mut headers = HeadersCall(0);
        syn::visit_mut::VisitMut::visit_block_mut(&mut headers, &mut send.block);
        if headers.0 != 1 {
            return Err(format!(
                "builder `{builder}`: `send()` has {} `.headers(header_map)` calls, not one \
                 (progenitor's output changed?)",
                headers.0
            ));
        }
    }
    Ok(Some(builder))
}

/// `x.headers(header_map)` becomes `x`.
struct HeadersCall(usize);

impl syn::visit_mut::VisitMut for HeadersCall {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        let syn::Expr::MethodCall(m) = expr else {
            return;
        };
        let is_map = m.args.len() == 1
            && matches!(&m.args[0], syn::Expr::Path(p) if p.path.is_ident("header_map"));
        if m.method == "headers" && is_map {
            *expr = (*m.receiver).clone();
            self.0 += 1;
        }
    }
}

/// In a builder with a body: `new()` starts with no prepared body; `send()` takes the
/// prepared one when there is one, and otherwise converts, checks (the rules typify does
/// not, `crate::validate`) and serializes the body itself; the request carries those bytes.
/// The operation's `IntoFuture` prepares the body once (`glue::builder`), so that every
/// attempt of a call sends the same bytes instead of cloning and serializing the whole
/// body again. Returns the builder's name when it edited `send()`.
fn prepare_body(imp: &mut syn::ItemImpl) -> Result<Option<String>, String> {
    let syn::Type::Path(self_ty) = &*imp.self_ty else {
        return Ok(None);
    };
    let Some(builder) = self_ty.path.segments.last().map(|s| s.ident.to_string()) else {
        return Ok(None);
    };
    let at = |what: &str| format!("builder `{builder}`: {what} (progenitor's output changed?)");
    let Some(send) = imp
        .items
        .iter()
        .position(|item| matches!(item, syn::ImplItem::Fn(f) if f.sig.ident == "send"))
    else {
        return Ok(None);
    };
    let syn::ImplItem::Fn(f) = &mut imp.items[send] else {
        unreachable!()
    };
    let Some(let_body) = f.block.stmts.iter().position(|s| {
        matches!(s, syn::Stmt::Local(syn::Local { pat: syn::Pat::Ident(p), .. }) if p.ident == "body")
    }) else {
        return Ok(None);
    };
    // `let Self { client, .., body } = self;` also takes the prepared body.
    let destructured = f.block.stmts.iter_mut().any(|s| match s {
        syn::Stmt::Local(syn::Local {
            pat: syn::Pat::Struct(p),
            ..
        }) if p.path.is_ident("Self") => {
            let ident: syn::Ident = syn::parse_quote!(prepared);
            p.fields.push(syn::FieldPat {
                attrs: Vec::new(),
                member: syn::Member::Named(ident.clone()),
                colon_token: None,
                pat: Box::new(syn::Pat::Ident(syn::PatIdent {
                    attrs: Vec::new(),
                    by_ref: None,
                    mutability: None,
                    ident,
                    subpat: None,
                })),
            });
            true
        }
        _ => false,
    });
    if !destructured {
        return Err(at("`send()` does not start with `let Self { .. } = self;`"));
    }
    let syn::Stmt::Local(local) = &mut f.block.stmts[let_body] else {
        unreachable!()
    };
    // progenitor: `let body = body.and_then(<convert>).map_err(Error::InvalidRequest)?;`
    let converted = match local.init.as_ref().map(|i| &*i.expr) {
        Some(syn::Expr::Try(t)) => match &*t.expr {
            syn::Expr::MethodCall(m) if m.method == "map_err" => (*m.receiver).clone(),
            _ => return Err(at("`let body` is not `….map_err(Error::InvalidRequest)?`")),
        },
        _ => return Err(at("`let body` is not `….map_err(Error::InvalidRequest)?`")),
    };
    local.init = Some(syn::LocalInit {
        eq_token: Default::default(),
        expr: Box::new(syn::parse_quote! {
            match prepared {
                ::std::option::Option::Some(prepared) => prepared,
                ::std::option::Option::None => crate::__generated::PreparedBody::new(#converted)
                    .map_err(Error::InvalidRequest)?,
            }
        }),
        diverge: None,
    });
    let mut json = JsonBody(0);
    syn::visit_mut::VisitMut::visit_block_mut(&mut json, &mut f.block);
    if json.0 != 1 {
        return Err(at(&format!(
            "`send()` has {} `.json(&body)` calls, not one",
            json.0
        )));
    }
    let new = imp.items.iter_mut().find_map(|item| match item {
        syn::ImplItem::Fn(f) if f.sig.ident == "new" => Some(f),
        _ => None,
    });
    let literal = new.and_then(|f| match f.block.stmts.last_mut() {
        Some(syn::Stmt::Expr(syn::Expr::Struct(s), None)) if s.path.is_ident("Self") => Some(s),
        _ => None,
    });
    let Some(literal) = literal else {
        return Err(at("`new()` does not end with `Self { .. }`"));
    };
    literal
        .fields
        .push(syn::parse_quote!(prepared: ::std::option::Option::None));
    Ok(Some(builder))
}

/// `.json(&body)` becomes `.header(CONTENT_TYPE, "application/json").body(body.body())`.
struct JsonBody(usize);

impl syn::visit_mut::VisitMut for JsonBody {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        let syn::Expr::MethodCall(m) = expr else {
            return;
        };
        let is_body = m.args.len() == 1
            && matches!(&m.args[0], syn::Expr::Reference(r)
                if matches!(&*r.expr, syn::Expr::Path(p) if p.path.is_ident("body")));
        if m.method != "json" || !is_body {
            return;
        }
        let receiver = &m.receiver;
        *expr = syn::parse_quote! {
            #receiver
                .header(
                    ::reqwest::header::CONTENT_TYPE,
                    ::reqwest::header::HeaderValue::from_static("application/json"),
                )
                .body(body.body())
        };
        self.0 += 1;
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

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
    use crate::spec::{Data, Pagination};

    fn op(id: &str, request: Option<&str>, paged: bool) -> Op {
        Op {
            id: id.into(),
            method: "POST".into(),
            path: "/x".into(),
            idempotent: false,
            error_codes: vec![],
            partial_code: None,
            pagination: paged.then(|| Pagination {
                page_param: "pageNum".into(),
                size_param: "pageSize".into(),
                size_max: None,
                items: "list".into(),
                item_type: "Thing".into(),
                has_next: "hasNextPage".into(),
            }),
            request: request.map(Into::into),
            reply: "Reply".into(),
            data: Data::Unit,
        }
    }

    /// The shape of progenitor's builder-interface output that the edits rely on.
    fn progenitor_like() -> syn::File {
        syn::parse2(quote! {
            pub mod types { pub struct Reply; }
            pub mod builder {
                pub struct DoThing<'a> { client: &'a Client, body: Result<Body, String> }
                impl<'a> DoThing<'a> {
                    pub fn new(client: &'a Client) -> Self {
                        Self { client: client, body: Ok(Default::default()) }
                    }
                    pub async fn send(self) -> Result<(), Error> {
                        let Self { client, body } = self;
                        let body = body
                            .and_then(|v| types::Body::try_from(v).map_err(|e| e.to_string()))
                            .map_err(Error::InvalidRequest)?;
                        let url = "x";
                        let mut header_map = ::reqwest::header::HeaderMap::with_capacity(1usize);
                        header_map.append(
                            ::reqwest::header::HeaderName::from_static("api-version"),
                            ::reqwest::header::HeaderValue::from_static(super::Client::api_version()),
                        );
                        let request = client.client.post(url).json(&body).headers(header_map).build()?;
                        Ok(())
                    }
                }
                pub struct ListThings<'a> { client: &'a Client, page_num: Result<u32, String> }
                impl<'a> ListThings<'a> {
                    pub async fn send(self) -> Result<(), Error> {
                        let mut header_map = ::reqwest::header::HeaderMap::with_capacity(2usize);
                        header_map.append(
                            ::reqwest::header::HeaderName::from_static("api-version"),
                            ::reqwest::header::HeaderValue::from_static(super::Client::api_version()),
                        );
                        header_map.append("x-page", page_num.to_string().try_into()?);
                        let request = client.client.get(url).headers(header_map).build()?;
                        Ok(())
                    }
                }
            }
        })
        .unwrap()
    }

    fn reexport() -> syn::Item {
        syn::parse_quote!(
            pub use crate::ErrorCode;
        )
    }

    #[test]
    fn validation_is_injected_after_the_body_and_glue_is_pushed() {
        let mut file = progenitor_like();
        let ops = [
            op("doThing", Some("Body"), false),
            op("listThings", None, true),
        ];
        let report = apply(
            &mut file,
            &ops,
            &[],
            reexport(),
            vec![quote!(
                struct Glue;
            )],
        )
        .unwrap();
        assert_eq!(report.validated, BTreeSet::from(["DoThing".to_string()]));
        assert_eq!((report.glued, report.reexported), (1, 1));
        let code = quote!(#file).to_string();
        for expected in [
            "body : Result < Body , String > , prepared : :: std :: option :: Option < crate :: __generated :: PreparedBody >",
            "Self { client : client , body : Ok (Default :: default ()) , prepared : :: std :: option :: Option :: None }",
            "let Self { client , body , prepared } = self ;",
            "let body = match prepared { :: std :: option :: Option :: Some (prepared) => prepared , :: std :: option :: Option :: None => crate :: __generated :: PreparedBody :: new (body . and_then (| v | types :: Body :: try_from (v) . map_err (| e | e . to_string ()))) . map_err (Error :: InvalidRequest) ? , } ;",
            ". body (body . body ())",
            "pub use crate :: ErrorCode",
        ] {
            assert!(code.contains(expected), "{expected}\n{code}");
        }
        assert!(!code.contains(". json (& body)"), "{code}");
    }

    #[test]
    fn the_api_version_header_is_not_sent() {
        let mut file = progenitor_like();
        let ops = [
            op("doThing", Some("Body"), false),
            op("listThings", None, true),
        ];
        let report = apply(&mut file, &ops, &[], reexport(), vec![]).unwrap();
        assert_eq!(
            report.unversioned,
            BTreeSet::from(["DoThing".to_string(), "ListThings".to_string()])
        );
        let code = quote!(#file).to_string();
        assert!(!code.contains("api-version"), "{code}");
        // A map with nothing left in it goes; one with other headers stays.
        let (do_thing, list_things) = code.split_at(code.find("struct ListThings").unwrap());
        assert!(!do_thing.contains("header_map"), "{do_thing}");
        assert!(
            do_thing.contains("client . client . post (url) . header ("),
            "{do_thing}"
        );
        for kept in [
            "let mut header_map = :: reqwest :: header :: HeaderMap :: with_capacity (2usize) ;",
            "header_map . append (\"x-page\"",
            ". get (url) . headers (header_map) . build () ?",
        ] {
            assert!(list_things.contains(kept), "{kept}\n{list_things}");
        }
    }

    #[test]
    fn a_send_without_the_api_version_header_fails_naming_the_builder() {
        let file = progenitor_like();
        let text = quote!(#file)
            .to_string()
            .replacen("\"api-version\"", "\"x-other\"", 1);
        let mut file: syn::File = syn::parse_str(&text).unwrap();
        let ops = [op("doThing", Some("Body"), false)];
        assert_eq!(
            apply(&mut file, &ops, &[], reexport(), vec![]),
            Err(
                "builder `DoThing`: `send()` has 0 `header_map.append(…\"api-version\"…)` \
                 statements, not one (progenitor's output changed?)"
                    .into()
            )
        );
    }

    #[test]
    fn a_body_without_the_expected_shape_fails_naming_the_operation() {
        let mut file = progenitor_like();
        let ops = [op("listThings", Some("Body"), false)];
        assert_eq!(
            apply(&mut file, &ops, &[], reexport(), vec![]),
            Err(
                "listThings: the body validation was not injected: `ListThings::send()` has no \
                 `let body = …;` (progenitor's output changed?)"
                    .into()
            )
        );
    }

    #[test]
    fn a_send_of_another_shape_fails_naming_the_builder() {
        let file = progenitor_like();
        let text = quote!(#file).to_string();
        for (from, to, error) in [
            (
                ". json (& body)",
                ". form (& body)",
                "has 0 `.json(&body)` calls",
            ),
            (
                "let Self { client , body } = self ;",
                "",
                "does not start with `let Self",
            ),
            (
                ". map_err (Error :: InvalidRequest) ?",
                "?",
                "`let body` is not",
            ),
        ] {
            let mut file: syn::File = syn::parse_str(&text.replacen(from, to, 1)).unwrap();
            let ops = [op("doThing", Some("Body"), false)];
            let err = apply(&mut file, &ops, &[], reexport(), vec![]).unwrap_err();
            assert!(err.starts_with("builder `DoThing`: "), "{err}");
            assert!(err.contains(error), "{err}");
        }
    }

    #[test]
    fn a_paged_operation_needs_its_page_field() {
        let mut file = progenitor_like();
        let ops = [op("doThing", Some("Body"), true)];
        assert_eq!(
            apply(&mut file, &ops, &[], reexport(), vec![]),
            Err(
                "doThing: x-pagination: builder `DoThing` has no `page_num` field, so no \
                 `stream()` can be generated"
                    .into()
            )
        );
    }

    #[test]
    fn a_missing_builder_or_module_fails() {
        let mut file = progenitor_like();
        let ops = [op("vanished", None, false)];
        assert_eq!(
            apply(&mut file, &ops, &[], reexport(), vec![]),
            Err("vanished: progenitor generated no builder `Vanished` (progenitor's output changed?)".into())
        );
        let mut file: syn::File = syn::parse2(quote!(
            pub mod types {}
        ))
        .unwrap();
        assert_eq!(
            apply(&mut file, &[], &[], reexport(), vec![]),
            Err(
                "progenitor's output has no `builder` module (progenitor's output changed?)".into()
            )
        );
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

    #[test]
    fn a_replacement_progenitor_ignored_fails() {
        let mut file = progenitor_like();
        assert!(
            apply(&mut file, &[], &["Reply".into()], reexport(), vec![])
                .unwrap_err()
                .starts_with("schema `Reply`: progenitor generated its own type")
        );
    }
}
