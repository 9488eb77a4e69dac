//! The sandbox: what the simulator adds to the services for tests — the request journal,
//! fault injection (random faults and scripted fault rules), seeds, the clock, and the
//! admin API (`spec/sandbox.yaml`) under `/__sandbox/v1` that drives them. It plugs into
//! the protocol layer through its hooks ([`Hooks`]) and admin routes; its replies use the
//! types generated from that spec ([`client::types`]), as the services' replies use the
//! SDK's.

mod api;
/// The admin API's client and types, from their own package (`licensing-sandbox-client`).
pub use licensing_sandbox_client as client;
mod body;
pub(crate) mod clock;
pub(crate) mod faults;
pub(crate) mod journal;
pub(crate) mod rules;
pub(crate) mod seed;

use std::{sync::Arc, time::Duration};

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::Response,
};
use licensing_host::pages::AdminRoute;
use licensing_sdk::{ErrorCode, operations::Operation};
use serde::Serialize;
use serde_json::Value;

use crate::{
    ops::{Call, Db},
    protocol::hooks::{Effect, Exchange, Hooks, Intercept},
};
pub use api::PREFIX;
pub(crate) use body::parse;
use client::types::{self as a, FaultKind};
use faults::Faults;
use journal::Journal;
use rules::{Rules, Subject};

/// The largest seed document, in bytes, unless configured otherwise.
pub const DEFAULT_MAX_SEED_BYTES: usize = 4 * 1024 * 1024;
/// The most records (enterprises, customers, assets and employees together) one seed may
/// create, unless configured otherwise.
pub const DEFAULT_MAX_SEED_RECORDS: usize = 10_000;
/// The largest state document an import may send, in bytes, unless configured otherwise.
pub const DEFAULT_MAX_IMPORT_BYTES: usize = 128 * 1024 * 1024;

/// Bounds checked before a seed or an import is parsed into state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub max_seed_bytes: usize,
    pub max_seed_records: usize,
    pub max_import_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_seed_bytes: DEFAULT_MAX_SEED_BYTES,
            max_seed_records: DEFAULT_MAX_SEED_RECORDS,
            max_import_bytes: DEFAULT_MAX_IMPORT_BYTES,
        }
    }
}

impl Limits {
    /// A seed of `len` bytes, refused before it is read when it is larger than allowed.
    pub fn seed_bytes(&self, len: usize) -> Result<(), AdminError> {
        if len > self.max_seed_bytes {
            return Err(AdminError::too_large(format!(
                "the seed has {len} bytes, more than the {} a seed may have (raise it with \
                 --max-seed-bytes or SimulatorBuilder::max_seed_bytes)",
                self.max_seed_bytes
            )));
        }
        Ok(())
    }

    /// A state document of `len` bytes, refused before it is read when larger than allowed.
    pub fn import_bytes(&self, len: usize) -> Result<(), AdminError> {
        if len > self.max_import_bytes {
            return Err(AdminError::too_large(format!(
                "the state document has {len} bytes, more than the {} an import may have \
                 (raise it with --max-import-bytes or SimulatorBuilder::max_import_bytes)",
                self.max_import_bytes
            )));
        }
        Ok(())
    }
}

/// The sandbox of one simulator.
#[derive(Debug)]
pub(crate) struct Sandbox {
    pub db: Arc<Db>,
    pub faults: Faults,
    pub journal: Journal,
    pub rules: Rules,
    pub limits: Limits,
}

impl Sandbox {
    /// The admin API's routes for the protocol layer's router.
    pub fn routes(self: &Arc<Self>) -> Vec<AdminRoute> {
        api::routes(self)
    }
}

impl Hooks for Sandbox {
    fn latency(&self) -> Duration {
        self.faults.get().latency
    }

    /// Random faults first, then the first scripted rule that matches.
    fn intercept(&self, op: &'static Operation, call: &Call) -> Option<Intercept> {
        let user_center = op.documents(ErrorCode::UserCenterException.as_str());
        if let Some(code) = Faults::roll(&self.faults.get(), user_center) {
            tracing::debug!(operation = op.id, %code, "injected fault");
            return Some(Intercept::Fail {
                rule: None,
                code,
                cause: "injected by the simulator's fault settings".to_string(),
            });
        }
        // Parsed only for a rule that looks into bodies: a large batch is costly to read twice.
        let json = call
            .raw_body()
            .ok()
            .filter(|_| self.rules.wants_body(op.id))
            .and_then(|b| serde_json::from_slice::<Value>(b).ok());
        let enterprise = call
            .path_params()
            .get("enterpriseGlobalId")
            .map(String::as_str)
            .or_else(|| call.query("enterpriseGlobalId"));
        let (id, fault) = self.rules.fire(&Subject {
            operation: op.id,
            enterprise,
            body: json.as_ref(),
        })?;
        tracing::debug!(operation = op.id, rule = id, kind = %fault.kind, "fault rule fired");
        let ms = Duration::from_millis(fault.ms.unwrap_or(0).try_into().unwrap_or(0));
        let effect = |effect| Intercept::Effect { rule: id, effect };
        Some(match fault.kind {
            FaultKind::Code => Intercept::Fail {
                rule: Some(id),
                code: ErrorCode::from(fault.code.as_deref().unwrap_or("500")),
                cause: format!("injected by fault rule {id}"),
            },
            FaultKind::Status => Intercept::Status {
                rule: id,
                status: fault
                    .status
                    .and_then(|s| u16::try_from(s).ok())
                    .and_then(|s| StatusCode::from_u16(s).ok())
                    .unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            },
            FaultKind::Delay => Intercept::Delay { rule: id, wait: ms },
            FaultKind::SlowBody => effect(Effect::Slow(ms)),
            FaultKind::DropConnection => effect(Effect::Drop),
            FaultKind::TruncatedBody => effect(Effect::Truncate),
            FaultKind::MalformedBody => effect(Effect::Malformed),
            FaultKind::Patch => effect(Effect::Rewrite(rules::rewrite(id, &fault.patch))),
        })
    }

    fn records(&self) -> bool {
        self.journal.enabled()
    }

    fn record(&self, exchange: Exchange) {
        self.journal.push(exchange);
    }
}

/// A refused admin call: HTTP status and `AdminError`.
#[derive(Debug)]
pub(crate) struct AdminError {
    pub status: StatusCode,
    pub field: Option<String>,
    pub message: String,
}

impl AdminError {
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            field: Some(field.into()),
            message: message.into(),
        }
    }

    pub fn bad(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            field: None,
            message: message.into(),
        }
    }

    pub fn conflict(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::CONFLICT,
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// A body larger than the sandbox takes: refused before it is read (400, as every
    /// refused admin body; the message names the limit and how to raise it).
    pub fn too_large(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            field: None,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            field: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for AdminError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{field}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl AdminError {
    pub fn into_response(self) -> Response {
        let body = a::AdminError {
            field: self.field,
            message: self.message,
        };
        json(self.status, &body)
    }
}

/// `value` as a JSON reply.
pub(crate) fn json(status: StatusCode, value: &impl Serialize) -> Response {
    // In pieces: a large one (the journal, the state) is freed as it is sent.
    let body = crate::protocol::json_body(value).expect("admin replies serialise");
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
