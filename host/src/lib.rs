//! The server layer `licensing-sim` and `licensing-proxy` share, for a program to be
//! served on: the accept loop with its bounds (connections, header, body, idle and write
//! timeouts, the body and reply budgets) over HTTP or HTTPS ([`Host`]; `TlsConfig` with
//! the feature `tls`); the admin checks of `/__sandbox/` (`Host`, `Origin`, JSON bodies,
//! the admin token or a signed-in session: [`AdminChecks`]); a console of the program's
//! own pages at `/__sandbox/`, in the simulator's console frame with its sign-in form,
//! script, style and Content Security Policy (`Console`, with the feature `console`); and
//! what counts as a secret where the simulator and the proxy redact ([`is_secret`],
//! [`redact`]).
//!
//! The package knows nothing of what is served on it: the program brings a [`Handler`] for
//! its requests and the pages of its console. `licensing-sim` re-exports it as
//! `licensing_sim::host`.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use axum::{
//!     body::{Body, Bytes},
//!     http::{Response, request::Parts},
//! };
//! use licensing_host::{ADMIN_PREFIX, AdminChecks, Handler, Host};
//!
//! /// Echoes every body; its admin routes need the admin checks.
//! #[derive(Clone)]
//! struct Echo(AdminChecks);
//!
//! impl Handler for Echo {
//!     async fn handle(&self, _parts: Parts, body: Result<Bytes, String>) -> Response<Body> {
//!         Response::new(Body::from(body.unwrap_or_default()))
//!     }
//!
//!     fn refuse(&self, parts: &Parts) -> Option<Response<Body>> {
//!         let admin = parts.uri.path().starts_with(ADMIN_PREFIX);
//!         admin.then(|| self.0.refusal(parts)).flatten()
//!     }
//! }
//!
//! let listening = Host::builder().bind().await?;
//! let checks = AdminChecks::new(&listening, Some("admin-secret".into()), Vec::new());
//! let host = listening.serve(Echo(checks));
//! println!("listening on {}", host.url());
//! host.shutdown().await
//! # }
//! ```
//!
//! ## Layout
//!
//! `server/` is the accept loop, `admin/` the admin checks (sessions, the slow-down of
//! wrong tokens), `pages/` the admin pages' router, `console/` the console's frame, and
//! `host/` the API above them ([`Host`], [`AdminChecks`], `Console`). The modules
//! themselves are hidden: `licensing-sim` builds its own router on their parts, and
//! requires this package at its exact version (`=`), so what it alone uses changes with
//! it and carries no promise of its own.

// The layers `licensing-sim` builds on (see the crate's Layout above).
#[doc(hidden)]
pub mod admin;
#[cfg(feature = "console")]
#[doc(hidden)]
pub mod console;
mod host;
#[doc(hidden)]
pub mod pages;
mod secret;
#[doc(hidden)]
pub mod server;

pub use host::{AdminChecks, Host, HostBuilder, Listening};
#[cfg(feature = "console")]
pub use host::{Console, ConsoleBuilder, ConsolePage};
pub use secret::{REDACTED, is_secret, redact};
#[cfg(feature = "tls")]
pub use server::TlsConfig;
pub use server::{
    DEFAULT_BODY_BUDGET, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_REPLY_BUDGET, DEFAULT_WRITE_TIMEOUT, Handler, ServerStats,
};

pub use admin::ADMIN_PREFIX;
