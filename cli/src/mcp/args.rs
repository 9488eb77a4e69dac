//! A tool call's arguments as the command's input: each parameter checked against the
//! kind the spec gives it, the body handed to the SDK's own checks (which name the field
//! at fault), the whole bounded in size. A secret parameter (`appKey`) is never an
//! argument: it comes from the configuration, as for the command line.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::catalogue::ToolDef;
use crate::{
    config::{Context, param_var},
    input::Input,
    ops::{CliOp, Kind, Location},
    terminal::escape,
};

/// The most a call's arguments may hold, as JSON.
pub const MAX_ARGUMENTS_BYTES: usize = 1024 * 1024;
/// The most one parameter's text may hold (the body is bounded by the whole).
pub const MAX_PARAM_BYTES: usize = 4096;

/// An argument at fault, and the rule it breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The argument (`pageSize`, `body`, `body.orderList[0].sequence`).
    pub field: String,
    /// What is wrong with it.
    pub rule: String,
}

impl Invalid {
    /// `field` (escaped: it may come from outside) breaks `rule`.
    pub fn new(field: &str, rule: impl Into<String>) -> Self {
        Invalid {
            field: escape(field).into_owned(),
            rule: rule.into(),
        }
    }

    /// One line: the field, the rule, and that nothing was sent.
    pub fn message(&self) -> String {
        format!(
            "invalid argument `{}`: {}; nothing was sent",
            self.field, self.rule
        )
    }
}

/// The input of `tool`, which calls the command `op`, from `args`, or the first argument
/// at fault.
pub fn read(
    tool: &ToolDef,
    op: &CliOp,
    args: &Map<String, Value>,
    ctx: &Context,
) -> Result<Input, Invalid> {
    let size = |v: &Value| serde_json::to_string(v).map_or(usize::MAX, |t| t.len());
    let total: usize = args.iter().map(|(k, v)| k.len() + size(v)).sum();
    if total > MAX_ARGUMENTS_BYTES {
        let (largest, _) = args
            .iter()
            .max_by_key(|(_, v)| size(v))
            .expect("over the limit, so not empty");
        return Err(Invalid::new(
            largest,
            format!(
                "the arguments are {total} bytes of JSON, more than the {MAX_ARGUMENTS_BYTES} \
                 allowed; this is the largest"
            ),
        ));
    }
    for key in args.keys() {
        let known =
            (key == "body" && op.body.is_some()) || tool.params.iter().any(|p| &p.name == key);
        if !known {
            let mut names: Vec<&str> = tool.params.iter().map(|p| p.name.as_str()).collect();
            if op.body.is_some() {
                names.push("body");
            }
            return Err(Invalid::new(
                key,
                format!(
                    "is not an argument of {}, which takes {}",
                    tool.name,
                    names.join(", ")
                ),
            ));
        }
    }
    let mut params = HashMap::new();
    for flag in op.flags().filter(|f| f.location != Location::Body) {
        if let Some(var) = param_var(flag.wire) {
            if let Some(value) = ctx.var(var) {
                params.insert(flag.wire, value);
            } else if flag.required {
                // Named by its variable alone: a secret is configured, never an argument.
                return Err(Invalid::new(
                    flag.wire,
                    format!(
                        "comes from {var} (or the profile's {}), which is not set; it is never \
                         an argument",
                        var.trim_start_matches("LICENSING_").to_ascii_lowercase()
                    ),
                ));
            }
            continue;
        }
        match args.get(flag.wire) {
            Some(value) => {
                let text = text(flag.wire, flag.kind, value)?;
                if flag.location == Location::Path {
                    segment(flag.wire, &text)?;
                }
                if let Some((_, max)) = tool.page_size.as_ref().filter(|(n, _)| n == flag.wire)
                    && value.as_i64().is_some_and(|n| n > *max)
                {
                    return Err(Invalid::new(
                        flag.wire,
                        format!("must be at most {max} (the server's --max-page-size)"),
                    ));
                }
                params.insert(flag.wire, text);
            }
            None if flag.required => return Err(Invalid::new(flag.wire, "is required")),
            None => {}
        }
    }
    let body = match &op.body {
        Some(body) => match args.get("body") {
            Some(value @ Value::Object(_)) => Some(value.clone()),
            Some(other) => {
                return Err(Invalid::new(
                    "body",
                    format!("must be a `{}` object, not {}", body.schema, kind_of(other)),
                ));
            }
            None => {
                return Err(Invalid::new(
                    "body",
                    format!("is required: a `{}` object", body.schema),
                ));
            }
        },
        None => None,
    };
    Ok(Input::from_parts(params, body))
}

/// A parameter's value as the text the command line would have given, checked against
/// its kind.
fn text(name: &str, kind: Kind, value: &Value) -> Result<String, Invalid> {
    let wrong = |want: &str| Invalid::new(name, format!("must be {want}, not {}", kind_of(value)));
    let text = match (kind, value) {
        (Kind::Str, Value::String(s)) => s.clone(),
        (Kind::Str, _) => return Err(wrong("a string")),
        (Kind::Enum(values), Value::String(s)) if values.contains(&s.as_str()) => s.clone(),
        (Kind::Enum(values), _) => return Err(wrong(&format!("one of {}", values.join(", ")))),
        (Kind::Bool, Value::Bool(b)) => b.to_string(),
        (Kind::Bool, _) => return Err(wrong("true or false")),
        (Kind::Number, Value::Number(n)) => n.to_string(),
        (Kind::Number, _) => return Err(wrong("a number")),
        (Kind::Int { min, max }, Value::Number(n)) => {
            let n = n.as_i64().ok_or_else(|| wrong("a whole number"))?;
            if let Some(min) = min.filter(|m| n < *m) {
                return Err(Invalid::new(
                    name,
                    format!("must be at least {min}, not {n}"),
                ));
            }
            if let Some(max) = max.filter(|m| n > *m) {
                return Err(Invalid::new(
                    name,
                    format!("must be at most {max}, not {n}"),
                ));
            }
            n.to_string()
        }
        (Kind::Int { .. }, _) => return Err(wrong("a whole number")),
        (Kind::IntEnum(values), Value::Number(n))
            if n.as_i64().is_some_and(|n| values.contains(&n)) =>
        {
            n.to_string()
        }
        (Kind::IntEnum(values), _) => {
            let values: Vec<String> = values.iter().map(i64::to_string).collect();
            return Err(wrong(&format!("one of {}", values.join(", "))));
        }
    };
    if text.len() > MAX_PARAM_BYTES {
        return Err(Invalid::new(
            name,
            format!(
                "is {} bytes, more than the {MAX_PARAM_BYTES} allowed",
                text.len()
            ),
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(Invalid::new(name, "must not hold control characters"));
    }
    Ok(text)
}

/// A path parameter names one record: a value that would reach another path (`/`,
/// `\\`, `.` or `..`) is refused rather than sent encoded.
fn segment(name: &str, text: &str) -> Result<(), Invalid> {
    if text.contains(['/', '\\']) || text == "." || text == ".." || text.is_empty() {
        return Err(Invalid::new(
            name,
            "is one segment of a path: it must not be empty, `.` or `..`, nor hold `/` or `\\`",
        ));
    }
    Ok(())
}

/// What a JSON value is, for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_of_the_wrong_kind_names_the_argument_and_the_kind() {
        let int = Kind::Int {
            min: Some(1),
            max: Some(100),
        };
        assert_eq!(text("pageSize", int, &json!(7)).unwrap(), "7");
        assert_eq!(
            text("pageSize", int, &json!("7")).unwrap_err().message(),
            "invalid argument `pageSize`: must be a whole number, not a string; nothing was sent"
        );
        assert_eq!(
            text("pageSize", int, &json!(101)).unwrap_err().rule,
            "must be at most 100, not 101"
        );
        assert_eq!(
            text("channelCode", Kind::Str, &json!({"$ne": ""}))
                .unwrap_err()
                .rule,
            "must be a string, not an object"
        );
        assert_eq!(
            text("keyword", Kind::Str, &json!("a\r\nX-Injected: 1"))
                .unwrap_err()
                .rule,
            "must not hold control characters"
        );
        let long = "x".repeat(MAX_PARAM_BYTES + 1);
        assert!(
            text("keyword", Kind::Str, &json!(long))
                .unwrap_err()
                .rule
                .contains("bytes")
        );
        let kinds = Kind::Enum(&["Y", "N"]);
        assert_eq!(text("defaultCustomer", kinds, &json!("N")).unwrap(), "N");
        assert_eq!(
            text("defaultCustomer", kinds, &json!("Z"))
                .unwrap_err()
                .rule,
            "must be one of Y, N, not a string"
        );
    }

    #[test]
    fn a_field_from_outside_is_escaped_in_the_message() {
        let invalid = Invalid::new("a\u{1b}[2J", "is not an argument");
        assert!(!invalid.message().contains('\u{1b}'));
    }
}
