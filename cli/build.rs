//! Generates every service command of `licensing` from `spec/order.yaml` and
//! `spec/member.yaml` into `$OUT_DIR/commands.rs`: one record per operation (its command
//! name, help, flags and body fields, read from the spec) and one dispatch arm per
//! operation that calls the SDK's generated builder, so that a call made from the command
//! line goes through the SDK's validation, authentication, retries and reply handling.
//! An operation added to a spec becomes a command with no edit here. The operation facts
//! come from `licensing_codegen::spec`, the code the SDK's own generator reads them with.

use std::{collections::BTreeSet, fmt::Write as _, fs, path::Path};

use licensing_codegen::{
    names::snake,
    spec::{self, Op},
};
use openapiv3::{
    OpenAPI, Parameter, ParameterSchemaOrContent, ReferenceOr, Schema, SchemaKind, Type,
};

const SERVICES: [(&str, &str); 2] = [
    ("order", "../spec/order.yaml"),
    ("member", "../spec/member.yaml"),
];

/// Flags every service command has, or that the root command defines for all of them.
const RESERVED: &[&str] = &[
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

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut records = String::new();
    let mut arms = String::new();
    let mut enums = BTreeSet::new();
    for (service, file) in SERVICES {
        println!("cargo:rerun-if-changed={file}");
        let text =
            fs::read_to_string(file).unwrap_or_else(|e| fail(file, &format!("cannot read: {e}")));
        let spec = spec::load(&text).unwrap_or_else(|e| fail(file, &e));
        let ops = spec::operations(&spec).unwrap_or_else(|e| fail(file, &e));
        for op in &ops {
            let command = command(&spec, service, op)
                .unwrap_or_else(|e| fail(file, &format!("{}: {e}", op.id)));
            enums.extend(
                command
                    .params
                    .iter()
                    .filter_map(|(p, _)| p.enum_type.clone()),
            );
            records.push_str(&command.record(service, op));
            arms.push_str(&command.arm(service, op));
        }
    }
    let mut out = bulk_fields();
    writeln!(
        out,
        "/// Every operation of both services, in the specs' order.\n\
         pub static OPERATIONS: &[CliOp] = &[\n{records}];\n"
    )
    .unwrap();
    writeln!(
        out,
        "/// Calls the operation through the SDK's generated builder, with the command's\n\
         /// flags and body, and writes what it returns to `sink`.\n\
         pub async fn dispatch(\n\
             ctx: &crate::config::Context,\n\
             op: &CliOp,\n\
             input: &crate::input::Input,\n\
             sink: &mut crate::output::Sink,\n\
         ) -> Result<(), crate::error::CliError> {{\n\
             match op.id {{\n{arms}\
                 other => unreachable!(\"no dispatch arm for {{other}}\"),\n\
             }}\n\
         }}\n"
    )
    .unwrap();
    for name in enums {
        writeln!(
            out,
            "impl TryFrom<crate::input::Arg<'_>> for licensing_sdk::{name} {{\n\
                 type Error = ();\n\
                 fn try_from(arg: crate::input::Arg<'_>) -> Result<Self, ()> {{\n\
                     arg.value().parse().map_err(|_| ())\n\
                 }}\n\
             }}"
        )
        .unwrap();
    }
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    fs::write(Path::new(&out_dir).join("commands.rs"), out).expect("OUT_DIR is writable");
}

fn fail(file: &str, message: &str) -> ! {
    eprintln!("error: {file}: {message}");
    std::process::exit(1);
}

/// `channelCustomerId` → `channel-customer-id` (heck, as codegen names the same names).
fn kebab(name: &str) -> String {
    heck::ToKebabCase::to_kebab_case(name)
}

/// What a flag takes, as the spec types it.
#[derive(Debug)]
enum Kind {
    Str,
    Int { min: Option<i64>, max: Option<i64> },
    Number,
    Bool,
    Enum(Vec<String>),
    IntEnum(Vec<i64>),
}

impl Kind {
    fn literal(&self) -> String {
        match self {
            Kind::Str => "Kind::Str".into(),
            Kind::Int { min, max } => format!("Kind::Int {{ min: {min:?}, max: {max:?} }}"),
            Kind::Number => "Kind::Number".into(),
            Kind::Bool => "Kind::Bool".into(),
            Kind::Enum(values) => format!("Kind::Enum(&{values:?})"),
            Kind::IntEnum(values) => format!("Kind::IntEnum(&{values:?})"),
        }
    }
}

/// A flag of a command: a path or query parameter, or a scalar field of the body.
struct Flag {
    wire: String,
    flag: String,
    required: bool,
    kind: Kind,
    help: String,
    /// A shared tolerant enum the builder's setter takes.
    enum_type: Option<String>,
}

impl Flag {
    fn literal(&self, location: &str) -> String {
        format!(
            "Flag {{ wire: {:?}, flag: {:?}, location: Location::{location}, required: {}, kind: {}, help: {:?} }},\n",
            self.wire,
            self.flag,
            self.required,
            self.kind.literal(),
            self.help
        )
    }
}

struct Command {
    name: String,
    about: String,
    long_about: String,
    params: Vec<(Flag, &'static str)>,
    body_fields: Vec<Flag>,
    body_required: bool,
}

fn schema_of(p: &Parameter) -> Option<&ReferenceOr<Schema>> {
    match &p.parameter_data_ref().format {
        ParameterSchemaOrContent::Schema(s) => Some(s),
        ParameterSchemaOrContent::Content(_) => None,
    }
}

/// The kind of a scalar schema, following a component reference; `None` for arrays,
/// objects and unions (taken from `--json-body` only).
fn kind(spec: &OpenAPI, s: &ReferenceOr<Schema>) -> Option<(Kind, Option<String>)> {
    let (schema, name) = match s {
        ReferenceOr::Item(s) => (s.clone(), None),
        ReferenceOr::Reference { .. } => {
            let name = spec::ref_name(s)?;
            let schema = spec
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

fn doc(text: Option<&String>) -> String {
    text.map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn command(spec: &OpenAPI, service: &str, op: &Op) -> Result<Command, String> {
    let (path_item, operation) = spec
        .paths
        .iter()
        .filter_map(|(path, item)| Some((path, item.as_item()?)))
        .flat_map(|(_, item)| item.iter().map(move |(_, o)| (item, o)))
        .find(|(_, o)| o.operation_id.as_deref() == Some(op.id.as_str()))
        .ok_or("not found among the spec's paths")?;
    let components = spec.components.as_ref();
    let mut taken: BTreeSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
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
            Parameter::Path { .. } => "Path",
            Parameter::Query { .. } => "Query",
            _ => {
                return Err(format!(
                    "parameter `{}`: only path and query parameters are supported",
                    data.name
                ));
            }
        };
        let schema = schema_of(p).ok_or(format!("parameter `{}` has no schema", data.name))?;
        let (kind, enum_type) = kind(spec, schema).ok_or(format!(
            "parameter `{}`: only scalar parameters are supported",
            data.name
        ))?;
        let flag = kebab(&data.name);
        if !taken.insert(flag.clone()) {
            return Err(format!("parameter `{}`: flag --{flag} is taken", data.name));
        }
        params.push((
            Flag {
                wire: data.name.clone(),
                flag,
                required: data.required || location == "Path",
                kind,
                help: doc(data.description.as_ref()),
                enum_type,
            },
            location,
        ));
    }
    let mut body_fields = Vec::new();
    let mut body_required = false;
    if let Some(request) = &op.request {
        body_required = match &operation.request_body {
            Some(ReferenceOr::Item(b)) => b.required,
            _ => false,
        };
        let schema = components
            .and_then(|c| c.schemas.get(request))
            .and_then(ReferenceOr::as_item)
            .ok_or(format!("request schema `{request}` is not a component"))?;
        if let SchemaKind::Type(Type::Object(object)) = &schema.schema_kind {
            for (name, property) in &object.properties {
                let property = match property {
                    ReferenceOr::Item(b) => ReferenceOr::Item((**b).clone()),
                    ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
                };
                let Some((kind, _)) = kind(spec, &property) else {
                    continue;
                };
                let help = match &property {
                    ReferenceOr::Item(s) => doc(s.schema_data.description.as_ref()),
                    ReferenceOr::Reference { .. } => String::new(),
                };
                // A body field named like a parameter is told apart by a prefix.
                let mut flag = kebab(name);
                if taken.contains(&flag) {
                    flag = format!("body-{flag}");
                }
                if !taken.insert(flag.clone()) {
                    return Err(format!("body field `{name}`: flag --{flag} is taken"));
                }
                body_fields.push(Flag {
                    wire: name.clone(),
                    flag,
                    required: object.required.contains(name),
                    kind,
                    help,
                    enum_type: None,
                });
            }
        }
    }
    let summary = doc(operation.summary.as_ref());
    let description = doc(operation.description.as_ref());
    let _ = service;
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

impl Command {
    fn record(&self, service: &str, op: &Op) -> String {
        let service_variant = match service {
            "order" => "Order",
            "member" => "Member",
            other => panic!("unknown service {other}"),
        };
        let params: String = self.params.iter().map(|(f, loc)| f.literal(loc)).collect();
        let body = match &op.request {
            None => "None".to_string(),
            Some(request) => {
                let fields: String = self.body_fields.iter().map(|f| f.literal("Body")).collect();
                format!(
                    "Some(Body {{ schema: {request:?}, required: {}, fields: &[\n{fields}] }})",
                    self.body_required
                )
            }
        };
        let pagination = match &op.pagination {
            Some(p) => format!(
                "Some(Paged {{ page: {:?}, size: {:?} }})",
                p.page_param, p.size_param
            ),
            None => "None".into(),
        };
        format!(
            "CliOp {{\n service: Service::{service_variant}, id: {:?}, name: {:?}, method: {:?}, path: {:?},\n about: {:?}, long_about: {:?},\n params: &[\n{params}],\n body: {body},\n paged: {pagination},\n}},\n",
            op.id, self.name, op.method, op.path, self.about, self.long_about
        )
    }

    fn arm(&self, service: &str, op: &Op) -> String {
        let mut arm = format!(
            "{:?} => {{\n let client = ctx.{service}_client()?;\n #[allow(unused_mut)]\n let mut call = client.{}();\n",
            op.id,
            op.method_name()
        );
        for (param, _) in &self.params {
            writeln!(
                arm,
                " if let Some(value) = input.param({:?}) {{ call = call.{}(crate::input::Arg::new(value)); }}",
                param.wire,
                snake(&param.wire)
            )
            .unwrap();
        }
        if let Some(request) = &op.request {
            writeln!(
                arm,
                " call = call.body(input.body::<licensing_sdk::{service}::types::{request}>(op)?);"
            )
            .unwrap();
        }
        if op.pagination.is_some() {
            arm.push_str(
                " if input.paginate { return crate::output::items(sink, call.stream()).await; }\n",
            );
        }
        arm.push_str(" crate::output::data(sink, call.await)\n}\n");
        arm
    }
}

/// The fields of one order of `batchOrder` (the items of its request's list, across the
/// union's variants), with how `orders submit` reads a CSV cell of each: `s` text, `i`
/// integer, `n` number, `b` boolean, `j` JSON (lists and objects).
fn bulk_fields() -> String {
    let file = SERVICES[0].1;
    let text =
        fs::read_to_string(file).unwrap_or_else(|e| fail(file, &format!("cannot read: {e}")));
    let spec = spec::load(&text).unwrap_or_else(|e| fail(file, &e));
    let ops = spec::operations(&spec).unwrap_or_else(|e| fail(file, &e));
    let at = |m: &str| -> ! {
        fail(
            file,
            &format!("batchOrder: {m} (read by `licensing orders submit`)"),
        )
    };
    let Some(request) = ops
        .iter()
        .find(|o| o.id == "batchOrder")
        .and_then(|o| o.request.clone())
    else {
        at("no such operation with a body")
    };
    let schemas = &spec.components.as_ref().expect("components").schemas;
    let object = |name: &str| match schemas
        .get(name)
        .and_then(ReferenceOr::as_item)
        .map(|s| &s.schema_kind)
    {
        Some(SchemaKind::Type(Type::Object(o))) => Some(o.clone()),
        _ => None,
    };
    let request = object(&request).unwrap_or_else(|| at("the body is not an object"));
    let item = request
        .properties
        .values()
        .find_map(|p| match p {
            ReferenceOr::Item(s) => match &s.schema_kind {
                SchemaKind::Type(Type::Array(a)) => a.items.as_ref().and_then(|i| match i {
                    ReferenceOr::Reference { reference } => reference
                        .strip_prefix("#/components/schemas/")
                        .map(str::to_string),
                    ReferenceOr::Item(_) => None,
                }),
                _ => None,
            },
            ReferenceOr::Reference { .. } => None,
        })
        .unwrap_or_else(|| at("the body has no list of orders"));
    let variants: Vec<String> = match schemas
        .get(&item)
        .and_then(ReferenceOr::as_item)
        .map(|s| &s.schema_kind)
    {
        Some(SchemaKind::OneOf { one_of }) => one_of.iter().filter_map(spec::ref_name).collect(),
        _ => vec![item.clone()],
    };
    let mut fields: Vec<(String, char)> = Vec::new();
    for variant in &variants {
        let object =
            object(variant).unwrap_or_else(|| at(&format!("`{variant}` is not an object")));
        for (name, property) in &object.properties {
            if fields.iter().any(|(n, _)| n == name) {
                continue;
            }
            let property = match property {
                ReferenceOr::Item(b) => ReferenceOr::Item((**b).clone()),
                ReferenceOr::Reference { reference } => ReferenceOr::ref_(reference),
            };
            let code = match kind(&spec, &property) {
                Some((Kind::Str | Kind::Enum(_), _)) => 's',
                Some((Kind::Int { .. } | Kind::IntEnum(_), _)) => 'i',
                Some((Kind::Number, _)) => 'n',
                Some((Kind::Bool, _)) => 'b',
                None => 'j',
            };
            fields.push((name.clone(), code));
        }
    }
    format!(
        "/// The fields of one order of a bulk file (`{item}`), with how a CSV cell is read:\n\
         /// `s` text, `i` integer, `n` number, `b` boolean, `j` JSON.\n\
         pub static BULK_FIELDS: &[(&str, char)] = &{fields:?};\n\n"
    )
}
