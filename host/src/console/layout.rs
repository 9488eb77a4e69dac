//! What every console page shares: the document, the navigation, the sign-in form, and
//! the headers that keep a page to itself.

use axum::{
    body::Body,
    http::{HeaderValue, StatusCode, header},
    response::Response,
};
use maud::{DOCTYPE, Markup, html};

use super::{CSP, PAGES_STYLE, Request};

/// A whole page: `current` is the section's path below the root.
pub fn page(request: &Request, current: &str, title: &str, main: Markup) -> Response {
    let root = request.root();
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            (head(request, title))
            body {
                a.skip href="#main" { "Skip to content" }
                header {
                    p.brand {
                        (request.mode.brand)
                        @if !request.prefix.is_empty() { " " code.prefix { (request.prefix) } }
                    }
                    nav aria-label="Console sections" {
                        ul {
                            @for &(path, name) in request.mode.sections.iter() {
                                li {
                                    a href=(format!("{root}{path}"))
                                        aria-current=[(path == current).then_some("page")] { (name) }
                                }
                            }
                        }
                    }
                    @if request.session.csrf.is_some() {
                        form.sign-out method="post" action=(format!("{root}sign-out")) {
                            button type="submit" data-sign-out { "Sign out" }
                        }
                    }
                }
                main #main tabindex="-1" {
                    h1 { (title) }
                    (main)
                }
                div #status role="status" aria-live="polite" {}
            }
        }
    };
    html(StatusCode::OK, markup)
}

fn head(request: &Request, title: &str) -> Markup {
    let root = request.root();
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · " (request.mode.brand) }
            @if let Some(csrf) = &request.session.csrf {
                meta name="sandbox-csrf" content=(csrf);
            }
            // Where the script's own requests go: a tenant's console is under its prefix.
            meta name="sandbox-root" content=(root);
            link rel="stylesheet" href=(format!("{root}console.css"));
            @if request.mode.style.is_some() {
                link rel="stylesheet" href=(format!("{root}{PAGES_STYLE}"));
            }
            script src=(format!("{root}console.js")) defer {}
        }
    }
}

/// The answer to a page request without the admin token: a sign-in form, and nothing of
/// the sandbox.
pub fn sign_in_page(request: &Request, note: Option<&str>) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            (head(request, "Sign in"))
            body {
                main #main {
                    h1 { "Sign in to the sandbox console" }
                    p { "This " (request.mode.server) "'s admin API needs its admin token (" code { (request.mode.token) } ")." }
                    @if let Some(note) = note {
                        p.error role="alert" { (note) }
                    }
                    form method="post" action=(format!("{}sign-in", request.root())) {
                        label for="token" { "Admin token" }
                        input #token type="password" name="token" autocomplete="current-password" required;
                        button type="submit" { "Sign in" }
                    }
                }
            }
        }
    };
    html(StatusCode::UNAUTHORIZED, markup)
}

/// A page: HTML with the headers that keep it to itself.
pub fn html(status: StatusCode, markup: Markup) -> Response {
    let mut response = Response::new(Body::from(markup.into_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure(headers);
    response
}

pub(super) fn secure(headers: &mut axum::http::HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Not `no-referrer`: under it Firefox sends `Origin: null` with the pages' own POSTs
    // (the sign-in form, the admin API calls), which the admin checks refuse as foreign.
    // `same-origin` still gives other sites nothing.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}
