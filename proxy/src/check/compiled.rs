//! The documents' schemas compiled once, at start, from the spec model's typed documents
//! (`licensing-spec`, which the SDK's generator and the schema export read too): every
//! keyword a check looks at read into a [`Node`], `$ref`s resolved to other nodes, messages
//! and patterns prepared, so that checking a value ([`super::walk::Walker`]) neither looks
//! keywords up by name nor allocates unless it finds a departure.

use std::collections::HashMap;

use foldhash::fast::RandomState;
use licensing_spec::openapiv3::{
    AdditionalProperties, Components, IntegerFormat, ReferenceOr, Schema, SchemaKind, Type,
    VariantOrUnknownOrEmpty,
};
use serde_json::Value;

use super::schema::{Finding, quote};

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

/// An object's declared properties, in the document's order.
type Declared<'s> = Vec<(&'s String, &'s ReferenceOr<Box<Schema>>)>;

/// A schema's keywords as a check reads them, whichever form the typed model gave it
/// (a `type`, a combination, or any schema).
#[derive(Default)]
struct Keywords<'s> {
    ty: Option<Ty>,
    /// `format`, as written.
    format: Option<String>,
    members: Option<Vec<Value>>,
    properties: Option<Declared<'s>>,
    required: &'s [String],
    additional: Option<&'s AdditionalProperties>,
    items: Option<&'s ReferenceOr<Box<Schema>>>,
    min_items: Option<usize>,
    max_items: Option<usize>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    pattern: Option<&'s str>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    one_of: Option<&'s [ReferenceOr<Schema>]>,
}

/// `format` as written, if any.
fn format<F: serde::Serialize>(format: &VariantOrUnknownOrEmpty<F>) -> Option<String> {
    match format {
        VariantOrUnknownOrEmpty::Item(f) => serde_json::to_value(f)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string)),
        VariantOrUnknownOrEmpty::Unknown(f) => Some(f.clone()),
        VariantOrUnknownOrEmpty::Empty => None,
    }
}

/// An `enum`'s members as JSON values (a `null` member as `null`).
fn members<T: Clone + Into<Value>>(values: &[Option<T>]) -> Option<Vec<Value>> {
    (!values.is_empty()).then(|| {
        values
            .iter()
            .map(|v| v.clone().map_or(Value::Null, Into::into))
            .collect()
    })
}

fn keywords(schema: &Schema) -> Keywords<'_> {
    let mut k = Keywords::default();
    match &schema.schema_kind {
        SchemaKind::Type(Type::String(t)) => {
            k.ty = Some(Ty::String);
            k.format = format(&t.format);
            k.members = members(&t.enumeration);
            k.min_length = t.min_length;
            k.max_length = t.max_length;
            k.pattern = t.pattern.as_deref();
        }
        SchemaKind::Type(Type::Number(t)) => {
            k.ty = Some(Ty::Number);
            k.format = format(&t.format);
            k.members = members(&t.enumeration);
            k.minimum = t.minimum;
            k.maximum = t.maximum;
        }
        SchemaKind::Type(Type::Integer(t)) => {
            k.ty = Some(Ty::Integer);
            k.format = format(&t.format);
            k.members = members(&t.enumeration);
            k.minimum = t.minimum.map(|m| m as f64);
            k.maximum = t.maximum.map(|m| m as f64);
        }
        SchemaKind::Type(Type::Boolean(t)) => {
            k.ty = Some(Ty::Boolean);
            k.members = members(&t.enumeration);
        }
        SchemaKind::Type(Type::Object(o)) => {
            k.ty = Some(Ty::Object);
            k.properties = Some(o.properties.iter().collect());
            k.required = &o.required;
            k.additional = o.additional_properties.as_ref();
        }
        SchemaKind::Type(Type::Array(a)) => {
            k.ty = Some(Ty::Array);
            k.items = a.items.as_ref();
            k.min_items = a.min_items;
            k.max_items = a.max_items;
        }
        SchemaKind::OneOf { one_of } => k.one_of = Some(one_of),
        SchemaKind::AllOf { .. } | SchemaKind::AnyOf { .. } | SchemaKind::Not { .. } => {}
        SchemaKind::Any(a) => {
            k.ty = a.typ.as_deref().map(|t| match t {
                "object" => Ty::Object,
                "array" => Ty::Array,
                "string" => Ty::String,
                "integer" => Ty::Integer,
                "number" => Ty::Number,
                "boolean" => Ty::Boolean,
                _ => Ty::Other,
            });
            k.format = a.format.clone();
            k.members = (!a.enumeration.is_empty()).then(|| a.enumeration.clone());
            k.properties = (!a.properties.is_empty()).then(|| a.properties.iter().collect());
            k.required = &a.required;
            k.additional = a.additional_properties.as_ref();
            k.items = a.items.as_ref();
            k.min_items = a.min_items;
            k.max_items = a.max_items;
            k.min_length = a.min_length;
            k.max_length = a.max_length;
            k.pattern = a.pattern.as_deref();
            k.minimum = a.minimum;
            k.maximum = a.maximum;
            k.one_of = (!a.one_of.is_empty()).then_some(a.one_of.as_slice());
        }
    }
    k
}

/// The type a schema asks for, as a finding names it.
fn expected_type(schema: Option<&Schema>) -> String {
    let Some(schema) = schema else {
        return "any".to_string();
    };
    let k = keywords(schema);
    let ty = match k.ty {
        Some(Ty::Object) => "object",
        Some(Ty::Array) => "array",
        Some(Ty::String) => "string",
        Some(Ty::Integer) => "integer",
        Some(Ty::Number) => "number",
        Some(Ty::Boolean) => "boolean",
        Some(Ty::Other) => match &schema.schema_kind {
            SchemaKind::Any(a) => a.typ.as_deref().unwrap_or("any"),
            _ => "any",
        },
        None => "any",
    };
    match (ty, k.format) {
        ("integer", Some(format)) => format!("integer ({format})"),
        (ty, _) if schema.schema_data.nullable => format!("{ty} or null"),
        (ty, _) => ty.to_string(),
    }
}

impl Compiler {
    /// `schema` of a document (numbered `index`, its `components`), compiled.
    pub fn compile(
        &mut self,
        components: Option<&Components>,
        index: usize,
        schema: &ReferenceOr<Schema>,
    ) -> SchemaId {
        match schema {
            ReferenceOr::Reference { reference } => self.reference(components, index, reference),
            ReferenceOr::Item(schema) => self.push(components, index, Some(schema)),
        }
    }

    /// A property's or an array's items' schema, compiled.
    fn compile_boxed(
        &mut self,
        components: Option<&Components>,
        index: usize,
        schema: &ReferenceOr<Box<Schema>>,
    ) -> SchemaId {
        match schema {
            ReferenceOr::Reference { reference } => self.reference(components, index, reference),
            ReferenceOr::Item(schema) => self.push(components, index, Some(schema)),
        }
    }

    /// A schema where there is none (a parameter without one): no rule a value could break.
    pub fn any(&mut self) -> SchemaId {
        self.push(None, 0, None)
    }

    fn push(
        &mut self,
        components: Option<&Components>,
        index: usize,
        schema: Option<&Schema>,
    ) -> SchemaId {
        let node = self.node(components, index, schema);
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn reference(
        &mut self,
        components: Option<&Components>,
        index: usize,
        reference: &str,
    ) -> SchemaId {
        let key = (index, reference.to_string());
        if let Some(id) = self.refs.get(&key) {
            return *id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.refs.insert(key, id);
        // An unresolvable reference is no schema.
        let reference = ReferenceOr::ref_(reference);
        let target = licensing_spec::schema(components, &reference);
        self.nodes[id] = self.node(components, index, target);
        id
    }

    fn node(
        &mut self,
        components: Option<&Components>,
        index: usize,
        schema: Option<&Schema>,
    ) -> Node {
        let Some(schema) = schema else {
            return Node {
                expected: expected_type(None),
                ..Node::default()
            };
        };
        let k = keywords(schema);
        let one_of = k.one_of.map(|branches| {
            let discriminator = schema
                .schema_data
                .discriminator
                .as_ref()
                .map(|d| Discriminator {
                    property: d.property_name.clone(),
                    mapping: (!d.mapping.is_empty()).then(|| {
                        // Listed in the order of their tags, whichever order the document has.
                        let mut mapping: Vec<(&String, &String)> = d.mapping.iter().collect();
                        mapping.sort();
                        let keys: Vec<String> =
                            mapping.iter().map(|(k, _)| format!("{k:?}")).collect();
                        let branches = mapping
                            .into_iter()
                            .map(|(tag, target)| {
                                // A mapping names a schema by reference or by name.
                                let r = if target.starts_with('#') {
                                    target.clone()
                                } else {
                                    format!("{}{target}", licensing_spec::SCHEMA_REF_PREFIX)
                                };
                                (tag.clone(), self.reference(components, index, &r))
                            })
                            .collect();
                        (branches, format!("one of [{}]", keys.join(", ")))
                    }),
                });
            let names: Vec<String> = branches
                .iter()
                .map(|b| expected_type(licensing_spec::schema(components, b)))
                .collect();
            OneOf {
                branches: branches
                    .iter()
                    .map(|b| self.compile(components, index, b))
                    .collect(),
                discriminator,
                names: names.join(" or "),
            }
        });
        let members = k.members.map(|values| {
            let listed: Vec<String> = values.iter().map(Value::to_string).collect();
            (values, format!("one of [{}]", listed.join(", ")))
        });
        let properties = k.properties.as_ref().map(|p| {
            p.iter()
                .map(|(name, sub)| ((*name).clone(), self.compile_boxed(components, index, sub)))
                .collect()
        });
        let additional = match k.additional {
            Some(AdditionalProperties::Any(false)) => {
                let listed: Vec<&String> = k
                    .properties
                    .as_ref()
                    .map(|p| {
                        let mut names: Vec<&String> = p.iter().map(|(name, _)| *name).collect();
                        names.sort();
                        names
                    })
                    .unwrap_or_default();
                Additional::Forbidden(format!("only {listed:?}"))
            }
            Some(AdditionalProperties::Schema(sub)) => {
                Additional::Schema(self.compile(components, index, sub))
            }
            _ => Additional::Any,
        };
        let int32 = match &schema.schema_kind {
            SchemaKind::Type(Type::Integer(t)) => {
                t.format == VariantOrUnknownOrEmpty::Item(IntegerFormat::Int32)
            }
            _ => k.format.as_deref() == Some("int32"),
        };
        Node {
            one_of,
            ty: k.ty,
            nullable: schema.schema_data.nullable,
            expected: expected_type(Some(schema)),
            members,
            properties,
            required: k.required.to_vec(),
            additional,
            items: k.items.map(|i| self.compile_boxed(components, index, i)),
            min_items: k.min_items.map(|n| n as u64),
            max_items: k.max_items.map(|n| n as u64),
            min_length: k.min_length.map(|n| n as u64),
            max_length: k.max_length.map(|n| n as u64),
            pattern: k
                .pattern
                .map(|p| (p.to_string(), regress::Regex::new(p).ok())),
            int32,
            minimum: k.minimum,
            maximum: k.maximum,
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
