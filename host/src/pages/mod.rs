//! Admin pages on a router of their own, behind the admin checks: the routes of an admin
//! API or console ([`AdminRoute`], [`PageRoute`]), and the server of a console's pages
//! ([`PageServer`]) for a program that answers every other request itself. The simulator
//! serves its own pages on its router, with the same checks ([`page_refusal`],
//! [`serve_page`]): those their [`Guard`] names, a session's anti-forgery rule, and a
//! sign-in form for a request that lacks only the admin token.

use std::{collections::HashMap, future::Future, pin::Pin, sync::Arc};

use axum::{
    body::Body,
    http::{HeaderValue, Method, StatusCode, header, request::Parts},
    response::Response,
};

use crate::{
    admin::{AdminAccess, Guard, Refused},
    server::ReadBody,
};

/// A request to an admin route: its head, its path parameters and its body.
#[derive(Debug)]
pub struct AdminRequest {
    /// The request's head.
    pub parts: Parts,
    /// The path's parameters, by name (`{id}` in the route's path).
    pub params: HashMap<String, String>,
    /// The body, read whole, or why it could not be.
    pub body: ReadBody,
}

/// What an admin route answers with.
pub type AdminFuture = Pin<Box<dyn Future<Output = Response> + Send>>;

/// An admin route's handler.
pub type AdminHandler = Arc<dyn Fn(AdminRequest) -> AdminFuture + Send + Sync>;

/// A route of an admin API, behind the admin checks (the admin token when one is set).
#[derive(Clone)]
pub struct AdminRoute {
    /// The whole path, in the router's syntax (`/__sandbox/v1/faults/{id}`).
    pub path: String,
    /// The method it answers.
    pub method: Method,
    /// What answers it.
    pub handler: AdminHandler,
}

impl std::fmt::Debug for AdminRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// A route of the admin pages, with the checks it needs.
#[derive(Clone, Debug)]
pub struct PageRoute {
    /// Its path, method and handler.
    pub route: AdminRoute,
    /// The admin checks it needs.
    pub guard: Guard,
}

/// What answers a page request refused for want of the admin token (a sign-in form);
/// given the refusal's message.
pub type Unauthorized = Arc<dyn Fn(&Parts, &str) -> Response + Send + Sync>;

/// Admin pages: their routes, and the answer to a page request that lacks the admin token.
#[derive(Clone)]
pub struct Pages {
    /// The routes, each with its checks.
    pub routes: Vec<PageRoute>,
    /// The sign-in form.
    pub unauthorized: Unauthorized,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.routes).finish()
    }
}

/// The routes of one path: each method's handler and checks.
type Methods = Vec<(Method, AdminRoute, Guard)>;

/// Admin pages on their own router, behind `access`.
pub struct PageServer {
    access: AdminAccess,
    paths: matchit::Router<Methods>,
    unauthorized: Unauthorized,
}

impl std::fmt::Debug for PageServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageServer").finish_non_exhaustive()
    }
}

impl PageServer {
    /// Serves `pages` behind `access`. Panics, naming the path, on a path the router
    /// cannot take.
    pub fn new(access: AdminAccess, pages: Pages) -> Self {
        let mut by_path: Vec<(String, Methods)> = Vec::new();
        for page in pages.routes {
            let target = (page.route.method.clone(), page.route.clone(), page.guard);
            match by_path.iter_mut().find(|(p, _)| *p == page.route.path) {
                Some((_, methods)) => methods.push(target),
                None => by_path.push((page.route.path.clone(), vec![target])),
            }
        }
        let mut paths = matchit::Router::new();
        for (path, methods) in by_path {
            paths
                .insert(path.clone(), methods)
                .unwrap_or_else(|e| panic!("the page {path} cannot be routed: {e}"));
        }
        Self {
            access,
            paths,
            unauthorized: pages.unauthorized,
        }
    }

    /// A page request the admin checks refuse from its head alone, before its body is
    /// read; `None` for any other (an unknown page is answered `404` by
    /// [`PageServer::handle`]).
    pub fn refuse(&self, parts: &Parts) -> Option<Response> {
        let found = self.paths.at(parts.uri.path()).ok()?;
        let (_, _, guard) = found
            .value
            .iter()
            .find(|(m, _, _)| *m == parts.method)
            .or_else(|| found.value.first())?;
        self.access
            .check(parts, *guard)
            .err()
            .map(|refused| page_refusal(Some(&self.unauthorized), parts, refused))
    }

    /// Answers one page request whose body the server has read (or could not).
    pub async fn handle(&self, parts: Parts, body: ReadBody) -> Response {
        let Ok(found) = self.paths.at(parts.uri.path()) else {
            return bare(StatusCode::NOT_FOUND, None);
        };
        let wanted = if parts.method == Method::HEAD {
            Method::GET
        } else {
            parts.method.clone()
        };
        let Some((_, route, guard)) = found.value.iter().find(|(m, _, _)| *m == wanted) else {
            let allow: Vec<&str> = found.value.iter().map(|(m, _, _)| m.as_str()).collect();
            return bare(StatusCode::METHOD_NOT_ALLOWED, Some(&allow.join(",")));
        };
        let params = found
            .params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        serve_page(
            &self.access,
            Some(&self.unauthorized),
            route,
            *guard,
            parts,
            params,
            body,
        )
        .await
    }
}

/// The answer to a page request the admin checks refused: a sign-in form when only the
/// admin token is missing.
pub fn page_refusal(
    unauthorized: Option<&Unauthorized>,
    parts: &Parts,
    refused: Refused,
) -> Response {
    match (unauthorized, refused.status) {
        (Some(page), StatusCode::UNAUTHORIZED) => {
            let mut response = page(parts, &refused.message);
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            refused.hold(&mut response);
            response
        }
        _ => refused.into_response(),
    }
}

/// A page's handler called when the checks of `guard` let the request through (checked
/// again here for a server that did not ask before reading the body), with what the
/// session gives the page in the request's extensions.
pub async fn serve_page(
    access: &AdminAccess,
    unauthorized: Option<&Unauthorized>,
    route: &AdminRoute,
    guard: Guard,
    mut parts: Parts,
    params: HashMap<String, String>,
    body: ReadBody,
) -> Response {
    match access.check(&parts, guard) {
        Ok(info) => {
            parts.extensions.insert(info);
        }
        Err(refused) => return page_refusal(unauthorized, &parts, refused),
    }
    (route.handler)(AdminRequest {
        parts,
        params,
        body,
    })
    .await
}

/// A status without a body (and the methods a path allows, for a 405).
pub fn bare(status: StatusCode, allow: Option<&str>) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    if let Some(allow) = allow.and_then(|a| HeaderValue::from_str(a).ok()) {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
}
