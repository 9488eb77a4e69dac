//! Where tokens come from.
//!
//! A client asks its providers for a token before every attempt, so a provider that
//! refreshes tokens (the platform's token endpoints are not part of its documents) only
//! has to implement [`TokenProvider`]. Tokens are [`SecretString`]s: they never appear in
//! `Debug` output, logs or error text.

use std::{fmt, future::Future, pin::Pin};

pub use secrecy::SecretString;

/// The future a [`TokenProvider`] returns.
pub type TokenFuture<'a> =
    Pin<Box<dyn Future<Output = Result<SecretString, CredentialsError>> + Send + 'a>>;

/// Supplies a token; asked before every attempt.
pub trait TokenProvider: Send + Sync + 'static {
    /// The token to send now.
    fn token(&self) -> TokenFuture<'_>;
}

/// Why a provider could not supply a token. Must not contain the token.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct CredentialsError(pub String);

/// A token that never changes.
#[derive(Clone)]
pub struct StaticToken(SecretString);

impl StaticToken {
    /// Wraps a token.
    pub fn new(token: impl Into<String>) -> Self {
        Self(SecretString::from(token.into()))
    }
}

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticToken([REDACTED])")
    }
}

impl TokenProvider for StaticToken {
    fn token(&self) -> TokenFuture<'_> {
        let token = self.0.clone();
        Box::pin(async move { Ok(token) })
    }
}

impl<F> TokenProvider for F
where
    F: Fn() -> TokenFuture<'static> + Send + Sync + 'static,
{
    fn token(&self) -> TokenFuture<'_> {
        self()
    }
}
