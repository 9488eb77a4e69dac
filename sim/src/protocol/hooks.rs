//! What plugs into the gate: the sandbox (faults, the journal, the admin API) and
//! anything else that watches or steers calls. The gate defines these; it never names
//! what implements them. The admin API's routes are the server layer's
//! (`licensing_host::pages`).

use std::time::Duration;

use axum::{
    body::Bytes,
    http::{Method, StatusCode},
};
use licensing_sdk::{ErrorCode, operations::Operation};

use crate::ops::Call;

/// What a hook does to a call, decided after its credentials and `g_nonce` passed and
/// before the operation runs.
#[derive(Debug)]
pub(crate) enum Intercept {
    /// Answer this documented code instead of running the operation.
    Fail {
        rule: Option<i64>,
        code: ErrorCode,
        cause: String,
    },
    /// Answer a bare HTTP status, no envelope.
    Status { rule: i64, status: StatusCode },
    /// Wait, then run the operation.
    Delay { rule: i64, wait: Duration },
    /// Run the operation, then do this to its reply.
    Effect { rule: i64, effect: Effect },
}

/// What happens to a reply after the operation ran.
#[derive(Debug)]
pub(crate) enum Effect {
    /// The connection is closed with no reply.
    Drop,
    /// The body is sent in pieces over this long.
    Slow(Duration),
    /// The body stops half-way, the connection with it.
    Truncate,
    /// HTTP 200 with half the body: never a JSON document.
    Malformed,
    /// The body replaced by what this makes of it (before the exchange is recorded).
    Rewrite(Rewrite),
}

/// What makes a reply's new body: the new body, or `None` to leave it as it was.
pub(crate) type RewriteFn = Box<dyn FnOnce(&[u8]) -> Option<Vec<u8>> + Send>;

/// A change to a reply's body.
pub(crate) struct Rewrite(pub RewriteFn);

impl std::fmt::Debug for Rewrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rewrite")
    }
}

/// One request and its reply, as the gate saw them.
#[derive(Debug)]
pub(crate) struct Exchange {
    /// When it arrived (simulator clock, ms since the Unix epoch).
    pub time: i64,
    pub operation: &'static str,
    pub method: Method,
    /// The request's path and query, copied (holding hyper's `Uri` would keep its whole
    /// read buffer alive); credentials in the query are already replaced.
    pub target: Box<str>,
    pub request_body: Bytes,
    /// `None` when the connection was dropped on purpose (no reply was sent).
    pub reply: Option<(StatusCode, Bytes)>,
    /// The fault rule that fired, if one did.
    pub fault: Option<i64>,
    pub duration: Duration,
}

/// The gate's hooks into every call of an operation.
pub(crate) trait Hooks: Send + Sync + 'static {
    /// Latency to add before the call is looked at.
    fn latency(&self) -> Duration {
        Duration::ZERO
    }

    /// Whether the call runs as it is ([`None`]) or is steered.
    fn intercept(&self, _op: &'static Operation, _call: &Call) -> Option<Intercept> {
        None
    }

    /// Whether [`Hooks::record`] keeps anything: when it does not, the gate skips the
    /// copies an exchange needs.
    fn records(&self) -> bool {
        false
    }

    /// Called once per call with what was asked and answered.
    fn record(&self, _exchange: Exchange) {}
}
