//! Where tokens come from.
//!
//! A client asks its providers for a token before every attempt, so a provider that
//! refreshes tokens (the platform's token endpoints are not part of its documents) only
//! has to implement [`TokenProvider`]; [`CachedToken`] is one that calls a function of
//! yours when its token nears expiry. Tokens are [`SecretString`]s: they never appear in
//! `Debug` output, logs or error text.
//!
//! When the member center refuses a token (code `60000` for the client token, `60005` for
//! the user token), the client tells the provider that supplied it
//! ([`TokenProvider::invalidate`]). If the provider can supply another one (a
//! [`CachedToken`] can), the call is repeated at once with a fresh token: a refused
//! request was not applied, so this holds for every operation and whatever the retry
//! policy. Each token is replaced once per call: when both member tokens have expired, the
//! member center refuses them one at a time and the call gets a new one of each; a second
//! refusal of a token already replaced is returned as the call's error.

use std::{
    fmt,
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use futures_util::future::{BoxFuture, FutureExt as _, Shared};
/// Re-exported so a [`TokenProvider`] of yours needs no `secrecy` dependency of its own:
/// [`SecretString`] holds a token, [`ExposeSecret`] reads one.
pub use secrecy::{ExposeSecret, SecretString};
use tokio::time::Instant;

/// The future a [`TokenProvider`] returns.
pub type TokenFuture<'a> =
    Pin<Box<dyn Future<Output = Result<SecretString, CredentialsError>> + Send + 'a>>;

/// Supplies a token; asked before every attempt.
pub trait TokenProvider: Send + Sync + 'static {
    /// The token to send now.
    fn token(&self) -> TokenFuture<'_>;

    /// The platform refused `rejected`, a token this provider supplied. Returns whether
    /// the next [`token`](Self::token) may be a different one: if so, the client repeats
    /// the refused call once with it. Several calls in flight may report the same token;
    /// a provider that refreshes should do so once for all of them, and take a report
    /// about a token it has already replaced as answered. The default does nothing and
    /// returns `false`: the refusal is the call's error.
    fn invalidate(&self, rejected: &SecretString) -> bool {
        let _ = rejected;
        false
    }
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

/// How long before expiry a token is refreshed by default, at most.
pub const DEFAULT_REFRESH_AHEAD: Duration = Duration::from_secs(60);

/// A token that expires, fetched by a function of yours and kept until shortly before it
/// does.
///
/// `fetch` returns a token and its lifetime (an OAuth reply's `expires_in`); it is called
/// when the client first needs a token, when the cached one is due for refresh, and after
/// the platform refused the cached one (see [`TokenProvider::invalidate`]). The platform's
/// documents describe no token endpoint, so how to get a token is yours to say.
///
/// - **Refresh ahead of expiry.** A token is due for refresh [`DEFAULT_REFRESH_AHEAD`]
///   (60 s) before it expires, or once 90 % of its lifetime has passed if that comes
///   first (lifetimes under 10 minutes); [`refresh_ahead`](Self::refresh_ahead) changes
///   this. The first call to find it due waits for the refresh; until the token expires,
///   the calls that arrive meanwhile still use it, and so does that first call if the
///   refresh fails (the failure is logged as a warning).
/// - **One refresh at a time.** However many calls need a token at once, `fetch` runs
///   once and they all get its result, token or error.
/// - **Errors.** When no valid token is cached and `fetch` fails, the call fails with
///   [`crate::Error::Credentials`] carrying your [`CredentialsError`]'s text (which must
///   not contain a token); nothing is sent. The next call tries again.
///
/// `fetch` is called with a lock held: it should only start its work, which happens when
/// the future it returns is polled.
///
/// Clones share one cache. `Debug` shows no token.
///
/// ```no_run
/// # fn main() -> Result<(), licensing_sdk::Error> {
/// use std::time::Duration;
/// use licensing_sdk::{CachedToken, auth::CredentialsError, member};
///
/// /// Your identity provider's login: a token and its `expires_in`, in seconds.
/// async fn login(account: &str) -> Result<(String, u64), std::io::Error> {
///     # let _ = account;
///     // ...
///     # unimplemented!()
/// }
///
/// let user_token = CachedToken::new(|| async {
///     let (token, expires_in) = login("svc-licensing")
///         .await
///         .map_err(|e| CredentialsError(format!("login failed: {e}")))?;
///     Ok((token, Duration::from_secs(expires_in)))
/// })
/// .refresh_ahead(Duration::from_secs(120));
///
/// let members = member::Client::builder("https://member.licensing.example.com")
///     .client_token("client-token")
///     .user_token_provider(user_token)
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CachedToken {
    inner: Arc<Cache>,
}

type FetchFn = dyn Fn() -> BoxFuture<'static, Result<(SecretString, Duration), CredentialsError>>
    + Send
    + Sync;

/// A refresh in flight: every caller waiting for it polls the same future.
type Refresh = Shared<BoxFuture<'static, Result<Fetched, CredentialsError>>>;

struct Cache {
    fetch: Box<FetchFn>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// `None`: [`DEFAULT_REFRESH_AHEAD`], at most a tenth of the lifetime.
    refresh_ahead: Option<Duration>,
    current: Option<Fetched>,
    /// The refresh in flight and its number, so that only its own result is kept.
    refresh: Option<(u64, Refresh)>,
    refreshes: u64,
}

#[derive(Clone)]
struct Fetched {
    token: SecretString,
    /// When `fetch` was called: the lifetime counts from before the reply arrived.
    at: Instant,
    lifetime: Duration,
}

impl Fetched {
    fn expired(&self, now: Instant) -> bool {
        self.at
            .checked_add(self.lifetime)
            .is_some_and(|end| now >= end)
    }

    fn due(&self, now: Instant, refresh_ahead: Option<Duration>) -> bool {
        let ahead = match refresh_ahead {
            Some(ahead) => ahead.min(self.lifetime / 2),
            None => DEFAULT_REFRESH_AHEAD.min(self.lifetime / 10),
        };
        self.at
            .checked_add(self.lifetime - ahead)
            .is_some_and(|due| now >= due)
    }
}

/// What a call to [`CachedToken::token`] does.
enum Step {
    Ready(SecretString),
    Wait(u64, Refresh),
}

impl CachedToken {
    /// A provider that calls `fetch` for a token and its lifetime whenever it needs one.
    pub fn new<F, Fut, T>(fetch: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(T, Duration), CredentialsError>> + Send + 'static,
        T: Into<SecretString>,
    {
        let fetch = move || {
            let fetched = fetch();
            async move {
                let (token, lifetime) = fetched.await?;
                Ok((token.into(), lifetime))
            }
            .boxed()
        };
        Self {
            inner: Arc::new(Cache {
                fetch: Box::new(fetch),
                state: Mutex::default(),
            }),
        }
    }

    /// Refreshes a token this long before it expires (default: [`DEFAULT_REFRESH_AHEAD`],
    /// or a tenth of the token's lifetime if that is less), but never before half its
    /// lifetime has passed, so a token shorter-lived than expected is not fetched again at
    /// every call. Applies to every clone.
    pub fn refresh_ahead(self, ahead: Duration) -> Self {
        self.inner.lock().refresh_ahead = Some(ahead);
        self
    }

    /// The cached token if it is not due, else the refresh to wait for (started here if
    /// none is in flight).
    fn step(&self) -> Step {
        let mut state = self.inner.lock();
        let now = Instant::now();
        let ahead = state.refresh_ahead;
        let usable = match &state.current {
            Some(current) if !current.due(now, ahead) => return Step::Ready(current.token.clone()),
            Some(current) if !current.expired(now) => Some(current.token.clone()),
            _ => None,
        };
        match (&state.refresh, usable) {
            // Refreshing ahead of expiry: the current token still serves the others.
            (Some(_), Some(token)) => Step::Ready(token),
            (Some((id, refresh)), None) => Step::Wait(*id, refresh.clone()),
            (None, _) => {
                state.refreshes += 1;
                let id = state.refreshes;
                let fetched = (self.inner.fetch)();
                let refresh = async move {
                    let (token, lifetime) = fetched.await?;
                    Ok(Fetched {
                        token,
                        at: now,
                        lifetime,
                    })
                }
                .boxed()
                .shared();
                state.refresh = Some((id, refresh.clone()));
                Step::Wait(id, refresh)
            }
        }
    }

    /// Keeps refresh `id`'s token (once, whichever of its waiters comes first); on a
    /// failure, falls back on the current token while it is valid.
    fn settle(
        &self,
        id: u64,
        result: Result<Fetched, CredentialsError>,
    ) -> Result<SecretString, CredentialsError> {
        let mut state = self.inner.lock();
        if state.refresh.as_ref().is_some_and(|(n, _)| *n == id) {
            state.refresh = None;
            if let Ok(fetched) = &result {
                state.current = Some(fetched.clone());
            }
        }
        match result {
            Ok(fetched) => Ok(fetched.token),
            Err(error) => match &state.current {
                Some(current) if !current.expired(Instant::now()) => {
                    tracing::warn!(
                        %error,
                        "refreshing a token failed; the current one is used until it expires"
                    );
                    Ok(current.token.clone())
                }
                _ => Err(error),
            },
        }
    }
}

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Nothing leaves the state half-updated: a panic in `fetch` (called under the
        // lock) changes nothing.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TokenProvider for CachedToken {
    fn token(&self) -> TokenFuture<'_> {
        Box::pin(async move {
            match self.step() {
                Step::Ready(token) => Ok(token),
                Step::Wait(id, refresh) => {
                    let result = refresh.await;
                    self.settle(id, result)
                }
            }
        })
    }

    /// Drops the cached token if it is `rejected`; a report about a token already
    /// replaced changes nothing, so concurrent refusals cause one refresh. Always `true`.
    fn invalidate(&self, rejected: &SecretString) -> bool {
        let mut state = self.inner.lock();
        if state
            .current
            .as_ref()
            .is_some_and(|current| current.token.expose_secret() == rejected.expose_secret())
        {
            state.current = None;
        }
        true
    }
}

impl fmt::Debug for CachedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.lock();
        f.debug_struct("CachedToken")
            .field("token", &format_args!("[REDACTED]"))
            .field("cached", &state.current.is_some())
            .field("refreshing", &state.refresh.is_some())
            .field("refresh_ahead", &state.refresh_ahead)
            .finish()
    }
}
