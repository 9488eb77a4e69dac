//! Writes the admin spec's component schemas (`spec/sandbox.yaml`) as JSON
//! (`$OUT_DIR/sandbox-schemas.json`), from which the console builds its forms (feature
//! `console`). The admin client generated from the same spec is `licensing-sandbox-client`'s.

use std::{env, fs, path::Path};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=spec/sandbox.yaml");
    if env::var_os("CARGO_FEATURE_CONSOLE").is_none() {
        return;
    }
    let text = fs::read_to_string("spec/sandbox.yaml")
        .unwrap_or_else(|e| panic!("spec/sandbox.yaml cannot be read: {e}"));
    let spec: serde_norway::Value = serde_norway::from_str(&text)
        .unwrap_or_else(|e| panic!("spec/sandbox.yaml is not YAML: {e}"));
    let Some(serde_norway::Value::Mapping(declared)) =
        spec.get("components").and_then(|c| c.get("schemas"))
    else {
        panic!("spec/sandbox.yaml has no components.schemas");
    };
    // A JSON object forgets the order of its keys; the forms keep the spec's.
    let mut schemas = serde_json::Map::new();
    for (name, schema) in declared {
        let name = name.as_str().expect("schema names are strings").to_string();
        let mut json: serde_json::Value = serde_json::to_value(schema)
            .unwrap_or_else(|e| panic!("schema {name} of spec/sandbox.yaml: {e}"));
        if let Some(serde_norway::Value::Mapping(properties)) = schema.get("properties") {
            let order: Vec<serde_json::Value> = properties
                .keys()
                .filter_map(|k| k.as_str().map(serde_json::Value::from))
                .collect();
            json["x-property-order"] = serde_json::Value::Array(order);
        }
        schemas.insert(name, json);
    }
    let out =
        Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("sandbox-schemas.json");
    fs::write(&out, serde_json::Value::Object(schemas).to_string())
        .unwrap_or_else(|e| panic!("{} cannot be written: {e}", out.display()));
}
