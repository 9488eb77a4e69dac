//! Who may use the admin routes: no web page a developer visits, and the admin token's
//! holder when there is one. Checked from a request's head, before its body is read.
//!
//! A browser lets any page send a "simple" cross-site request (a form, a `no-cors`
//! `fetch`) without asking first, and a page that rebinds its own name to 127.0.0.1 makes
//! its requests same-origin to the browser. So, as Jupyter and Vite do: a loopback
//! listener answers only to its own names (`Host`), a state-changing request from a page
//! must come from the simulator's own origin (`Origin`, `Sec-Fetch-Site`), and a body must
//! be JSON, which no page can send across sites without a preflight the simulator never
//! grants.

pub mod session;
pub mod throttle;

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, Method, StatusCode, header, request::Parts},
    response::Response,
};

use std::sync::Arc;

// Tokens compared in constant time (rustls's own comparison, already in the build).
use subtle::ConstantTimeEq as _;

use crate::server::{NotBefore, Peer};
use session::{SessionInfo, Sessions};
use throttle::Failures;

/// The names a loopback listener answers to, with its port.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The reserved prefix of the sandbox admin API's paths (`spec/sandbox.yaml` of
/// `licensing-sim`): no path of the platform's services starts with it. The console's
/// pages are beside it, below `/__sandbox/`.
pub const ADMIN_PREFIX: &str = "/__sandbox/v1";

/// What the admin checks need to know of the listener and the configuration.
#[derive(Clone, Default)]
pub struct AdminAccess {
    /// Required as `Authorization: Bearer …` when set.
    pub token: Option<String>,
    /// The listener's port when it is a loopback address: `Host` is then checked.
    pub loopback_port: Option<u16>,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// More names `Host` may carry (any port): a container's name, say.
    pub allowed_hosts: Vec<String>,
    /// Browser sessions opened by signing in with the token.
    pub sessions: Arc<Sessions>,
    /// Wrong tokens per source address, which slow the answers to the next ones.
    pub failures: Arc<Failures>,
    /// The path the admin routes are reached under before `/__sandbox` (a simulator
    /// tenant's `/t/{id}`), empty at the root: a session's cookie is kept for that path
    /// alone, and the console's pages link under it.
    pub prefix: String,
}

/// The token stays out of logs.
impl std::fmt::Debug for AdminAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminAccess")
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .field("loopback_port", &self.loopback_port)
            .field("scheme", &self.scheme)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Which of the admin checks a route needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Every check, the admin token (or a session standing for it) included: the admin
    /// API and the admin pages.
    Token,
    /// The checks of a web page's request but no token: the sign-in form, which is how
    /// the token is given.
    SignIn,
    /// The `Host` check only: files with no data in them (a page's script and style).
    Public,
}

/// Why a request to an admin route was refused.
#[derive(Debug)]
pub struct Refused {
    pub status: StatusCode,
    pub message: String,
    /// For a wrong token: when the answer may leave.
    pub not_before: Option<NotBefore>,
}

impl Refused {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            not_before: None,
        }
    }

    /// As the admin API answers it: `{"message": …}`.
    pub fn into_response(self) -> Response {
        let mut response = admin_error(self.status, &self.message);
        self.hold(&mut response);
        response
    }

    /// Marks `response` to leave no earlier than a wrong token's delay allows.
    pub fn hold(&self, response: &mut Response) {
        if let Some(at) = self.not_before {
            response.extensions_mut().insert(at);
        }
    }
}

/// The address a request came from, as the server saw it.
pub fn peer(parts: &Parts) -> Option<std::net::SocketAddr> {
    parts.extensions.get::<Peer>().map(|p| p.0)
}

impl AdminAccess {
    /// The refusal of an admin API request, or `None` to let it through.
    pub fn refusal(&self, parts: &Parts) -> Option<Response> {
        self.check(parts, Guard::Token)
            .err()
            .map(Refused::into_response)
    }

    /// Whether a request to a route guarded by `guard` may go on: with what its session
    /// gives a page, or why not.
    pub fn check(&self, parts: &Parts, guard: Guard) -> Result<SessionInfo, Refused> {
        let host = parts
            .headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned)
            .or_else(|| parts.uri.authority().map(|a| a.as_str().to_owned()));
        if let Some(port) = self.loopback_port
            && !host.as_deref().is_some_and(|h| self.host_allowed(h, port))
        {
            let shown = host.as_deref().unwrap_or("(none)");
            return Err(Refused::new(
                StatusCode::FORBIDDEN,
                format!(
                    "Host {shown:?} is not this simulator's: it answers to localhost, 127.0.0.1 \
                     or [::1] with port {port} (allow another name with --allowed-host)"
                ),
            ));
        }
        let info = SessionInfo::default();
        if guard == Guard::Public {
            return Ok(info);
        }
        if changes_state(&parts.method) {
            if let Some(site) = header_text(parts, "sec-fetch-site")
                && matches!(site.as_str(), "cross-site" | "same-site")
            {
                return Err(Refused::new(
                    StatusCode::FORBIDDEN,
                    format!("a {site} request from a web page may not change the sandbox"),
                ));
            }
            if let Some(origin) = header_text(parts, "origin") {
                let own = host.map(|h| format!("{}://{h}", self.scheme));
                if !own.is_some_and(|own| own.eq_ignore_ascii_case(&origin)) {
                    return Err(Refused::new(
                        StatusCode::FORBIDDEN,
                        format!(
                            "Origin {origin:?} is not this simulator's own: a web page may not \
                             change the sandbox"
                        ),
                    ));
                }
            }
            // The sign-in form is the one admin body a browser sends as a form.
            if guard == Guard::Token && has_body(parts) && !is_json(parts) {
                return Err(Refused::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "the admin API takes bodies as Content-Type: application/json only",
                ));
            }
        }
        let Some(token) = self.token.as_ref().filter(|_| guard == Guard::Token) else {
            return Ok(info);
        };
        let given = bearer(&parts.headers);
        if given.is_some_and(|g| bool::from(g.as_bytes().ct_eq(token.as_bytes()))) {
            self.failures.succeeded(peer(parts));
            return Ok(info);
        }
        if given.is_some() {
            return Err(Refused {
                not_before: self.failures.failed(peer(parts)),
                ..Refused::new(
                    StatusCode::UNAUTHORIZED,
                    "the admin token given is not this simulator's (wrong tokens from one \
                     address are answered more and more slowly)",
                )
            });
        }
        if given.is_none()
            && let Some(csrf) = session::cookie(parts).and_then(|id| self.sessions.csrf(&id))
        {
            // The cookie goes with every request the browser makes to this origin; what
            // changes state must also show the token only the simulator's pages can read.
            let shown = parts
                .headers
                .get(session::CSRF_HEADER)
                .is_some_and(|v| bool::from(v.as_bytes().ct_eq(csrf.as_bytes())));
            if changes_state(&parts.method) && !shown {
                return Err(Refused::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "a change made with a session needs its anti-forgery token in the {} \
                         header",
                        session::CSRF_HEADER
                    ),
                ));
            }
            return Ok(SessionInfo { csrf: Some(csrf) });
        }
        Err(Refused::new(
            StatusCode::UNAUTHORIZED,
            format!(
                "the admin API needs `Authorization: Bearer <admin token>` (or, in a browser, \
                 a session opened by signing in at {}/__sandbox/)",
                self.prefix
            ),
        ))
    }

    /// Opens a session for a browser that gave `given` as the admin token: the
    /// `Set-Cookie` value, or `None` when the token is wrong. With no admin token set, no
    /// session is needed, and none is opened.
    /// A wrong token is `Err` with when the answer may leave.
    pub fn sign_in(&self, parts: &Parts, given: &str) -> Result<Option<String>, Option<NotBefore>> {
        let Some(token) = &self.token else {
            return Ok(None);
        };
        if !bool::from(given.trim().as_bytes().ct_eq(token.as_bytes())) {
            return Err(self.failures.failed(peer(parts)));
        }
        self.failures.succeeded(peer(parts));
        Ok(Some(self.open_session()))
    }

    /// Opens a session without asking for the token, for a caller that has checked its
    /// own right to one (the simulator's admin opening a tenant's console): the
    /// `Set-Cookie` value, for this access's paths only.
    pub fn open_session(&self) -> String {
        let (id, _) = self.sessions.open();
        session::set_cookie(&id, self.scheme == "https", &self.prefix)
    }

    /// Ends the request's session, if it has one: the `Set-Cookie` value that clears it.
    pub fn sign_out(&self, parts: &Parts) -> String {
        if let Some(id) = session::cookie(parts) {
            self.sessions.close(&id);
        }
        session::clear_cookie(self.scheme == "https", &self.prefix)
    }

    /// `localhost`, `127.0.0.1` or `[::1]` with the listener's port, or an allowed name.
    fn host_allowed(&self, host: &str, port: u16) -> bool {
        let (name, given) = split_port(host);
        let named = |n: &str| n.eq_ignore_ascii_case(name);
        if self.allowed_hosts.iter().any(|h| named(h)) {
            return true;
        }
        LOOPBACK_NAMES.iter().any(|n| named(n)) && given == Some(port)
    }
}

/// The token of an `Authorization: Bearer <token>` header.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// An admin refusal: `{"message": …}` with its status.
pub fn admin_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::to_vec(&serde_json::json!({ "message": message }))
        .expect("a JSON object serialises");
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A host header's name and port (`[::1]:8080` → `[::1]`, 8080).
fn split_port(host: &str) -> (&str, Option<u16>) {
    let bracket = host.rfind(']').unwrap_or(0);
    match host[bracket..].rfind(':') {
        Some(at) => {
            let at = bracket + at;
            (&host[..at], host[at + 1..].parse().ok())
        }
        None => (host, None),
    }
}

fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn header_text(parts: &Parts, name: &str) -> Option<String> {
    parts.headers.get(name).map(|v| {
        String::from_utf8_lossy(v.as_bytes())
            .trim()
            .to_ascii_lowercase()
    })
}

/// Whether the request says it has a body.
fn has_body(parts: &Parts) -> bool {
    parts.headers.contains_key(header::TRANSFER_ENCODING)
        || parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

fn is_json(parts: &Parts) -> bool {
    parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_and_ports() {
        assert_eq!(split_port("localhost:8080"), ("localhost", Some(8080)));
        assert_eq!(split_port("[::1]:9"), ("[::1]", Some(9)));
        assert_eq!(split_port("[::1]"), ("[::1]", None));
        assert_eq!(split_port("sim"), ("sim", None));
        let access = AdminAccess {
            loopback_port: Some(8080),
            scheme: "http",
            allowed_hosts: vec!["sim".into()],
            ..AdminAccess::default()
        };
        assert!(access.host_allowed("LOCALHOST:8080", 8080));
        assert!(access.host_allowed("[::1]:8080", 8080));
        assert!(!access.host_allowed("127.0.0.1:8081", 8080));
        assert!(!access.host_allowed("localhost", 8080));
        assert!(!access.host_allowed("evil.example:8080", 8080));
        assert!(access.host_allowed("sim:80", 8080));
        assert!(access.host_allowed("sim", 8080));
    }

    #[test]
    fn bearer_tokens() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "Bearer  tok ".parse().unwrap());
        assert_eq!(bearer(&headers), Some("tok"));
        headers.insert(header::AUTHORIZATION, "Basic tok".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }
}
