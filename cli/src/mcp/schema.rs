//! A tool's input and output schemas, from the spec the SDK was generated from: the
//! operation's parameters and body as the arguments, the reply's `data` as the output,
//! each translated to JSON Schema by `licensing-json-schema`, the component schemas they
//! refer to gathered under `$defs`.

use std::collections::BTreeSet;

use licensing_json_schema::{Converter, Document};
use licensing_sdk::operations::Service;
use licensing_spec::{Data, Op, openapiv3::OpenAPI};
use serde_json::{Map, Value, json};

/// One service's spec, read once for the schemas of all its tools.
pub struct Spec {
    file: &'static str,
    api: OpenAPI,
    raw: Value,
    /// The facts of every operation, in the spec's order.
    pub ops: Vec<Op>,
}

/// An argument of a tool that is a parameter of its operation.
#[derive(Debug)]
pub struct Param {
    /// The spec's name, which is also the argument's.
    pub name: String,
    /// Whether the spec requires it.
    pub required: bool,
    /// The spec's description.
    pub description: String,
    /// Where its schema is in the spec (a JSON Pointer).
    pub pointer: String,
}

impl Spec {
    /// The service's spec, as the SDK embeds it.
    pub fn load(service: Service) -> Result<Self, String> {
        let file = match service {
            Service::Order => "spec/order.yaml",
            Service::Member => "spec/member.yaml",
        };
        let mut spec = Self::parse(file, service.openapi())?;
        spec.ops = licensing_spec::operations(&spec.api).map_err(|e| format!("{file}: {e}"))?;
        Ok(spec)
    }

    /// A spec without the platform's facts (the simulator's admin API): no [`Spec::ops`].
    pub fn parse(file: &'static str, text: &str) -> Result<Self, String> {
        let at = |e: String| format!("{file}: {e}");
        Ok(Spec {
            file,
            api: licensing_spec::load(text).map_err(at)?,
            raw: licensing_spec::raw(text).map_err(at)?,
            ops: Vec::new(),
        })
    }

    /// The typed model.
    pub fn api(&self) -> &OpenAPI {
        &self.api
    }

    fn converter(&self) -> Converter<'_> {
        // No component is a file's root here: every reference goes to `$defs`.
        Converter::new(
            Document {
                file: self.file,
                api: &self.api,
                raw: &self.raw,
            },
            "",
        )
    }

    /// The operation's parameters, the path item's first, as they are written (a
    /// `#/components/parameters/…` reference followed).
    pub fn params(&self, id: &str, path: &str, method: &str) -> Result<Vec<Param>, String> {
        let path = format!("/paths/{}", licensing_json_schema::escape(path));
        let method = format!("{path}/{}", method.to_ascii_lowercase());
        let mut params = Vec::new();
        for base in [path, method] {
            let Some(list) = self
                .raw
                .pointer(&format!("{base}/parameters"))
                .and_then(Value::as_array)
            else {
                continue;
            };
            for (i, entry) in list.iter().enumerate() {
                let pointer = match entry.get("$ref").and_then(Value::as_str) {
                    Some(reference) => reference
                        .strip_prefix('#')
                        .ok_or(format!("{}: {id}: `$ref: {reference}`", self.file))?
                        .to_string(),
                    None => format!("{base}/parameters/{i}"),
                };
                let param = self
                    .raw
                    .pointer(&pointer)
                    .ok_or(format!("{}: {id}: no parameter at {pointer}", self.file))?;
                let text = |key: &str| param.get(key).and_then(Value::as_str).unwrap_or("");
                params.push(Param {
                    name: text("name").to_string(),
                    required: param.get("required").and_then(Value::as_bool) == Some(true)
                        || text("in") == "path",
                    description: text("description").to_string(),
                    pointer: format!("{pointer}/schema"),
                });
            }
        }
        Ok(params)
    }

    /// The arguments of operation `id`: `params` (those the caller gives), and the body
    /// (a `request` object) as `body`; `page_size` caps the page-size parameter.
    pub fn input(
        &self,
        id: &str,
        request: Option<&str>,
        params: &[Param],
        page_size: Option<(&str, i64)>,
    ) -> Result<Map<String, Value>, String> {
        let converter = self.converter();
        let mut refs = BTreeSet::new();
        let mut properties = Map::new();
        let mut required = Vec::new();
        for param in params {
            let converted = converter
                .at(&param.pointer)
                .map_err(|e| format!("{}: {id}: {e:#}", self.file))?;
            refs.extend(converted.refs);
            let mut schema = converted.schema.to_value();
            if let Value::Object(object) = &mut schema {
                if !param.description.is_empty() {
                    object.insert("description".into(), param.description.clone().into());
                }
                if let Some((name, max)) = page_size
                    && name == param.name
                {
                    object.insert("maximum".into(), max.into());
                }
            }
            properties.insert(param.name.clone(), schema);
            if param.required {
                required.push(Value::from(param.name.clone()));
            }
        }
        if let Some(request) = request {
            properties.insert(
                "body".into(),
                json!({
                    "$ref": format!("#/$defs/{}", licensing_json_schema::escape(request)),
                    "description": format!("The request body, a `{request}` object."),
                }),
            );
            refs.insert(request.to_string());
            required.push("body".into());
        }
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), properties.into());
        schema.insert("required".into(), required.into());
        schema.insert("additionalProperties".into(), false.into());
        self.close(&converter, refs, &mut schema, false)?;
        Ok(schema)
    }

    /// What every reply of the tool holds: the reply's `data`, a business error (its code
    /// and documented meaning) or a refusal, and a note of what a bound left out.
    /// With `data` `None`, the data may be anything (a reply the spec gives no schema).
    pub fn output(&self, data: Option<&Data>) -> Result<Map<String, Value>, String> {
        let converter = self.converter();
        let mut refs = BTreeSet::new();
        let named = |name: &String| json!({"$ref": format!("#/$defs/{}", licensing_json_schema::escape(name))});
        let data = match data {
            None => json!({}),
            Some(Data::Unit) => json!({"type": "null"}),
            Some(Data::Named(name)) => {
                refs.insert(name.clone());
                named(name)
            }
            Some(Data::List(name)) => {
                refs.insert(name.clone());
                json!({"type": "array", "items": named(name)})
            }
            Some(Data::Strings) => json!({"type": "array", "items": {"type": "string"}}),
        };
        let text = json!({"type": "string"});
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert(
            "properties".into(),
            json!({
                "data": data,
                "error": {
                    "type": "object",
                    "description": "Why nothing, or not everything, was done: the platform's code and its documented meaning, a refused call and the flag that allows it, or the argument at fault.",
                    "properties": {
                        "code": text, "meaning": text, "message": text,
                        "flag": text, "field": text,
                    },
                },
                "omitted": {
                    "type": "object",
                    "description": "What a bound of the reply left out.",
                    "properties": {
                        "items": {"type": "integer"}, "of": {"type": "integer"},
                        "bytes": {"type": "integer"}, "note": text,
                    },
                },
                "note": text,
            }),
        );
        self.close(&converter, refs, &mut schema, true)?;
        Ok(schema)
    }

    /// Adds every component `refs` reaches, transitively, under `$defs`, then makes the
    /// schema plain (see [`plain`]).
    fn close(
        &self,
        converter: &Converter<'_>,
        mut pending: BTreeSet<String>,
        schema: &mut Map<String, Value>,
        output: bool,
    ) -> Result<(), String> {
        let mut defs = Map::new();
        while let Some(name) = pending.pop_first() {
            if defs.contains_key(&name) {
                continue;
            }
            let converted = converter
                .component(&name)
                .map_err(|e| format!("{}: {e:#}", self.file))?;
            pending.extend(converted.refs.into_iter().filter(|r| !defs.contains_key(r)));
            defs.insert(name, converted.schema.to_value());
        }
        if !defs.is_empty() {
            schema.insert("$defs".into(), defs.into());
        }
        let mut value = Value::Object(std::mem::take(schema));
        plain(&mut value, output);
        if let Value::Object(object) = value {
            *schema = object;
        }
        Ok(())
    }
}

/// Keywords for people and generators (`x-` extensions, examples, `tsType`) dropped; for
/// an output schema also the rules of text (lengths, patterns, formats): the text a tool
/// returns is escaped (a control character shown as `\u{1b}`), so it may be longer than
/// the platform's, and a client that checks results against the schema must not refuse
/// it for that.
pub fn plain(value: &mut Value, output: bool) {
    match value {
        Value::Object(object) => {
            object.retain(|key, _| {
                let doc = key.starts_with("x-")
                    || matches!(key.as_str(), "tsType" | "examples" | "example");
                let text = matches!(
                    key.as_str(),
                    "maxLength" | "minLength" | "pattern" | "format"
                );
                !(doc || (output && text))
            });
            for (key, child) in object.iter_mut() {
                // Under `properties` and `$defs` the keys are names, not keywords.
                if matches!(key.as_str(), "properties" | "$defs") {
                    if let Value::Object(named) = child {
                        for schema in named.values_mut() {
                            plain(schema, output);
                        }
                    }
                } else {
                    plain(child, output);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| plain(i, output)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_under_properties_are_kept_and_keywords_dropped() {
        let mut schema = json!({
            "type": "object",
            "x-internal": true,
            "properties": {"pattern": {"type": "string", "pattern": "^a$", "example": "a"}},
            "$defs": {"format": {"type": "string", "format": "int64", "maxLength": 3}},
        });
        plain(&mut schema, true);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"pattern": {"type": "string"}},
                "$defs": {"format": {"type": "string"}},
            })
        );
        let mut input = json!({"type": "string", "pattern": "^a$", "examples": ["a"]});
        plain(&mut input, false);
        assert_eq!(input, json!({"type": "string", "pattern": "^a$"}));
    }
}
