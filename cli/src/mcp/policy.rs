//! What a call may do, decided by the server whatever the client makes of the tools'
//! hints: reads always; a write only when `--allow-writes` names it (or says `all`),
//! within `--max-writes` per session, and after a person confirms it unless
//! `--no-confirm`; with `--enterprise`, only calls that name listed enterprises. A call
//! refused is a tool error that names the flag that would allow it, and nothing is sent.

use std::{collections::BTreeSet, time::Duration};

use serde_json::{Map, Value};

use super::catalogue::{Catalogue, ToolDef};
use crate::{error::CliError, terminal::escape};

/// The argument that names an enterprise, wherever it is (a parameter, a body field, a
/// field of each order of a batch).
pub const ENTERPRISE_FIELD: &str = "enterpriseGlobalId";

/// How long a person has to answer a confirmation when `--confirm-timeout` is not given.
pub const DEFAULT_CONFIRM_TIMEOUT: Duration = Duration::from_secs(120);

/// The writes a server allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allow {
    /// `--allow-writes all`.
    All,
    /// `--allow-writes OP,…` (empty without the flag: reads only).
    Only(BTreeSet<String>),
}

/// The server's rules, from its flags.
#[derive(Clone, Debug)]
pub struct Policy {
    /// `--allow-writes`.
    pub allow: Allow,
    /// Not `--no-confirm`: a person confirms each write.
    pub confirm: bool,
    /// `--max-writes`: writes sent per session.
    pub max_writes: Option<u32>,
    /// `--enterprise`: the enterprises a call may name, when given.
    pub enterprises: Option<BTreeSet<String>>,
    /// `--confirm-timeout`: how long a confirmation waits for its answer.
    pub confirm_timeout: Duration,
}

/// Why a call was not sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A write `--allow-writes` does not name.
    NotAllowed,
    /// A write to confirm, and a client that cannot ask.
    CannotAsk,
    /// The person declined (or cancelled).
    Declined,
    /// No answer within the confirmation's time.
    Unanswered(Duration),
    /// The session's writes are used up.
    OverBudget(u32),
    /// An enterprise `--enterprise` does not list.
    Enterprise(String),
    /// No enterprise named, under `--enterprise`.
    NoEnterprise,
    /// The same write was sent before in this session without an answer.
    OutcomeUnknown,
}

impl Refusal {
    /// The flag that allows what was refused (none allows resending a write whose
    /// answer was lost).
    pub fn flag(&self) -> Option<&'static str> {
        Some(match self {
            Refusal::NotAllowed => "--allow-writes",
            Refusal::CannotAsk | Refusal::Declined | Refusal::Unanswered(_) => "--no-confirm",
            Refusal::OverBudget(_) => "--max-writes",
            Refusal::Enterprise(_) | Refusal::NoEnterprise => "--enterprise",
            Refusal::OutcomeUnknown => return None,
        })
    }

    /// What happened and which flag allows it, for the assistant and the person.
    pub fn message(&self, tool: &str) -> String {
        let what = match self {
            Refusal::NotAllowed => format!(
                "`{tool}` changes the platform's state, and this server does not allow it: \
                 start the server with `--allow-writes {tool}` (or `--allow-writes all`)"
            ),
            Refusal::CannotAsk => format!(
                "`{tool}` needs a person's confirmation, and this client cannot ask for one (it \
                 declares no elicitation): a client that can ask, or a server started with \
                 `--no-confirm`, allows it"
            ),
            Refusal::Declined => format!(
                "the person did not confirm `{tool}`: a write is sent only once confirmed \
                 (`--no-confirm` sends the allowed writes unasked)"
            ),
            Refusal::Unanswered(wait) => format!(
                "no answer to the confirmation of `{tool}` within {}s: a write is sent only \
                 once confirmed (`--no-confirm` sends the allowed writes unasked)",
                wait.as_secs()
            ),
            Refusal::OverBudget(max) => format!(
                "this session has made its {max} write(s) (`--max-writes {max}`): a larger \
                 `--max-writes`, or a new session, allows more"
            ),
            Refusal::Enterprise(id) => format!(
                "enterprise `{}` is not one this server may reach: start it with `--enterprise \
                 {0}` among the others",
                escape(id)
            ),
            Refusal::NoEnterprise => format!(
                "`{tool}` names no enterprise (`{ENTERPRISE_FIELD}`), and `--enterprise` limits \
                 every call to the enterprises it lists: a call naming one, or a server started \
                 without `--enterprise`, allows it"
            ),
            Refusal::OutcomeUnknown => format!(
                "the same `{tool}` call was sent before in this session and its answer was lost: \
                 it may have been applied, so it is not sent again; check with a read tool"
            ),
        };
        format!("{what}; nothing was sent")
    }
}

impl Policy {
    /// The rules, checked against the tools: a name `--allow-writes` gives must be a
    /// write's.
    pub fn new(
        catalogue: &Catalogue,
        allow: Vec<String>,
        confirm: bool,
        max_writes: Option<u32>,
        enterprises: Vec<String>,
        confirm_timeout: Duration,
    ) -> Result<Self, CliError> {
        let allow = if allow.iter().any(|a| a == "all") {
            Allow::All
        } else {
            for name in &allow {
                if !catalogue.writes().any(|w| w == name) {
                    let writes: Vec<_> = catalogue.writes().collect();
                    return Err(CliError::usage(format!(
                        "--allow-writes: `{}` is not a write; the writes are {} (or `all`)",
                        escape(name),
                        writes.join(", ")
                    )));
                }
            }
            Allow::Only(allow.into_iter().collect())
        };
        for id in &enterprises {
            if id.trim().is_empty() || id.chars().any(char::is_control) {
                return Err(CliError::usage(format!(
                    "--enterprise: `{}` is not an enterprise id (EG-…)",
                    escape(id)
                )));
            }
        }
        Ok(Policy {
            allow,
            confirm,
            max_writes,
            enterprises: (!enterprises.is_empty()).then(|| enterprises.into_iter().collect()),
            confirm_timeout,
        })
    }

    /// Whether the tool is listed and may be called.
    pub fn allows(&self, tool: &ToolDef) -> bool {
        tool.hints.read_only
            || match &self.allow {
                Allow::All => true,
                Allow::Only(names) => names.contains(&tool.name),
            }
    }

    /// The first enterprise the arguments name that `--enterprise` does not list, or
    /// that they name none.
    pub fn enterprises(&self, args: &Map<String, Value>) -> Result<(), Refusal> {
        let Some(listed) = &self.enterprises else {
            return Ok(());
        };
        let mut named = Vec::new();
        enterprises_in(&Value::Object(args.clone()), &mut named);
        if named.is_empty() {
            return Err(Refusal::NoEnterprise);
        }
        match named.into_iter().find(|id| !listed.contains(id)) {
            Some(id) => Err(Refusal::Enterprise(id)),
            None => Ok(()),
        }
    }
}

/// Every value of an [`ENTERPRISE_FIELD`] inside `value`, at any depth.
fn enterprises_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                if key == ENTERPRISE_FIELD {
                    out.push(
                        child
                            .as_str()
                            .map_or_else(|| child.to_string(), str::to_string),
                    );
                } else {
                    enterprises_in(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| enterprises_in(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(enterprises: &[&str]) -> Policy {
        Policy {
            allow: Allow::Only(BTreeSet::new()),
            confirm: true,
            max_writes: None,
            enterprises: Some(enterprises.iter().map(|e| e.to_string()).collect()),
            confirm_timeout: DEFAULT_CONFIRM_TIMEOUT,
        }
    }

    #[test]
    fn every_enterprise_named_anywhere_must_be_listed() {
        let p = policy(&["EG-000001"]);
        let args = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            p.enterprises(&args(json!({"enterpriseGlobalId": "EG-000001"}))),
            Ok(())
        );
        let batch = json!({"body": {"orderList": [
            {"enterpriseGlobalId": "EG-000001"}, {"enterpriseGlobalId": "EG-000002"}
        ]}});
        assert_eq!(
            p.enterprises(&args(batch)),
            Err(Refusal::Enterprise("EG-000002".into()))
        );
        assert_eq!(
            p.enterprises(&args(json!({"lockNo": "1"}))),
            Err(Refusal::NoEnterprise)
        );
        // A number where an id goes is still compared, as its JSON.
        assert_eq!(
            p.enterprises(&args(json!({"enterpriseGlobalId": 7}))),
            Err(Refusal::Enterprise("7".into()))
        );
    }

    #[test]
    fn each_refusal_names_its_flag_and_says_nothing_was_sent() {
        for refusal in [
            Refusal::NotAllowed,
            Refusal::CannotAsk,
            Refusal::Declined,
            Refusal::Unanswered(Duration::from_secs(5)),
            Refusal::OverBudget(2),
            Refusal::Enterprise("EG-9".into()),
            Refusal::NoEnterprise,
        ] {
            let message = refusal.message("disableLocks");
            assert!(message.contains(refusal.flag().unwrap()), "{message}");
            assert!(message.ends_with("nothing was sent"), "{message}");
        }
    }
}
