//! Building a client: base URL, credentials, timeouts, user agent, retry policy.

use std::{marker::PhantomData, sync::Arc, time::Duration};

use crate::{
    Error, ValidationError,
    auth::{StaticToken, TokenProvider},
    retry::RetryPolicy,
    runtime::{Auth, Runtime},
};

/// Builds a [`crate::order::Client`] or a [`crate::member::Client`].
///
/// ```no_run
/// # fn main() -> Result<(), licensing_sdk::Error> {
/// use std::time::Duration;
/// use licensing_sdk::{RetryPolicy, order};
///
/// let client = order::Client::builder("https://licensing.example.com")
///     .application_token("app-token")
///     .timeout(Duration::from_secs(10))
///     .retry(RetryPolicy::Never)
///     .build()?;
/// # Ok(()) }
/// ```
#[must_use]
pub struct ClientBuilder<S> {
    base_url: String,
    connect_timeout: Duration,
    timeout: Duration,
    user_agent: String,
    retry: RetryPolicy,
    http: Option<reqwest::Client>,
    tokens: [Option<Arc<dyn TokenProvider>>; 2],
    service: PhantomData<S>,
}

impl<S> std::fmt::Debug for ClientBuilder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            .field("user_agent", &self.user_agent)
            .field("retry", &self.retry)
            .field("custom_http_client", &self.http.is_some())
            .field("tokens", &"[REDACTED]")
            .finish()
    }
}

impl<S> ClientBuilder<S> {
    fn new(base_url: &str) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            user_agent: concat!("licensing-sdk/", env!("CARGO_PKG_VERSION")).to_string(),
            retry: RetryPolicy::default(),
            http: None,
            tokens: [None, None],
            service: PhantomData,
        }
    }

    /// Time allowed to connect (default 10 s). Ignored with [`Self::http_client`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Time allowed for a whole attempt (default 30 s). Ignored with [`Self::http_client`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The `User-Agent` header (default `licensing-sdk/<version>`). Ignored with
    /// [`Self::http_client`].
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// When to repeat failed attempts (default [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Sends through this `reqwest::Client` (its own timeouts, proxies, TLS settings).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    fn parts(
        self,
        auth: impl FnOnce([Option<Arc<dyn TokenProvider>>; 2]) -> Result<Auth, Error>,
    ) -> Result<(String, reqwest::Client, Runtime), Error> {
        match reqwest::Url::parse(&self.base_url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {}
            _ => {
                return Err(
                    ValidationError::new("base_url", "must be an absolute http(s) URL").into(),
                );
            }
        }
        let http = match self.http {
            Some(http) => http,
            None => reqwest::Client::builder()
                .connect_timeout(self.connect_timeout)
                .timeout(self.timeout)
                .user_agent(self.user_agent)
                .build()
                .map_err(|source| Error::Transport {
                    operation: "build",
                    source,
                })?,
        };
        let runtime = Runtime {
            auth: auth(self.tokens)?,
            retry: self.retry,
        };
        Ok((self.base_url, http, runtime))
    }
}

fn required(
    token: Option<Arc<dyn TokenProvider>>,
    field: &str,
) -> Result<Arc<dyn TokenProvider>, Error> {
    token.ok_or_else(|| ValidationError::new(field, "is required").into())
}

/// Marks a [`ClientBuilder`] for the order service.
#[derive(Debug)]
pub enum OrderService {}
/// Marks a [`ClientBuilder`] for the member center.
#[derive(Debug)]
pub enum MemberService {}

impl crate::order::Client {
    /// Starts building a client for the order service at `base_url` (scheme, host, port;
    /// the operation paths are appended).
    pub fn builder(base_url: &str) -> ClientBuilder<OrderService> {
        ClientBuilder::new(base_url)
    }
}

impl ClientBuilder<OrderService> {
    /// The application access token (`Authorization: Bearer …`, scope `auth_order`).
    pub fn application_token(self, token: impl Into<String>) -> Self {
        self.application_token_provider(StaticToken::new(token))
    }

    /// A provider asked for the application token before every attempt.
    pub fn application_token_provider(mut self, provider: impl TokenProvider) -> Self {
        self.tokens[0] = Some(Arc::new(provider));
        self
    }

    /// The client, or a [`Error::Validation`] naming what is missing or malformed.
    pub fn build(self) -> Result<crate::order::Client, Error> {
        let (url, http, runtime) = self.parts(|[application, _]| {
            Ok(Auth::Order {
                application: required(application, "application_token")?,
            })
        })?;
        Ok(crate::order::Client::new_with_client(&url, http, runtime))
    }
}

impl crate::member::Client {
    /// Starts building a client for the member center at `base_url` (scheme, host, port;
    /// the operation paths are appended).
    pub fn builder(base_url: &str) -> ClientBuilder<MemberService> {
        ClientBuilder::new(base_url)
    }
}

impl ClientBuilder<MemberService> {
    /// The application-level client token (`client_credentials` grant): sent as
    /// `Authorization: Bearer …` and as `clientToken`.
    pub fn client_token(self, token: impl Into<String>) -> Self {
        self.client_token_provider(StaticToken::new(token))
    }

    /// The user-level token (`password` grant): sent as `userToken`.
    pub fn user_token(self, token: impl Into<String>) -> Self {
        self.user_token_provider(StaticToken::new(token))
    }

    /// A provider asked for the client token before every attempt.
    pub fn client_token_provider(mut self, provider: impl TokenProvider) -> Self {
        self.tokens[0] = Some(Arc::new(provider));
        self
    }

    /// A provider asked for the user token before every attempt.
    pub fn user_token_provider(mut self, provider: impl TokenProvider) -> Self {
        self.tokens[1] = Some(Arc::new(provider));
        self
    }

    /// The client, or a [`Error::Validation`] naming what is missing or malformed.
    pub fn build(self) -> Result<crate::member::Client, Error> {
        let (url, http, runtime) = self.parts(|[client, user]| {
            Ok(Auth::Member {
                client: required(client, "client_token")?,
                user: required(user, "user_token")?,
            })
        })?;
        Ok(crate::member::Client::new_with_client(&url, http, runtime))
    }
}
