//! The sandbox console: pages at `/__sandbox/` that show the journal, the state, the
//! fault rules and the clock, on the simulator's own listener and behind the admin API's
//! checks. Their frame (navigation, signing in and out, the script and style sheet, the
//! Content Security Policy) is the server layer's (`licensing_host::console`), which
//! another program's console is made in too.
//!
//! Each tenant has the same pages of its own under its prefix (`/t/{id}/__sandbox/`),
//! behind its own admin token; the simulator's console adds a picker of the tenants
//! ([`tenants`]), which only the simulator's own admin reaches.
//!
//! Pages are rendered on the server (maud, escaped by construction) and work offline.
//! What a page changes it changes through the admin API (`/__sandbox/v1/…`), with the
//! same checks as any other client, plus the session's anti-forgery token when it signed
//! in.

mod conformance;
mod coverage;
mod curl;
mod faults;
mod journal;
mod layout;
mod schema;
mod state;
mod tenants;

use std::{borrow::Cow, sync::Arc};

use axum::response::Response;
use licensing_host::{
    admin::AdminAccess,
    console::{Mode, Page, frame},
    pages::Pages,
};
// What the pages use of the frame.
use licensing_host::console::{ROOT, Request, layout::html};

use crate::sandbox::Sandbox;
pub(crate) use tenants::{Directory, Row};

/// The sections every sandbox's console has.
const SECTIONS: [(&str, &str); 5] = [
    ("", "Journal"),
    ("state", "State"),
    ("faults", "Faults & clock"),
    ("coverage", "Coverage"),
    ("conformance", "Conformance"),
];

/// The simulator's console: every section, and the tenants.
pub(crate) fn simulator_mode() -> Mode {
    let mut sections = SECTIONS.to_vec();
    sections.push(("tenants", "Tenants"));
    Mode {
        brand: "licensing-sim sandbox",
        server: "simulator",
        token: "--admin-token",
        sections: Cow::Owned(sections),
        style: None,
    }
}

/// A tenant's console: its own sections, and nothing of the other tenants.
pub(crate) const TENANT: Mode = Mode {
    brand: "licensing-sim tenant",
    server: "tenant",
    token: "tokens.admin, given when the tenant was created",
    sections: Cow::Borrowed(&SECTIONS),
    style: None,
};

/// Whose console a sandbox serves.
pub(crate) enum Scope {
    /// The simulator's own (the default tenant's), with the picker of `Directory`'s
    /// tenants.
    Simulator(Arc<dyn Directory>),
    /// A tenant's: its own pages alone, under the prefix of its admin checks.
    Tenant,
}

type Handler = fn(&Sandbox, &Request) -> Response;

/// The console's routes, bound to `sandbox`, behind the admin checks of `access`.
pub(crate) fn pages(sandbox: &Arc<Sandbox>, access: &AdminAccess, scope: Scope) -> Pages {
    let own: [(&'static str, Handler); 7] = [
        ("", journal::page),
        ("journal/rows", journal::rows),
        ("journal/entry", journal::entry),
        ("state", state::page),
        ("faults", faults::page),
        ("coverage", coverage::page),
        ("conformance", conformance::page),
    ];
    let mut pages: Vec<(&'static str, Page)> = own
        .into_iter()
        .map(|(path, handler)| {
            let sandbox = Arc::clone(sandbox);
            let page: Page = Box::new(move |request| handler(&sandbox, request));
            (path, page)
        })
        .collect();
    match scope {
        Scope::Tenant => frame::pages(TENANT, pages, access),
        Scope::Simulator(directory) => {
            let listed = Arc::clone(&directory);
            pages.push((
                "tenants",
                Box::new(move |request| tenants::page(listed.as_ref(), request)),
            ));
            let mut pages = frame::pages(simulator_mode(), pages, access);
            pages.routes.push(tenants::open_route(directory));
            pages
        }
    }
}
