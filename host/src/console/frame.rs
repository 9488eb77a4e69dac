//! A console's routes: its pages behind the admin checks ([`Guard`]), the script and style
//! sheet, signing in and out, and the sign-in form for a page asked without the admin
//! token.

use std::{borrow::Cow, collections::HashMap, sync::Arc};

use axum::{
    body::Body,
    http::{HeaderValue, Method, StatusCode, header},
    response::Response,
};

use super::{
    Mode, PAGES_STYLE, Page, ROOT, Request, Section,
    layout::{self, secure},
};
use crate::{
    admin::{AdminAccess, Guard, session::SessionInfo},
    pages::{AdminRequest, AdminRoute, PageRoute, Pages, Unauthorized},
};

/// The most a sign-in form may send, in bytes.
const MAX_SIGN_IN_BYTES: usize = 4096;

/// The console's script and style, compiled in.
const SCRIPT: &str = include_str!("console.js");
const STYLE: &str = include_str!("console.css");

/// A console's routes: each of `pages` (a path below the root, and what answers it) behind
/// the admin checks of `access` with its token, the pages' own style sheet when `mode`
/// has one, and what every console has (`/__sandbox` leading to the root, the script and
/// style, signing in and out), with the sign-in form for a page asked without the token.
pub fn pages(mode: Mode, pages: Vec<(&'static str, Page)>, access: &AdminAccess) -> Pages {
    let scheme = access.scheme;
    let mode = Arc::new(mode);
    let mut routes: Vec<PageRoute> = pages
        .into_iter()
        .map(|(path, page)| {
            let mode = Arc::clone(&mode);
            let prefix = access.prefix.clone();
            page_route(
                Method::GET,
                &format!("{ROOT}{path}"),
                Guard::Token,
                move |req| page(&request(&req, scheme, Arc::clone(&mode), &prefix)),
            )
        })
        .collect();
    if let Some(style) = mode.style {
        routes.push(page_route(
            Method::GET,
            &format!("{ROOT}{PAGES_STYLE}"),
            Guard::Public,
            move |_| asset(style, "text/css; charset=utf-8"),
        ));
    }
    routes.extend(common(access));
    Pages {
        routes,
        unauthorized: unauthorized(scheme, mode, access.prefix.clone()),
    }
}

/// Another program's console: its `sections`, each rendered at every request in the
/// console's frame under `brand`; the console's root leads to the first section when that
/// is not at the root itself. Behind the admin checks of `access`, as the simulator's.
pub fn hosted_pages(
    brand: &'static str,
    server: &'static str,
    sections: Vec<Section>,
    style: Option<&'static str>,
    access: &AdminAccess,
) -> Pages {
    let mode = Mode {
        brand,
        server,
        token: "--admin-token",
        sections: Cow::Owned(sections.iter().map(|(p, n, _)| (*p, *n)).collect()),
        style,
    };
    let mut pages: Vec<(&'static str, Page)> = Vec::new();
    if let Some(&(first, ..)) = sections.first().filter(|(p, ..)| !p.is_empty()) {
        pages.push((
            "",
            Box::new(move |request| redirect(&format!("{}{first}", request.root()), None)),
        ));
    }
    for (path, name, render) in sections {
        pages.push((
            path,
            Box::new(move |request| layout::page(request, path, name, render(request))),
        ));
    }
    self::pages(mode, pages, access)
}

/// What every console has: `/__sandbox` leading to the root, the script and style, and
/// signing in and out.
fn common(access: &AdminAccess) -> Vec<PageRoute> {
    // Where the browser is sent back to: the root under the prefix it reached.
    let root: Arc<str> = format!("{}{ROOT}", access.prefix).into();
    let mut routes = Vec::new();
    let to = Arc::clone(&root);
    routes.push(page_route(
        Method::GET,
        "/__sandbox",
        Guard::Public,
        move |_| redirect(&to, None),
    ));
    routes.push(page_route(
        Method::GET,
        &format!("{ROOT}console.js"),
        Guard::Public,
        |_| asset(SCRIPT, "text/javascript; charset=utf-8"),
    ));
    routes.push(page_route(
        Method::GET,
        &format!("{ROOT}console.css"),
        Guard::Public,
        |_| asset(STYLE, "text/css; charset=utf-8"),
    ));
    let signing = access.clone();
    let to = Arc::clone(&root);
    routes.push(page_route(
        Method::POST,
        &format!("{ROOT}sign-in"),
        Guard::SignIn,
        move |req| sign_in(&signing, &req, &to),
    ));
    let signing = access.clone();
    routes.push(page_route(
        Method::POST,
        &format!("{ROOT}sign-out"),
        Guard::Token,
        move |req| {
            let cookie = signing.sign_out(&req.parts);
            redirect(&root, Some(&cookie))
        },
    ));
    routes
}

/// The answer to a page request without the admin token: the sign-in form.
fn unauthorized(scheme: &'static str, mode: Arc<Mode>, prefix: String) -> Unauthorized {
    Arc::new(move |parts, message| {
        let failed = query_pairs(parts.uri.query()).any(|(k, _)| k == "signin");
        let request = Request {
            query: HashMap::new(),
            session: SessionInfo::default(),
            origin: origin(parts, scheme),
            mode: Arc::clone(&mode),
            prefix: prefix.clone(),
        };
        let note = if failed {
            "The token was not accepted."
        } else {
            message
        };
        layout::sign_in_page(&request, Some(note))
    })
}

fn page_route(
    method: Method,
    path: &str,
    guard: Guard,
    handler: impl Fn(AdminRequest) -> Response + Send + Sync + 'static,
) -> PageRoute {
    PageRoute {
        route: AdminRoute {
            path: path.to_string(),
            method,
            handler: Arc::new(move |req| {
                let response = handler(req);
                Box::pin(async move { response })
            }),
        },
        guard,
    }
}

fn request(req: &AdminRequest, scheme: &str, mode: Arc<Mode>, prefix: &str) -> Request {
    let query = query_pairs(req.parts.uri.query()).collect();
    Request {
        prefix: prefix.to_string(),
        query,
        session: req
            .parts
            .extensions
            .get::<SessionInfo>()
            .cloned()
            .unwrap_or_default(),
        origin: origin(&req.parts, scheme),
        mode,
    }
}

/// A query string's pairs, decoded.
fn query_pairs(query: Option<&str>) -> impl Iterator<Item = (String, String)> + '_ {
    form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned()
}

/// The base URL the browser used (the `Host` the admin checks let through).
fn origin(parts: &axum::http::request::Parts, scheme: &str) -> String {
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("{scheme}://{host}")
}

/// The sign-in form's answer: back to the console, with a session cookie when the token
/// was right, or to the sign-in page saying it was not.
fn sign_in(access: &AdminAccess, req: &AdminRequest, root: &str) -> Response {
    let Ok(body) = req.body.as_ref() else {
        return redirect(&format!("{root}?signin=failed"), None);
    };
    if body.len() > MAX_SIGN_IN_BYTES {
        return text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the sign-in form is too large",
        );
    }
    let token = form_urlencoded::parse(body)
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    match access.sign_in(&req.parts, &token) {
        Ok(cookie) => redirect(root, cookie.as_deref()),
        Err(not_before) => {
            let mut response = redirect(&format!("{root}?signin=failed"), None);
            if let Some(at) = not_before {
                response.extensions_mut().insert(at);
            }
            response
        }
    }
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    secure(headers);
    response
}

fn text(status: StatusCode, message: &str) -> Response {
    let mut response = Response::new(Body::from(message.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    secure(headers);
    response
}

fn redirect(to: &str, cookie: Option<&str>) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(to) {
        headers.insert(header::LOCATION, location);
    }
    if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    secure(headers);
    response
}
