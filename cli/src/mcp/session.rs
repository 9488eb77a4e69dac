//! A tool call from its arguments to its answer, in two steps around the person's
//! confirmation, which the protocol module asks for: [`Server::plan`] checks everything
//! that needs no one (the tool is listed, its arguments, the enterprises, a repeat, the
//! session's budget) and says what to ask; [`Server::execute`] sends it through the
//! command's generated dispatch, which is the SDK's generated builder. Every call, sent or
//! not, is one line of the audit log.

use std::{collections::HashMap, sync::Mutex};

use serde_json::{Map, Value};

use super::{
    admin, args,
    audit::{Audit, Outcome, redacted},
    bulk,
    catalogue::{Catalogue, Platform, Target, ToolDef},
    har::{Har, Sent},
    policy::{Policy, Refusal},
    reply::{Capture, Reply},
};
use crate::{
    config::Context,
    error::exit,
    input::Input,
    output::{Format, Sink},
    terminal::escape,
};

/// Everything a server's sessions share.
pub struct Server {
    /// The tools.
    pub catalogue: Catalogue,
    /// What calls may do.
    pub policy: Policy,
    ctx: Context,
    audit: Audit,
    limits: Limits,
    har: Option<Har>,
    secrets: Vec<String>,
}

/// Where results go and how large they may be.
pub struct Limits {
    /// `--max-result-bytes`.
    pub max_result_bytes: usize,
    /// The folder of the bulk tool's orders and results files.
    pub orders_dir: std::path::PathBuf,
}

/// What a call sends.
enum Call {
    /// An operation, through the command's dispatch.
    Operation(Platform, Input),
    /// Orders, through `orders submit`.
    Orders(bulk::Orders),
    /// A request to the simulator's admin API.
    Admin(admin::Request),
}

/// What one client's session has done: its writes, and the answers of the writes a
/// repeat could apply twice, by their arguments.
#[derive(Default)]
pub struct Session {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    writes: u32,
    /// `None` while in flight, and when the answer was lost: it may have been applied.
    applied: HashMap<String, Option<Reply>>,
}

/// A call that may be sent, once its question (if any) is answered yes.
pub struct Plan<'a> {
    /// The tool.
    pub tool: &'a ToolDef,
    args: Map<String, Value>,
    input: Call,
    /// What to ask the person before sending, when the call needs confirming.
    pub question: Option<String>,
}

impl Plan<'_> {
    fn repeatable(&self) -> bool {
        self.tool.hints.read_only || self.tool.hints.idempotent
    }

    /// The key of a write a repeat could apply twice: the tool and its arguments.
    fn key(&self) -> String {
        format!("{} {}", self.tool.name, Value::Object(self.args.clone()))
    }
}

impl Server {
    /// A server of these tools and rules, calling the services configured in `ctx`.
    pub fn new(
        catalogue: Catalogue,
        policy: Policy,
        ctx: Context,
        audit: Audit,
        limits: Limits,
        har: Option<Har>,
        secrets: Vec<String>,
    ) -> Self {
        Server {
            catalogue,
            policy,
            ctx,
            audit,
            limits,
            har,
            secrets,
        }
    }

    /// The tools a client sees: the reads, and the writes `--allow-writes` allows.
    pub fn listed(&self) -> impl Iterator<Item = &ToolDef> {
        self.catalogue
            .tools
            .iter()
            .filter(|t| self.policy.allows(t))
    }

    /// What `args` to `name` would send, or the answer when nothing may be sent.
    pub fn plan<'a>(
        &'a self,
        session: &Session,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<Plan<'a>, Reply> {
        let Some(tool) = self.catalogue.find(name) else {
            let message = format!(
                "no tool named `{}` (tools/list lists them); nothing was sent",
                escape(name)
            );
            let name = escape(name);
            self.audit
                .record(&name, &args, &Outcome::Invalid("name".into()), None);
            return Err(Reply::refused(message, "field", Some("name")));
        };
        if !self.policy.allows(tool) {
            return Err(self.refuse_args(tool, &args, Refusal::NotAllowed));
        }
        let input = match &tool.target {
            Target::Operation(platform) => args::read(tool, platform.op, &args, &self.ctx)
                .map(|input| Call::Operation(*platform, input)),
            Target::Orders(_) => bulk::read(&args).map(Call::Orders),
            Target::Admin(op) => admin::read(tool, op, &args).map(Call::Admin),
        };
        let input = match input {
            Ok(input) => input,
            Err(invalid) => {
                self.audit.record(
                    &tool.name,
                    &args,
                    &Outcome::Invalid(invalid.field.clone()),
                    None,
                );
                let reply =
                    Reply::refused(invalid.message(), "field", Some(invalid.field.as_str()));
                return Err(reply.redact(&self.secrets));
            }
        };
        if let Err(refusal) = self.policy.enterprises(&args) {
            return Err(self.refuse_args(tool, &args, refusal));
        }
        let plan = Plan {
            tool,
            args,
            input,
            question: None,
        };
        if tool.hints.read_only {
            return Ok(plan);
        }
        let state = session.state.lock().expect("not poisoned");
        if !plan.repeatable()
            && let Some(earlier) = state.applied.get(&plan.key())
        {
            let Some(earlier) = earlier.clone() else {
                drop(state);
                return Err(self.refuse(plan, Refusal::OutcomeUnknown));
            };
            drop(state);
            self.audit
                .record(&tool.name, &plan.args, &Outcome::Repeated, None);
            return Err(earlier.with_note(
                "the same call was applied earlier in this session: this is its answer, and \
                 nothing was sent again",
            ));
        }
        if let Some(max) = self.policy.max_writes.filter(|max| state.writes >= *max) {
            drop(state);
            return Err(self.refuse(plan, Refusal::OverBudget(max)));
        }
        drop(state);
        let question = self.policy.confirm.then(|| {
            format!(
                "Send `{}`? {}. Arguments: {}",
                tool.name,
                tool.summary,
                escape(&redacted(&plan.args).to_string())
            )
        });
        Ok(Plan { question, ..plan })
    }

    /// The answer to a call refused for `refusal`, which the audit log records.
    pub fn refuse(&self, plan: Plan<'_>, refusal: Refusal) -> Reply {
        self.refuse_args(plan.tool, &plan.args, refusal)
    }

    fn refuse_args(&self, tool: &ToolDef, args: &Map<String, Value>, refusal: Refusal) -> Reply {
        let confirmed = matches!(refusal, Refusal::Declined | Refusal::Unanswered(_));
        self.audit.record(
            &tool.name,
            args,
            &Outcome::Refused(refusal.flag()),
            confirmed.then_some(false),
        );
        Reply::refused(refusal.message(&tool.name), "flag", refusal.flag()).redact(&self.secrets)
    }

    /// Sends the call (`confirmed`: whether a person said yes; `None` when no one was
    /// asked) and answers with what came back.
    pub async fn execute(
        &self,
        session: &Session,
        plan: Plan<'_>,
        confirmed: Option<bool>,
    ) -> Reply {
        let write = !plan.tool.hints.read_only;
        let key = (!plan.repeatable()).then(|| plan.key());
        if write {
            let mut state = session.state.lock().expect("not poisoned");
            if let Some(max) = self.policy.max_writes.filter(|max| state.writes >= *max) {
                drop(state);
                return self.refuse(plan, Refusal::OverBudget(max));
            }
            if let Some(key) = &key {
                // A repeat that arrived while the first was asked about.
                if state.applied.contains_key(key) {
                    drop(state);
                    return self.refuse(plan, Refusal::OutcomeUnknown);
                }
                state.applied.insert(key.clone(), None);
            }
            state.writes += 1;
        }
        let started = chrono::Utc::now();
        let (data, result) = self.send(&plan).await;
        // The SDK's own checks (the body against its type, the documented rules) refuse
        // before sending, as a usage error.
        let unsent = matches!(&result, Err(e) if e.code == exit::USAGE);
        let outcome = match &result {
            Ok(()) => Outcome::Ok,
            Err(_) if unsent => Outcome::Invalid("body".into()),
            Err(e) => Outcome::Failed(e.business.clone()),
        };
        // A reply lost on the way may have been applied; any other failure applied nothing
        // (but a partial success, which holds data).
        let unknown = matches!(&result, Err(e) if e.code == exit::TRANSPORT);
        let business = result.as_ref().err().and_then(|e| e.business.clone());
        let reply = Reply::of(data, result, self.limits.max_result_bytes).redact(&self.secrets);
        if let (Some(har), Call::Operation(platform, input), false) =
            (&self.har, &plan.input, unsent)
        {
            let sent = Sent {
                platform: *platform,
                input,
                body: plan.args.get("body"),
                data: reply.structured.get("data"),
                business: business.as_deref(),
                answered: !unknown,
                started,
            };
            har.record(&self.ctx, &sent);
        }
        if write || key.is_some() {
            let mut state = session.state.lock().expect("not poisoned");
            if write && unsent {
                state.writes = state.writes.saturating_sub(1);
            }
            if let Some(key) = key {
                Self::settle(&mut state, key, unknown, &reply);
            }
        }
        self.audit
            .record(&plan.tool.name, &plan.args, &outcome, confirmed);
        reply
    }

    /// Sends the call: the data it answered (or a partial success's), and how it ended.
    async fn send(&self, plan: &Plan<'_>) -> (Option<Value>, Result<(), crate::error::CliError>) {
        match &plan.input {
            Call::Operation(platform, input) => {
                let capture = Capture::default();
                let mut sink = Sink::to(Format::Json, Box::new(capture.clone()));
                let result = crate::ops::dispatch(&self.ctx, platform.op, input, &mut sink).await;
                (capture.json(), result)
            }
            Call::Admin(request) => match admin::send(&self.ctx, request).await {
                Ok(data) => (Some(data), Ok(())),
                Err(e) => (None, Err(e)),
            },
            Call::Orders(orders) => {
                match bulk::submit(&self.ctx, &self.limits.orders_dir, orders).await {
                    Ok(data) => (Some(data), Ok(())),
                    Err(e) => (None, Err(e)),
                }
            }
        }
    }

    /// What a repeat of the write `key` will be answered: its reply, or (`unknown`) that it
    /// may have been applied; a write that failed applied nothing and may be sent again.
    fn settle(state: &mut State, key: String, unknown: bool, reply: &Reply) {
        if unknown {
            state.applied.insert(key, None);
        } else if reply.error && !reply.structured.contains_key("data") {
            state.applied.remove(&key);
        } else {
            state.applied.insert(key, Some(reply.clone()));
        }
    }
}
