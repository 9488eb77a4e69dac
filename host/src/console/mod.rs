//! The console's frame: what every page at `/__sandbox/` shares, the simulator's and
//! another program's alike (navigation, sign-in and sign-out, script, style sheet,
//! Content Security Policy), behind the admin checks.
//!
//! Pages are rendered on the server (maud, escaped by construction) and work offline:
//! their one script and one style sheet are compiled in and served from the same origin,
//! under a Content Security Policy that allows nothing else. What a page changes it
//! changes through the admin API (`/__sandbox/v1/…`), with the same checks as any other
//! client, plus the session's anti-forgery token when it signed in.

pub mod frame;
pub mod layout;

use std::{borrow::Cow, collections::HashMap, sync::Arc};

use axum::response::Response;
use maud::Markup;

use crate::admin::session::SessionInfo;

/// Where the console lives.
pub const ROOT: &str = "/__sandbox/";

/// Where a hosted console's own style sheet is, below the root.
pub const PAGES_STYLE: &str = "pages.css";

/// What every page is allowed to load and run: its own script and style, requests to its
/// own origin, nothing inline, no frames.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// Which console a listener serves: its name and its sections.
#[derive(Debug)]
pub struct Mode {
    /// What the pages call the server.
    pub brand: &'static str,
    /// What needs the admin token, on the sign-in page.
    pub server: &'static str,
    /// Where that admin token comes from, on the sign-in page (`--admin-token`).
    pub token: &'static str,
    /// The sections, in the navigation's order: (path below the root, name).
    pub sections: Cow<'static, [(&'static str, &'static str)]>,
    /// A style sheet of the pages' own, after the console's (`{ROOT}pages.css`).
    pub style: Option<&'static str>,
}

/// What a page handler is given.
pub struct Request {
    /// The page's query string, decoded.
    pub query: HashMap<String, String>,
    /// What the request's session gives the page (its anti-forgery token).
    pub session: SessionInfo,
    /// The server's own base URL as the browser reached it (`http://localhost:8080`).
    pub origin: String,
    /// The console it is a page of.
    pub mode: Arc<Mode>,
    /// The path the console is reached under before `/__sandbox` (a simulator tenant's
    /// `/t/{id}`), empty at the root: the admin checks' `prefix`.
    pub prefix: String,
}

impl Request {
    /// The console's root as the browser reaches it: [`ROOT`] under the prefix.
    pub fn root(&self) -> String {
        format!("{}{ROOT}", self.prefix)
    }

    /// An admin API path (`/faults`) as the browser reaches it, under the prefix
    /// (`/__sandbox/v1/faults`).
    pub fn api(&self, path: &str) -> String {
        format!("{}{}{path}", self.prefix, crate::admin::ADMIN_PREFIX)
    }
}

/// What answers a `GET` of one page, given its request.
pub type Page = Box<dyn Fn(&Request) -> Response + Send + Sync>;

/// A section of a hosted console: its path below the root, its name, and what renders
/// its main content.
pub type Section = (
    &'static str,
    &'static str,
    Arc<dyn Fn(&Request) -> Markup + Send + Sync>,
);
