//! The documents' schemas compiled once, at start: every keyword a check looks at read
//! into a [`Node`], `$ref`s resolved to other nodes, messages and patterns prepared, so
//! that checking a value ([`super::walk::Walker`]) neither looks keywords up by name
//! nor allocates unless it finds a departure.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use serde_json::Value;

use super::schema::{Finding, expected_type, quote};

/// What `#/components/...` names in `doc`.
pub(crate) fn resolve<'d>(doc: &'d Value, reference: &str) -> Option<&'d Value> {
    // A schema by its plain name is looked up directly: `Value::pointer` allocates for
    // every segment, and a check follows a `$ref` for nearly every value it meets.
    if let Some(name) = reference.strip_prefix("#/components/schemas/")
        && !name.contains(['~', '/'])
    {
        return doc.get("components")?.get("schemas")?.get(name);
    }
    doc.pointer(reference.strip_prefix('#')?)
}

/// A schema's place among the compiled ones.
pub(crate) type SchemaId = usize;

/// The type a schema names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    /// A name OpenAPI 3.0 does not have: no rule a value could break.
    Other,
}

/// What a field no `properties` entry names may be.
#[derive(Debug, Default)]
pub(super) enum Additional {
    #[default]
    Any,
    /// `additionalProperties: false`, with the finding's `expected`.
    Forbidden(String),
    Schema(SchemaId),
}

#[derive(Debug)]
pub(super) struct Discriminator {
    pub(super) property: String,
    /// The tag's values, each with its branch, and the finding's `expected`.
    pub(super) mapping: Option<(Fields, String)>,
}

#[derive(Debug)]
pub(super) struct OneOf {
    pub(super) branches: Vec<SchemaId>,
    pub(super) discriminator: Option<Discriminator>,
    /// The branches' types, as a finding names them when the value is none of them.
    pub(super) names: String,
}

/// One schema read once, at start, with every keyword a check looks at: `$ref`s
/// resolved to other compiled schemas, messages and patterns prepared. Checking then
/// neither looks keywords up by name nor allocates unless it finds something.
#[derive(Debug, Default)]
pub(super) struct Node {
    pub(super) one_of: Option<OneOf>,
    /// `type`, when the schema has one.
    pub(super) ty: Option<Ty>,
    pub(super) nullable: bool,
    /// The type as a finding names it.
    pub(super) expected: String,
    /// The `enum` members and the finding's `expected`.
    pub(super) members: Option<(Vec<Value>, String)>,
    pub(super) properties: Option<Fields>,
    pub(super) required: Vec<String>,
    pub(super) additional: Additional,
    pub(super) items: Option<SchemaId>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    /// A `pattern` and its compiled form (`None`: the engine cannot read it, so it is
    /// no rule the value could break).
    pub(super) pattern: Option<(String, Option<regress::Regex>)>,
    pub(super) int32: bool,
    pub(super) minimum: Option<f64>,
    pub(super) maximum: Option<f64>,
}

/// Names to compiled schemas; looked up for every field a check walks, with a hash
/// faster than std's on short keys (the keys are the documents', not a client's).
pub(super) type Fields = HashMap<String, SchemaId, RandomState>;

/// Every schema of the documents that a check starts from, compiled.
#[derive(Debug, Default)]
pub(crate) struct Schemas {
    pub(super) nodes: Vec<Node>,
}

/// Compiles schemas into [`Schemas`]; one `$ref` is compiled once however often it is
/// named, which also ends the recursion of a schema that contains itself.
#[derive(Default)]
pub(crate) struct Compiler {
    nodes: Vec<Node>,
    refs: HashMap<(usize, String), SchemaId>,
}

/// `schema` with its `$ref`s followed (at most 32; an unresolvable one is no schema).
fn follow<'d>(doc: &'d Value, mut schema: &'d Value) -> &'d Value {
    for _ in 0..32 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => match resolve(doc, r) {
                Some(next) => schema = next,
                None => return &Value::Null,
            },
            None => break,
        }
    }
    schema
}

impl Compiler {
    /// `schema` of document `doc` (numbered `index`), compiled.
    pub fn compile(&mut self, doc: &Value, index: usize, schema: &Value) -> SchemaId {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return self.reference(doc, index, r);
        }
        let node = self.node(doc, index, schema);
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn reference(&mut self, doc: &Value, index: usize, r: &str) -> SchemaId {
        let key = (index, r.to_string());
        if let Some(id) = self.refs.get(&key) {
            return *id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.refs.insert(key, id);
        let target = resolve(doc, r).map_or(&Value::Null, |t| follow(doc, t));
        self.nodes[id] = self.node(doc, index, target);
        id
    }

    fn node(&mut self, doc: &Value, index: usize, schema: &Value) -> Node {
        let u64_of = |k: &str| schema.get(k).and_then(Value::as_u64);
        let f64_of = |k: &str| schema.get(k).and_then(Value::as_f64);
        let one_of = schema
            .get("oneOf")
            .and_then(Value::as_array)
            .map(|branches| {
                let discriminator = schema.get("discriminator").map(|d| Discriminator {
                    property: d
                        .get("propertyName")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    mapping: d.get("mapping").and_then(Value::as_object).map(|m| {
                        let keys: Vec<String> = m.keys().map(|k| format!("{k:?}")).collect();
                        let branches = m
                            .iter()
                            .map(|(tag, target)| {
                                // A mapping names a schema by reference or by name.
                                let r = match target.as_str() {
                                    Some(r) if r.starts_with('#') => r.to_string(),
                                    Some(name) => format!("#/components/schemas/{name}"),
                                    None => String::new(),
                                };
                                (tag.clone(), self.reference(doc, index, &r))
                            })
                            .collect();
                        (branches, format!("one of [{}]", keys.join(", ")))
                    }),
                });
                let names: Vec<String> = branches
                    .iter()
                    .map(|b| expected_type(follow(doc, b)))
                    .collect();
                OneOf {
                    branches: branches
                        .iter()
                        .map(|b| self.compile(doc, index, b))
                        .collect(),
                    discriminator,
                    names: names.join(" or "),
                }
            });
        let ty = schema.get("type").and_then(Value::as_str).map(|t| match t {
            "object" => Ty::Object,
            "array" => Ty::Array,
            "string" => Ty::String,
            "integer" => Ty::Integer,
            "number" => Ty::Number,
            "boolean" => Ty::Boolean,
            _ => Ty::Other,
        });
        let members = schema.get("enum").and_then(Value::as_array).map(|values| {
            let listed: Vec<String> = values.iter().map(Value::to_string).collect();
            (values.clone(), format!("one of [{}]", listed.join(", ")))
        });
        let declared = schema.get("properties").and_then(Value::as_object);
        let properties = declared.map(|p| {
            p.iter()
                .map(|(name, sub)| (name.clone(), self.compile(doc, index, sub)))
                .collect()
        });
        let additional = match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => {
                let listed: Vec<&String> = declared.map(|p| p.keys().collect()).unwrap_or_default();
                Additional::Forbidden(format!("only {listed:?}"))
            }
            Some(sub @ Value::Object(_)) => Additional::Schema(self.compile(doc, index, sub)),
            _ => Additional::Any,
        };
        Node {
            one_of,
            ty,
            nullable: schema.get("nullable").and_then(Value::as_bool) == Some(true),
            expected: expected_type(schema),
            members,
            properties,
            required: schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            additional,
            items: schema.get("items").map(|i| self.compile(doc, index, i)),
            min_items: u64_of("minItems"),
            max_items: u64_of("maxItems"),
            min_length: u64_of("minLength"),
            max_length: u64_of("maxLength"),
            pattern: schema
                .get("pattern")
                .and_then(Value::as_str)
                .map(|p| (p.to_string(), regress::Regex::new(p).ok())),
            int32: schema.get("format").and_then(Value::as_str) == Some("int32"),
            minimum: f64_of("minimum"),
            maximum: f64_of("maximum"),
        }
    }

    /// What was compiled.
    pub fn finish(self) -> Schemas {
        Schemas { nodes: self.nodes }
    }
}

impl Schemas {
    /// A scalar parameter's text read as its schema's type (query and path parameters
    /// are text on the wire); `None` when it cannot be.
    pub fn coerce(&self, id: SchemaId, text: &str) -> Option<Value> {
        match self.nodes[id].ty {
            Some(Ty::Integer) => text
                .parse::<i64>()
                .ok()
                .map(Value::from)
                .or_else(|| text.parse::<u64>().ok().map(Value::from)),
            Some(Ty::Number) => text.parse::<f64>().ok().map(Value::from),
            Some(Ty::Boolean) => match text {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            _ => Some(Value::String(text.to_string())),
        }
    }

    /// A finding about a parameter whose text is not of its schema's type.
    pub fn uncoerced(&self, id: SchemaId, at: &str, text: &str) -> Finding {
        Finding {
            pointer: at.to_string(),
            rule: "type",
            expected: self.nodes[id].expected.clone(),
            actual: quote(at, &Value::String(text.to_string())),
        }
    }
}
