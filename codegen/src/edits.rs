//! Edits of progenitor's output. Each one looks for a shape of progenitor's code, counts
//! what it changed, and fails naming the operation when the spec says it must have found
//! something and it did not, so a progenitor release that reshapes its output stops the
//! build rather than silently dropping a rule.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;

use crate::{names::snake, spec::Op};

mod client_docs;
mod send;

pub use client_docs::{await_examples, hide_constructors};

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
                            if let Some(builder) = send::drop_api_version(imp)? {
                                report.unversioned.insert(builder);
                            }
                            if let Some(builder) = send::prepare_body(imp)?
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

fn defined_name(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Enum(e) => Some(e.ident.to_string()),
        syn::Item::Struct(s) => Some(s.ident.to_string()),
        syn::Item::Type(t) => Some(t.ident.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;
    use crate::spec::{Data, Pagination};

    pub(super) fn op(id: &str, request: Option<&str>, paged: bool) -> Op {
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
    fn a_replacement_progenitor_ignored_fails() {
        let mut file = progenitor_like();
        assert!(
            apply(&mut file, &[], &["Reply".into()], reexport(), vec![])
                .unwrap_err()
                .starts_with("schema `Reply`: progenitor generated its own type")
        );
    }
}
