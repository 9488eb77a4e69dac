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

use axum::{
    http::{Method, StatusCode, header, request::Parts},
    response::Response,
};

use super::{admin_error, auth};

/// The names a loopback listener answers to, with its port.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// What the admin checks need to know of the listener and the configuration.
#[derive(Clone, Debug, Default)]
pub(crate) struct AdminAccess {
    /// Required as `Authorization: Bearer …` when set.
    pub token: Option<String>,
    /// The listener's port when it is a loopback address: `Host` is then checked.
    pub loopback_port: Option<u16>,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// More names `Host` may carry (any port): a container's name, say.
    pub allowed_hosts: Vec<String>,
}

impl AdminAccess {
    /// The refusal of an admin request, or `None` to let it through.
    pub fn refusal(&self, parts: &Parts) -> Option<Response> {
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
            return Some(admin_error(
                StatusCode::FORBIDDEN,
                &format!(
                    "Host {shown:?} is not this simulator's: it answers to localhost, 127.0.0.1 \
                     or [::1] with port {port} (allow another name with --allowed-host)"
                ),
            ));
        }
        if changes_state(&parts.method) {
            if let Some(site) = header_text(parts, "sec-fetch-site")
                && matches!(site.as_str(), "cross-site" | "same-site")
            {
                return Some(admin_error(
                    StatusCode::FORBIDDEN,
                    &format!("a {site} request from a web page may not change the sandbox"),
                ));
            }
            if let Some(origin) = header_text(parts, "origin") {
                let own = host.map(|h| format!("{}://{h}", self.scheme));
                if !own.is_some_and(|own| own.eq_ignore_ascii_case(&origin)) {
                    return Some(admin_error(
                        StatusCode::FORBIDDEN,
                        &format!(
                            "Origin {origin:?} is not this simulator's own: a web page may not \
                             change the sandbox"
                        ),
                    ));
                }
            }
            if has_body(parts) && !is_json(parts) {
                return Some(admin_error(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "the admin API takes bodies as Content-Type: application/json only",
                ));
            }
        }
        let token = self.token.as_ref()?;
        let given = auth::bearer(&parts.headers);
        if given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())) {
            return None;
        }
        Some(admin_error(
            StatusCode::UNAUTHORIZED,
            "the admin API needs `Authorization: Bearer <admin token>`",
        ))
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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
}
