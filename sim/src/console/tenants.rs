//! The Tenants section of the simulator's console: the live tenants, and for each a way
//! into its own console. Opening one gives this browser a session of that tenant's alone
//! (its cookie kept for the tenant's prefix), made by the simulator's own admin, who may
//! administer every tenant; a tenant's admin token reaches neither this page nor any
//! other tenant's. Without the tenants themselves, which are a layer above: what this
//! page reads of them is a [`Directory`].

use std::sync::Arc;

use axum::{
    body::Body,
    http::{HeaderValue, Method, StatusCode, header},
    response::Response,
};
use licensing_host::{
    admin::{Guard, admin_error},
    pages::{AdminRoute, PageRoute},
};
use maud::html;

use super::{ROOT, Request, layout};

/// One tenant as the picker lists it.
pub(crate) struct Row {
    pub id: String,
    pub name: Option<String>,
    /// When it was created (ms since the Unix epoch).
    pub created_at: i64,
    /// Milliseconds since a request last reached it.
    pub idle_ms: u64,
    /// Its time to live, in seconds.
    pub ttl_secs: u64,
    pub region: &'static str,
    pub enterprises: usize,
    pub assets: usize,
    pub members: usize,
}

/// What the picker reads of the tenants.
pub(crate) trait Directory: Send + Sync {
    /// The live tenants, oldest first, and how many the simulator holds at most.
    fn rows(&self) -> (Vec<Row>, usize);
    /// Opens a session of tenant `id`'s console: the `Set-Cookie` value that keeps it,
    /// for the tenant's prefix only; `None` when there is no such tenant.
    fn open(&self, id: &str) -> Option<String>;
}

/// Where a tenant's console is, as the browser reaches it.
fn console_of(id: &str) -> String {
    format!("/t/{id}{ROOT}")
}

/// The picker.
pub(crate) fn page(directory: &dyn Directory, request: &Request) -> Response {
    let (rows, max) = directory.rows();
    let root = request.root();
    let main = html! {
        p {
            (rows.len()) " of at most " (max) " tenants (" code { "--max-tenants" } "). Each is a sandbox of its own, served under "
            code { "/t/{id}" } " with its own tokens; opening one signs this browser in to its console alone. Create one with "
            code { "POST " (request.api("/tenants")) } " or " code { "licensing sandbox tenant create" } "."
        }
        @if rows.is_empty() {
            p.empty { "No tenants." }
        } @else {
            table #tenants {
                caption { "Oldest first" }
                (layout::head_with_actions(&[
                    "Name", "Id", "Created", "Idle", "Time to live", "Region", "Enterprises", "Assets", "Employees",
                ]))
                tbody {
                    @for row in &rows {
                        tr data-tenant=(row.id) {
                            td { (row.name.as_deref().unwrap_or("—")) }
                            td { code { (row.id) } }
                            td { (layout::time(row.created_at)) }
                            td { (row.idle_ms / 1000) " s" }
                            td { (row.ttl_secs) " s" }
                            td { (row.region) }
                            td { (row.enterprises) }
                            td { (row.assets) }
                            td { (row.members) }
                            td {
                                form.open-tenant method="post"
                                    action=(format!("{root}tenants/{}/open", row.id))
                                    data-to=(console_of(&row.id)) {
                                    // The visible words start the accessible name (WCAG 2.5.3).
                                    button type="submit" { "Open console" span.visually-hidden { " of tenant " (row.id) } }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::page(request, "tenants", "Tenants", main)
}

/// `POST /__sandbox/tenants/{id}/open`, behind the simulator's own admin checks: a
/// session of the tenant's console for this browser (`204` with its cookie), or `404`.
pub(crate) fn open_route(directory: Arc<dyn Directory>) -> PageRoute {
    PageRoute {
        route: AdminRoute {
            path: format!("{ROOT}tenants/{{id}}/open"),
            method: Method::POST,
            handler: Arc::new(move |req| {
                let id = req.params.get("id").map_or("", String::as_str);
                let response = match directory.open(id) {
                    Some(cookie) => opened(&cookie),
                    None => admin_error(StatusCode::NOT_FOUND, "no tenant has that id"),
                };
                Box::pin(async move { response })
            }),
        },
        guard: Guard::Token,
    }
}

fn opened(cookie: &str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    if let Ok(cookie) = HeaderValue::from_str(cookie) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
