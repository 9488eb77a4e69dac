//! The translation's unit tests, each on a small spec of its own.

use std::collections::BTreeSet;

use anyhow::{Result, anyhow};
use serde_json::{Value, json};

use crate::{Converted, Converter, DIALECT, Document, self_contained};

/// Converts component `name` of a spec whose `components.schemas` is `schemas` (YAML).
fn convert(schemas: &str, name: &str) -> Result<Converted> {
    let text = spec(schemas);
    let api = licensing_spec::load(&text).map_err(|e| anyhow!("test.yaml: {e}"))?;
    let raw = licensing_spec::raw(&text).map_err(|e| anyhow!("test.yaml: {e}"))?;
    let document = Document {
        file: "test.yaml",
        api: &api,
        raw: &raw,
    };
    Converter::new(document, name).component(name)
}

/// The spec text of `convert`, for the tests that need the whole document.
fn spec(schemas: &str) -> String {
    let schemas = schemas.replace('\n', "\n    ");
    format!(
        "openapi: 3.0.3\ninfo: {{title: t, version: v}}\npaths: {{}}\ncomponents:\n  schemas:\n    {schemas}"
    )
}

fn value(schemas: &str, name: &str) -> Value {
    convert(schemas, name).unwrap().schema.to_value()
}

#[test]
fn nullable_type_becomes_a_type_list() {
    let schema = value("N: {type: integer, format: int64, nullable: true}", "N");
    assert_eq!(
        schema,
        json!({"title": "N", "type": ["integer", "null"], "format": "int64"})
    );
}

#[test]
fn nullable_combination_is_wrapped_in_any_of() {
    let schema = value(
        "N:\n  description: d\n  nullable: true\n  oneOf: [{type: string}, {type: integer}]",
        "N",
    );
    assert_eq!(
        schema,
        json!({
            "title": "N",
            "description": "d",
            "anyOf": [
                {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                {"type": "null"}
            ]
        })
    );
}

#[test]
fn references_point_into_defs_or_at_the_root() {
    let schemas = "Tree:\n  type: object\n  properties:\n    children: {type: array, items: {$ref: '#/components/schemas/Tree'}}\n    leaf: {$ref: '#/components/schemas/Leaf'}\nLeaf: {type: string}";
    let converted = convert(schemas, "Tree").unwrap();
    let schema = converted.schema.to_value();
    assert_eq!(
        schema["properties"]["children"]["items"],
        json!({"$ref": "#"})
    );
    assert_eq!(
        schema["properties"]["leaf"],
        json!({"$ref": "#/$defs/Leaf"})
    );
    assert_eq!(converted.refs, BTreeSet::from(["Leaf".to_owned()]));
}

#[test]
fn exclusive_bounds_become_numbers() {
    let schema = value(
        "B: {type: integer, minimum: 0, exclusiveMinimum: true, maximum: 9}",
        "B",
    );
    assert_eq!(
        schema,
        json!({"title": "B", "type": "integer", "exclusiveMinimum": 0, "maximum": 9})
    );
}

#[test]
fn annotations_examples_and_extensions_are_kept() {
    let schema = value(
        "E:\n  type: integer\n  enum: [1, 2]\n  default: 1\n  example: 2\n  x-enum-varnames: [One, Two]\n  description: |\n    Two lines\n    of text.\n",
        "E",
    );
    assert_eq!(
        schema,
        json!({
            "title": "E",
            "description": "Two lines\nof text.",
            "type": "integer",
            "enum": [1, 2],
            "default": 1,
            "examples": [2],
            "x-enum-varnames": ["One", "Two"]
        })
    );
}

#[test]
fn an_untyped_schema_with_a_description_is_any_value() {
    let schema = value(
        "A:\n  type: object\n  properties:\n    any: {description: d}\n    bare: {}",
        "A",
    );
    assert_eq!(
        schema["properties"]["any"],
        json!({"description": "d", "tsType": "unknown"})
    );
    assert_eq!(schema["properties"]["bare"], json!({}));
}

#[test]
fn unknown_keywords_fail() {
    let error = convert("S: {type: string, maxlength: 3}", "S")
        .err()
        .unwrap();
    assert!(
        format!("{error:#}").contains("keyword `maxlength`"),
        "{error:#}"
    );
    let error = convert("S: {type: object, xml: {name: s}}", "S")
        .err()
        .unwrap();
    assert!(format!("{error:#}").contains("keyword `xml`"), "{error:#}");
}

/// A `oneOf` of two order shapes told apart by `kind`, with `extra` appended to the
/// union's own schema and `b_kind` as the `enum` of the second member.
fn discriminated(extra: &str, b_kind: &str) -> String {
    format!(
        "U:\n  oneOf: [{{$ref: '#/components/schemas/A'}}, {{$ref: '#/components/schemas/B'}}]\n  \
         discriminator:\n    propertyName: kind\n{extra}\
         A:\n  type: object\n  required: [kind]\n  properties:\n    kind: {{type: string, enum: [a]}}\n\
         B:\n  type: object\n  required: [kind]\n  properties:\n    kind: {{$ref: '#/components/schemas/BKind'}}\n\
         BKind: {{type: string, enum: {b_kind}}}"
    )
}

#[test]
fn a_discriminator_that_the_members_imply_is_dropped() {
    let mapping = "    mapping: {a: '#/components/schemas/A', b: '#/components/schemas/B'}\n";
    let converted = convert(&discriminated(mapping, "[b]"), "U").unwrap();
    assert_eq!(
        converted.schema.to_value(),
        json!({"title": "U", "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]})
    );
    assert_eq!(
        converted.refs,
        BTreeSet::from(["A".to_owned(), "B".to_owned()])
    );
    // Without `mapping` the values are the component names.
    let schemas = discriminated("", "[B]").replace("enum: [a]", "enum: [A]");
    let schema = value(&schemas, "U");
    assert!(schema.get("discriminator").is_none(), "{schema}");
}

#[test]
fn a_discriminator_that_adds_a_constraint_fails() {
    let mapping = "    mapping: {a: '#/components/schemas/A', b: '#/components/schemas/B'}\n";
    // `B` admits `kind: a` as well: the oneOf alone cannot tell the members apart.
    let error = convert(&discriminated(mapping, "[a, b]"), "U")
        .err()
        .unwrap();
    assert!(
        format!("{error:#}")
            .contains("member `B` must require `kind` and declare it with `enum: [b]`"),
        "{error:#}"
    );
    // The mapping names no member.
    let mapping = "    mapping: {c: '#/components/schemas/BKind'}\n";
    let error = convert(&discriminated(mapping, "[b]"), "U").err().unwrap();
    assert!(
        format!("{error:#}").contains("is not a member"),
        "{error:#}"
    );
    // Beside `allOf` the discriminator means inheritance, which JSON Schema cannot say.
    let schemas = discriminated("", "[B]").replace("oneOf", "allOf");
    let error = convert(&schemas, "U").err().unwrap();
    assert!(format!("{error:#}").contains("not `allOf`"), "{error:#}");
    // A misspelt field of the discriminator object.
    let error = convert(&discriminated("    maping: {}\n", "[b]"), "U")
        .err()
        .unwrap();
    assert!(
        format!("{error:#}").contains("unknown field `maping`"),
        "{error:#}"
    );
}

#[test]
fn siblings_of_a_reference_fail_unless_extensions() {
    let schemas = "A:\n  type: object\n  properties:\n    b: {$ref: '#/components/schemas/B', description: lost}\nB: {type: string}";
    let error = convert(schemas, "A").err().unwrap();
    assert!(
        format!("{error:#}").contains("`description` beside `$ref`"),
        "{error:#}"
    );
    let schemas = "A:\n  type: object\n  properties:\n    b: {$ref: '#/components/schemas/B', x-note: kept}\nB: {type: string}";
    let schema = value(schemas, "A");
    assert_eq!(
        schema["properties"]["b"],
        json!({"$ref": "#/$defs/B", "x-note": "kept"})
    );
}

#[test]
fn dangling_references_and_undeclared_required_properties_fail() {
    let error = convert("A: {$ref: '#/components/schemas/Missing'}", "A")
        .err()
        .unwrap();
    assert!(format!("{error:#}").contains("dangling"), "{error:#}");
    let error = convert("A: {type: object, required: [a], properties: {b: {}}}", "A")
        .err()
        .unwrap();
    assert!(
        format!("{error:#}").contains("`a` is not declared"),
        "{error:#}"
    );
}

#[test]
fn a_file_holds_what_its_schema_reaches_and_nothing_else() {
    let text = spec(
        "A:\n  type: object\n  properties:\n    b: {$ref: '#/components/schemas/B'}\n    again: {$ref: '#/components/schemas/A'}\n\
         B: {type: array, items: {$ref: '#/components/schemas/C'}}\nC: {type: string}\nUnused: {type: integer}",
    );
    let api = licensing_spec::load(&text).unwrap();
    let raw = licensing_spec::raw(&text).unwrap();
    let document = Document {
        file: "test.yaml",
        api: &api,
        raw: &raw,
    };
    let file = self_contained(document, "A", "https://example.invalid/A.json").unwrap();
    assert_eq!(file["$schema"], DIALECT);
    assert_eq!(file["$id"], "https://example.invalid/A.json");
    assert_eq!(file["properties"]["again"], json!({"$ref": "#"}));
    // B's own reference to C is followed too; A itself and the unused schema are not defs.
    let defs: Vec<&str> = file["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(defs, ["B", "C"]);
    assert_eq!(file["$defs"]["B"]["items"], json!({"$ref": "#/$defs/C"}));
    // A leaf has no `$defs` at all.
    let leaf = self_contained(document, "C", "c").unwrap();
    assert!(leaf.get("$defs").is_none(), "{leaf}");
}
