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

/// A JSON value as `T`; the error names the field by its path.
pub(crate) fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, AdminError> {
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
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| AdminError::field("limit", "must be a positive integer"))?;
                filter.limit = Some(n);
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
