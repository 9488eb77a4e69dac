//! The sandbox console: pages at `/__sandbox/` that show the journal, the state, the
//! fault rules and the clock, on the simulator's own listener and behind the admin API's
//! checks. Their frame (navigation, signing in and out, the script and style sheet, the
//! Content Security Policy) is the server layer's (`licensing_host::console`), which
//! another program's console is made in too.
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

/// The simulator's console: every section.
pub(crate) const SANDBOX: Mode = Mode {
    brand: "licensing-sim sandbox",
    server: "simulator",
    sections: Cow::Borrowed(&[
        ("", "Journal"),
        ("state", "State"),
        ("faults", "Faults & clock"),
        ("coverage", "Coverage"),
        ("conformance", "Conformance"),
    ]),
    style: None,
};

type Handler = fn(&Sandbox, &Request) -> Response;

/// The console's routes, bound to `sandbox`, behind the admin checks of `access`.
pub(crate) fn pages(sandbox: &Arc<Sandbox>, access: &AdminAccess) -> Pages {
    let pages: [(&'static str, Handler); 7] = [
        ("", journal::page),
        ("journal/rows", journal::rows),
        ("journal/entry", journal::entry),
        ("state", state::page),
        ("faults", faults::page),
        ("coverage", coverage::page),
        ("conformance", conformance::page),
    ];
    let pages = pages
        .into_iter()
        .map(|(path, handler)| {
            let sandbox = Arc::clone(sandbox);
            let page: Page = Box::new(move |request| handler(&sandbox, request));
            (path, page)
        })
        .collect();
    frame::pages(SANDBOX, pages, access)
}
