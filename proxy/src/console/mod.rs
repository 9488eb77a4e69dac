//! The proxy's console at `/__sandbox/`, in the simulator's console frame
//! (`licensing_host::Console`): Conformance, the deviations found so far grouped by
//! operation, each with the exact request and reply it was found in (credentials
//! redacted); and Coverage, what the recorded traffic exercised against the documents
//! ([`coverage`]). The proxy has no state, journal, faults or clock of its own (those are
//! the upstream's).

pub(crate) mod coverage;

use std::{collections::BTreeMap, sync::Arc};

use licensing_coverage::Catalogue;
use licensing_host::{AdminChecks, Console, REDACTED, is_secret};
use maud::{Markup, html};

use crate::conformance::{
    Deviation, DeviationLog, RecordedMessage,
    json::{self, JsonOut},
};

/// Deviations a page shows at most (the newest).
pub(crate) const MAX_SHOWN: usize = 500;

/// The console: its Conformance page, read from `source` at every request, at the
/// console's root too, and its Coverage page, read from `recorded`; behind `checks`.
pub(crate) fn console(
    source: Arc<DeviationLog>,
    recorded: Arc<dyn coverage::Recorded>,
    checks: &AdminChecks,
) -> Console {
    let catalogue = Arc::new(Catalogue::documents());
    Console::builder("licensing-proxy", "conformance proxy")
        .page("conformance", "Conformance", move |_| {
            render(&source).into_string()
        })
        .page("coverage", "Coverage", move |page| {
            let catalogue = catalogue.as_ref().as_ref().map_err(String::as_str);
            coverage::render(catalogue, recorded.as_ref(), page.origin()).into_string()
        })
        .style(include_str!("console.css"))
        .build(checks)
}

/// What the page groups a deviation under.
fn operation_of(deviation: &Deviation) -> &str {
    deviation
        .operation_id
        .as_deref()
        .unwrap_or("(no documented operation)")
}

/// What the page shows for `source`.
pub(crate) fn render(source: &DeviationLog) -> Markup {
    let all = source.deviations();
    let shown = &all[all.len().saturating_sub(MAX_SHOWN)..];
    let mut by_operation: BTreeMap<&str, Vec<&Deviation>> = BTreeMap::new();
    for deviation in shown.iter().rev() {
        by_operation
            .entry(operation_of(deviation))
            .or_default()
            .push(deviation);
    }
    html! {
        p #proxy-status {
            "The conformance proxy is running: " (all.len()) " deviations"
            @if all.len() > shown.len() { " (the newest " (shown.len()) " shown)" }
            " in " (by_operation.len()) " operations."
        }
        @for (operation, found) in &by_operation {
            section.operation aria-label=(format!("Deviations of {operation}")) {
                h2 { (operation) " " span.count { "(" (found.len()) ")" } }
                ol.deviations {
                    @for deviation in found {
                        li { (item(source, deviation)) }
                    }
                }
            }
        }
    }
}

fn item(source: &DeviationLog, deviation: &Deviation) -> Markup {
    let pointer = if deviation.pointer.is_empty() {
        "(the whole message)"
    } else {
        &deviation.pointer
    };
    html! {
        details {
            summary {
                span.direction { (deviation.direction) }
                " " code { (pointer) } " "
                span.rule { (deviation.rule) } ": expected "
                span.expected { (deviation.expected) } ", got "
                span.actual { (deviation.actual) }
                " " span.time { (deviation.time) }
            }
            @match source.exchange(&deviation.exchange) {
                Some(exchange) => div.exchange {
                    section { h3 { "Request" } (message(&exchange.request, true)) }
                    section { h3 { "Reply" } (message(&exchange.reply, false)) }
                    p.exchange-id { "exchange " code { (deviation.exchange) } }
                },
                None => p.empty { "The exchange " code { (deviation.exchange) } " is no longer kept." },
            }
        }
    }
}

fn message(message: &RecordedMessage, request: bool) -> Markup {
    let head = if request {
        format!("{} {}", message.method, message.url)
    } else {
        format!("HTTP {}", message.status)
    };
    let headers: Vec<String> = message
        .headers
        .iter()
        .map(|(name, value)| {
            let shown = if is_secret(name) { REDACTED } else { value };
            format!("{name}: {shown}")
        })
        .collect();
    html! {
        pre.line { (head) }
        @if !headers.is_empty() { pre.headers { (headers.join("\n")) } }
        @if message.body.is_empty() {
            p.empty { "(no body)" }
        } @else {
            pre.json { (shown_body(&message.body)) }
        }
    }
}

/// A recorded body as the journal shows one: JSON indented, its secret fields redacted
/// (rewritten as it is read, building no tree of it); anything else by its size (it
/// cannot be searched for secrets).
fn shown_body(body: &str) -> String {
    let mut out = JsonOut::new(usize::MAX);
    match json::rewrite(body.as_bytes(), &mut out) {
        Ok(()) => json::pretty(&out.finish().0),
        Err(_) => format!("[{} bytes, not JSON]", body.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{Direction, RecordedExchange};

    fn deviation(operation: &str, exchange: &str, pointer: &str) -> Deviation {
        Deviation {
            operation_id: Some(operation.into()),
            direction: Direction::Reply,
            pointer: pointer.into(),
            rule: "enum".into(),
            expected: "one of [1, 2]".into(),
            actual: "7".into(),
            exchange: exchange.into(),
            time: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn with_nothing_found_it_says_so() {
        let page = render(&DeviationLog::default()).into_string();
        assert!(
            page.contains("0 deviations") && page.contains("in 0 operations"),
            "{page}"
        );
    }

    #[test]
    fn deviations_per_operation_with_their_exact_exchange() {
        let log = DeviationLog::default();
        let exchange = RecordedExchange {
            request: RecordedMessage {
                method: "GET".into(),
                url: "https://platform.example/me/api/v1/members?g_nonce=n1".into(),
                headers: vec![
                    ("clientToken".into(), "ct-secret".into()),
                    ("Accept".into(), "application/json".into()),
                ],
                ..RecordedMessage::default()
            },
            reply: RecordedMessage {
                status: 200,
                body: r#"{"code":0,"data":{"list":[{"status":7,"password":"pw-secret"}]}}"#.into(),
                ..RecordedMessage::default()
            },
        };
        log.push(
            "x-1",
            exchange,
            vec![
                deviation("listMembers", "x-1", "/data/list/0/status"),
                deviation("listMembers", "x-1", ""),
            ],
        );
        log.push(
            "x-2",
            RecordedExchange::default(),
            vec![Deviation {
                rule: "undocumented-code".into(),
                ..deviation("addMembers", "x-2", "/code")
            }],
        );
        let page = render(&log).into_string();
        assert!(
            page.contains("3 deviations") && page.contains("in 2 operations"),
            "{page}"
        );
        let add = page.find("Deviations of addMembers").unwrap();
        let list = page.find("Deviations of listMembers").unwrap();
        assert!(add < list, "operations in order");
        assert!(page[list..].contains("<code>/data/list/0/status</code>"));
        assert!(page[list..].contains("(the whole message)"));
        assert!(page[add..list].contains("undocumented-code"));
        assert!(page.contains("GET https://platform.example/me/api/v1/members?g_nonce=n1"));
        assert!(
            page.contains("&quot;status&quot;: 7"),
            "the reply as recorded: {page}"
        );
        assert!(page.contains("Accept: application/json"));
        for secret in ["ct-secret", "pw-secret"] {
            assert!(!page.contains(secret), "{secret} shown");
        }
        assert!(page.contains("clientToken: [REDACTED]"));
        let gone = DeviationLog::new(1);
        gone.push(
            "x-9",
            RecordedExchange::default(),
            vec![deviation("a", "x-8", "/x")],
        );
        assert!(
            render(&gone)
                .into_string()
                .contains("x-8</code> is no longer kept")
        );
    }
}
