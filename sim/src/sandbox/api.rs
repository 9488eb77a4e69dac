//! The admin API's routes (`spec/sandbox.yaml`): journal, fault rules, seeds, reset,
//! state export and import, clock.

use std::{collections::HashMap, sync::Arc};

use axum::{
    body::Bytes,
    http::{Method, StatusCode},
    response::Response,
};
use licensing_host::pages::{AdminRequest, AdminRoute};

use super::{AdminError, Sandbox, a, journal, json, parse, seed};
use crate::{
    ops::Query,
    state::{clock::Setting, document::ImportError},
};

/// The reserved prefix: no path of the platform's services starts with it (the server
/// layer's, where the admin checks guard it).
pub use licensing_host::ADMIN_PREFIX as PREFIX;

/// An admin handler: what it answers, or why it refused.
type Handler = fn(&Sandbox, AdminRequest) -> Result<Response, AdminError>;

/// Every admin route, each bound to `sandbox`.
pub(super) fn routes(sandbox: &Arc<Sandbox>) -> Vec<AdminRoute> {
    let table: [(Method, &str, Handler); 16] = [
        (Method::GET, "/journal", list_journal),
        (Method::DELETE, "/journal", clear_journal),
        (Method::GET, "/faults", list_faults),
        (Method::POST, "/faults", create_fault),
        (Method::DELETE, "/faults", clear_faults),
        (Method::GET, "/faults/{id}", get_fault),
        (Method::DELETE, "/faults/{id}", delete_fault),
        (Method::POST, "/reset", reset),
        (Method::GET, "/state", export_state),
        (Method::PUT, "/state", import_state),
        (Method::GET, "/clock", get_clock),
        (Method::PUT, "/clock", set_clock),
        (Method::POST, "/clock/advance", advance_clock),
        (Method::POST, "/seed", load_seed),
        (Method::GET, "/seeds/{name}", get_builtin),
        (Method::POST, "/seeds/{name}", load_builtin),
    ];
    table
        .into_iter()
        .map(|(method, path, handler)| {
            let sandbox = Arc::clone(sandbox);
            AdminRoute {
                path: format!("{PREFIX}{path}"),
                method,
                handler: Arc::new(move |req| {
                    let response = handler(&sandbox, req).unwrap_or_else(AdminError::into_response);
                    Box::pin(async move { response })
                }),
            }
        })
        .collect()
}

fn ok(value: &impl serde::Serialize) -> Result<Response, AdminError> {
    Ok(json(StatusCode::OK, value))
}

/// A JSON text already written, as a `200` reply.
fn json_text(text: Vec<u8>) -> Response {
    let mut response = Response::new(axum::body::Body::from(text));
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

fn no_content() -> Result<Response, AdminError> {
    let mut response = Response::new(axum::body::Body::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}

/// The request's body, or why the server could not read it.
fn body(req: &AdminRequest) -> Result<&Bytes, AdminError> {
    req.body.as_ref().map_err(|e| AdminError::bad(e.clone()))
}

fn param<'r>(params: &'r HashMap<String, String>, name: &str) -> &'r str {
    params.get(name).map_or("", String::as_str)
}

fn list_journal(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let mut filter = journal::Filter::default();
    let query = Query::parse(req.parts.uri.query());
    for (name, value) in query.pairs() {
        let int = |v: &str| {
            v.parse::<i64>()
                .map_err(|_| AdminError::field(name, "must be an integer"))
        };
        match name {
            "operation" => filter.operation = Some(value.to_string()),
            "code" => filter.code = Some(value.to_string()),
            "since" => filter.since = Some(int(value)?),
            "until" => filter.until = Some(int(value)?),
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
    ok(&s.journal.listing(&filter))
}

fn clear_journal(s: &Sandbox, _: AdminRequest) -> Result<Response, AdminError> {
    s.journal.clear();
    no_content()
}

fn list_faults(s: &Sandbox, _: AdminRequest) -> Result<Response, AdminError> {
    ok(&s.rules.list())
}

fn create_fault(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let spec: a::FaultRuleSpec = parse(body(&req)?)?;
    let rule = s.rules.add(spec)?;
    Ok(json(StatusCode::CREATED, &rule))
}

fn clear_faults(s: &Sandbox, _: AdminRequest) -> Result<Response, AdminError> {
    s.rules.clear();
    no_content()
}

fn rule_id(params: &HashMap<String, String>) -> Result<i64, AdminError> {
    param(params, "id")
        .parse()
        .map_err(|_| AdminError::field("id", "must be an integer"))
}

fn get_fault(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let id = rule_id(&req.params)?;
    let rule = s
        .rules
        .get(id)
        .ok_or_else(|| AdminError::not_found(format!("no fault rule {id}")))?;
    ok(&rule)
}

fn delete_fault(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let id = rule_id(&req.params)?;
    if s.rules.delete(id) {
        no_content()
    } else {
        Err(AdminError::not_found(format!("no fault rule {id}")))
    }
}

fn load_seed(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let body = body(&req)?;
    s.limits.seed_bytes(body.len())?;
    let seed: a::Seed = parse(body)?;
    // The body's text is not held while its records are made.
    drop(req);
    Ok(json_text(seed::load_as_json(&s.db, seed, &s.limits)?))
}

fn builtin(name: &str) -> Result<a::Seed, AdminError> {
    seed::builtin(name).ok_or_else(|| {
        AdminError::not_found(format!(
            "no built-in seed {name:?}; the built-in seeds: demo"
        ))
    })
}

fn get_builtin(_: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    ok(&builtin(param(&req.params, "name"))?)
}

fn load_builtin(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let seed = builtin(param(&req.params, "name"))?;
    Ok(json_text(seed::load_as_json(&s.db, seed, &s.limits)?))
}

fn io_failure(e: std::io::Error) -> AdminError {
    AdminError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        field: None,
        message: format!("the state could not be made durable: {e}"),
    }
}

fn reset(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let body = body(&req)?;
    let request: a::ResetRequest = if body.iter().all(u8::is_ascii_whitespace) {
        a::ResetRequest {
            enterprise_global_id: None,
        }
    } else {
        parse(body)?
    };
    match request.enterprise_global_id {
        None => {
            s.db.reset().map_err(io_failure)?;
            ok(&a::ResetResult {
                scope: a::ResetResultScope::All,
                enterprise_global_id: None,
            })
        }
        Some(id) => {
            if s.db.reset_enterprise(&id).map_err(io_failure)? {
                ok(&a::ResetResult {
                    scope: a::ResetResultScope::Enterprise,
                    enterprise_global_id: Some(id),
                })
            } else {
                Err(AdminError::not_found(format!("no enterprise {id:?}")))
            }
        }
    }
}

fn export_state(s: &Sandbox, _: AdminRequest) -> Result<Response, AdminError> {
    ok(&s.db.export_state())
}

fn import_state(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let body = body(&req)?;
    s.limits.import_bytes(body.len())?;
    match s.db.import_bytes(body) {
        Ok(()) => {
            let (enterprises, assets, members) = s.db.counts();
            let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
            ok(&a::ImportResult {
                enterprises: count(enterprises),
                assets: count(assets),
                members: count(members),
            })
        }
        Err(ImportError::Invalid { path, message }) if path.is_empty() => {
            Err(AdminError::bad(message))
        }
        Err(ImportError::Invalid { path, message }) => Err(AdminError::field(path, message)),
        Err(ImportError::Io(e)) => Err(io_failure(e)),
    }
}

fn clock(s: &Sandbox) -> Result<Response, AdminError> {
    ok(&a::Clock {
        now: s.db.clock.now_ms(),
        frozen: s.db.clock.setting().is_frozen(),
    })
}

fn get_clock(s: &Sandbox, _: AdminRequest) -> Result<Response, AdminError> {
    clock(s)
}

fn set_clock(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let setting: a::ClockSetting = parse(body(&req)?)?;
    if setting.now < 0 {
        return Err(AdminError::field("now", "must not be negative"));
    }
    let frozen = setting.frozen.unwrap_or(true);
    s.db.change_clock(|current| {
        let mode = if frozen {
            current.freeze()
        } else {
            current.unfreeze()
        };
        mode.set(setting.now)
    })
    .map_err(io_failure)?;
    clock(s)
}

fn advance_clock(s: &Sandbox, req: AdminRequest) -> Result<Response, AdminError> {
    let advance: a::ClockAdvance = parse(body(&req)?)?;
    if advance.ms < 0 {
        return Err(AdminError::field("ms", "must not be negative"));
    }
    s.db.change_clock(|current: Setting| current.advance(advance.ms))
        .map_err(io_failure)?;
    clock(s)
}
