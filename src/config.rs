//! Building a client: base URL, credentials, TLS trust, proxies, timeouts, deadline,
//! reply bound, user agent, retry policy; from code or from the environment.

use std::{marker::PhantomData, path::Path, sync::Arc, time::Duration};

use reqwest::header::HeaderValue;

use crate::{
    ConfigError, Error,
    auth::{StaticToken, TokenProvider},
    retry::{Backoff, RetryPolicy},
    runtime::{Auth, Runtime},
};

#[cfg(any(feature = "rustls", feature = "native-tls"))]
type Certificate = reqwest::Certificate;
/// Without TLS there are no certificates to hold.
#[cfg(not(any(feature = "rustls", feature = "native-tls")))]
#[derive(Debug)]
enum Certificate {}

/// Default time allowed to connect.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time allowed for one attempt.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default largest reply body read: 64 MiB, several times a 50,000-item batch reply.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 64 * 1024 * 1024;

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
///     .deadline(Duration::from_secs(60))
///     .retry(RetryPolicy::Never)
///     .build()?;
/// # Ok(()) }
/// ```
#[must_use]
pub struct ClientBuilder<S> {
    base_url: String,
    connect_timeout: Duration,
    timeout: Duration,
    deadline: Option<Duration>,
    max_reply_bytes: u64,
    user_agent: String,
    retry: RetryPolicy,
    http: Option<reqwest::Client>,
    tokens: [Option<Arc<dyn TokenProvider>>; 2],
    ca_certificates: Vec<Result<Vec<Certificate>, ConfigError>>,
    proxy: Proxy,
    service: PhantomData<S>,
}

/// Which proxy requests go through.
#[derive(Clone, Debug)]
enum Proxy {
    /// `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`/`NO_PROXY` (and the system's settings).
    Environment,
    /// This one, for every request.
    Url(String),
    /// None, whatever the environment says.
    None,
}

impl<S> std::fmt::Debug for ClientBuilder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("user_agent", &self.user_agent)
            .field("retry", &self.retry)
            .field("custom_http_client", &self.http.is_some())
            .field("ca_certificates", &self.ca_certificates.len())
            .field("proxy", &self.proxy)
            .field("tokens", &"[REDACTED]")
            .finish()
    }
}

impl<S> ClientBuilder<S> {
    fn new(base_url: &str) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            deadline: None,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            user_agent: concat!("licensing-sdk/", env!("CARGO_PKG_VERSION")).to_string(),
            retry: RetryPolicy::default(),
            http: None,
            tokens: [None, None],
            ca_certificates: Vec::new(),
            proxy: Proxy::Environment,
            service: PhantomData,
        }
    }

    /// Time allowed to connect (default [`DEFAULT_CONNECT_TIMEOUT`]). Ignored with
    /// [`Self::http_client`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Time allowed for each attempt (default [`DEFAULT_TIMEOUT`]); a call may make
    /// several (see [`Self::deadline`]). Ignored with [`Self::http_client`], whose own
    /// timeout applies (a per-call [`crate::CallOptions::timeout`] applies to both).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Time allowed for a whole call, every attempt and every wait between attempts
    /// included (default none: bounded by the timeout and the retry policy). When it
    /// passes, the call ends with [`Error::DeadlineExceeded`].
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Largest reply body read, in bytes (default [`DEFAULT_MAX_REPLY_BYTES`]); a larger
    /// one ends the call with [`Error::ReplyTooLarge`] after reading at most this much.
    pub fn max_reply_bytes(mut self, limit: u64) -> Self {
        self.max_reply_bytes = limit;
        self
    }

    /// The `User-Agent` header (default `licensing-sdk/<version>`); sent with a custom
    /// [`Self::http_client`] too.
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// When to repeat failed attempts (default [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Trusts the CA certificates (one or more, PEM) in addition to the system's roots.
    /// A malformed PEM is reported by [`Self::build`]. Ignored with [`Self::http_client`].
    pub fn add_ca_certificate_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        let certificates = parse_certificates(pem.as_ref())
            .map_err(|problem| ConfigError::new("add_ca_certificate_pem", problem));
        self.ca_certificates.push(certificates);
        self
    }

    /// Trusts the CA certificates (one or more, PEM) of this file in addition to the
    /// system's roots. A missing file or malformed PEM is reported by [`Self::build`].
    pub fn add_ca_certificate_file(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let certificates = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|pem| parse_certificates(&pem))
            .map_err(|problem| {
                ConfigError::new(
                    "add_ca_certificate_file",
                    format!("{}: {problem}", path.display()),
                )
            });
        self.ca_certificates.push(certificates);
        self
    }

    /// Sends every request through this proxy (`http://`, `https://` or `socks5://`
    /// URL), instead of the one the environment names. A malformed URL is reported by
    /// [`Self::build`].
    pub fn proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy = Proxy::Url(url.into());
        self
    }

    /// Connects directly, ignoring `HTTPS_PROXY`/`HTTP_PROXY` and the system's settings.
    /// By default the environment's proxy is used, except for the hosts in `NO_PROXY`.
    pub fn no_proxy(mut self) -> Self {
        self.proxy = Proxy::None;
        self
    }

    /// Sends through this `reqwest::Client` (its own timeouts, proxies, TLS settings). It
    /// should follow no redirects (`redirect::Policy::none()`): the SDK refuses a reply
    /// that came from another origin, but cannot undo what a redirected request carried.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Applies the settings every service shares from the environment (see
    /// [`crate::env`]).
    fn apply_env(mut self, vars: &crate::env::Vars<'_>) -> Result<Self, Error> {
        if let Some(t) = vars.duration("LICENSING_TIMEOUT")? {
            self.timeout = t;
        }
        if let Some(t) = vars.duration("LICENSING_CONNECT_TIMEOUT")? {
            self.connect_timeout = t;
        }
        if let Some(t) = vars.duration("LICENSING_DEADLINE")? {
            self.deadline = Some(t);
        }
        if let Some(n) = vars.number("LICENSING_MAX_REPLY_BYTES")? {
            self.max_reply_bytes = n;
        }
        let attempts = vars.number("LICENSING_MAX_ATTEMPTS")?;
        match vars.text("LICENSING_RETRY").as_deref() {
            None | Some("standard") => {
                if let Some(n) = attempts {
                    if n == 0 || n > u64::from(u32::MAX) {
                        return Err(vars.malformed("LICENSING_MAX_ATTEMPTS", "at least 1"));
                    }
                    self.retry = RetryPolicy::Backoff(Backoff {
                        max_attempts: n as u32,
                        ..Backoff::default()
                    });
                }
            }
            Some("never") => self.retry = RetryPolicy::Never,
            Some(_) => return Err(vars.malformed("LICENSING_RETRY", "`standard` or `never`")),
        }
        if let Some(path) = vars.text("LICENSING_CA_FILE") {
            let certificates = std::fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|pem| parse_certificates(&pem))
                .map_err(|problem| {
                    ConfigError::new("LICENSING_CA_FILE", format!("{path}: {problem}"))
                })?;
            self.ca_certificates.push(Ok(certificates));
        }
        match vars.text("LICENSING_PROXY").as_deref() {
            None => {}
            Some("none") => self.proxy = Proxy::None,
            Some(url) => self.proxy = Proxy::Url(url.to_string()),
        }
        Ok(self)
    }

    fn parts(
        self,
        auth: impl FnOnce([Option<Arc<dyn TokenProvider>>; 2]) -> Result<Auth, Error>,
    ) -> Result<(String, reqwest::Client, Runtime), Error> {
        let origin = match reqwest::Url::parse(&self.base_url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => url,
            _ => {
                return Err(ConfigError::new(
                    "base_url",
                    format!("`{}` is not an absolute http(s) URL", self.base_url),
                )
                .into());
            }
        };
        if origin.scheme() == "https"
            && self.http.is_none()
            && !cfg!(any(feature = "rustls", feature = "native-tls"))
        {
            return Err(ConfigError::new(
                "base_url",
                "an https:// URL needs TLS, which this build of licensing-sdk lacks: enable \
                 its `rustls` feature (the default) or its `native-tls` feature",
            )
            .into());
        }
        let user_agent = HeaderValue::from_str(&self.user_agent).map_err(|_| {
            ConfigError::new("user_agent", "contains characters not allowed in a header")
        })?;
        let timeout = self.http.is_none().then_some(self.timeout);
        let http = match self.http {
            Some(http) => http,
            None => {
                let mut builder = reqwest::Client::builder()
                    .connect_timeout(self.connect_timeout)
                    .timeout(self.timeout)
                    .user_agent(self.user_agent.clone())
                    // Credentials and the body never follow a redirect to another origin.
                    .redirect(reqwest::redirect::Policy::none())
                    .referer(false);
                let mut roots = Vec::new();
                for certificates in self.ca_certificates {
                    roots.extend(certificates?);
                }
                builder = add_roots(builder, roots)?;
                builder = match self.proxy {
                    Proxy::Environment => builder,
                    Proxy::None => builder.no_proxy(),
                    Proxy::Url(url) => builder.proxy(reqwest::Proxy::all(&url).map_err(|e| {
                        ConfigError::new("proxy", format!("`{url}` is not a proxy URL: {e}"))
                    })?),
                };
                builder
                    .build()
                    .map_err(|e| ConfigError::new("http client", format!("cannot be built: {e}")))?
            }
        };
        let runtime = Runtime {
            auth: auth(self.tokens)?,
            retry: self.retry,
            timeout,
            deadline: self.deadline,
            max_reply_bytes: self.max_reply_bytes,
            user_agent,
            origin,
        };
        Ok((self.base_url, http, runtime))
    }
}

#[cfg(any(feature = "rustls", feature = "native-tls"))]
fn add_roots(
    builder: reqwest::ClientBuilder,
    roots: Vec<Certificate>,
) -> Result<reqwest::ClientBuilder, Error> {
    // Named explicitly: with both features on (a dependency asked for the other), the one
    // the user turned on by name wins over the default.
    #[cfg(feature = "native-tls")]
    let builder = builder.tls_backend_native();
    #[cfg(all(feature = "rustls", not(feature = "native-tls")))]
    let builder = builder.tls_backend_rustls();
    Ok(if roots.is_empty() {
        builder
    } else {
        builder.tls_certs_merge(roots)
    })
}

#[cfg(not(any(feature = "rustls", feature = "native-tls")))]
fn add_roots(
    builder: reqwest::ClientBuilder,
    _roots: Vec<Certificate>,
) -> Result<reqwest::ClientBuilder, Error> {
    // Parsing already failed for every certificate: `Certificate` has no values here.
    Ok(builder)
}

/// Every certificate of a PEM bundle; at least one.
fn parse_certificates(pem: &[u8]) -> Result<Vec<Certificate>, String> {
    if !pem
        .windows(b"-----BEGIN CERTIFICATE-----".len())
        .any(|w| w == b"-----BEGIN CERTIFICATE-----")
    {
        return Err("no PEM certificate (`-----BEGIN CERTIFICATE-----`) found".to_string());
    }
    certificates_from_pem(pem)
}

#[cfg(any(feature = "rustls", feature = "native-tls"))]
fn certificates_from_pem(pem: &[u8]) -> Result<Vec<Certificate>, String> {
    Certificate::from_pem_bundle(pem).map_err(|e| format!("malformed PEM: {e}"))
}

#[cfg(not(any(feature = "rustls", feature = "native-tls")))]
fn certificates_from_pem(_pem: &[u8]) -> Result<Vec<Certificate>, String> {
    Err(
        "CA certificates need TLS, which this build of licensing-sdk lacks: enable its \
         `rustls` feature (the default) or its `native-tls` feature"
            .to_string(),
    )
}

#[cfg(all(test, not(any(feature = "rustls", feature = "native-tls"))))]
mod without_tls {
    use super::*;

    #[test]
    fn https_fails_at_build_naming_the_features() {
        let e = crate::order::Client::builder("https://licensing.example.com")
            .application_token("t")
            .build()
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("`rustls` feature") && text.contains("`native-tls` feature"),
            "{text}"
        );
        assert!(
            matches!(e, Error::Config(ConfigError { ref setting, .. }) if setting == "base_url")
        );
        // Plain HTTP still builds.
        crate::order::Client::builder("http://127.0.0.1:9")
            .application_token("t")
            .build()
            .expect("http works without TLS");
    }
}

fn required(
    token: Option<Arc<dyn TokenProvider>>,
    setting: &str,
) -> Result<Arc<dyn TokenProvider>, Error> {
    token.ok_or_else(|| ConfigError::new(setting, "is required").into())
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

    /// A client configured from the environment: `LICENSING_ORDER_URL`,
    /// `LICENSING_APP_TOKEN` and the shared settings listed in [`crate::env`].
    pub fn from_env() -> Result<Self, Error> {
        Self::builder_from_env()?.build()
    }

    /// A builder configured from the environment, to adjust before [`ClientBuilder::build`].
    pub fn builder_from_env() -> Result<ClientBuilder<OrderService>, Error> {
        Self::builder_from_vars(|name| std::env::var(name).ok())
    }

    /// As [`Self::builder_from_env`], with each variable read through `lookup` (a `.env`
    /// file, a secret store, a test).
    pub fn builder_from_vars(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<ClientBuilder<OrderService>, Error> {
        let vars = crate::env::Vars::new(&lookup);
        let builder = Self::builder(&vars.required("LICENSING_ORDER_URL")?);
        let token = vars.required_secret("LICENSING_APP_TOKEN")?;
        builder.application_token(token).apply_env(&vars)
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

    /// The client, or an [`Error::Config`] naming what is missing or malformed.
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

    /// A client configured from the environment: `LICENSING_MEMBER_URL`,
    /// `LICENSING_CLIENT_TOKEN`, `LICENSING_USER_TOKEN` and the shared settings listed in
    /// [`crate::env`].
    pub fn from_env() -> Result<Self, Error> {
        Self::builder_from_env()?.build()
    }

    /// A builder configured from the environment, to adjust before [`ClientBuilder::build`].
    pub fn builder_from_env() -> Result<ClientBuilder<MemberService>, Error> {
        Self::builder_from_vars(|name| std::env::var(name).ok())
    }

    /// As [`Self::builder_from_env`], with each variable read through `lookup`.
    pub fn builder_from_vars(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<ClientBuilder<MemberService>, Error> {
        let vars = crate::env::Vars::new(&lookup);
        let builder = Self::builder(&vars.required("LICENSING_MEMBER_URL")?);
        let client = vars.required_secret("LICENSING_CLIENT_TOKEN")?;
        let user = vars.required_secret("LICENSING_USER_TOKEN")?;
        builder
            .client_token(client)
            .user_token(user)
            .apply_env(&vars)
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

    /// The client, or an [`Error::Config`] naming what is missing or malformed.
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
