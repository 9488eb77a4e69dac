//! The state: enterprises and their customers (the accounts), assets, employees, orders
//! and loans in tables, each record linked to those it names (an asset's holder, an
//! employee's assets); a search over every table; export, import, seeds and reset.
//!
//! It reads the export document (`GET /__sandbox/v1/state`), so it shows what an export
//! holds, passwords excepted.

use axum::response::Response;
use maud::{Markup, html};
use serde_json::{Map, Value};
use std::collections::HashMap;

use super::{Request, layout, schema};
use crate::sandbox::{Sandbox, journal::redact};

/// Rows a table shows a page; its other pages are a link away (`?assets-page=2`), and a
/// search narrows every table at once.
pub(crate) const PAGE_ROWS: usize = 200;

/// The state page.
pub(crate) fn page(sandbox: &Sandbox, request: &Request) -> Response {
    let document = sandbox.db.export_state();
    let state = &document["state"];
    let search = request
        .query
        .get("q")
        .map(|q| q.trim().to_lowercase())
        .unwrap_or_default();
    let empty = Map::new();
    let records = |name: &str| state[name].as_object().unwrap_or(&empty);
    let (enterprises, customers, assets, members, orders, loans) = (
        records("enterprises"),
        records("customers"),
        records("assets"),
        records("members"),
        records("orders"),
        records("loans"),
    );
    let seeds = schema::enumeration("BuiltinSeed");
    // An asset names its holder and its orders; the other way round is found once.
    let mut by_holder: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut by_order: HashMap<&str, Vec<&str>> = HashMap::new();
    for (num, asset) in assets {
        if let Some(holder) = asset["holder"].as_str() {
            by_holder.entry(holder).or_default().push(num);
        }
        for order in asset["orders"].as_array().into_iter().flatten() {
            if let Some(order) = order.as_str() {
                by_order.entry(order).or_default().push(num);
            }
        }
    }
    let main = html! {
        div.toolbar {
            a.button href=(request.api("/state")) download="licensing-sim-state.json" { "Export state" }
            form #import-form data-put=(request.api("/state"))
                data-confirm="Replace the whole state with this file? What the simulator holds now is lost." {
                label for="import-file" { "State file" }
                input #import-file type="file" name="file" accept="application/json,.json" required;
                button type="submit" { "Import" }
            }
            form #seed-form data-seed {
                label for="seed-name" { "Seed" }
                select #seed-name name="name" {
                    @for seed in &seeds { option value=(seed) { (seed) } }
                }
                button type="submit" { "Load seed" }
            }
            button #reset type="button" data-api=(format!("POST {}", request.api("/reset"))) data-body="{}"
                data-confirm="Reset the simulator? Every enterprise, customer, order, asset, employee and loan is forgotten." {
                "Reset"
            }
        }
        form.filters method="get" action=(format!("{}state", request.root())) role="search" aria-label="Search the state" {
            label for="q" { "Search" }
            input #q type="search" name="q" value=(search) placeholder="a name, id or number";
            button type="submit" { "Search" }
        }
        @let matches = |record: &Value| search.is_empty() || searchable(record).contains(&search);
        (section(&request.query, "Enterprises", "enterprises", enterprises, &matches,
            &["Global id", "Name", "Code", "Accounts", "Employees"], &|id, e| html! {
            td { (anchor("enterprise", id)) }
            td { (text(&e["name"])) }
            td { (text(&e["code"])) }
            td { (links("customer", &e["customers"])) }
            td { (links("member", &e["members"])) }
        }))
        (section(&request.query, "Accounts", "customers", customers, &matches,
            &["Customer id", "Name", "Enterprise", "Channel", "CRM id", "Branch"], &|id, c| html! {
            td { (anchor("customer", id)) }
            td { (text(&c["name"])) }
            td { (link("enterprise", &c["enterprise"])) }
            td {
                @if let Some(channel) = c["channel"].as_object() {
                    (text(&channel["code"])) " / " (text(&channel["customerId"]))
                }
            }
            td { (text(&c["crm"])) }
            td { (text(&c["branch"])) }
        }))
        (section(&request.query, "Assets", "assets", assets, &matches,
            &["Asset number", "Asset id", "License type", "Enterprise", "Customer", "Holder", "Products", "Orders"], &|num, a| html! {
            td { (anchor("asset", num)) }
            td { (text(&a["id"])) }
            td {
                (text(&a["licenseType"]))
                @if a["lentLock"] == Value::Bool(true) { " (lent lock)" }
                @if a["locked"] == Value::Bool(true) { " (locked)" }
            }
            td { (link("enterprise", &a["enterprise"])) }
            td { (link("customer", &a["customer"])) }
            td { (link("member", &a["holder"])) }
            td { (products(&a["products"])) }
            td { (links("order", &a["orders"])) }
        }))
        (section(&request.query, "Employees", "members", members, &matches,
            &["Global id", "Account", "Name", "Enterprise", "Assets held", "Trial"], &|id, m| html! {
            td { (anchor("member", id)) }
            td { (text(&m["account"])) }
            td { (text(&m["name"])) }
            td { (link("enterprise", &m["enterprise"])) }
            td { (listed("asset", by_holder.get(id))) }
            td { (if m["trial"] == Value::Bool(true) { "yes" } else { "no" }) }
        }))
        (section(&request.query, "Orders", "orders", orders, &matches,
            &["License order id", "Type", "Customer", "Assets"], &|id, o| html! {
            td { (anchor("order", id)) }
            td { (text(&o["orderType"])) }
            td { (link("customer", &o["customer"])) }
            td { (listed("asset", by_order.get(id))) }
        }))
        (section(&request.query, "Loans", "loans", loans, &matches,
            &["Lent lock", "Employee", "Assets lent"], &|lock, l| html! {
            td { (link("asset", &Value::from(lock))) }
            td { (link("member", &l["member"])) }
            td { (text(&Value::from(l["assets"].as_array().map_or(0, Vec::len)))) " assets" }
        }))
    };
    layout::page(request, "state", "State", main)
}

type Row<'r> = dyn Fn(&str, &Value) -> Markup + 'r;

fn section(
    query: &HashMap<String, String>,
    title: &str,
    key: &str,
    records: &Map<String, Value>,
    matches: &dyn Fn(&Value) -> bool,
    columns: &[&str],
    row: &Row<'_>,
) -> Markup {
    let found: Vec<(&String, &Value)> = records.iter().filter(|(_, r)| matches(r)).collect();
    let heading = format!("{key}-title");
    let param = format!("{key}-page");
    let pages = found.len().div_ceil(PAGE_ROWS).max(1);
    let page = query
        .get(&param)
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, pages);
    let first = (page - 1) * PAGE_ROWS;
    let shown = &found[first..found.len().min(first + PAGE_ROWS)];
    // The same page with this table at `to`, the other tables and the search kept.
    let href = |to: usize| {
        let mut pairs: Vec<(&String, String)> = query
            .iter()
            .filter(|(k, _)| **k != param)
            .map(|(k, v)| (k, v.clone()))
            .collect();
        pairs.push((&param, to.to_string()));
        pairs.sort();
        let mut out = form_urlencoded::Serializer::new(String::new());
        for (k, v) in pairs {
            out.append_pair(k, &v);
        }
        format!("?{}#{heading}", out.finish())
    };
    html! {
        section aria-labelledby=(heading) {
            h2 id=(heading) { (title) " " span.count { "(" (found.len()) ")" } }
            @if found.is_empty() {
                p.empty { "None." }
            } @else {
                table #(key) {
                    thead { tr { @for column in columns { th scope="col" { (column) } } } }
                    tbody {
                        @for (id, record) in shown {
                            tr { (row(id, record)) }
                        }
                    }
                }
                @if pages > 1 {
                    nav.pages aria-label=(format!("{title}: pages")) data-table=(key) {
                        @if page > 1 { a rel="prev" href=(href(page - 1)) { "Previous" } " " }
                        span { "Rows " (first + 1) "–" (first + shown.len()) " of " (found.len()) ", page " (page) " of " (pages) }
                        @if page < pages { " " a rel="next" href=(href(page + 1)) { "Next" } }
                    }
                }
            }
        }
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A record's own cell, which links point to.
fn anchor(kind: &str, id: &str) -> Markup {
    html! { span id=(format!("{kind}-{id}")) { (id) } }
}

fn link(kind: &str, id: &Value) -> Markup {
    let id = text(id);
    html! {
        @if !id.is_empty() { a href=(format!("#{kind}-{id}")) { (id) } }
    }
}

fn links(kind: &str, ids: &Value) -> Markup {
    html! {
        @for (i, id) in ids.as_array().into_iter().flatten().enumerate() {
            @if i > 0 { ", " }
            (link(kind, id))
        }
    }
}

fn products(products: &Value) -> String {
    products
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| text(&p["product"]["productName"]))
        .collect::<Vec<_>>()
        .join(", ")
}

fn listed(kind: &str, ids: Option<&Vec<&str>>) -> Markup {
    html! {
        @for (i, id) in ids.into_iter().flatten().enumerate() {
            @if i > 0 { ", " }
            a href=(format!("#{kind}-{id}")) { (id) }
        }
    }
}

/// A record as a search reads it: lower case, secrets left out.
fn searchable(record: &Value) -> String {
    let mut record = record.clone();
    redact(&mut record);
    record.to_string().to_lowercase()
}
