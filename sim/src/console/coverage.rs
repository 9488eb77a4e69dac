//! The Coverage section: what the traffic in the journal exercised against the documents
//! (`licensing-coverage`), read from the live journal at every request: operations
//! called, documented codes answered and never, enum values and optional fields never
//! sent, paging, retries, and the suspected double submissions, each naming its two
//! journal entries.

use std::sync::OnceLock;

use axum::response::Response;
use licensing_coverage::{Catalogue, Report, exchange};
use maud::{Markup, PreEscaped, html};

use super::{Request, layout};
use crate::sandbox::{Sandbox, journal::Filter};

/// The documents, read once.
fn catalogue() -> Result<&'static Catalogue, &'static str> {
    static CATALOGUE: OnceLock<Result<Catalogue, String>> = OnceLock::new();
    CATALOGUE
        .get_or_init(Catalogue::documents)
        .as_ref()
        .map_err(String::as_str)
}

/// The coverage page of a simulator.
pub(crate) fn page(sandbox: &Sandbox, request: &Request) -> Response {
    layout::page(request, "coverage", "Coverage", render(sandbox, request))
}

fn render(sandbox: &Sandbox, request: &Request) -> Markup {
    if !sandbox.journal.enabled() {
        return html! {
            p { "The journal is off (" code { "--journal-capacity 0" } "): there is no traffic to report on." }
        };
    }
    let catalogue = match catalogue() {
        Ok(catalogue) => catalogue,
        Err(e) => return html! { p.error role="alert" { "The documents could not be read: " (e) } },
    };
    let page = sandbox.journal.read(&Filter::default());
    let read = serde_json::to_value(&page)
        .map_err(|e| e.to_string())
        .and_then(|journal| exchange::read("journal", &journal));
    let exchanges = match read {
        Ok(exchanges) => exchanges,
        Err(e) => return html! { p.error role="alert" { "The journal could not be read: " (e) } },
    };
    let report = Report::new(catalogue, &exchanges);
    let link = |operation: &str| {
        let query = form_urlencoded::Serializer::new(String::new())
            .append_pair("operation", operation)
            .finish();
        Some(format!("{}?{query}", request.root()))
    };
    html! {
        p {
            "From the journal: its " (page.entries.len()) " entries (it keeps the newest "
            (page.capacity) "; " (page.dropped) " dropped so far), read now. "
            "Sources name journal entries by their " code { "seq" } ". The same report as markdown, JSON or JUnit XML, with thresholds for CI: "
            code { "licensing-proxy coverage journal.json" } " over the journal's export ("
            code { "GET " (request.api("/journal")) } ")."
        }
        (PreEscaped(licensing_coverage::html::html(&report, &link)))
    }
}
