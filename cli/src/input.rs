//! A service command's input: its parameters and its body, read from the flags and
//! `--json-body`, and checked against the SDK's generated types before anything is sent.

use std::{collections::HashMap, io::Read as _, num::NonZeroU32, num::NonZeroU64};

use clap::ArgMatches;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{
    config::{Context, missing_param, param_var},
    error::CliError,
    ops::{CliOp, Kind, Location, Paged},
};

/// The parameters and body of one call.
#[derive(Default)]
pub struct Input {
    params: HashMap<&'static str, String>,
    body: Option<Value>,
    /// `--paginate`: every page, one item per line.
    pub paginate: bool,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let params: std::collections::BTreeMap<_, _> = self
            .params
            .iter()
            .map(|(k, v)| {
                let shown = if param_var(k).is_some() {
                    "(redacted)"
                } else {
                    v.as_str()
                };
                (*k, shown)
            })
            .collect();
        f.debug_struct("Input")
            .field("params", &params)
            .field("body", &self.body)
            .field("paginate", &self.paginate)
            .finish()
    }
}

impl Input {
    /// Reads the command's flags and `--json-body`; a secret parameter the flags do not
    /// give comes from its variable or the profile, through `ctx`.
    pub fn from_matches(op: &CliOp, matches: &ArgMatches, ctx: &Context) -> Result<Self, CliError> {
        let mut input = Input {
            paginate: op.paged.is_some() && matches.get_flag("paginate"),
            ..Input::default()
        };
        let mut fields = Map::new();
        for flag in op.flags() {
            if let Some(var) = param_var(flag.wire).filter(|_| flag.location != Location::Body) {
                let given = matches.get_one::<String>(flag.flag).map(String::as_str);
                if given == Some("-")
                    && op.body.is_some()
                    && matches.get_one::<String>("json-body").map(String::as_str) == Some("-")
                {
                    return Err(CliError::usage(format!(
                        "--{} - and --json-body - cannot both read stdin",
                        flag.flag
                    )));
                }
                match ctx.secret_param(flag.wire, flag.flag, given)? {
                    Some(value) => {
                        input.params.insert(flag.wire, value);
                    }
                    None if flag.required => return Err(missing_param(flag.wire, flag.flag, var)),
                    None => {}
                }
                continue;
            }
            let value = match flag.kind {
                Kind::Int { .. } => matches.get_one::<i64>(flag.flag).map(|v| Value::from(*v)),
                Kind::Number => matches.get_one::<f64>(flag.flag).map(|v| Value::from(*v)),
                Kind::Bool => matches.get_one::<bool>(flag.flag).map(|v| Value::from(*v)),
                Kind::IntEnum(_) => matches
                    .get_one::<String>(flag.flag)
                    .map(|v| Value::from(v.parse::<i64>().expect("checked by clap"))),
                Kind::Str | Kind::Enum(_) => matches
                    .get_one::<String>(flag.flag)
                    .map(|v| Value::from(v.clone())),
            };
            let Some(value) = value else { continue };
            match flag.location {
                Location::Path | Location::Query => {
                    let text = match value {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    input.params.insert(flag.wire, text);
                }
                Location::Body => {
                    fields.insert(flag.wire.to_string(), value);
                }
            }
        }
        // The first page is the SDK's default (1); a required page size needs a value.
        let size = op
            .paged
            .as_ref()
            .filter(|_| input.paginate)
            .and_then(|paged| op.params.iter().find(|f| f.wire == paged.size));
        if let Some(size) = size.filter(|f| f.required) {
            input
                .params
                .entry(size.wire)
                .or_insert_with(|| Paged::default_size(size).to_string());
        }
        if let Some(body) = &op.body {
            let mut value = match matches.get_one::<String>("json-body") {
                Some(source) => read_json(source)?,
                None if fields.is_empty() && body.required && body.fields.is_empty() => {
                    return Err(CliError::usage(format!(
                        "{} needs a body: --json-body FILE (or - for stdin), a `{}` object",
                        op.name, body.schema
                    )));
                }
                None => Value::Object(Map::new()),
            };
            if !fields.is_empty() {
                let Value::Object(object) = &mut value else {
                    return Err(CliError::usage(
                        "--json-body must hold a JSON object to be combined with field flags",
                    ));
                };
                object.extend(fields);
            }
            input.body = Some(value);
        }
        Ok(input)
    }

    /// An input made elsewhere than from the flags (a tool call's arguments), already
    /// checked as [`Input::from_matches`] checks the flags.
    pub fn from_parts(params: HashMap<&'static str, String>, body: Option<Value>) -> Self {
        Input {
            params,
            body,
            paginate: false,
        }
    }

    /// The value of a path or query parameter, by its spec name.
    pub fn param(&self, wire: &str) -> Option<&str> {
        self.params.get(wire).map(String::as_str)
    }

    /// The body as the SDK's request type: the generated type's own rules (required
    /// fields, lengths, patterns, enumerations) are checked here, naming the field; the
    /// SDK checks the rest before sending.
    pub fn body<T: DeserializeOwned>(&self, op: &CliOp) -> Result<T, CliError> {
        let value = self.body.clone().unwrap_or(Value::Object(Map::new()));
        typed(value).map_err(|(field, rule)| {
            let schema = op.body.as_ref().map_or("body", |b| b.schema);
            let field = if field.is_empty() {
                schema.to_string()
            } else {
                field
            };
            CliError::invalid(&field, rule)
        })
    }
}

/// A JSON value as `T`, or the path of the field at fault and the rule it breaks.
pub fn typed<T: DeserializeOwned>(value: Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let message = e.into_inner().to_string();
        // "missing field `x`" names the field it is about: name it as a path.
        if let Some(name) = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            let field = if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            };
            return (field, "is required".to_string());
        }
        (path, message)
    })
}

/// The JSON of a file, or of stdin for `-`.
pub fn read_json(source: &str) -> Result<Value, CliError> {
    let text = read_source(source)?;
    serde_json::from_slice(&text)
        .map_err(|e| CliError::usage(format!("--json-body {source}: not valid JSON: {e}")))
}

/// The bytes of a file, or of stdin for `-`.
pub fn read_source(source: &str) -> Result<Vec<u8>, CliError> {
    if source == "-" {
        let mut text = Vec::new();
        std::io::stdin()
            .read_to_end(&mut text)
            .map_err(|e| CliError::usage(format!("cannot read stdin: {e}")))?;
        Ok(text)
    } else {
        std::fs::read(source).map_err(|e| CliError::usage(format!("cannot read {source}: {e}")))
    }
}

/// A parameter value from the command line, converted by the builder's setter into the
/// type the SDK generated for it (checked by clap before, so conversions succeed).
#[derive(Clone, Copy, Debug)]
pub struct Arg<'a>(&'a str);

impl<'a> Arg<'a> {
    /// The flag's text.
    pub fn new(value: &'a str) -> Self {
        Self(value)
    }

    /// The flag's text.
    pub fn value(&self) -> &'a str {
        self.0
    }
}

macro_rules! parsed {
    ($($t:ty),*) => {$(
        impl TryFrom<Arg<'_>> for $t {
            type Error = ();
            fn try_from(arg: Arg<'_>) -> Result<Self, ()> {
                arg.0.parse().map_err(|_| ())
            }
        }
    )*};
}

parsed!(
    String, i64, i32, u64, u32, f64, bool, NonZeroU32, NonZeroU64
);
