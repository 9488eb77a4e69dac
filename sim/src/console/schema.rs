//! Forms built from the admin spec's schemas (`spec/sandbox.yaml`, read at build time):
//! one labelled control per property, its kind from the property's type, enumeration and
//! bounds, its hint from the property's description. A property added to the spec shows up
//! in the form without a change here.

use std::sync::OnceLock;

use maud::{Markup, html};
use serde_json::{Map, Value};

/// The spec's `components.schemas`.
pub(crate) fn schemas() -> &'static Map<String, Value> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        serde_json::from_str(include_str!(concat!(
            env!("OUT_DIR"),
            "/sandbox-schemas.json"
        )))
        .expect("build.rs writes the spec's schemas as a JSON object")
    })
}

/// A schema by name, or the target of a `$ref`.
pub(crate) fn schema(name: &str) -> &'static Value {
    let name = name.trim_start_matches("#/components/schemas/");
    schemas()
        .get(name)
        .unwrap_or_else(|| panic!("spec/sandbox.yaml has no schema {name}"))
}

fn resolved(schema: &'static Value) -> &'static Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => self::schema(reference),
        None => schema,
    }
}

/// The values of a string enumeration schema.
pub(crate) fn enumeration(name: &str) -> Vec<&'static str> {
    schema(name)["enum"]
        .as_array()
        .map(|values| values.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// An object schema's properties in the spec's order.
pub(crate) fn ordered(object: &'static Value) -> Vec<(&'static String, &'static Value)> {
    let Some(properties) = object["properties"].as_object() else {
        return Vec::new();
    };
    let mut listed: Vec<(&String, &Value)> = object["x-property-order"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|name| properties.get_key_value(name))
        .collect();
    for pair in properties {
        if !listed.iter().any(|(name, _)| *name == pair.0) {
            listed.push(pair);
        }
    }
    listed
}

/// A control's kind, as the page's script reads it back into JSON (`data-type`).
fn kind(schema: &Value) -> &'static str {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => "integer",
        Some("number") => "number",
        Some("boolean") => "boolean",
        Some("string") => "string",
        // No type: any JSON value (a body field's `equals`).
        _ => "json",
    }
}

/// The controls of an object schema's properties, named by their path (`fault.kind`);
/// `suggest` gives a `<datalist>` id for a path that has suggestions.
pub(crate) fn fields(
    name: &str,
    prefix: &str,
    required_here: bool,
    suggest: &dyn Fn(&str) -> Option<&'static str>,
) -> Markup {
    let object = resolved(schema(name));
    let required: Vec<&str> = object["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = ordered(object);
    html! {
        @for (property, declared) in properties {
            @let path = if prefix.is_empty() { property.clone() } else { format!("{prefix}.{property}") };
            @let id = format!("field-{}", path.replace('.', "-"));
            @let schema = resolved(declared);
            @let description = declared.get("description").or_else(|| schema.get("description"))
                .and_then(Value::as_str).unwrap_or("");
            @let must = required_here && required.contains(&property.as_str());
            @if schema.get("type").and_then(Value::as_str) == Some("object") {
                @let nested = declared.get("$ref").and_then(Value::as_str).unwrap_or(property);
                fieldset {
                    legend { (property) @if must { " (required)" } }
                    p.hint { (description) }
                    (fields(nested, &path, must, suggest))
                }
            } @else {
                div.field {
                    label for=(id) { (property) @if must { " (required)" } }
                    (control(schema, &id, &path, must, suggest(&path)))
                    p.hint id=(format!("{id}-hint")) { (description) }
                }
            }
        }
    }
}

fn control(
    schema: &Value,
    id: &str,
    path: &str,
    required: bool,
    list: Option<&'static str>,
) -> Markup {
    let hint = format!("{id}-hint");
    let kind = kind(schema);
    let bound = |name: &str| schema.get(name).map(Value::to_string);
    html! {
        @if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            select id=(id) name=(path) data-type=(kind) required[required] aria-describedby=(hint) {
                @if !required { option value="" { "(none)" } }
                @for value in values {
                    @let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
                    option value=(text) { (text) }
                }
            }
        } @else if kind == "boolean" {
            select id=(id) name=(path) data-type=(kind) aria-describedby=(hint) {
                option value="" { "(none)" }
                option value="true" { "true" }
                option value="false" { "false" }
            }
        } @else if kind == "integer" || kind == "number" {
            input id=(id) name=(path) type="number" data-type=(kind) required[required]
                step=(if kind == "integer" { "1" } else { "any" })
                min=[bound("minimum")] max=[bound("maximum")] aria-describedby=(hint);
        } @else {
            input id=(id) name=(path) type="text" data-type=(kind) required[required]
                list=[list] autocomplete="off" aria-describedby=(hint)
                placeholder=[(kind == "json").then_some("any JSON: \"CH01\", 5, true")];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fault_form_has_a_control_for_every_property_of_the_spec() {
        let form = fields("FaultRuleSpec", "", true, &|_| None).into_string();
        let mut expected = Vec::new();
        let spec = schema("FaultRuleSpec");
        for (name, property) in ordered(spec) {
            match property.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    for nested in schema(reference)["properties"].as_object().unwrap().keys() {
                        expected.push(format!("{name}.{nested}"));
                    }
                }
                None => expected.push(name.to_string()),
            }
        }
        assert!(expected.len() >= 10, "{expected:?}");
        assert_eq!(expected[0], "operation", "the spec's order");
        let at = |path: &str| form.find(&format!("name=\"{path}\"")).unwrap();
        assert!(at("operation") < at("enterpriseGlobalId") && at("seed") < at("fault.kind"));
        for path in &expected {
            assert!(
                form.contains(&format!("name=\"{path}\"")),
                "no control for {path}: {form}"
            );
            let id = format!("field-{}", path.replace('.', "-"));
            assert!(
                form.contains(&format!("<label for=\"{id}\"")),
                "{path} unlabelled"
            );
        }
        // The kinds and bounds come from the spec.
        assert!(
            form.contains(r#"name="fault.kind" data-type="string" required"#),
            "{form}"
        );
        for kind in enumeration_of("Fault", "kind") {
            assert!(
                form.contains(&format!("<option value=\"{kind}\">")),
                "{kind}"
            );
        }
        assert!(form.contains(r#"name="probability" type="number" data-type="number""#));
        assert!(form.contains(r#"min="0" max="1""#), "{form}");
        assert!(form.contains(r#"name="bodyField.equals" type="text" data-type="json""#));
        assert!(
            !form.contains(r#"name="bodyField.pointer" type="text" data-type="string" required"#),
            "an optional object's fields are not required"
        );
    }

    fn enumeration_of(object: &str, property: &str) -> Vec<String> {
        schema(object)["properties"][property]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }
}
