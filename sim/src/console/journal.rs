//! The journal: every request the services received, newest first, filtered by service,
//! operation, code and whether a fault rule fired; each opens to its request and reply
//! (redacted as the journal keeps them) and a `curl` command that repeats it. The page
//! asks for entries newer than the newest it shows every half second
//! (`journal/rows?after=SEQ`), so new requests appear without a reload. The rows carry
//! only their summaries: an entry's request, reply and command are fetched when it is
//! opened (`journal/entry?seq=SEQ`), so a page of 200 large batches stays small.

use axum::{http::StatusCode, response::Response};
use licensing_sdk::operations::{self, Service};
use maud::{Markup, html};
use serde_json::Value;

use super::{Request, curl, html, layout};
use crate::sandbox::{Sandbox, client::types::JournalEntry, journal::Filter};

/// Entries a page shows at most (the newest that match).
pub(crate) const MAX_SHOWN: usize = 200;

/// What the filters ask for.
#[derive(Debug, Default)]
struct Wanted {
    service: Option<Service>,
    operation: Option<String>,
    code: Option<String>,
    /// `Some(true)`: only entries a fault rule fired on; `Some(false)`: only the others.
    fault: Option<bool>,
}

impl Wanted {
    fn from(request: &Request) -> Self {
        let given = |name: &str| {
            request
                .query
                .get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Self {
            service: given("service").and_then(|s| match s.as_str() {
                "order" => Some(Service::Order),
                "member" => Some(Service::Member),
                _ => None,
            }),
            operation: given("operation"),
            code: given("code"),
            fault: given("fault").and_then(|f| match f.as_str() {
                "yes" => Some(true),
                "no" => Some(false),
                _ => None,
            }),
        }
    }

    /// The filters as a query string (for the page's live updates).
    fn query(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        if let Some(service) = self.service {
            query.append_pair("service", service_key(service));
        }
        if let Some(op) = &self.operation {
            query.append_pair("operation", op);
        }
        if let Some(code) = &self.code {
            query.append_pair("code", code);
        }
        if let Some(fault) = self.fault {
            query.append_pair("fault", if fault { "yes" } else { "no" });
        }
        query.finish()
    }

    /// The newest matching entries after `after`, newest first.
    fn read(&self, sandbox: &Sandbox, after: Option<i64>) -> Vec<JournalEntry> {
        let page = sandbox.journal.read(&Filter {
            operation: self.operation.clone(),
            code: self.code.clone(),
            after,
            ..Filter::default()
        });
        page.entries
            .into_iter()
            .rev()
            .filter(|e| {
                self.service.is_none_or(|s| service_of(e) == Some(s))
                    && self.fault.is_none_or(|f| e.fault.is_some() == f)
            })
            .take(MAX_SHOWN)
            .collect()
    }
}

fn service_key(service: Service) -> &'static str {
    match service {
        Service::Order => "order",
        Service::Member => "member",
    }
}

fn service_name(service: Option<Service>) -> &'static str {
    match service {
        Some(Service::Order) => "order service",
        Some(Service::Member) => "member center",
        None => "",
    }
}

fn service_of(entry: &JournalEntry) -> Option<Service> {
    entry
        .operation
        .as_deref()
        .and_then(operations::find)
        .map(|op| op.service)
}

/// The journal page.
pub(crate) fn page(sandbox: &Sandbox, request: &Request) -> Response {
    let wanted = Wanted::from(request);
    let entries = wanted.read(sandbox, None);
    let newest = sandbox
        .journal
        .read(&Filter {
            limit: Some(1),
            ..Filter::default()
        })
        .entries
        .first()
        .map_or(0, |e| e.seq);
    let root = request.root();
    let main = html! {
        (filters(&wanted, &root))
        div.toolbar {
            p #journal-count aria-live="polite" {
                (entries.len()) " shown, newest first (at most " (MAX_SHOWN) "); new requests appear as they arrive."
            }
            button type="button" data-api=(format!("DELETE {}", request.api("/journal")))
                data-confirm="Clear the journal? Every entry is forgotten." { "Clear journal" }
        }
        ol #journal.entries data-after=(newest)
            data-rows=(format!("{root}journal/rows?{}", wanted.query())) {
            @for entry in &entries {
                (row(entry, &root))
            }
        }
    };
    layout::page(request, "", "Journal", main)
}

/// The entries after `after` that match, newest first, as list items for the page.
pub(crate) fn rows(sandbox: &Sandbox, request: &Request) -> Response {
    let wanted = Wanted::from(request);
    let after = request.query.get("after").and_then(|a| a.parse().ok());
    let entries = wanted.read(sandbox, after);
    let root = request.root();
    html(
        StatusCode::OK,
        html! {
            @for entry in &entries {
                (row(entry, &root))
            }
        },
    )
}

fn filters(wanted: &Wanted, root: &str) -> Markup {
    let selected = |yes: bool| yes.then_some("selected");
    html! {
        form.filters method="get" action=(root) role="search" aria-label="Filter the journal" {
            div {
                label for="f-service" { "Service" }
                select #f-service name="service" {
                    option value="" { "any" }
                    @for service in [Service::Order, Service::Member] {
                        option value=(service_key(service))
                            selected=[selected(wanted.service == Some(service))] { (service_name(Some(service))) }
                    }
                }
            }
            div {
                label for="f-operation" { "Operation" }
                select #f-operation name="operation" {
                    option value="" { "any" }
                    @for service in [Service::Order, Service::Member] {
                        optgroup label=(service_name(Some(service))) {
                            @for op in operations::of(service) {
                                option value=(op.id)
                                    selected=[selected(wanted.operation.as_deref() == Some(op.id))] { (op.id) }
                            }
                        }
                    }
                }
            }
            div {
                label for="f-code" { "Code" }
                input #f-code name="code" inputmode="numeric" size="8"
                    value=[wanted.code.as_deref()] placeholder="any";
            }
            div {
                label for="f-fault" { "Fault" }
                select #f-fault name="fault" {
                    option value="" { "any" }
                    option value="yes" selected=[selected(wanted.fault == Some(true))] { "a fault rule fired" }
                    option value="no" selected=[selected(wanted.fault == Some(false))] { "no fault" }
                }
            }
            button type="submit" { "Filter" }
        }
    }
}

fn row(entry: &JournalEntry, root: &str) -> Markup {
    let operation = entry.operation.as_deref().unwrap_or("(no operation)");
    let code = entry.code.as_deref().unwrap_or("none");
    let failed = entry.status != 200 || entry.code.as_deref() != Some("0");
    html! {
        li.entry.failed[failed] data-seq=(entry.seq) data-operation=(operation)
            data-code=(code) data-status=(entry.status) {
            details data-entry=(format!("{root}journal/entry?seq={}", entry.seq)) {
                summary {
                    span.time { (layout::time(entry.time)) }
                    span.service { (service_name(service_of(entry))) }
                    span.operation { (operation) }
                    span.status { "HTTP " (entry.status) }
                    span.code { "code " (code) }
                    span.fault {
                        @if let Some(rule) = entry.fault { "fault rule " (rule) }
                    }
                    span.duration { (format!("{:.1} ms", entry.duration_ms)) }
                }
                div.exchange aria-busy="true" { p.empty { "Loading the request and reply…" } }
            }
        }
    }
}

/// One entry's request, reply and command (what an opened row shows), or a note that it
/// is no longer kept.
pub(crate) fn entry(sandbox: &Sandbox, request: &Request) -> Response {
    let found = request
        .query
        .get("seq")
        .and_then(|s| s.parse().ok())
        .and_then(|seq| sandbox.journal.entry(seq));
    match found {
        // A tenant's entries are of paths under its prefix, as its clients called them.
        Some(entry) => html(
            StatusCode::OK,
            exchange(&entry, &format!("{}{}", request.origin, request.prefix)),
        ),
        None => html(
            StatusCode::NOT_FOUND,
            html! { div.exchange { p.empty { "This entry is no longer kept: the journal keeps only its newest entries." } } },
        ),
    }
}

/// One entry's request, reply and command; `base` is where the command sends it (the
/// origin, and a tenant's prefix).
fn exchange(entry: &JournalEntry, base: &str) -> Markup {
    let target = if entry.query.is_empty() {
        entry.path.clone()
    } else {
        let query: Vec<String> = entry
            .query
            .iter()
            .map(|q| format!("{}={}", q.name, q.value))
            .collect();
        format!("{}?{}", entry.path, query.join("&"))
    };
    let curl_id = format!("curl-{}", entry.seq);
    html! {
                div.exchange {
                    section {
                        h2 { "Request" }
                        pre.line { (entry.method) " " (target) }
                        (body(entry.request_body.as_ref()))
                    }
                    section {
                        h2 { "Reply" }
                        pre.line {
                            @if entry.status == 0 { "no reply: the connection was dropped" }
                            @else { "HTTP " (entry.status) }
                        }
                        (body(entry.reply_body.as_ref()))
                    }
                    section.curl {
                        h2 { "As a command" }
                        p {
                            "Credentials are read from " code { "LICENSING_APP_TOKEN" } ", "
                            code { "LICENSING_CLIENT_TOKEN" } " and " code { "LICENSING_USER_TOKEN" }
                            "; each run sends a fresh " code { "g_nonce" } "."
                        }
                        button type="button" data-copy=(curl_id) { "Copy as cURL" }
                        pre.command id=(curl_id) { (curl::command(base, entry)) }
                    }
                }
    }
}

fn body(value: Option<&Value>) -> Markup {
    html! {
        @match value {
            None => p.empty { "(no body)" },
            Some(value) => pre.json {
                (serde_json::to_string_pretty(value).unwrap_or_default())
            },
        }
    }
}
