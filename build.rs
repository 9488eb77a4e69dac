//! Generates the two service clients from `spec/*.yaml`.
//!
//! spec → openapiv3 → transforms below → progenitor (builder interface) → prettyplease →
//! `$OUT_DIR/<service>.rs`, included by `src/lib.rs`.

use std::{env, fs, path::Path};

use openapiv3::{OpenAPI, Parameter, ReferenceOr};
use progenitor::{GenerationSettings, Generator, InterfaceStyle, TagStyle};

/// The anti-replay query parameter: declared in the specs, supplied by the runtime.
const NONCE: &str = "g_nonce";

struct Service {
    name: &'static str,
    spec: &'static str,
}

const SERVICES: &[Service] = &[
    Service {
        name: "order",
        spec: "spec/order.yaml",
    },
    Service {
        name: "member",
        spec: "spec/member.yaml",
    },
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for service in SERVICES {
        println!("cargo:rerun-if-changed={}", service.spec);
        if let Err(message) = generate(service, Path::new(&out_dir)) {
            // A panic would bury the message in a backtrace; this names the file and stops.
            eprintln!("error: {}: {message}", service.spec);
            std::process::exit(1);
        }
    }
}

fn generate(service: &Service, out_dir: &Path) -> Result<(), String> {
    let text = fs::read_to_string(service.spec).map_err(|e| format!("cannot read: {e}"))?;
    let mut spec: OpenAPI =
        serde_norway::from_str(&text).map_err(|e| format!("not a valid OpenAPI 3.0 document: {e}"))?;
    strip_nonce(&mut spec)?;

    let mut settings = GenerationSettings::new();
    settings
        .with_interface(InterfaceStyle::Builder)
        .with_tag(TagStyle::Merged);
    let mut generator = Generator::new(&settings);
    let tokens = generator
        .generate_tokens(&spec)
        .map_err(|e| format!("code generation failed: {e}"))?;
    let file: syn::File =
        syn::parse2(tokens).map_err(|e| format!("generated code does not parse: {e}"))?;
    let code = prettyplease::unparse(&file);
    let out = out_dir.join(format!("{}.rs", service.name));
    fs::write(&out, code).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

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
        for (method, op) in ops.into_iter().filter_map(|(m, op)| Some((m, op.as_mut()?))) {
            let before = op.parameters.len();
            op.parameters.retain(|p| {
                resolve_parameter(p, components.as_ref()).map(|p| p.parameter_data_ref().name.as_str())
                    != Some(NONCE)
            });
            if op.parameters.len() == before {
                return Err(format!("{method} {path}: does not declare the `{NONCE}` query parameter"));
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
