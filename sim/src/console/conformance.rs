//! The Conformance section: checking real traffic against the documents is the work of a
//! program of its own, the conformance proxy (`licensing-proxy`), which serves its
//! findings on its own console. This page says how to start one in front of this
//! simulator.

use axum::response::Response;
use maud::{Markup, html};

use super::{Request, layout};
use crate::sandbox::Sandbox;

/// The conformance page of a simulator.
pub(crate) fn page(_sandbox: &Sandbox, request: &Request) -> Response {
    layout::page(
        request,
        "conformance",
        "Conformance",
        render(&format!("{}{}", request.origin, request.prefix)),
    )
}

/// What the page shows, for a simulator (or a tenant of one) reached at `origin`.
pub(crate) fn render(origin: &str) -> Markup {
    html! {
        p { "The simulator does not check traffic against the documents: the conformance proxy, licensing-proxy, does." }
        p { "It forwards every request to a deployment of the platform (or to this simulator), checks the request and the reply against the specs, and shows each deviation, with the exact request and reply it was found in, on its own console. In front of this simulator:" }
        pre { "licensing-proxy --upstream " (origin) " --addr 127.0.0.1:8081" }
        p { "Then send the SDK's calls to " code { "http://127.0.0.1:8081" } " and open the proxy's console at " code { "http://127.0.0.1:8081/__sandbox/" } "." }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_says_how_to_start_the_proxy() {
        let page = render("http://127.0.0.1:8080").into_string();
        assert!(
            page.contains("licensing-proxy --upstream http://127.0.0.1:8080"),
            "{page}"
        );
        assert!(page.contains("http://127.0.0.1:8081/__sandbox/"), "{page}");
    }
}
