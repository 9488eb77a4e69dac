//! The tools: one per operation of both services, named after its `operationId`,
//! described by the spec's summary and the codes the documents give for it, with the
//! schemas of [`super::schema`] and hints from its method and `x-idempotent`. Nothing here
//! is written per operation: an operation added to a spec is a tool.

use licensing_sdk::{
    ErrorCode,
    operations::{self, Method, Operation, Service},
};
use serde_json::{Map, Value};

use super::schema::{Param, Spec};
use crate::{
    config::param_var,
    ops::{CliOp, OPERATIONS},
};

/// What a tool's annotations tell a client. The server does not rely on them: what a
/// call may do is [`super::policy`]'s to decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    /// `GET`: the call changes nothing.
    pub read_only: bool,
    /// A write that may change or remove what exists: every `PUT` and `DELETE`, and a
    /// `POST` a repeat cannot apply twice (it updates rather than adds). A `POST` that
    /// is not idempotent adds (an order, an employee, asset numbers).
    pub destructive: bool,
    /// `x-idempotent`.
    pub idempotent: bool,
}

impl Hints {
    /// The hints of an operation, from its method and `x-idempotent`.
    pub fn of(operation: &Operation) -> Self {
        let read_only = operation.method == Method::Get;
        let adds = operation.method == Method::Post && !operation.idempotent;
        Hints {
            read_only,
            destructive: !read_only && !adds,
            idempotent: operation.idempotent,
        }
    }
}

/// What a tool calls.
#[derive(Debug)]
pub enum Target {
    /// An operation of the platform, through its command's generated dispatch.
    Operation(Platform),
    /// License orders through `orders submit` ([`super::bulk`]), made from `batchOrder`.
    Orders(Platform),
    /// An operation of the simulator's admin API ([`super::admin`]).
    Admin(AdminOp),
}

/// An admin operation: where its requests go.
#[derive(Debug)]
pub struct AdminOp {
    /// The HTTP method.
    pub method: reqwest::Method,
    /// The path template.
    pub path: String,
}

/// A platform operation's records.
#[derive(Clone, Copy, Debug)]
pub struct Platform {
    /// The command's record, which the call is dispatched through.
    pub op: &'static CliOp,
    /// The operation's facts.
    pub operation: &'static Operation,
}

/// One tool.
#[derive(Debug)]
pub struct ToolDef {
    /// The `operationId` (`sandbox_` before it for the simulator's admin API).
    pub name: String,
    /// The spec's summary.
    pub summary: String,
    /// The summary, what it may change, and the documented codes with their meanings.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input: Map<String, Value>,
    /// The JSON Schema of its structured result.
    pub output: Map<String, Value>,
    /// Its annotations.
    pub hints: Hints,
    /// The parameters the caller gives, by the spec's name (a secret one, such as
    /// `appKey`, comes from the configuration, never from the caller).
    pub params: Vec<Param>,
    /// A paged operation's page-size parameter and the largest page it may ask for.
    pub page_size: Option<(String, i64)>,
    /// What it calls.
    pub target: Target,
}

impl ToolDef {
    /// The platform operation it calls, if it calls one.
    pub fn platform(&self) -> Option<Platform> {
        match &self.target {
            Target::Operation(p) | Target::Orders(p) => Some(*p),
            Target::Admin(_) => None,
        }
    }
}

/// Every tool of both services.
#[derive(Debug)]
pub struct Catalogue {
    /// In the specs' order, the order service first.
    pub tools: Vec<ToolDef>,
}

/// The page size a tool may ask for when `--max-page-size` is not given.
pub const DEFAULT_MAX_PAGE_SIZE: i64 = 100;

impl Catalogue {
    /// The tools of the operations of the specs the SDK was generated from; a paged
    /// operation's page size is capped at `max_page_size`.
    pub fn from_specs(max_page_size: i64) -> Result<Self, String> {
        let mut tools = Vec::new();
        for service in [Service::Order, Service::Member] {
            let spec = Spec::load(service)?;
            for op in &spec.ops {
                let missing = |what: &str| format!("{}: no {what} for it", op.id);
                let cli = OPERATIONS
                    .iter()
                    .find(|c| c.id == op.id)
                    .ok_or_else(|| missing("command"))?;
                let operation = operations::find(&op.id).ok_or_else(|| missing("SDK operation"))?;
                let params: Vec<Param> = spec
                    .params(&op.id, &op.path, &op.method)?
                    .into_iter()
                    .filter(|p| p.name != "g_nonce" && param_var(&p.name).is_none())
                    .collect();
                let page_size = op
                    .pagination
                    .as_ref()
                    .map(|p| (p.size_param.as_str(), max_page_size));
                let hints = Hints::of(operation);
                tools.push(ToolDef {
                    name: operation.id.to_string(),
                    summary: cli.about.to_string(),
                    description: description(cli.about, operation, hints),
                    input: spec.input(&op.id, op.request.as_deref(), &params, page_size)?,
                    output: spec.output(Some(&op.data))?,
                    hints,
                    params,
                    page_size: page_size.map(|(name, max)| (name.to_string(), max)),
                    target: Target::Operation(Platform { op: cli, operation }),
                });
            }
        }
        Ok(Catalogue { tools })
    }

    /// The tool named `name`.
    pub fn find(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The names of the tools that write, for messages.
    pub fn writes(&self) -> impl Iterator<Item = &str> + '_ {
        self.tools
            .iter()
            .filter(|t| !t.hints.read_only)
            .map(|t| t.name.as_str())
    }
}

/// The summary, whether it writes, and each documented code with its meaning.
fn description(summary: &str, operation: &Operation, hints: Hints) -> String {
    let mut text = format!("{summary}.");
    if hints.read_only {
        text.push_str(" Reads only.");
    } else {
        text.push_str(
            " Changes the platform's state: callable only when the server allows it \
             (--allow-writes), after a person confirms it.",
        );
    }
    text.push_str("\n\nError codes the documents give for it:");
    for code in operation.error_codes {
        let meaning = ErrorCode::from(*code).description().unwrap_or("");
        text.push_str(&format!("\n- {code}: {}", one_line(meaning)));
    }
    text
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_a_tool_with_its_hints_and_codes() {
        let catalogue = Catalogue::from_specs(DEFAULT_MAX_PAGE_SIZE).unwrap();
        assert_eq!(catalogue.tools.len(), operations::ALL.len());
        for tool in &catalogue.tools {
            let Target::Operation(platform) = &tool.target else {
                continue;
            };
            let op = platform.operation;
            assert_eq!(
                tool.hints.read_only,
                op.method == Method::Get,
                "{}",
                tool.name
            );
            assert_eq!(tool.hints.idempotent, op.idempotent, "{}", tool.name);
            for code in op.error_codes {
                assert!(
                    tool.description.contains(&format!("- {code}: ")),
                    "{}: {code}",
                    tool.name
                );
            }
            assert_eq!(tool.input["type"], "object");
            assert_eq!(tool.output["type"], "object");
            let properties = tool.input["properties"].as_object().unwrap();
            assert!(!properties.contains_key("g_nonce") && !properties.contains_key("appKey"));
            assert_eq!(properties.contains_key("body"), op.request_type.is_some());
        }
        let order = catalogue.find("batchOrder").unwrap();
        assert!(!order.hints.destructive && !order.hints.read_only);
        let delete = catalogue.find("deleteMember").unwrap();
        assert!(delete.hints.destructive && delete.hints.idempotent);
        let members = catalogue.find("listMembers").unwrap();
        assert_eq!(
            members.input["properties"]["pageSize"]["maximum"],
            DEFAULT_MAX_PAGE_SIZE
        );
    }
}
