//! Writes the admin spec's component schemas (`spec/sandbox.yaml`) as JSON
//! (`$OUT_DIR/sandbox-schemas.json`), from which the console builds its forms (feature
//! `console`). The admin client generated from the same spec is `licensing-sandbox-client`'s.
//! The spec is read by the workspace's one reader of specs, `licensing-spec`.

use std::{env, fs, path::Path};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=spec/sandbox.yaml");
    if env::var_os("CARGO_FEATURE_CONSOLE").is_none() {
        return;
    }
    let text = fs::read_to_string("spec/sandbox.yaml")
        .unwrap_or_else(|e| panic!("spec/sandbox.yaml cannot be read: {e}"));
    // Every keyword as written, from the untyped document; the order of each schema's
    // properties (which a JSON object forgets, and the forms keep) from the typed one.
    let raw = licensing_spec::raw(&text).unwrap_or_else(|e| panic!("spec/sandbox.yaml: {e}"));
    let typed = licensing_spec::load(&text).unwrap_or_else(|e| panic!("spec/sandbox.yaml: {e}"));
    let (Some(components), Some(declared)) = (
        typed.components.as_ref(),
        raw.pointer("/components/schemas")
            .and_then(serde_json::Value::as_object),
    ) else {
        panic!("spec/sandbox.yaml has no components.schemas");
    };
    let mut schemas = serde_json::Map::new();
    for (name, schema) in &components.schemas {
        let mut json = declared[name].clone();
        if let Some(schema) = schema.as_item()
            && let licensing_spec::openapiv3::SchemaKind::Type(
                licensing_spec::openapiv3::Type::Object(object),
            ) = &schema.schema_kind
            && !object.properties.is_empty()
        {
            let order: Vec<serde_json::Value> = object
                .properties
                .keys()
                .map(|k| serde_json::Value::from(k.as_str()))
                .collect();
            json["x-property-order"] = serde_json::Value::Array(order);
        }
        schemas.insert(name.clone(), json);
    }
    let out =
        Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("sandbox-schemas.json");
    fs::write(&out, serde_json::Value::Object(schemas).to_string())
        .unwrap_or_else(|e| panic!("{} cannot be written: {e}", out.display()));
}
