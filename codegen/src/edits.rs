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
    /// Builders whose `send()` now validates the body.
    pub validated: BTreeSet<String>,
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
                            if let Some(builder) = inject_validation(imp)
                                && !report.validated.insert(builder.clone())
                            {
                                return Err(format!("builder `{builder}`: two `send()` functions"));
                            }
                        }
                        syn::Item::Struct(s) => {
                            let fields = s
                                .fields
                                .iter()
                                .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
                                .collect();
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

/// After `let body = ...?;` in a builder's `send()`, checks the rules typify does not.
/// Returns the builder's name when it injected the check.
fn inject_validation(imp: &mut syn::ItemImpl) -> Option<String> {
    let syn::Type::Path(self_ty) = &*imp.self_ty else {
        return None;
    };
    let builder = self_ty.path.segments.last()?.ident.to_string();
    for item in &mut imp.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        if f.sig.ident != "send" {
            continue;
        }
        let at = f.block.stmts.iter().position(|s| {
            matches!(s, syn::Stmt::Local(syn::Local { pat: syn::Pat::Ident(p), .. }) if p.ident == "body")
        })?;
        f.block.stmts.insert(
            at + 1,
            syn::parse_quote! {
                crate::validate::Validate::validate(&body)
                    .map_err(|e| Error::InvalidRequest(e.to_string()))?;
            },
        );
        return Some(builder);
    }
    None
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;
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
                    pub async fn send(self) -> Result<(), Error> {
                        let Self { client, body } = self;
                        let body = body.map_err(Error::InvalidRequest)?;
                        let url = "x";
                        Ok(())
                    }
                }
                pub struct ListThings<'a> { client: &'a Client, page_num: Result<u32, String> }
                impl<'a> ListThings<'a> {
                    pub async fn send(self) -> Result<(), Error> { Ok(()) }
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
        let body = code.find("let body = body").unwrap();
        let check = code
            .find("crate :: validate :: Validate :: validate (& body)")
            .unwrap();
        let url = code.find("let url").unwrap();
        assert!(body < check && check < url, "{code}");
        assert!(code.contains("pub use crate :: ErrorCode"), "{code}");
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
