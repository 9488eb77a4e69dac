//! What each attempt's request carries, added by the client's pre hook: the tokens in the
//! headers each service asks for, the user agent, the attempt's timeout and a fresh
//! `g_nonce`; and which provider to ask for a new token when the platform refuses one.

use std::sync::PoisonError;

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use secrecy::ExposeSecret as _;

use super::{
    Auth, Runtime,
    hooks::{ATTEMPT, Sent},
    origin::{origin_of, same_origin},
};
use crate::{Error, ErrorCode};

const CLIENT_TOKEN: HeaderName = HeaderName::from_static("clienttoken");
const USER_TOKEN: HeaderName = HeaderName::from_static("usertoken");

impl Runtime {
    /// Adds the credentials, the user agent, the attempt's timeout and a fresh `g_nonce`
    /// to an outgoing request.
    pub(super) async fn prepare(&self, request: &mut reqwest::Request) -> Result<(), String> {
        if !same_origin(request.url(), &self.origin) {
            // Generated paths are relative to the base URL; anything else is a bug, and
            // credentials must not follow it.
            return Err(format!(
                "refusing to send credentials to {}: not the configured base URL",
                origin_of(request.url())
            ));
        }
        // Set here, not only on the built client, so a custom `reqwest::Client` keeps it.
        request
            .headers_mut()
            .insert(reqwest::header::USER_AGENT, self.user_agent.clone());
        // Only a per-call override needs a timer of its own; the client enforces its own.
        let _ = ATTEMPT.try_with(|a| {
            if let Some(timeout) = a.timeout_override {
                *request.timeout_mut() = Some(timeout);
            }
        });
        let sent = match &self.auth {
            Auth::Order { application } => {
                let token = application.token().await.map_err(|e| e.to_string())?;
                let bearer = bearer(token.expose_secret())?;
                request.headers_mut().insert(AUTHORIZATION, bearer);
                [Some(token), None]
            }
            Auth::Member { client, user } => {
                let client = client.token().await.map_err(|e| e.to_string())?;
                let user = user.token().await.map_err(|e| e.to_string())?;
                let headers = [
                    (AUTHORIZATION, bearer(client.expose_secret())?),
                    (CLIENT_TOKEN, sensitive(client.expose_secret())?),
                    (USER_TOKEN, sensitive(user.expose_secret())?),
                ];
                request.headers_mut().extend(headers);
                [Some(client), Some(user)]
            }
        };
        let _ = ATTEMPT.try_with(|a| *a.sent.lock().unwrap_or_else(PoisonError::into_inner) = sent);
        // The order document requires `Content-Type: application/json` on every endpoint,
        // bodiless ones included; the member center only where there is a body.
        if matches!(self.auth, Auth::Order { .. }) {
            request
                .headers_mut()
                .entry(CONTENT_TYPE)
                .or_insert(HeaderValue::from_static("application/json"));
        }
        request
            .url_mut()
            .query_pairs_mut()
            .append_pair("g_nonce", &nonce());
        Ok(())
    }
}

impl Runtime {
    /// Tells the provider of a token the platform refused (`60000`: the application or
    /// client token, `60005`: the user token) which one it was; whether it may supply
    /// another. Each of a call's tokens is replaced once at most (`replaced`), so a call
    /// whose two member tokens have both expired, refused one at a time, gets both new.
    pub(super) fn invalidate_refused(
        &self,
        error: &Error,
        sent: &Sent,
        replaced: &mut [bool; 2],
    ) -> bool {
        let (provider, slot) = match (&self.auth, error.code()) {
            (
                Auth::Order { application: p } | Auth::Member { client: p, .. },
                Some(ErrorCode::ApplicationTokenInvalid),
            ) => (p, 0),
            (Auth::Member { user, .. }, Some(ErrorCode::UserTokenInvalid)) => (user, 1),
            _ => return false,
        };
        let invalidated = !replaced[slot]
            && sent[slot]
                .as_ref()
                .is_some_and(|token| provider.invalidate(token));
        replaced[slot] |= invalidated;
        invalidated
    }
}

/// `Bearer <token>`, as a sensitive header value: its bytes written once, into the buffer
/// the value keeps (`format!` and then `HeaderValue::from_str` would copy them twice).
fn bearer(token: &str) -> Result<HeaderValue, String> {
    let mut value = Vec::with_capacity("Bearer ".len() + token.len());
    value.extend_from_slice(b"Bearer ");
    value.extend_from_slice(token.as_bytes());
    sensitive_bytes(bytes::Bytes::from(value))
}

/// Sensitive values are left out of `Debug` output by `http` and of HTTP/2 header tables.
fn sensitive(value: &str) -> Result<HeaderValue, String> {
    sensitive_bytes(bytes::Bytes::copy_from_slice(value.as_bytes()))
}

fn sensitive_bytes(value: bytes::Bytes) -> Result<HeaderValue, String> {
    let mut v = HeaderValue::from_maybe_shared(value)
        .map_err(|_| "a token contains characters not allowed in an HTTP header".to_string())?;
    v.set_sensitive(true);
    Ok(v)
}

/// 192 bits from the operating system's CSPRNG, URL-safe base64: 32 characters.
pub fn nonce() -> String {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    URL_SAFE_NO_PAD.encode(bytes)
}
