//! Browser sessions of the admin pages: a browser cannot send `Authorization: Bearer` on
//! a page load, so the admin token is given once to a sign-in form and a session cookie
//! stands for it afterwards. The cookie is `HttpOnly` and `SameSite=Strict` (a page of
//! another site never makes the browser send it), and a request authenticated by it that
//! changes state must also carry the session's anti-forgery token in a header, which only
//! a page of the server's own origin can read.

use std::{
    collections::VecDeque,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

use axum::http::request::Parts;
use subtle::ConstantTimeEq as _;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "licensing_sim_session";
/// The header carrying a session's anti-forgery token.
pub(crate) const CSRF_HEADER: &str = "x-sandbox-csrf";
/// How long a session lasts after it is opened.
pub(crate) const LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);
/// Sessions kept at once; a new one beyond it ends the oldest.
pub(crate) const MAX_SESSIONS: usize = 64;

/// What a request authenticated by a session (or needing none) may use on a page.
#[derive(Clone, Debug, Default)]
pub struct SessionInfo {
    /// The anti-forgery token a page sends back with every change (`x-sandbox-csrf`), when
    /// the request came with a session.
    pub csrf: Option<String>,
}

#[derive(Debug)]
struct Session {
    id: String,
    csrf: String,
    expires: Instant,
}

/// The open sessions, bounded in number and in time.
#[derive(Debug, Default)]
pub struct Sessions {
    open: Mutex<VecDeque<Session>>,
}

impl Sessions {
    /// Opens a session: its id (the cookie's value) and its anti-forgery token.
    pub fn open(&self) -> (String, String) {
        let session = Session {
            id: random_hex(),
            csrf: random_hex(),
            expires: Instant::now() + LIFETIME,
        };
        let ids = (session.id.clone(), session.csrf.clone());
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        open.retain(|s| s.expires > now);
        while open.len() >= MAX_SESSIONS {
            open.pop_front();
        }
        open.push_back(session);
        ids
    }

    /// The anti-forgery token of the live session `id`, if there is one.
    pub fn csrf(&self, id: &str) -> Option<String> {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        open.iter()
            .find(|s| s.expires > now && bool::from(s.id.as_bytes().ct_eq(id.as_bytes())))
            .map(|s| s.csrf.clone())
    }

    /// Ends the session `id`.
    pub fn close(&self, id: &str) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|s| s.id != id);
    }
}

/// The session id a request's `Cookie` headers carry.
pub(crate) fn cookie(parts: &Parts) -> Option<String> {
    parts
        .headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The `Set-Cookie` value that keeps the session `id` for the admin paths under `prefix`
/// only (`/__sandbox`, or a tenant's `/t/{id}/__sandbox`): a browser sends it to no other
/// console of the same server.
pub(crate) fn set_cookie(id: &str, secure: bool, prefix: &str) -> String {
    format!(
        "{COOKIE}={id}; Path={prefix}/__sandbox; HttpOnly; SameSite=Strict; Max-Age={}{}",
        LIFETIME.as_secs(),
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that makes a browser forget the session kept under `prefix`.
pub(crate) fn clear_cookie(secure: bool, prefix: &str) -> String {
    format!(
        "{COOKIE}=; Path={prefix}/__sandbox; HttpOnly; SameSite=Strict; Max-Age=0{}",
        if secure { "; Secure" } else { "" }
    )
}

/// 128 random bits as hex.
fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_bounded_and_closed() {
        let sessions = Sessions::default();
        let (first, csrf) = sessions.open();
        assert_eq!(first.len(), 32);
        assert_eq!(sessions.csrf(&first).as_deref(), Some(csrf.as_str()));
        assert_eq!(sessions.csrf("not-a-session"), None);
        for _ in 0..MAX_SESSIONS {
            sessions.open();
        }
        assert_eq!(sessions.csrf(&first), None, "the oldest session went first");
        let (id, _) = sessions.open();
        sessions.close(&id);
        assert_eq!(sessions.csrf(&id), None);
    }

    #[test]
    fn cookies_read_and_written() {
        let request = axum::http::Request::builder()
            .header("cookie", "a=1; licensing_sim_session=abc ; b=2")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        assert_eq!(cookie(&parts).as_deref(), Some("abc"));
        let set = set_cookie("abc", true, "");
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/__sandbox;", "Secure"] {
            assert!(set.contains(attribute), "{set}");
        }
        assert!(!set_cookie("abc", false, "").contains("Secure"));
        let tenant = set_cookie("abc", false, "/t/0123");
        assert!(tenant.contains("Path=/t/0123/__sandbox;"), "{tenant}");
        assert!(clear_cookie(false, "/t/0123").contains("Path=/t/0123/__sandbox;"));
    }
}
