//! Edits of each builder's `send()`: no `api-version` header, and a body converted,
//! checked and serialized once, then sent as those bytes on every attempt.

/// progenitor adds an `api-version` header (the spec's `info.version`) to every request.
/// The platform's documents define no such header, so `send()` does not send it: the
/// `header_map.append(…"api-version"…)` statement goes, and with it the header map when
/// nothing else is put in it (no operation has header parameters), which also saves
/// building and merging a map on every call. Returns the builder's name when it has a
/// `send()`; a `send()` without that statement fails, naming the builder.
pub(super) fn drop_api_version(imp: &mut syn::ItemImpl) -> Result<Option<String>, String> {
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
pub(super) fn prepare_body(imp: &mut syn::ItemImpl) -> Result<Option<String>, String> {
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
