//! Generates the two service clients from `spec/*.yaml`.
//!
//! spec → openapiv3 → transforms → progenitor (builder interface) → glue → prettyplease →
//! `$OUT_DIR/{order,member,enums}.rs`, included by `src/lib.rs`.
//!
//! The transforms, each driven by the spec:
//! 1. `g_nonce` is removed from every operation handed to progenitor (the runtime adds it).
//! 2. Every enum schema becomes one tolerant Rust enum with an `Unknown` variant (`Other` for
//!    `ErrorCode`), shared by both services, swapped in with `with_replacement`; `ReplyCode`
//!    is replaced by the hand-written `crate::ReplyCode`.
//! 3. Request-side constraints (pattern, lengths, item counts, minimum) are removed from
//!    schemas that only replies use, so a reply is never rejected for them.
//! 4. Each builder's `send()` calls `crate::validate::Validate::validate(&body)` before the
//!    request is built (the rules typify does not check).
//! 5. Glue per operation: `IntoFuture` for each builder (envelope → `Result`, retries), an
//!    `Envelope` impl for each reply type, and `stream()` for operations with `x-pagination`.

use std::{
    collections::{BTreeMap, BTreeSet},
    env, fs,
    path::Path,
    time::Instant,
};

use openapiv3::{OpenAPI, Parameter, ReferenceOr, Schema, SchemaKind, Type};
use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, Generator, HooksMode, InterfaceStyle, TagStyle, TypeImpl};
use quote::{format_ident, quote};
use serde_json::Value;

/// The anti-replay query parameter: declared in the specs, supplied by the runtime.
const NONCE: &str = "g_nonce";

const SERVICES: &[(&str, &str)] = &[("order", "spec/order.yaml"), ("member", "spec/member.yaml")];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let started = Instant::now();
    let mut enums = EnumSet::default();
    let mut specs = Vec::new();
    for (name, file) in SERVICES {
        println!("cargo:rerun-if-changed={file}");
        let spec = load(file).unwrap_or_else(|e| fail(file, &e));
        enums.collect(&spec).unwrap_or_else(|e| fail(file, &e));
        specs.push((*name, *file, spec));
    }
    write(&out_dir, "enums", enums.generate());
    for (name, file, spec) in specs {
        let code = generate(spec, &enums).unwrap_or_else(|e| fail(file, &e));
        write(&out_dir, name, code);
    }
    // Read by `cargo xtask bench` to report generation time without timing a whole build.
    fs::write(
        Path::new(&out_dir).join("generation-ms.txt"),
        started.elapsed().as_millis().to_string(),
    )
    .expect("OUT_DIR is writable");
}

fn fail(file: &str, message: &str) -> ! {
    // A panic would bury the message in a backtrace; this names the file and stops.
    eprintln!("error: {file}: {message}");
    std::process::exit(1);
}

fn write(out_dir: &str, name: &str, tokens: TokenStream) {
    let file: syn::File =
        syn::parse2(tokens).unwrap_or_else(|e| panic!("generated {name}.rs does not parse: {e}"));
    let out = Path::new(out_dir).join(format!("{name}.rs"));
    fs::write(&out, prettyplease::unparse(&file)).expect("OUT_DIR is writable");
}

fn load(file: &str) -> Result<OpenAPI, String> {
    let text = fs::read_to_string(file).map_err(|e| format!("cannot read: {e}"))?;
    serde_norway::from_str(&text).map_err(|e| format!("not a valid OpenAPI 3.0 document: {e}"))
}

fn generate(mut spec: OpenAPI, enums: &EnumSet) -> Result<TokenStream, String> {
    let ops = operations(&spec)?;
    strip_nonce(&mut spec)?;
    strip_reply_constraints(&mut spec)?;

    let mut settings = GenerationSettings::new();
    settings
        .with_interface(InterfaceStyle::Builder)
        .with_tag(TagStyle::Merged)
        .with_inner_type(quote!(crate::runtime::Runtime))
        .with_hooks(HooksMode::Expected);
    let impls = || [TypeImpl::Display, TypeImpl::FromStr].into_iter();
    for name in enums.names_in(&spec) {
        settings.with_replacement(&name, format!("crate::{name}"), impls());
    }
    settings.with_replacement("ReplyCode", "crate::ReplyCode", impls());
    let mut generator = Generator::new(&settings);
    let tokens = generator
        .generate_tokens(&spec)
        .map_err(|e| format!("code generation failed: {e}"))?;
    let mut file: syn::File =
        syn::parse2(tokens).map_err(|e| format!("generated code does not parse: {e}"))?;

    let reexports: Vec<_> = enums
        .names_in(&spec)
        .into_iter()
        .chain(["ReplyCode".to_string()])
        .map(|n| format_ident!("{n}"))
        .collect();
    let builder_glue = ops
        .iter()
        .map(Op::builder_glue)
        .collect::<Result<Vec<_>, _>>()?;
    let envelopes = ops
        .iter()
        .map(|op| op.envelope_glue(&spec))
        .collect::<Result<Vec<_>, _>>()?;
    for item in &mut file.items {
        let syn::Item::Mod(module) = item else {
            continue;
        };
        let Some((_, items)) = &mut module.content else {
            continue;
        };
        match module.ident.to_string().as_str() {
            "types" => items.push(syn::parse_quote! {
                /// Enums shared by both services, tolerant of values added later.
                pub use crate::{#(#reexports),*};
            }),
            "builder" => {
                for item in items.iter_mut() {
                    if let syn::Item::Impl(imp) = item {
                        inject_validation(imp);
                    }
                }
                for glue in &builder_glue {
                    items.push(syn::Item::Verbatim(glue.clone()));
                }
            }
            _ => {}
        }
    }
    Ok(quote! {
        #file
        #(#envelopes)*
    })
}

// ---------------------------------------------------------------------------- operations

struct Op {
    id: String,
    builder: syn::Ident,
    reply: String,
    idempotent: bool,
    partial_code: Option<String>,
    pagination: Option<Pagination>,
}

struct Pagination {
    page_param: syn::Ident,
    items: syn::Ident,
    item_type: syn::Ident,
    has_next: syn::Ident,
}

fn operations(spec: &OpenAPI) -> Result<Vec<Op>, String> {
    let mut ops = Vec::new();
    for (path, method, op) in spec.operations() {
        let at = format!("{method} {path}");
        let id = op
            .operation_id
            .clone()
            .ok_or(format!("{at}: no operationId"))?;
        let ext = |key: &str| op.extensions.get(key);
        let idempotent = ext("x-idempotent").and_then(Value::as_bool).ok_or(format!(
            "{id}: `x-idempotent: true|false` is required (retry classification)"
        ))?;
        let reply = op
            .responses
            .responses
            .get(&openapiv3::StatusCode::Code(200))
            .and_then(|r| response_schema(spec, r))
            .ok_or(format!("{id}: no HTTP 200 reply schema"))?;
        for status in ["200", "299"] {
            let code = openapiv3::StatusCode::Code(status.parse().unwrap());
            let schema = op
                .responses
                .responses
                .get(&code)
                .and_then(|r| response_schema(spec, r));
            if schema.as_deref() != Some(reply.as_str()) {
                return Err(format!(
                    "{id}: HTTP {status} must reply with `{reply}` (one envelope per operation)"
                ));
            }
        }
        let pagination = match ext("x-pagination") {
            None => None,
            Some(p) => Some(pagination(spec, &id, &reply, p)?),
        };
        ops.push(Op {
            builder: format_ident!("{}", pascal(&id)),
            reply,
            idempotent,
            partial_code: ext("x-partial-success-code")
                .and_then(Value::as_str)
                .map(str::to_string),
            pagination,
            id,
        });
    }
    Ok(ops)
}

fn response_schema(spec: &OpenAPI, r: &ReferenceOr<openapiv3::Response>) -> Option<String> {
    let r = match r {
        ReferenceOr::Item(r) => r,
        ReferenceOr::Reference { reference } => {
            let name = reference.strip_prefix("#/components/responses/")?;
            spec.components.as_ref()?.responses.get(name)?.as_item()?
        }
    };
    r.content
        .get("application/json")?
        .schema
        .as_ref()
        .and_then(ref_name)
}

fn pagination(spec: &OpenAPI, id: &str, reply: &str, p: &Value) -> Result<Pagination, String> {
    let field = |k: &str| {
        p.get(k)
            .and_then(Value::as_str)
            .ok_or(format!("{id}: x-pagination.{k} is required"))
    };
    let page = object_property(spec, reply, "data")
        .and_then(|s| ref_name(&s))
        .ok_or(format!(
            "{id}: x-pagination needs `data` to reference a page schema"
        ))?;
    let items = object_property(spec, &page, field("items")?).ok_or(format!(
        "{id}: page schema `{page}` has no `{}`",
        field("items")?
    ))?;
    let item_type = match items {
        ReferenceOr::Item(s) => match s.schema_kind {
            SchemaKind::Type(Type::Array(a)) => a.items.and_then(|i| match i {
                ReferenceOr::Reference { reference } => reference
                    .strip_prefix("#/components/schemas/")
                    .map(str::to_string),
                ReferenceOr::Item(_) => None,
            }),
            _ => None,
        },
        ReferenceOr::Reference { .. } => None,
    }
    .ok_or(format!(
        "{id}: the page's items must be an array of a named schema"
    ))?;
    Ok(Pagination {
        page_param: format_ident!("{}", snake(field("pageParam")?)),
        items: format_ident!("{}", snake(field("items")?)),
        item_type: format_ident!("{item_type}"),
        has_next: format_ident!("{}", snake(field("hasNext")?)),
    })
    .and_then(|p| {
        field("sizeParam")?;
        Ok(p)
    })
}

impl Op {
    fn builder_glue(&self) -> Result<TokenStream, String> {
        let Op {
            id,
            builder,
            reply,
            idempotent,
            ..
        } = self;
        let reply = format_ident!("{reply}");
        let mut out = quote! {
            impl<'a> ::std::future::IntoFuture for #builder<'a> {
                type Output = ::std::result::Result<
                    <types::#reply as crate::runtime::Envelope>::Data,
                    crate::Error,
                >;
                type IntoFuture = crate::runtime::CallFuture<
                    'a,
                    <types::#reply as crate::runtime::Envelope>::Data,
                >;
                /// Sends the request (with retries per the client's policy) and turns the
                /// reply envelope into `Result`.
                fn into_future(self) -> Self::IntoFuture {
                    const OPERATION: crate::runtime::Operation = crate::runtime::Operation {
                        id: #id,
                        idempotent: #idempotent,
                    };
                    ::std::boxed::Box::pin(crate::runtime::call(
                        &self.client.inner,
                        &OPERATION,
                        self,
                        Self::send,
                    ))
                }
            }
        };
        if let Some(Pagination {
            page_param,
            items,
            item_type,
            has_next,
        }) = &self.pagination
        {
            out.extend(quote! {
                impl<'a> #builder<'a> {
                    /// Every item across all pages, fetched page by page from the page
                    /// number set on this builder (default 1) as the stream is consumed. An
                    /// invalid request yields one error item and sends nothing.
                    pub fn stream(
                        self,
                    ) -> impl ::futures_core::Stream<
                        Item = ::std::result::Result<types::#item_type, crate::Error>,
                    > + Unpin + 'a {
                        // Unset means page 1; a rejected value is reported, not replaced.
                        let first = match &self.#page_param {
                            Ok(n) => Ok(n.get()),
                            Err(e) if e.ends_with(" was not initialized") => Ok(1),
                            Err(e) => Err(crate::Error::Validation(
                                crate::ValidationError::from_builder_message(e),
                            )),
                        };
                        crate::runtime::paginate(self, first, |builder, page| {
                            let builder = builder.#page_param(page);
                            async move {
                                let data = builder.await?;
                                Ok((data.#items, data.#has_next))
                            }
                        })
                    }
                }
            });
        }
        Ok(out)
    }

    fn envelope_glue(&self, spec: &OpenAPI) -> Result<TokenStream, String> {
        let reply = format_ident!("{}", self.reply);
        let data = object_property(spec, &self.reply, "data");
        let (data_type, take) = match data.as_ref() {
            None => (quote!(()), quote!(Some(()))),
            Some(ReferenceOr::Reference { reference }) => {
                let name =
                    format_ident!("{}", reference.trim_start_matches("#/components/schemas/"));
                (quote!(types::#name), quote!(self.data))
            }
            Some(ReferenceOr::Item(s)) => match &s.schema_kind {
                SchemaKind::Type(Type::Array(a)) => {
                    let item = match a.items.as_ref() {
                        Some(ReferenceOr::Reference { reference }) => {
                            let name = format_ident!(
                                "{}",
                                reference.trim_start_matches("#/components/schemas/")
                            );
                            quote!(types::#name)
                        }
                        Some(ReferenceOr::Item(i))
                            if matches!(i.schema_kind, SchemaKind::Type(Type::String(_))) =>
                        {
                            quote!(::std::string::String)
                        }
                        _ => {
                            return Err(format!(
                                "{}: `data` array items must be a named schema or a string",
                                self.reply
                            ));
                        }
                    };
                    // typify renders an optional array as a defaulted `Vec`.
                    (quote!(::std::vec::Vec<#item>), quote!(Some(self.data)))
                }
                // A schema without a type: the document says `data` is null.
                SchemaKind::Any(_) => (quote!(()), quote!(Some(()))),
                _ => return Err(format!("{}: unsupported `data` schema", self.reply)),
            },
        };
        let partial = self.partial_code.as_ref().map(|code| {
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
        Ok(quote! {
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
        })
    }
}

/// After `let body = ...?;` in a builder's `send()`, checks the rules typify does not.
fn inject_validation(imp: &mut syn::ItemImpl) {
    for item in &mut imp.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        if f.sig.ident != "send" {
            continue;
        }
        let at = f.block.stmts.iter().position(|s| {
            matches!(s, syn::Stmt::Local(syn::Local { pat: syn::Pat::Ident(p), .. }) if p.ident == "body")
        });
        if let Some(at) = at {
            f.block.stmts.insert(
                at + 1,
                syn::parse_quote! {
                    crate::validate::Validate::validate(&body)
                        .map_err(|e| Error::InvalidRequest(e.to_string()))?;
                },
            );
        }
    }
}

// ---------------------------------------------------------------------------- g_nonce

/// Removes `g_nonce` from every operation so it never appears in a method signature.
/// Fails when an operation does not declare it: the spec must say what goes on the wire.
fn strip_nonce(spec: &mut OpenAPI) -> Result<(), String> {
    let components = spec.components.clone();
    for (path, item) in spec.paths.paths.iter_mut() {
        let ReferenceOr::Item(item) = item else {
            return Err(format!("path {path}: path items must be inline"));
        };
        let ops = [
            ("get", &mut item.get),
            ("put", &mut item.put),
            ("post", &mut item.post),
            ("delete", &mut item.delete),
            ("options", &mut item.options),
            ("head", &mut item.head),
            ("patch", &mut item.patch),
            ("trace", &mut item.trace),
        ];
        for (method, op) in ops
            .into_iter()
            .filter_map(|(m, op)| Some((m, op.as_mut()?)))
        {
            let before = op.parameters.len();
            op.parameters.retain(|p| {
                resolve_parameter(p, components.as_ref())
                    .map(|p| p.parameter_data_ref().name.as_str())
                    != Some(NONCE)
            });
            if op.parameters.len() == before {
                return Err(format!(
                    "{method} {path}: does not declare the `{NONCE}` query parameter"
                ));
            }
        }
    }
    Ok(())
}

fn resolve_parameter<'a>(
    p: &'a ReferenceOr<Parameter>,
    components: Option<&'a openapiv3::Components>,
) -> Option<&'a Parameter> {
    match p {
        ReferenceOr::Item(p) => Some(p),
        ReferenceOr::Reference { reference } => {
            let name = reference.strip_prefix("#/components/parameters/")?;
            components?.parameters.get(name)?.as_item()
        }
    }
}

// ---------------------------------------------------------------------------- reply-only constraints

/// Request-side rules (patterns, lengths, counts, minimum) must never reject a reply, and
/// typify enforces them while deserializing. Schemas used only by replies lose them here;
/// a schema shared by requests and replies must carry none (split it instead).
fn strip_reply_constraints(spec: &mut OpenAPI) -> Result<(), String> {
    let (mut request, mut reply) = (BTreeSet::new(), BTreeSet::new());
    for (_, _, op) in spec.operations() {
        if let Some(ReferenceOr::Item(body)) = &op.request_body {
            for media in body.content.values() {
                if let Some(s) = &media.schema {
                    reachable(spec, s, &mut request);
                }
            }
        }
        for r in op.responses.responses.values() {
            if let Some(name) = response_schema(spec, r) {
                reachable(
                    spec,
                    &ReferenceOr::ref_(&format!("#/components/schemas/{name}")),
                    &mut reply,
                );
            }
        }
    }
    let Some(components) = spec.components.as_mut() else {
        return Ok(());
    };
    for (name, schema) in components.schemas.iter_mut() {
        let ReferenceOr::Item(schema) = schema else {
            continue;
        };
        if !reply.contains(name) {
            continue;
        }
        if request.contains(name) {
            if has_constraints(schema) {
                return Err(format!(
                    "schema `{name}` is used by requests and replies and carries request-side \
                     constraints; split it so replies stay tolerant"
                ));
            }
            continue;
        }
        clear_constraints(schema);
    }
    Ok(())
}

fn reachable(spec: &OpenAPI, schema: &ReferenceOr<Schema>, seen: &mut BTreeSet<String>) {
    match schema {
        ReferenceOr::Reference { reference } => {
            let Some(name) = reference.strip_prefix("#/components/schemas/") else {
                return;
            };
            if !seen.insert(name.to_string()) {
                return;
            }
            if let Some(s) = spec.components.as_ref().and_then(|c| c.schemas.get(name)) {
                reachable(spec, s, seen);
            }
        }
        ReferenceOr::Item(s) => {
            for child in children(s) {
                reachable(spec, &child, seen);
            }
        }
    }
}

fn children(s: &Schema) -> Vec<ReferenceOr<Schema>> {
    let unbox = |r: &ReferenceOr<Box<Schema>>| match r {
        ReferenceOr::Item(b) => ReferenceOr::Item((**b).clone()),
        ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
    };
    match &s.schema_kind {
        SchemaKind::Type(Type::Object(o)) => o.properties.values().map(unbox).collect(),
        SchemaKind::Type(Type::Array(a)) => a.items.iter().map(unbox).collect(),
        SchemaKind::OneOf { one_of: v }
        | SchemaKind::AnyOf { any_of: v }
        | SchemaKind::AllOf { all_of: v } => v.clone(),
        _ => Vec::new(),
    }
}

fn has_constraints(s: &Schema) -> bool {
    let mut copy = s.clone();
    clear_constraints(&mut copy);
    copy != *s
}

fn clear_constraints(s: &mut Schema) {
    match &mut s.schema_kind {
        SchemaKind::Type(Type::String(t)) => {
            t.pattern = None;
            t.min_length = None;
            t.max_length = None;
        }
        SchemaKind::Type(Type::Integer(t)) => {
            t.minimum = None;
            t.maximum = None;
        }
        SchemaKind::Type(Type::Array(a)) => {
            a.min_items = None;
            a.max_items = None;
            if let Some(ReferenceOr::Item(i)) = &mut a.items {
                clear_constraints(i);
            }
        }
        SchemaKind::Type(Type::Object(o)) => {
            for p in o.properties.values_mut() {
                if let ReferenceOr::Item(p) = p {
                    clear_constraints(p);
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------- enums

/// Every enum schema of both specs, merged by name: a name must mean the same values in
/// both services, so each becomes one Rust type.
#[derive(Default)]
struct EnumSet {
    enums: BTreeMap<String, EnumDef>,
}

#[derive(Clone, PartialEq)]
struct EnumDef {
    description: String,
    integer: bool,
    /// (wire value, variant name, description)
    values: Vec<(String, String, String)>,
}

impl EnumSet {
    fn collect(&mut self, spec: &OpenAPI) -> Result<(), String> {
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

    fn names_in(&self, spec: &OpenAPI) -> Vec<String> {
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

    fn generate(&self) -> TokenStream {
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

impl EnumDef {
    fn generate(&self, name: &str) -> TokenStream {
        let ty = format_ident!("{name}");
        let doc = self.description.trim();
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
        if self.integer {
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
        } else {
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
}

// ---------------------------------------------------------------------------- helpers

fn ref_name(s: &ReferenceOr<Schema>) -> Option<String> {
    match s {
        ReferenceOr::Reference { reference } => reference
            .strip_prefix("#/components/schemas/")
            .map(str::to_string),
        ReferenceOr::Item(_) => None,
    }
}

fn object_property(spec: &OpenAPI, schema: &str, property: &str) -> Option<ReferenceOr<Schema>> {
    let s = spec.components.as_ref()?.schemas.get(schema)?.as_item()?;
    let SchemaKind::Type(Type::Object(o)) = &s.schema_kind else {
        return None;
    };
    Some(match o.properties.get(property)? {
        ReferenceOr::Item(b) => ReferenceOr::Item((**b).clone()),
        ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
    })
}

/// `camelCase`/`snake_case` → `PascalCase`, as progenitor names builders and types.
fn pascal(s: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in s.chars() {
        if c == '_' || c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `camelCase` → `snake_case`, as typify names fields.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}
