//! The HTTP gate every request passes: one router for the operations of the generated
//! table and the admin routes plugged in through [`hooks`], then the checks every
//! operation shares (credentials, `Content-Type`, size, `g_nonce`), the operation, and
//! its reply in the documented envelope.

mod auth;
mod gate;
pub(crate) mod hooks;
mod nonce;
mod pieces;
mod reply;

use std::{collections::HashMap, future::Future, sync::Arc};

use axum::{
    body::Body,
    http::{Method, StatusCode, request::Parts},
    response::Response,
};
use licensing_host::{
    Handler,
    admin::{AdminAccess, Guard, admin_error},
    pages::{self, AdminRequest, AdminRoute, Pages, Unauthorized, bare},
    server::ReadBody,
};

pub(crate) use auth::Credentials;
pub(crate) use nonce::NonceWindow;
pub(crate) use pieces::json_body;
pub(crate) use reply::Answer;

use crate::ops::{self, Db, InvalidPath};
use hooks::Hooks;

/// The longest string one field of a request body may hold, in bytes, unless configured
/// otherwise. The documents give no lengths but a few names' (`30`, `200` characters).
pub const DEFAULT_MAX_STRING_BYTES: usize = 16 * 1024;

/// What the gate of every operation shares.
pub(crate) struct Gate {
    pub db: Arc<Db>,
    pub credentials: Credentials,
    pub admin: AdminAccess,
    pub nonces: std::sync::Mutex<NonceWindow>,
    /// The longest string a request body may carry in one field, in bytes.
    pub max_string_bytes: usize,
    pub hooks: Arc<dyn Hooks>,
}

/// Where a path and method lead.
#[derive(Clone)]
enum Target {
    Operation(ops::Entry),
    Admin(AdminRoute),
    /// An admin page: the admin checks `Guard` names.
    Page(AdminRoute, Guard),
}

/// Both services and the admin routes, on one router.
#[derive(Clone)]
pub(crate) struct App {
    gate: Arc<Gate>,
    paths: Arc<matchit::Router<Vec<(Method, Target)>>>,
    /// What every admin route's path starts with: the operations' requests, nearly all,
    /// are told from admin ones without a second lookup.
    admin_prefix: Arc<str>,
    /// The answer to a page request without the admin token.
    unauthorized: Option<Unauthorized>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").finish_non_exhaustive()
    }
}

/// An operation's method as the router matches it.
fn method(op: &licensing_sdk::operations::Operation) -> Method {
    use licensing_sdk::operations::Method as M;
    match op.method {
        M::Get => Method::GET,
        M::Post => Method::POST,
        M::Put => Method::PUT,
        M::Delete => Method::DELETE,
    }
}

impl App {
    /// The operations of the generated table and `admin`, behind `gate`. Panics, naming
    /// the path, on a path the router cannot take (one the spec checks would refuse).
    pub fn new(gate: Gate, admin: Vec<AdminRoute>, pages: Option<Pages>) -> Self {
        let page_routes = pages.as_ref().map_or(&[][..], |p| &p.routes[..]);
        let admin_prefix = common_prefix(
            admin
                .iter()
                .chain(page_routes.iter().map(|p| &p.route))
                .map(|r| r.path.as_str()),
        );
        let page_routes: Vec<_> = page_routes
            .iter()
            .map(|p| {
                (
                    p.route.path.clone(),
                    p.route.method.clone(),
                    Target::Page(p.route.clone(), p.guard),
                )
            })
            .collect();
        let operations = ops::table().into_iter().map(|entry| {
            (
                entry.op.path.to_string(),
                method(entry.op),
                Target::Operation(entry),
            )
        });
        let admin = admin.into_iter().map(|route| {
            (
                route.path.clone(),
                route.method.clone(),
                Target::Admin(route),
            )
        });
        let mut by_path: Vec<(String, Vec<(Method, Target)>)> = Vec::new();
        for (path, method, target) in operations.chain(admin).chain(page_routes) {
            match by_path.iter_mut().find(|(p, _)| *p == path) {
                Some((_, methods)) => methods.push((method, target)),
                None => by_path.push((path, vec![(method, target)])),
            }
        }
        let mut paths = matchit::Router::new();
        for (path, methods) in by_path {
            paths
                .insert(path.clone(), methods)
                .unwrap_or_else(|e| panic!("the path {path} cannot be routed: {e}"));
        }
        Self {
            gate: Arc::new(gate),
            paths: Arc::new(paths),
            admin_prefix: admin_prefix.into(),
            unauthorized: pages.map(|p| p.unauthorized),
        }
    }

    /// A request refused from its head alone, before its body is read: an admin request
    /// that the admin checks refuse ([`admin`]).
    pub fn refuse(&self, parts: &Parts) -> Option<Response> {
        self.refuse_at(parts, parts.uri.path())
    }

    /// As [`App::refuse`], for the request's path read as `path` (the part of it under a
    /// tenant's prefix).
    pub fn refuse_at(&self, parts: &Parts, path: &str) -> Option<Response> {
        if !path.starts_with(&*self.admin_prefix) {
            return None;
        }
        let found = self.paths.at(path).ok()?;
        // The checks of the route the method leads to; a method no route of the path
        // takes gets the admin API's checks before its 405.
        let target = found
            .value
            .iter()
            .find(|(m, _)| *m == parts.method)
            .or_else(|| found.value.first())
            .map(|(_, t)| t)?;
        match target {
            Target::Operation(_) => None,
            Target::Admin(_) => self.gate.admin.refusal(parts),
            Target::Page(_, guard) => match self.gate.admin.check(parts, *guard) {
                Ok(_) => None,
                Err(refused) => Some(pages::page_refusal(
                    self.unauthorized.as_ref(),
                    parts,
                    refused,
                )),
            },
        }
    }

    /// Whether a large reply to this request may be refused for want of room in the
    /// server's reply budget: a `GET` of the admin API or pages, which changes nothing, so
    /// asking again is safe. An operation's reply never is: the operation has run.
    pub fn reply_refusable(&self, parts: &Parts) -> bool {
        self.reply_refusable_at(parts, parts.uri.path())
    }

    /// As [`App::reply_refusable`], for the request's path read as `path`.
    pub fn reply_refusable_at(&self, parts: &Parts, path: &str) -> bool {
        (parts.method == Method::GET || parts.method == Method::HEAD)
            && path.starts_with(&*self.admin_prefix)
    }

    /// The answer to a request whose reply the server had no room for: `503` with the
    /// admin API's error shape.
    pub fn reply_refused(cause: &str) -> Response {
        admin_error(StatusCode::SERVICE_UNAVAILABLE, cause)
    }

    /// Answers one request whose body the server has read (or could not).
    pub async fn handle(&self, parts: Parts, body: ReadBody) -> Response {
        let Ok(found) = self.paths.at(parts.uri.path()) else {
            return bare(StatusCode::NOT_FOUND, None);
        };
        // `HEAD` is `GET` without the body, which hyper leaves out.
        let wanted = if parts.method == Method::HEAD {
            Method::GET
        } else {
            parts.method.clone()
        };
        let Some((_, target)) = found.value.iter().find(|(m, _)| *m == wanted) else {
            let allow: Vec<&str> = found.value.iter().map(|(m, _)| m.as_str()).collect();
            return bare(StatusCode::METHOD_NOT_ALLOWED, Some(&allow.join(",")));
        };
        let params: Result<HashMap<String, String>, InvalidPath> = found
            .params
            .iter()
            .map(|(name, value)| {
                let value = percent_encoding::percent_decode_str(value)
                    .decode_utf8()
                    .map_err(|_| InvalidPath)?;
                Ok((name.to_string(), value.into_owned()))
            })
            .collect();
        match target {
            Target::Operation(entry) => gate::gate(&self.gate, entry, params, parts, body).await,
            Target::Admin(route) => {
                // Checked before the body was read too ([`App::refuse`]); again here for
                // a server that does not ask.
                if let Some(refused) = self.gate.admin.refusal(&parts) {
                    return refused;
                }
                let Ok(params) = params else {
                    return bare(StatusCode::BAD_REQUEST, None);
                };
                (route.handler)(AdminRequest {
                    parts,
                    params,
                    body,
                })
                .await
            }
            Target::Page(route, guard) => {
                let Ok(params) = params else {
                    return bare(StatusCode::BAD_REQUEST, None);
                };
                pages::serve_page(
                    &self.gate.admin,
                    self.unauthorized.as_ref(),
                    route,
                    *guard,
                    parts,
                    params,
                    body,
                )
                .await
            }
        }
    }
}

/// The longest prefix `paths` share; one no path starts with when there are none.
fn common_prefix<'p>(mut paths: impl Iterator<Item = &'p str>) -> String {
    let Some(first) = paths.next() else {
        return "\0".to_string();
    };
    let mut len = first.len();
    for path in paths {
        len = first
            .bytes()
            .zip(path.bytes())
            .take(len)
            .take_while(|(a, b)| a == b)
            .count();
    }
    first[..len].to_string()
}

/// The server calls the router directly: generic over its handler, with no boxing or
/// dynamic dispatch per request.
impl Handler for App {
    fn handle(&self, parts: Parts, body: ReadBody) -> impl Future<Output = Response<Body>> + Send {
        App::handle(self, parts, body)
    }

    fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
        App::refuse(self, parts)
    }

    fn reply_refusable(&self, parts: &Parts) -> bool {
        App::reply_refusable(self, parts)
    }

    fn reply_refused(&self, cause: &str) -> Response<Body> {
        App::reply_refused(cause)
    }
}
