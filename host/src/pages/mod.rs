//! Admin pages served outside the simulator's router: the console of another program
//! served on the simulator's foundations (`crate::host`), which answers every other
//! request itself. They get the checks [`super::App`] gives its
//! own pages: the admin checks their [`Guard`] names, a session's anti-forgery rule, and a
//! sign-in form for a request that lacks only the admin token.

use std::collections::HashMap;

use axum::{
    http::{Method, StatusCode, request::Parts},
    response::Response,
};

use super::{
    ReadBody,
    admin::{AdminAccess, Guard, Refused},
    bare,
    hooks::{AdminRequest, AdminRoute, Pages, Unauthorized},
};

/// The routes of one path: each method's handler and checks.
type Methods = Vec<(Method, AdminRoute, Guard)>;

/// Admin pages on their own router, behind `access`.
pub(crate) struct PageServer {
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
pub(crate) fn page_refusal(
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
pub(crate) async fn serve_page(
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
