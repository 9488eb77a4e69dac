//! The build-time generator of `licensing-sdk`, run by its `build.rs`.
//!
//! spec (`spec/*.yaml`) → [`spec`] checks and operation facts → transforms ([`nonce`],
//! [`reply_constraints`], [`tagged`], [`wire`]) → progenitor (builder interface) → edits
//! of its output ([`edits`], [`setters`], [`names`], [`unset`]) → per-operation glue
//! ([`glue`]) → the operation table ([`table`]) and the shared tolerant enums ([`enums`])
//! → prettyplease → `$OUT_DIR/{enums,order,member,operations}.rs`. The command line's
//! commands come from the same operation facts ([`cli`], run by `cli/build.rs`).
//!
//! Every step that changes progenitor's input or output counts what it changed and fails,
//! naming the spec file and the operation, when the spec says it must have changed
//! something and it did not: a progenitor release that reshapes its output stops the build
//! instead of silently dropping a rule.

#![forbid(unsafe_code)]

pub mod cli;
pub mod edits;
pub mod enums;
pub mod glue;
pub mod names;
pub mod nonce;
pub mod op_errors;
pub mod reply_constraints;
pub mod setters;
/// The spec model (`licensing-spec`): the documents read, the operations' facts.
pub use licensing_spec as spec;
pub mod table;
pub mod tagged;
pub mod unset;
pub mod wire;

use std::{fmt, fs, path::Path, time::Instant};

use openapiv3::OpenAPI;
use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, Generator, HooksMode, InterfaceStyle, TagStyle, TypeImpl};
use quote::{format_ident, quote};

/// A generation failure: the spec file and a one-line description that names the
/// operation or schema at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The spec file, as given to [`generate`].
    pub file: String,
    /// What is wrong, starting with the operation id or schema name where there is one.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line, whatever the underlying parser printed: cargo shows it as the reason.
        let message = self
            .message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        write!(f, "{}: {message}", self.file)
    }
}

impl std::error::Error for Error {}

/// One service: its module name in the SDK (`order`, `member`) and its spec.
#[derive(Clone, Copy, Debug)]
pub struct Service<'a> {
    /// The Rust module the client is generated into.
    pub name: &'a str,
    /// The spec's path, used in error messages.
    pub file: &'a str,
    /// The spec's YAML text.
    pub text: &'a str,
}

/// The generated files, formatted: `(file stem, Rust source)`.
pub type Files = Vec<(String, String)>;

/// Generates the SDK's code for every service: one client module per service, the shared
/// enums and the operation table.
pub fn generate(services: &[Service<'_>]) -> Result<Files, Error> {
    let mut enums = enums::EnumSet::default();
    let mut loaded = Vec::new();
    for service in services {
        let at = |message: String| Error {
            file: service.file.to_string(),
            message,
        };
        let spec = spec::load(service.text).map_err(at)?;
        enums.collect(&spec).map_err(at)?;
        let ops = spec::operations(&spec).map_err(at)?;
        loaded.push((service, spec, ops));
    }
    let mut files = vec![("enums".to_string(), format("enums", enums.generate())?)];
    let mut table = table::Table::default();
    for (service, spec, ops) in loaded {
        let at = |message: String| Error {
            file: service.file.to_string(),
            message,
        };
        let code = client(spec, &ops, &enums).map_err(at)?;
        files.push((service.name.to_string(), format(service.name, code)?));
        table.add(service.name, &ops).map_err(at)?;
    }
    files.push((
        "operations".to_string(),
        format("operations", table.generate())?,
    ));
    Ok(files)
}

/// A client for an API of the project's own (the simulator's sandbox admin API): plain
/// progenitor with the builder interface, none of the platform's conventions (envelope,
/// `g_nonce`, tolerant enums) applied. Returns the formatted Rust source.
pub fn plain_client(file: &str, text: &str) -> Result<String, Error> {
    let at = |message: String| Error {
        file: file.to_string(),
        message,
    };
    let spec = spec::load(text).map_err(at)?;
    let mut settings = GenerationSettings::new();
    settings
        .with_interface(InterfaceStyle::Builder)
        .with_tag(TagStyle::Merged);
    let tokens = Generator::new(&settings)
        .generate_tokens(&spec)
        .map_err(|e| at(format!("code generation failed: {e}")))?;
    format(file, tokens)
}

/// What a `build.rs` does for [`plain_client`]: reads `file`, writes `$OUT_DIR/<name>.rs`,
/// tells cargo what to watch, and on a mistake prints one `error:` line and exits 1.
pub fn build_plain_client(name: &str, file: &str) {
    println!("cargo:rerun-if-changed={file}");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let text = fs::read_to_string(file).unwrap_or_else(|e| {
        fail(&Error {
            file: file.to_string(),
            message: format!("cannot read: {e}"),
        })
    });
    let code = plain_client(file, &text).unwrap_or_else(|e| fail(&e));
    fs::write(Path::new(&out_dir).join(format!("{name}.rs")), code).expect("OUT_DIR is writable");
}

/// Everything a `build.rs` does: reads the specs, generates, writes `$OUT_DIR`, tells cargo
/// what to watch. On a spec or generator mistake it prints one `error:` line naming the file
/// and the operation, and exits with status 1.
pub fn build_script(services: &[(&str, &str)]) {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let started = Instant::now();
    let texts = read_specs(services);
    let services: Vec<_> = texts
        .iter()
        .map(|(name, file, text)| Service { name, file, text })
        .collect();
    let files = generate(&services).unwrap_or_else(|e| fail(&e));
    for (name, code) in files {
        fs::write(Path::new(&out_dir).join(format!("{name}.rs")), code)
            .expect("OUT_DIR is writable");
    }
    // Read by `cargo xtask bench` to report generation time without timing a whole build.
    fs::write(
        Path::new(&out_dir).join("generation-ms.txt"),
        started.elapsed().as_millis().to_string(),
    )
    .expect("OUT_DIR is writable");
}

/// The text of each `(name, file)`, with cargo told to watch the file; a file that cannot
/// be read stops the build, named.
fn read_specs<'a>(services: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str, String)> {
    services
        .iter()
        .map(|&(name, file)| {
            println!("cargo:rerun-if-changed={file}");
            let text = fs::read_to_string(file).unwrap_or_else(|e| {
                fail(&Error {
                    file: file.to_string(),
                    message: format!("cannot read: {e}"),
                })
            });
            (name, file, text)
        })
        .collect()
}

fn fail(error: &Error) -> ! {
    // A panic would bury the message in a backtrace; this names the file and stops.
    eprintln!("error: {error}");
    std::process::exit(1);
}

/// The items of progenitor's `types` module.
fn types_module(file: &mut syn::File) -> Result<&mut Vec<syn::Item>, String> {
    file.items
        .iter_mut()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "types" => m.content.as_mut().map(|(_, i)| i),
            _ => None,
        })
        .ok_or_else(|| "progenitor's output has no `types` module".to_string())
}

fn format(name: &str, tokens: TokenStream) -> Result<String, Error> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| Error {
        file: format!("{name}.rs"),
        message: format!("generated code does not parse: {e}"),
    })?;
    Ok(prettyplease::unparse(&file))
}

/// One service's client: progenitor's output, edited, plus the glue of every operation.
fn client(
    mut spec: OpenAPI,
    ops: &[spec::Op],
    enums: &enums::EnumSet,
) -> Result<TokenStream, String> {
    let wire_names = names::wire_names(&spec);
    let stripped = nonce::strip(&mut spec)?;
    if stripped != ops.len() {
        return Err(format!(
            "g_nonce was removed from {stripped} of {} operations",
            ops.len()
        ));
    }
    reply_constraints::strip(&mut spec)?;
    let tagged = tagged::prepare(&mut spec)?;
    wire::optional_defaults(&mut spec);
    wire::reply_lists(&mut spec, ops)?;

    let replaced: Vec<String> = enums
        .names_in(&spec)
        .into_iter()
        .chain(["ReplyCode".to_string()])
        .collect();
    let mut settings = GenerationSettings::new();
    settings
        .with_interface(InterfaceStyle::Builder)
        .with_tag(TagStyle::Merged)
        .with_inner_type(quote!(crate::runtime::Runtime))
        .with_hooks(HooksMode::Expected);
    let impls = || [TypeImpl::Display, TypeImpl::FromStr].into_iter();
    for name in &replaced {
        settings.with_replacement(name, format!("crate::{name}"), impls());
    }
    let mut generator = Generator::new(&settings);
    let tokens = generator
        .generate_tokens(&spec)
        .map_err(|e| format!("code generation failed: {e}"))?;
    let mut file: syn::File =
        syn::parse2(tokens).map_err(|e| format!("progenitor's output does not parse: {e}"))?;

    let types = types_module(&mut file)?;
    tagged::apply(types, &tagged)?;
    wire::opaque_fields(types)?;
    wire::null_lists(types);
    let newtypes = setters::string_newtypes(types);
    let builder = file
        .items
        .iter_mut()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "types" => m.content.as_mut().map(|(_, i)| i),
            _ => None,
        })
        .and_then(|types| {
            types.iter_mut().find_map(|item| match item {
                syn::Item::Mod(m) if m.ident == "builder" => m.content.as_mut().map(|(_, i)| i),
                _ => None,
            })
        })
        .ok_or_else(|| "progenitor's output has no `types::builder` module".to_string())?;
    let (newtype_impls, changed) = setters::apply(builder, &newtypes);
    if changed == 0 {
        return Err("no optional setter found in typify's builders".to_string());
    }
    let union_builders: syn::File = syn::parse2(tagged::builders(&tagged))
        .map_err(|e| format!("the union builders do not parse: {e}"))?;
    builder.extend(union_builders.items);
    let unions: std::collections::BTreeSet<String> =
        tagged.iter().map(|t| t.name.clone()).collect();
    let (list_impls, _) = setters::lists(builder, &unions);
    builder.push(syn::Item::Verbatim(list_impls));
    let (string_types, required_string_lists) = setters::string_schemas(&spec);
    let string_lists = setters::string_lists(builder);
    if string_lists < required_string_lists {
        return Err(format!(
            "{required_string_lists} required lists of strings in the schemas, but only \
             {string_lists} builder setters of `Vec<String>` found in typify's output"
        ));
    }
    types_module(&mut file)?.push(syn::Item::Verbatim(newtype_impls));
    types_module(&mut file)?.push(syn::Item::Verbatim(setters::string_type_lists(
        &string_types,
    )));
    let renames = names::field_renames(wire_names.iter().map(String::as_str));
    if names::apply_field_renames(&mut file.items, &renames) == 0 && !renames.is_empty() {
        return Err(format!(
            "field names {renames:?} were to be renamed but typify's output has none of them"
        ));
    }

    unset::apply(&mut file)?;

    let reexports: Vec<_> = replaced.iter().map(|n| format_ident!("{n}")).collect();
    let builder_glue = ops.iter().map(glue::builder).collect::<Vec<_>>();
    let envelopes = ops.iter().map(glue::envelope).collect::<Vec<_>>();
    edits::apply(
        &mut file,
        ops,
        &replaced,
        syn::parse_quote! {
            /// Enums shared by both services, tolerant of values added later.
            pub use crate::{#(#reexports),*};
        },
        builder_glue,
    )?;
    edits::await_examples(&mut file, ops)?;
    edits::hide_constructors(&mut file)?;
    let errors = op_errors::module(ops, enums)?;
    Ok(quote! {
        #file
        #(#envelopes)*
        #errors
    })
}
