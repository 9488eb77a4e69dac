//! `--http ADDR`: the streamable HTTP transport on a loopback listener, behind the checks
//! the simulator's admin API makes, so that no web page the person visits can drive it:
//! `Host` one of the listener's own names (a page that rebinds its name to 127.0.0.1 is
//! refused), `Origin`, when a browser sends one, the listener's own, no cross-site fetch,
//! and the bearer token (`LICENSING_MCP_TOKEN`) on every request, compared in constant
//! time.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    extract::Request,
    http::{HeaderMap, StatusCode, header},
    middleware::Next,
    response::{IntoResponse as _, Response},
};
use subtle::ConstantTimeEq as _;

use super::{session::Server, wire};
use crate::error::CliError;

/// The names a loopback listener answers to, with its port.
pub const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The variable that holds the bearer token clients must send.
pub const TOKEN_VAR: &str = "LICENSING_MCP_TOKEN";

/// The shortest token taken: 128 bits as hex.
const MIN_TOKEN_CHARS: usize = 32;

/// What every request must show.
struct Guard {
    token: String,
    port: u16,
}

impl Guard {
    /// Why a request is refused, or `None`.
    fn refusal(&self, headers: &HeaderMap) -> Option<(StatusCode, String)> {
        let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
        let host = text(header::HOST).unwrap_or("");
        let own = LOOPBACK_NAMES
            .iter()
            .any(|name| host.eq_ignore_ascii_case(&format!("{name}:{}", self.port)));
        if !own {
            return Some((
                StatusCode::FORBIDDEN,
                format!(
                    "Host {host:?} is not this server's: it answers to localhost, 127.0.0.1 or \
                     [::1] with port {}",
                    self.port
                ),
            ));
        }
        if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
            && matches!(site, "cross-site" | "same-site")
        {
            return Some((
                StatusCode::FORBIDDEN,
                format!("a {site} request from a web page may not use this server"),
            ));
        }
        if let Some(origin) = text(header::ORIGIN)
            && !origin.eq_ignore_ascii_case(&format!("http://{host}"))
        {
            return Some((
                StatusCode::FORBIDDEN,
                format!("Origin {origin:?} is not this server's own: a web page may not use it"),
            ));
        }
        let given = text(header::AUTHORIZATION).and_then(|v| v.strip_prefix("Bearer "));
        match given {
            Some(given) if bool::from(given.as_bytes().ct_eq(self.token.as_bytes())) => None,
            Some(_) => Some((
                StatusCode::UNAUTHORIZED,
                "the bearer token given is not this server's".to_string(),
            )),
            None => Some((
                StatusCode::UNAUTHORIZED,
                format!("this server needs `Authorization: Bearer <the token in {TOKEN_VAR}>`"),
            )),
        }
    }
}

async fn check(guard: Arc<Guard>, request: Request, next: Next) -> Response {
    match guard.refusal(request.headers()) {
        Some((status, message)) => {
            let mut response = (status, message).into_response();
            if status == StatusCode::UNAUTHORIZED {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, "Bearer".parse().expect("valid"));
            }
            response
        }
        None => next.run(request).await,
    }
}

/// The token clients must send, from [`TOKEN_VAR`].
pub fn token(var: Option<String>) -> Result<String, CliError> {
    let token = var.map(|t| t.trim().to_string()).unwrap_or_default();
    if token.len() < MIN_TOKEN_CHARS {
        return Err(CliError::usage(format!(
            "--http needs a bearer token of at least {MIN_TOKEN_CHARS} characters in {TOKEN_VAR} \
             (e.g. `export {TOKEN_VAR}=$(openssl rand -hex 32)`), which clients send as \
             `Authorization: Bearer …`"
        )));
    }
    Ok(token)
}

/// Serves the tools at `http://ADDR/mcp` until Ctrl-C or SIGTERM.
pub async fn serve(server: Arc<Server>, addr: &str, token: String) -> Result<(), CliError> {
    let addr: SocketAddr = addr.parse().map_err(|_| {
        CliError::usage(format!(
            "--http: `{}` is not an address and port (127.0.0.1:8765)",
            crate::terminal::escape(addr)
        ))
    })?;
    if !addr.ip().is_loopback() {
        return Err(CliError::usage(format!(
            "--http: {addr} is not a loopback address: the server listens on 127.0.0.1 or ::1 \
             only, for the person's own clients"
        )));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::usage(format!("--http {addr}: cannot listen: {e}")))?;
    let local = listener.local_addr()?;
    let guard = Arc::new(Guard {
        token,
        port: local.port(),
    });
    let hosts = LOOPBACK_NAMES.map(|name| format!("{name}:{}", local.port()));
    let origins = hosts.iter().map(|host| format!("http://{host}")).collect();
    let app = wire::http_router(server, hosts.to_vec(), origins).layer(axum::middleware::from_fn(
        move |request: Request, next: Next| check(guard.clone(), request, next),
    ));
    crate::mcp::say(&format!("serving MCP at http://{local}/mcp"));
    axum::serve(listener, app)
        .with_graceful_shutdown(stopped())
        .await
        .map_err(CliError::from)
}

/// Ctrl-C or SIGTERM.
async fn stopped() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn only_the_own_host_and_origin_with_the_token_pass() {
        let guard = Guard {
            token: "t".repeat(40),
            port: 8765,
        };
        let bearer = format!("Bearer {}", "t".repeat(40));
        let ok = headers(&[("host", "127.0.0.1:8765"), ("authorization", &bearer)]);
        assert_eq!(guard.refusal(&ok), None);
        let same = headers(&[
            ("host", "localhost:8765"),
            ("origin", "http://localhost:8765"),
            ("authorization", &bearer),
        ]);
        assert_eq!(guard.refusal(&same), None);
        let refused = |pairs: &[(&str, &str)]| guard.refusal(&headers(pairs)).unwrap();
        let foreign = refused(&[
            ("host", "127.0.0.1:8765"),
            ("origin", "http://evil.example"),
            ("authorization", &bearer),
        ]);
        assert_eq!(foreign.0, StatusCode::FORBIDDEN);
        assert!(foreign.1.contains("evil.example"));
        let rebound = refused(&[("host", "evil.example:8765"), ("authorization", &bearer)]);
        assert_eq!(rebound.0, StatusCode::FORBIDDEN);
        let missing = refused(&[("host", "127.0.0.1:8765")]);
        assert_eq!(missing.0, StatusCode::UNAUTHORIZED);
        let wrong = refused(&[("host", "127.0.0.1:8765"), ("authorization", "Bearer nope")]);
        assert_eq!(wrong.0, StatusCode::UNAUTHORIZED);
        assert!(!wrong.1.contains(&"t".repeat(40)));
    }

    #[test]
    fn a_short_token_is_refused() {
        assert!(token(Some("short".into())).is_err());
        assert!(token(None).unwrap_err().message.contains(TOKEN_VAR));
        assert_eq!(token(Some("a".repeat(32))).unwrap(), "a".repeat(32));
    }
}
