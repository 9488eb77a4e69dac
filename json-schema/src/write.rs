//! The small writers of the translation: one keyword set on a schema, the bounds in
//! 2020-12 form, `nullable`, and the keywords the translation knows.

use anyhow::{Result, anyhow, bail};
use licensing_spec::openapiv3::VariantOrUnknownOrEmpty;
use schemars::Schema;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The keywords of an OpenAPI 3.0.3 Schema Object that this converter translates (a set:
/// sorted, for finding one).
pub(crate) const KNOWN_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "allOf",
    "anyOf",
    "default",
    "deprecated",
    "description",
    "discriminator",
    "enum",
    "example",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "items",
    "maximum",
    "maxItems",
    "maxLength",
    "maxProperties",
    "minimum",
    "minItems",
    "minLength",
    "minProperties",
    "multipleOf",
    "not",
    "nullable",
    "oneOf",
    "pattern",
    "properties",
    "readOnly",
    "required",
    "title",
    "type",
    "uniqueItems",
    "writeOnly",
];

/// The keywords that combine subschemas; a nullable combination is wrapped, see module docs.
pub(crate) const COMBINATORS: &[&str] = &["oneOf", "anyOf", "allOf", "not"];

/// A lower or upper bound and whether it is exclusive (OpenAPI 3.0's boolean form).
pub(crate) struct Bound(pub(crate) Option<Value>, pub(crate) bool);

pub(crate) fn set(out: &mut Schema, keyword: &str, value: impl Into<Value>) {
    out.insert(keyword.to_owned(), value.into());
}

pub(crate) fn set_format<F: Serialize>(
    out: &mut Schema,
    format: &VariantOrUnknownOrEmpty<F>,
) -> Result<()> {
    match format {
        VariantOrUnknownOrEmpty::Item(known) => set(out, "format", serde_json::to_value(known)?),
        VariantOrUnknownOrEmpty::Unknown(other) => set(out, "format", other.as_str()),
        VariantOrUnknownOrEmpty::Empty => {}
    }
    Ok(())
}

pub(crate) fn string_keywords(
    out: &mut Schema,
    pattern: Option<&str>,
    min_length: Option<usize>,
    max_length: Option<usize>,
) {
    if let Some(pattern) = pattern {
        set(out, "pattern", pattern);
    }
    if let Some(n) = min_length {
        set(out, "minLength", n);
    }
    if let Some(n) = max_length {
        set(out, "maxLength", n);
    }
}

/// Writes the bounds in 2020-12 form: an exclusive bound is a number of its own.
pub(crate) fn numeric_keywords(
    out: &mut Schema,
    minimum: Bound,
    maximum: Bound,
    multiple_of: Option<Value>,
) -> Result<()> {
    for (Bound(value, exclusive), inclusive_keyword, exclusive_keyword) in [
        (minimum, "minimum", "exclusiveMinimum"),
        (maximum, "maximum", "exclusiveMaximum"),
    ] {
        match (value, exclusive) {
            (Some(value), false) => set(out, inclusive_keyword, value),
            (Some(value), true) => set(out, exclusive_keyword, value),
            (None, true) => bail!("`{exclusive_keyword}: true` without `{inclusive_keyword}`"),
            (None, false) => {}
        }
    }
    if let Some(value) = multiple_of {
        set(out, "multipleOf", value);
    }
    Ok(())
}

pub(crate) fn set_enum(out: &mut Schema, values: impl Iterator<Item = Value>) {
    let values: Vec<Value> = values.collect();
    if !values.is_empty() {
        set(out, "enum", values);
    }
}

/// `nullable: true`, see the module documentation. An `enum` keeps its values: by OpenAPI
/// 3.0.3 a nullable enum admits null only when null is one of them, and so it is here.
pub(crate) fn make_nullable(out: &mut Schema) -> Result<()> {
    let combined: Map<String, Value> = COMBINATORS
        .iter()
        .filter_map(|k| out.remove(*k).map(|v| ((*k).to_owned(), v)))
        .collect();
    match out.get("type").cloned() {
        Some(Value::String(typ)) => {
            if !combined.is_empty() {
                bail!(
                    "`nullable` on a schema with both `type` and `oneOf`/`anyOf`/`allOf`/`not` is not translated"
                );
            }
            set(out, "type", json!([typ, "null"]));
        }
        Some(other) => bail!("unexpected `type` {other}"),
        // Without `type` and without a combination the schema already admits null.
        None if combined.is_empty() => {}
        None => set(out, "anyOf", json!([combined, {"type": "null"}])),
    }
    Ok(())
}

/// A number as JSON, integral values without a fraction (`1`, not `1.0`).
pub(crate) fn number(value: f64) -> Value {
    // Exact for every integral value that fits an i64.
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}

/// The raw value below `key` of a raw schema, for the typed node being converted.
pub(crate) fn child<'r>(raw: &'r Value, key: &str, at: &str) -> Result<&'r Value> {
    raw.get(key)
        .ok_or_else(|| anyhow!("#{at}: `{key}` parsed but not found in the raw document"))
}
