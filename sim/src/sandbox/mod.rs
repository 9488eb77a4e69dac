//! The sandbox admin API (`spec/sandbox.yaml`) under `/__sandbox/v1`: the request journal,
//! scripted faults, seeds, state and clock. Its replies use the types generated from that
//! spec ([`crate::admin::types`]), as the services' replies use the SDK's.

pub(crate) mod journal;
pub(crate) mod rules;
pub(crate) mod seed;

use std::sync::Arc;

use axum::{
    Json, Router,
    body::Bytes,
    extract::{Path, Query, Request, State},
    http::{StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{
    Shared,
    admin::types::{self as a, FaultRuleSpec},
};

/// The reserved prefix: no path of the platform's services starts with it.
pub const PREFIX: &str = "/__sandbox/v1";

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

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let body = a::AdminError {
            field: self.field,
            message: self.message,
        };
        (self.status, Json(body)).into_response()
    }
}

type Reply<T> = Result<Json<T>, AdminError>;

/// A JSON body as `T`; the error names the field by its path.
pub(crate) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, AdminError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| AdminError::bad(format!("the body is not valid JSON: {e}")))?;
    from_value(value)
}

/// A JSON value as `T`; the error names the field by its path. `null` is refused where
/// the schema gives a type (only a body-field match's `equals` may be any JSON): the admin
/// API is the simulator's own and says exactly what it takes.
pub(crate) fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, AdminError> {
    if let Some(path) = null_at(&value, &mut String::new()) {
        return Err(AdminError::field(path, "must not be null"));
    }
    match serde_json::from_value::<T>(value.clone()) {
        Ok(t) => Ok(t),
        Err(e) => match &value {
            Value::Object(object) => match crate::http::locate::<T>(object, &e) {
                (Some(field), message) => Err(AdminError::field(field, message)),
                (None, message) => Err(AdminError::bad(message)),
            },
            _ => Err(AdminError::bad(format!(
                "the body must be a JSON object: {e}"
            ))),
        },
    }
}

fn null_at(value: &Value, path: &mut String) -> Option<String> {
    match value {
        Value::Null => Some(path.clone()),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if k == "equals" {
                return None;
            }
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k);
            let found = null_at(v, path);
            path.truncate(len);
            found
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let found = null_at(v, path);
            path.truncate(len);
            found
        }),
        _ => None,
    }
}

/// The admin routes, behind the admin token when one is configured.
pub(crate) fn router(shared: Arc<Shared>) -> Router<Arc<Shared>> {
    let at = |path: &str| format!("{PREFIX}{path}");
    Router::new()
        .route(&at("/journal"), get(list_journal).delete(clear_journal))
        .route(
            &at("/faults"),
            get(list_faults).post(create_fault).delete(clear_faults),
        )
        .route(&at("/faults/{id}"), get(get_fault).delete(delete_fault))
        .route(&at("/reset"), axum::routing::post(reset))
        .route(&at("/state"), get(export_state).put(import_state))
        .route(&at("/clock"), get(get_clock).put(set_clock))
        .route(&at("/clock/advance"), axum::routing::post(advance_clock))
        .route(&at("/seed"), axum::routing::post(load_seed))
        .route(&at("/seeds/{name}"), get(get_builtin).post(load_builtin))
        .route_layer(middleware::from_fn_with_state(shared, authorize))
}

/// `Authorization: Bearer <admin token>` when the simulator has one.
async fn authorize(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    if let Some(token) = &shared.config.admin_token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim());
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())) {
            return AdminError {
                status: StatusCode::UNAUTHORIZED,
                field: None,
                message: "the admin API needs `Authorization: Bearer <admin token>`".into(),
            }
            .into_response();
        }
    }
    next.run(req).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn list_journal(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<Vec<(String, String)>>,
) -> Reply<a::JournalPage> {
    let mut filter = journal::Filter::default();
    for (name, value) in query {
        let int = |v: &str| {
            v.parse::<i64>()
                .map_err(|_| AdminError::field(name.clone(), "must be an integer"))
        };
        match name.as_str() {
            "operation" => filter.operation = Some(value),
            "code" => filter.code = Some(value),
            "since" => filter.since = Some(int(&value)?),
            "until" => filter.until = Some(int(&value)?),
            "limit" => {
                let n = value
                    .parse::<i32>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| {
                        AdminError::field("limit", "must be a positive 32-bit integer")
                    })?;
                filter.limit = Some(n as usize);
            }
            _ => {}
        }
    }
    Ok(Json(shared.journal.read(&filter)))
}

async fn clear_journal(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.journal.clear();
    StatusCode::NO_CONTENT
}

async fn list_faults(State(shared): State<Arc<Shared>>) -> Json<Vec<a::FaultRule>> {
    Json(shared.rules.list())
}

async fn create_fault(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match parse::<FaultRuleSpec>(&body).and_then(|spec| shared.rules.add(spec)) {
        Ok(rule) => (StatusCode::CREATED, Json(rule)).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn clear_faults(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.rules.clear();
    StatusCode::NO_CONTENT
}

fn rule_id(id: &str) -> Result<i64, AdminError> {
    id.parse()
        .map_err(|_| AdminError::field("id", "must be an integer"))
}

async fn get_fault(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Reply<a::FaultRule> {
    let id = rule_id(&id)?;
    shared
        .rules
        .get(id)
        .map(Json)
        .ok_or_else(|| AdminError::not_found(format!("no fault rule {id}")))
}

async fn delete_fault(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<StatusCode, AdminError> {
    let id = rule_id(&id)?;
    if shared.rules.delete(id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(AdminError::not_found(format!("no fault rule {id}")))
    }
}

async fn load_seed(State(shared): State<Arc<Shared>>, body: Bytes) -> Reply<a::SeedResult> {
    let seed: a::Seed = parse(&body)?;
    seed::load(&shared, &seed).map(Json)
}

fn builtin(name: &str) -> Result<a::Seed, AdminError> {
    seed::builtin(name).ok_or_else(|| {
        AdminError::not_found(format!(
            "no built-in seed {name:?}; the built-in seeds: demo"
        ))
    })
}

async fn get_builtin(Path(name): Path<String>) -> Reply<a::Seed> {
    builtin(&name).map(Json)
}

async fn load_builtin(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
) -> Reply<a::SeedResult> {
    let seed = builtin(&name)?;
    seed::load(&shared, &seed).map(Json)
}

fn io_failure(e: std::io::Error) -> AdminError {
    AdminError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        field: None,
        message: format!("the state could not be made durable: {e}"),
    }
}

async fn reset(State(shared): State<Arc<Shared>>, body: Bytes) -> Reply<a::ResetResult> {
    let request: a::ResetRequest = if body.iter().all(u8::is_ascii_whitespace) {
        a::ResetRequest {
            enterprise_global_id: None,
        }
    } else {
        parse(&body)?
    };
    match request.enterprise_global_id {
        None => {
            shared.reset().map_err(io_failure)?;
            Ok(Json(a::ResetResult {
                scope: a::ResetResultScope::All,
                enterprise_global_id: None,
            }))
        }
        Some(id) => {
            if shared.reset_enterprise(&id).map_err(io_failure)? {
                Ok(Json(a::ResetResult {
                    scope: a::ResetResultScope::Enterprise,
                    enterprise_global_id: Some(id),
                }))
            } else {
                Err(AdminError::not_found(format!("no enterprise {id:?}")))
            }
        }
    }
}

async fn export_state(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(shared.export_state())
}

async fn import_state(State(shared): State<Arc<Shared>>, body: Bytes) -> Reply<a::ImportResult> {
    let doc: Value = serde_json::from_slice(&body)
        .map_err(|e| AdminError::bad(format!("the body is not valid JSON: {e}")))?;
    match shared.import_state(doc) {
        Ok(()) => {
            let state = shared.state();
            let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
            Ok(Json(a::ImportResult {
                enterprises: count(state.enterprises.len()),
                assets: count(state.assets.len()),
                members: count(state.members.len()),
            }))
        }
        Err(crate::ImportError::Invalid { path, message }) if path.is_empty() => {
            Err(AdminError::bad(message))
        }
        Err(crate::ImportError::Invalid { path, message }) => Err(AdminError::field(path, message)),
        Err(crate::ImportError::Io(e)) => Err(io_failure(e)),
    }
}

fn clock(shared: &Shared) -> Json<a::Clock> {
    Json(a::Clock {
        now: shared.clock.now_ms(),
        frozen: shared.clock.is_frozen(),
    })
}

async fn get_clock(State(shared): State<Arc<Shared>>) -> Json<a::Clock> {
    clock(&shared)
}

async fn set_clock(State(shared): State<Arc<Shared>>, body: Bytes) -> Reply<a::Clock> {
    let setting: a::ClockSetting = parse(&body)?;
    if setting.now < 0 {
        return Err(AdminError::field("now", "must not be negative"));
    }
    if setting.frozen.unwrap_or(true) {
        shared.clock.freeze();
    } else {
        shared.clock.unfreeze();
    }
    shared.clock.set(setting.now);
    Ok(clock(&shared))
}

async fn advance_clock(State(shared): State<Arc<Shared>>, body: Bytes) -> Reply<a::Clock> {
    let advance: a::ClockAdvance = parse(&body)?;
    if advance.ms < 0 {
        return Err(AdminError::field("ms", "must not be negative"));
    }
    shared.clock.advance(advance.ms);
    Ok(clock(&shared))
}
