//! Fault rules and the clock: the rules in the order they are tried with how often each
//! fired, a form for a new rule built from the spec's `FaultRuleSpec`, removal (asking
//! first), and the clock with a way to advance it.

use axum::response::Response;
use licensing_sdk::operations;
use maud::{Markup, html};

use super::{Request, layout, schema};
use crate::sandbox::{Sandbox, client::types::FaultRule};

/// The fault rules and clock page.
pub(crate) fn page(sandbox: &Sandbox, request: &Request) -> Response {
    let rules = sandbox.rules.list();
    let now = sandbox.db.clock.now_ms();
    let frozen = sandbox.db.clock.setting().is_frozen();
    let suggest = |path: &str| match path {
        "operation" => Some("operation-ids"),
        "fault.code" => Some("error-codes"),
        _ => None,
    };
    let main = html! {
        section aria-labelledby="rules-title" {
            h2 #rules-title { "Fault rules" }
            @if rules.is_empty() {
                p.empty { "No fault rules: every call runs as the documents say." }
            } @else {
                (table(&rules, request))
                button type="button" data-api=(format!("DELETE {}", request.api("/faults")))
                    data-confirm="Remove every fault rule?" { "Remove all rules" }
            }
        }
        section aria-labelledby="add-title" {
            h2 #add-title { "Add a rule" }
            p { "Rules are tried in order after the credential and " code { "g_nonce" } " checks; the first that fires applies its fault. The fields are the admin API's " code { "FaultRuleSpec" } "." }
            form #fault-form data-post=(request.api("/faults")) {
                (schema::fields("FaultRuleSpec", "", true, &suggest))
                button type="submit" { "Add rule" }
            }
            datalist #operation-ids {
                @for op in operations::ALL { option value=(op.id) {} }
            }
            datalist #error-codes {
                @for code in codes() { option value=(code) {} }
            }
        }
        section aria-labelledby="clock-title" {
            h2 #clock-title { "Clock" }
            p #clock-now {
                "Simulator time: " strong { (layout::time(now)) } " ("
                (if frozen { "frozen" } else { "running" }) ", " (now) " ms)."
            }
            form #clock-form data-post=(request.api("/clock/advance")) {
                div.field {
                    label for="advance-amount" { "Advance by" }
                    input #advance-amount name="amount" type="number" min="0" step="1" value="1" required;
                    label for="advance-unit" { "Unit" }
                    select #advance-unit name="unit" {
                        option value="60000" { "minutes" }
                        option value="3600000" { "hours" }
                        option value="86400000" selected { "days" }
                        option value="1000" { "seconds" }
                        option value="1" { "milliseconds" }
                    }
                }
                button type="submit" { "Advance the clock" }
            }
        }
    };
    layout::page(request, "faults", "Faults & clock", main)
}

/// Every code some operation documents, once, in order.
fn codes() -> Vec<&'static str> {
    let mut codes: Vec<&str> = Vec::new();
    for op in operations::ALL {
        for code in op.error_codes {
            if !codes.contains(code) {
                codes.push(code);
            }
        }
    }
    codes
}

fn table(rules: &[FaultRule], request: &Request) -> Markup {
    html! {
        table.rules {
            caption { "Tried top to bottom" }
            (layout::head_with_actions(&["Id", "Operation", "Matches", "Fault", "Fires", "Fired"]))
            tbody {
                @for rule in rules {
                    tr data-rule=(rule.id) {
                        td { (rule.id) }
                        td { (rule.operation) }
                        td {
                            @if let Some(id) = &rule.enterprise_global_id { "enterprise " (id) " " }
                            @if let Some(field) = &rule.body_field { (field.pointer) " = " (field.equals.to_string()) }
                            @if rule.enterprise_global_id.is_none() && rule.body_field.is_none() { "every call" }
                        }
                        td { (fault(rule)) }
                        td {
                            @match rule.times { Some(n) => { "at most " (n) " times" }, None => "always" }
                            @if let Some(p) = rule.probability { ", chance " (p) }
                        }
                        td { (rule.hits) }
                        td {
                            button type="button"
                                data-api=(format!("DELETE {}", request.api(&format!("/faults/{}", rule.id))))
                                data-confirm=(format!("Remove fault rule {}?", rule.id))
                                aria-label=(format!("Remove rule {}", rule.id)) { "Remove" }
                        }
                    }
                }
            }
        }
    }
}

fn fault(rule: &FaultRule) -> String {
    let f = &rule.fault;
    let mut text = f.kind.to_string();
    if let Some(code) = &f.code {
        text.push_str(&format!(" {code}"));
    }
    if let Some(status) = f.status {
        text.push_str(&format!(" {status}"));
    }
    if let Some(ms) = f.ms {
        text.push_str(&format!(" {ms} ms"));
    }
    text
}
