//! The sandbox console: pages at `/__sandbox/` that show the journal, the state, the
//! fault rules and the clock, on the simulator's own listener and behind the admin API's
//! checks ([`Guard`]). Another program served with the simulator's foundations
//! (`crate::host`) gets a console of its own pages in the same frame ([`hosted_pages`]),
//! on its listener, behind the same checks.
//!
//! Pages are rendered on the server (maud, escaped by construction) and work offline:
//! their one script and one style sheet are compiled into the binary and served from the
//! same origin, under a Content Security Policy that allows nothing else. What a page
//! changes it changes through the admin API (`/__sandbox/v1/…`), with the same checks as
//! any other client, plus the session's anti-forgery token when it signed in.

mod conformance;
mod coverage;
mod curl;
mod faults;
mod journal;
mod layout;
mod schema;
mod state;

use std::{borrow::Cow, collections::HashMap, sync::Arc};

use axum::{
    body::Body,
    http::{HeaderValue, Method, StatusCode, header},
    response::Response,
};
use maud::Markup;

use crate::{
    protocol::{
        admin::{AdminAccess, Guard},
        hooks::{AdminRequest, AdminRoute, PageRoute, Pages, Unauthorized},
        session::SessionInfo,
    },
    sandbox::Sandbox,
};

/// Where the console lives.
pub(crate) const ROOT: &str = "/__sandbox/";

/// The most a sign-in form may send, in bytes.
const MAX_SIGN_IN_BYTES: usize = 4096;

/// The console's script and style, compiled in.
const SCRIPT: &str = include_str!("console.js");
const STYLE: &str = include_str!("console.css");

/// Where a hosted console's own style sheet is, below the root.
pub(crate) const PAGES_STYLE: &str = "pages.css";

/// What every page is allowed to load and run: its own script and style, requests to its
/// own origin, nothing inline, no frames.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// Which console a listener serves: its name and its sections.
#[derive(Debug)]
pub(crate) struct Mode {
    /// What the pages call the server.
    pub brand: &'static str,
    /// What needs the admin token, on the sign-in page.
    pub server: &'static str,
    /// The sections, in the navigation's order: (path below the root, name).
    pub sections: Cow<'static, [(&'static str, &'static str)]>,
    /// A style sheet of the pages' own, after the console's (`{ROOT}pages.css`).
    pub style: Option<&'static str>,
}

/// The simulator's console: every section.
pub(crate) const SANDBOX: Mode = Mode {
    brand: "licensing-sim sandbox",
    server: "simulator",
    sections: Cow::Borrowed(&[
        ("", "Journal"),
        ("state", "State"),
        ("faults", "Faults & clock"),
        ("coverage", "Coverage"),
        ("conformance", "Conformance"),
    ]),
    style: None,
};

/// What a page handler is given.
pub(crate) struct Request {
    pub query: HashMap<String, String>,
    pub session: SessionInfo,
    /// The server's own base URL as the browser reached it (`http://localhost:8080`).
    pub origin: String,
    pub mode: Arc<Mode>,
}

/// A section of a hosted console: its path below the root, its name, and what renders
/// its main content.
pub(crate) type Section = (
    &'static str,
    &'static str,
    Arc<dyn Fn(&Request) -> Markup + Send + Sync>,
);

type Handler = fn(&Sandbox, &Request) -> Response;

/// The console's routes, bound to `sandbox`, behind the admin checks of `access`.
pub(crate) fn pages(sandbox: &Arc<Sandbox>, access: &AdminAccess) -> Pages {
    let mode = Arc::new(SANDBOX);
    let pages: [(&str, Handler); 7] = [
        ("", journal::page),
        ("journal/rows", journal::rows),
        ("journal/entry", journal::entry),
        ("state", state::page),
        ("faults", faults::page),
        ("coverage", coverage::page),
        ("conformance", conformance::page),
    ];
    let mut routes: Vec<PageRoute> = pages
        .into_iter()
        .map(|(path, handler)| {
            let sandbox = Arc::clone(sandbox);
            let scheme = access.scheme;
            let mode = Arc::clone(&mode);
            page_route(
                Method::GET,
                &format!("{ROOT}{path}"),
                Guard::Token,
                move |req| {
                    let request = request(&req, scheme, Arc::clone(&mode));
                    handler(&sandbox, &request)
                },
            )
        })
        .collect();
    routes.extend(common(access));
    Pages {
        routes,
        unauthorized: unauthorized(access.scheme, mode),
    }
}

/// Another program's console: its `sections`, each rendered at every request in the
/// console's frame under `brand`; the console's root leads to the first section when that
/// is not at the root itself. Behind the admin checks of `access`, as the simulator's.
pub(crate) fn hosted_pages(
    brand: &'static str,
    server: &'static str,
    sections: Vec<Section>,
    style: Option<&'static str>,
    access: &AdminAccess,
) -> Pages {
    let scheme = access.scheme;
    let mode = Arc::new(Mode {
        brand,
        server,
        sections: Cow::Owned(sections.iter().map(|(p, n, _)| (*p, *n)).collect()),
        style,
    });
    let mut routes = Vec::new();
    if let Some(style) = style {
        routes.push(page_route(
            Method::GET,
            &format!("{ROOT}{PAGES_STYLE}"),
            Guard::Public,
            move |_| asset(style, "text/css; charset=utf-8"),
        ));
    }
    if let Some(&(first, ..)) = sections.first().filter(|(p, ..)| !p.is_empty()) {
        routes.push(page_route(Method::GET, ROOT, Guard::Token, move |_| {
            redirect(&format!("{ROOT}{first}"), None)
        }));
    }
    for (path, name, render) in sections {
        let mode = Arc::clone(&mode);
        routes.push(page_route(
            Method::GET,
            &format!("{ROOT}{path}"),
            Guard::Token,
            move |req| {
                let request = request(&req, scheme, Arc::clone(&mode));
                layout::page(&request, path, name, render(&request))
            },
        ));
    }
    routes.extend(common(access));
    Pages {
        routes,
        unauthorized: unauthorized(scheme, mode),
    }
}

/// What every console has: `/__sandbox` leading to the root, the script and style, and
/// signing in and out.
fn common(access: &AdminAccess) -> Vec<PageRoute> {
    let mut routes = Vec::new();
    routes.push(page_route(Method::GET, "/__sandbox", Guard::Public, |_| {
        redirect(ROOT, None)
    }));
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
    routes.push(page_route(
        Method::POST,
        &format!("{ROOT}sign-in"),
        Guard::SignIn,
        move |req| sign_in(&signing, &req),
    ));
    let signing = access.clone();
    routes.push(page_route(
        Method::POST,
        &format!("{ROOT}sign-out"),
        Guard::Token,
        move |req| {
            let cookie = signing.sign_out(&req.parts);
            redirect(ROOT, Some(&cookie))
        },
    ));
    routes
}

/// The answer to a page request without the admin token: the sign-in form.
fn unauthorized(scheme: &'static str, mode: Arc<Mode>) -> Unauthorized {
    Arc::new(move |parts, message| {
        let failed = query_pairs(parts.uri.query()).any(|(k, _)| k == "signin");
        let request = Request {
            query: HashMap::new(),
            session: SessionInfo::default(),
            origin: origin(parts, scheme),
            mode: Arc::clone(&mode),
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

fn request(req: &AdminRequest, scheme: &str, mode: Arc<Mode>) -> Request {
    let query = query_pairs(req.parts.uri.query()).collect();
    Request {
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
fn sign_in(access: &AdminAccess, req: &AdminRequest) -> Response {
    let Ok(body) = req.body.as_ref() else {
        return redirect(&format!("{ROOT}?signin=failed"), None);
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
        Ok(cookie) => redirect(ROOT, cookie.as_deref()),
        Err(not_before) => {
            let mut response = redirect(&format!("{ROOT}?signin=failed"), None);
            if let Some(at) = not_before {
                response.extensions_mut().insert(at);
            }
            response
        }
    }
}

/// A page: HTML with the headers that keep it to itself.
pub(crate) fn html(status: StatusCode, markup: Markup) -> Response {
    let mut response = Response::new(Body::from(markup.into_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure(headers);
    response
}

fn secure(headers: &mut axum::http::HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Not `no-referrer`: under it Firefox sends `Origin: null` with the pages' own POSTs
    // (the sign-in form, the admin API calls), which the admin checks refuse as foreign.
    // `same-origin` still gives other sites nothing.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
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
