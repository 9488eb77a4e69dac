//! The command line's generated code (`licensing`'s `$OUT_DIR/commands.rs`), run by
//! `cli/build.rs`: one record per operation (its command name, help, flags and body
//! fields, read from the spec), one dispatch arm per operation that calls the SDK's
//! generated builder, so that a call made from the command line goes through the SDK's
//! validation, authentication, retries and reply handling, and the fields of one order of
//! `batchOrder` for `licensing orders submit`. An operation added to a spec becomes a
//! command with no edit in the CLI.
//!
//! The records are data the CLI's hand-written code builds its clap commands from
//! (`cli/src/cli.rs`), rather than clap code per operation, because the same records also
//! read the matches back into typed values (`cli/src/input.rs`). A spec the command line
//! cannot represent (a header parameter, an object parameter, two flags of one name) stops
//! the build with one line naming the file and the operation.

mod bulk;
mod command;
mod emit;

use std::{collections::BTreeMap, fs, path::Path};

use proc_macro2::TokenStream;
use quote::quote;

use crate::{Error, Service, spec};

/// The file [`build_script`] writes into `$OUT_DIR`.
pub const FILE: &str = "commands.rs";

/// The CLI's generated code for these services, formatted: the bulk fields, the records
/// of every operation (in the services' order, then the specs' order), the dispatch and
/// the conversions of the command-line values into the shared enums the builders take.
///
/// The bulk fields are those of `batchOrder`'s orders, from the service that has it.
pub fn generate(services: &[Service<'_>]) -> Result<String, Error> {
    let mut loaded = Vec::new();
    for service in services {
        let at = at(service.file);
        let document = spec::load(service.text).map_err(&at)?;
        let ops = spec::operations(&document).map_err(&at)?;
        loaded.push((service, document, ops));
    }
    let mut records = Vec::new();
    let mut arms = Vec::new();
    let mut enums = BTreeMap::new();
    for (service, document, ops) in &loaded {
        for op in ops {
            let in_op = |e: String| Error {
                file: service.file.to_string(),
                message: format!("{}: {e}", op.id),
            };
            let command = command::Command::read(document, op).map_err(in_op)?;
            for name in command.enum_types() {
                let ident = emit::ident(&name, "enum").map_err(in_op)?;
                enums.insert(name, ident);
            }
            records.push(emit::record(&command, service.name, op).map_err(in_op)?);
            arms.push(emit::arm(&command, service.name, op).map_err(in_op)?);
        }
    }
    let bulk = bulk_fields(&loaded)?;
    crate::format(FILE, file_tokens(bulk, &records, &arms, &enums))
}

/// The spec file and the message, as an [`Error`].
fn at(file: &str) -> impl Fn(String) -> Error + '_ {
    move |message| Error {
        file: file.to_string(),
        message,
    }
}

/// `BULK_FIELDS` from the service whose spec has `batchOrder` (the first service's file
/// is named when none has it).
fn bulk_fields(
    loaded: &[(&Service<'_>, openapiv3::OpenAPI, Vec<spec::Op>)],
) -> Result<TokenStream, Error> {
    let holder = loaded
        .iter()
        .find(|(_, _, ops)| ops.iter().any(|o| o.id == bulk::OPERATION))
        .or(loaded.first());
    let Some((service, document, ops)) = holder else {
        return Err(at("(no spec)")("no service given".to_string()));
    };
    bulk::fields(document, ops).map_err(|m| Error {
        file: service.file.to_string(),
        message: format!(
            "{}: {m} (read by `licensing orders submit`)",
            bulk::OPERATION
        ),
    })
}

fn file_tokens(
    bulk: TokenStream,
    records: &[TokenStream],
    arms: &[TokenStream],
    enums: &BTreeMap<String, syn::Ident>,
) -> TokenStream {
    let conversions = enums.values().map(emit::enum_conversion);
    quote! {
        #bulk

        /// Every operation of both services, in the specs' order.
        pub static OPERATIONS: &[CliOp] = &[#(#records),*];

        /// Calls the operation through the SDK's generated builder, with the command's
        /// flags and body, and writes what it returns to `sink`.
        pub async fn dispatch(
            ctx: &crate::config::Context,
            op: &CliOp,
            input: &crate::input::Input,
            sink: &mut crate::output::Sink,
        ) -> Result<(), crate::error::CliError> {
            match op.id {
                #(#arms)*
                other => unreachable!("no dispatch arm for {other}"),
            }
        }

        #(#conversions)*
    }
}

/// What `cli/build.rs` does: reads the specs (`(service, file)`: the service's module in
/// the SDK and the spec's path), writes `$OUT_DIR/commands.rs` and tells cargo what to
/// watch. On a spec the command line cannot represent it prints one `error:` line naming
/// the file and the operation, and exits with status 1.
pub fn build_script(services: &[(&str, &str)]) {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let texts = crate::read_specs(services);
    let services: Vec<_> = texts
        .iter()
        .map(|(name, file, text)| Service { name, file, text })
        .collect();
    let code = generate(&services).unwrap_or_else(|e| crate::fail(&e));
    fs::write(Path::new(&out_dir).join(FILE), code).expect("OUT_DIR is writable");
}
