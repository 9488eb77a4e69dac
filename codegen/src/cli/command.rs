//! One operation as a command: its flags (path and query parameters, the scalar fields
//! of its body), each with the kind of value the spec gives it, and its help.

use std::collections::BTreeSet;

use openapiv3::{
    OpenAPI, Operation, Parameter, ParameterSchemaOrContent, PathItem, ReferenceOr, Schema,
    SchemaKind, Type,
};

use crate::spec::{self, Op};

/// Flags every service command has, or that the root command defines for all of them.
pub const RESERVED: &[&str] = &[
    "json-body",
    "paginate",
    "output",
    "profile",
    "verbose",
    "help",
    "version",
    "order-url",
    "member-url",
    "sandbox-url",
    "timeout",
    "deadline",
    "retry",
];

/// `channelCustomerId` → `channel-customer-id` (heck, as codegen names the same names).
pub fn kebab(name: &str) -> String {
    heck::ToKebabCase::to_kebab_case(name)
}

/// What a flag takes, as the spec types it.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Text.
    Str,
    /// A whole number within `minimum` and `maximum`, made inclusive.
    Int {
        /// The least value allowed.
        min: Option<i64>,
        /// The greatest value allowed.
        max: Option<i64>,
    },
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// One of these strings.
    Enum(Vec<String>),
    /// One of these numbers.
    IntEnum(Vec<i64>),
}

/// Where a flag's value goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A path parameter.
    Path,
    /// A query parameter.
    Query,
    /// A top-level field of the JSON body.
    Body,
}

/// A flag of a command: a path or query parameter, or a scalar field of the body.
#[derive(Debug)]
pub struct Flag {
    /// The spec's name.
    pub wire: String,
    /// The flag, without `--`.
    pub flag: String,
    /// Where the value goes.
    pub location: Location,
    /// Whether the spec requires it.
    pub required: bool,
    /// Its type.
    pub kind: Kind,
    /// The spec's description, on one line.
    pub help: String,
    /// A shared tolerant enum the builder's setter takes.
    pub enum_type: Option<String>,
}

/// One operation as a command.
#[derive(Debug)]
pub struct Command {
    /// The command name: the `operationId` in kebab case.
    pub name: String,
    /// The spec's summary.
    pub about: String,
    /// The summary and the description.
    pub long_about: String,
    /// Path and query parameters, `g_nonce` excepted.
    pub params: Vec<Flag>,
    /// The scalar top-level fields of the body, each also a flag.
    pub body_fields: Vec<Flag>,
    /// Whether the operation requires a body.
    pub body_required: bool,
}

impl Command {
    /// Reads `op`'s command from its spec. Fails on what a flag cannot carry (a header
    /// parameter, an object parameter) and on two flags of one name.
    pub fn read(document: &OpenAPI, op: &Op) -> Result<Command, String> {
        let (path_item, operation) = operation(document, &op.id)?;
        let mut taken: BTreeSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
        let params = params(document, path_item, operation, &mut taken)?;
        let (body_fields, body_required) = match &op.request {
            Some(request) => (
                body_fields(document, request, &mut taken)?,
                matches!(&operation.request_body, Some(ReferenceOr::Item(b)) if b.required),
            ),
            None => (Vec::new(), false),
        };
        let summary = doc(operation.summary.as_ref());
        let description = doc(operation.description.as_ref());
        Ok(Command {
            name: kebab(&op.id),
            long_about: if description.is_empty() {
                summary.clone()
            } else {
                format!("{summary}.\n\n{description}")
            },
            about: summary,
            params,
            body_fields,
            body_required,
        })
    }

    /// The shared enums the builders' setters of its parameters take.
    pub fn enum_types(&self) -> impl Iterator<Item = String> + '_ {
        self.params.iter().filter_map(|p| p.enum_type.clone())
    }
}

fn operation<'a>(document: &'a OpenAPI, id: &str) -> Result<(&'a PathItem, &'a Operation), String> {
    document
        .paths
        .iter()
        .filter_map(|(path, item)| Some((path, item.as_item()?)))
        .flat_map(|(_, item)| item.iter().map(move |(_, o)| (item, o)))
        .find(|(_, o)| o.operation_id.as_deref() == Some(id))
        .ok_or_else(|| "not found among the spec's paths".to_string())
}

/// The path item's parameters, then the operation's, as flags.
fn params(
    document: &OpenAPI,
    path_item: &PathItem,
    operation: &Operation,
    taken: &mut BTreeSet<String>,
) -> Result<Vec<Flag>, String> {
    let components = document.components.as_ref();
    let mut params = Vec::new();
    for p in path_item.parameters.iter().chain(&operation.parameters) {
        let p = spec::resolve_parameter(p, components)
            .ok_or("a parameter reference does not resolve")?;
        let data = p.parameter_data_ref();
        // The runtime adds a fresh g_nonce to every attempt.
        if data.name == "g_nonce" {
            continue;
        }
        let location = match p {
            Parameter::Path { .. } => Location::Path,
            Parameter::Query { .. } => Location::Query,
            _ => {
                return Err(format!(
                    "parameter `{}`: only path and query parameters are supported",
                    data.name
                ));
            }
        };
        let schema = match &data.format {
            ParameterSchemaOrContent::Schema(s) => s,
            ParameterSchemaOrContent::Content(_) => {
                return Err(format!("parameter `{}` has no schema", data.name));
            }
        };
        let (kind, enum_type) = kind(document, schema).ok_or(format!(
            "parameter `{}`: only scalar parameters are supported",
            data.name
        ))?;
        let flag = kebab(&data.name);
        if !taken.insert(flag.clone()) {
            return Err(format!("parameter `{}`: flag --{flag} is taken", data.name));
        }
        params.push(Flag {
            wire: data.name.clone(),
            flag,
            location,
            required: data.required || location == Location::Path,
            kind,
            help: doc(data.description.as_ref()),
            enum_type,
        });
    }
    Ok(params)
}

/// The scalar top-level fields of the request schema `request`, as flags; a field named
/// like a parameter is told apart by a `body-` prefix. Lists, objects and unions are
/// taken from `--json-body` only.
fn body_fields(
    document: &OpenAPI,
    request: &str,
    taken: &mut BTreeSet<String>,
) -> Result<Vec<Flag>, String> {
    let schema = document
        .components
        .as_ref()
        .and_then(|c| c.schemas.get(request))
        .and_then(ReferenceOr::as_item)
        .ok_or(format!("request schema `{request}` is not a component"))?;
    let SchemaKind::Type(Type::Object(object)) = &schema.schema_kind else {
        return Ok(Vec::new());
    };
    let mut fields = Vec::new();
    for (name, property) in &object.properties {
        let property = unboxed(property);
        let Some((kind, _)) = kind(document, &property) else {
            continue;
        };
        let help = match &property {
            ReferenceOr::Item(s) => doc(s.schema_data.description.as_ref()),
            ReferenceOr::Reference { .. } => String::new(),
        };
        let mut flag = kebab(name);
        if taken.contains(&flag) {
            flag = format!("body-{flag}");
        }
        if !taken.insert(flag.clone()) {
            return Err(format!("body field `{name}`: flag --{flag} is taken"));
        }
        fields.push(Flag {
            wire: name.clone(),
            flag,
            location: Location::Body,
            required: object.required.contains(name),
            kind,
            help,
            enum_type: None,
        });
    }
    Ok(fields)
}

/// An object's property as a plain schema reference.
pub fn unboxed(property: &ReferenceOr<Box<Schema>>) -> ReferenceOr<Schema> {
    match property {
        ReferenceOr::Item(b) => ReferenceOr::Item((**b).clone()),
        ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
    }
}

/// The kind of a scalar schema, following a component reference, with the component's
/// name for an enum; `None` for arrays, objects and unions.
pub fn kind(document: &OpenAPI, s: &ReferenceOr<Schema>) -> Option<(Kind, Option<String>)> {
    let (schema, name) = match s {
        ReferenceOr::Item(s) => (s.clone(), None),
        ReferenceOr::Reference { .. } => {
            let name = spec::ref_name(s)?;
            let schema = document
                .components
                .as_ref()?
                .schemas
                .get(&name)?
                .as_item()?
                .clone();
            (schema, Some(name))
        }
    };
    let kind = match &schema.schema_kind {
        SchemaKind::Type(Type::String(t)) => {
            let values: Vec<String> = t.enumeration.iter().flatten().cloned().collect();
            if values.is_empty() {
                return Some((Kind::Str, None));
            }
            return Some((Kind::Enum(values), name));
        }
        SchemaKind::Type(Type::Integer(t)) => {
            let values: Vec<i64> = t.enumeration.iter().flatten().copied().collect();
            if !values.is_empty() {
                return Some((Kind::IntEnum(values), name));
            }
            let min = t
                .minimum
                .map(|m| if t.exclusive_minimum { m + 1 } else { m });
            let max = t
                .maximum
                .map(|m| if t.exclusive_maximum { m - 1 } else { m });
            Kind::Int { min, max }
        }
        SchemaKind::Type(Type::Number(_)) => Kind::Number,
        SchemaKind::Type(Type::Boolean(_)) => Kind::Bool,
        _ => return None,
    };
    Some((kind, None))
}

/// A spec's text on one line.
fn doc(text: Option<&String>) -> String {
    text.map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
