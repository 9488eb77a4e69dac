//! The report as an HTML fragment for a console page (feature `html`): the totals, the
//! suspected double submissions, and a table of operations, each opening to what it never
//! exercised. Escaped by construction (maud); no script, no inline style, so it sits under
//! a Content Security Policy that allows neither.

use maud::{Markup, html};

use crate::{OperationCoverage, Ratio, Report};

/// Where an operation's exchanges can be read: its name, to a link (the simulator's
/// journal filtered by operation), or `None` for no link.
pub type OperationLink<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The fragment for `report`; `link` gives each operation's link, if any.
pub fn html(report: &Report, link: OperationLink<'_>) -> String {
    fragment(report, link).into_string()
}

fn fragment(report: &Report, link: OperationLink<'_>) -> Markup {
    let t = &report.totals;
    let rows: [(&str, Ratio); 5] = [
        ("Operations called", t.operations),
        ("Documented codes answered", t.codes),
        ("Enum values sent", t.enums),
        ("Optional fields sent", t.optional),
        ("List operations read past page 1", t.paging),
    ];
    html! {
        p #coverage-summary {
            (count(t.exchanges, "exchange", "exchanges"))
            @if t.unmatched > 0 { " (" (t.unmatched) " matching no documented operation)" }
            ", " (count(t.retries, "retry", "retries")) " observed, "
            (count(report.suspected_double_submissions.len(), "suspected double submission", "suspected double submissions")) "."
        }
        table #coverage-totals .coverage {
            caption { "Totals" }
            thead { tr { th scope="col" { "What" } th scope="col" { "Covered" } th scope="col" { "Of" } th scope="col" { "Ratio" } } }
            tbody {
                @for (name, ratio) in rows {
                    tr data-total=(name) {
                        th scope="row" { (name) }
                        td.number { (ratio.seen) }
                        td.number { (ratio.of) }
                        td.number { (format!("{:.0}%", ratio.fraction() * 100.0)) }
                    }
                }
            }
        }
        section #coverage-doubles aria-labelledby="doubles-title" {
            h2 #doubles-title { "Suspected double submissions (" (report.suspected_double_submissions.len()) ")" }
            @if let Some(note) = report.doubles_note() { p.doubles-note { (note) } }
            @if report.suspected_double_submissions.is_empty() {
                p { "None: no request applied the same thing twice." }
            } @else {
                p { "The documents are silent on duplicates, so the services apply these again: each is for a person to look at." }
                ol.doubles {
                    @for d in &report.suspected_double_submissions {
                        li data-operation=(d.operation) {
                            code { (d.operation) } ": " (d.what) ", applied by "
                            code.source { (d.first) } " and again by " code.source { (d.second) }
                        }
                    }
                }
            }
        }
        section #coverage-operations aria-labelledby="operations-title" {
            h2 #operations-title { "Operations" }
            table.coverage {
                thead {
                    tr {
                        th scope="col" { "Operation" }
                        th scope="col" { "Calls" }
                        th scope="col" { "Succeeded" }
                        th scope="col" { "Codes answered" }
                        th scope="col" { "Codes never answered" }
                        th scope="col" { "Retries" }
                    }
                }
                tbody {
                    @for op in &report.operations {
                        tr data-operation=(op.operation) data-calls=(op.calls) {
                            th scope="row" {
                                @match link(&op.operation) {
                                    Some(href) => a href=(href) { code { (op.operation) } },
                                    None => code { (op.operation) },
                                }
                            }
                            td.number { (op.calls) }
                            td.number { (op.succeeded) }
                            td.codes { @for (code, n) in &op.codes_seen { span.code { (code) "×" (n) } " " } }
                            td.codes { @for code in &op.codes_never_seen { span.code { (code) } " " } }
                            td.number { (op.retries) }
                        }
                    }
                }
            }
        }
        section #coverage-never aria-labelledby="never-title" {
            h2 #never-title { "Never exercised" }
            @let gaps: Vec<(&OperationCoverage, Vec<Markup>)> = report
                .operations
                .iter()
                .map(|op| (op, never(op)))
                .filter(|(_, lines)| !lines.is_empty())
                .collect();
            @if gaps.is_empty() {
                p { "Nothing: every operation, code, value and field was exercised." }
            }
            @for (op, lines) in &gaps {
                details.never data-operation=(op.operation) {
                    summary { code { (op.operation) } " (" (lines.len()) ")" }
                    ul { @for line in lines { li { (line) } } }
                }
            }
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What `op` never exercised, a line each.
fn never(op: &OperationCoverage) -> Vec<Markup> {
    let mut lines = Vec::new();
    if op.calls == 0 {
        lines.push(html! { "never called" });
    }
    for e in op.enums.iter().filter(|e| !e.never_sent.is_empty()) {
        lines.push(html! {
            code { (e.field) } " never sent "
            @for (i, v) in e.never_sent.iter().enumerate() { @if i > 0 { ", " } code { (v) } }
        });
    }
    if !op.optional_never_sent.is_empty() {
        lines.push(html! {
            "optional fields never sent: "
            @for (i, f) in op.optional_never_sent.iter().enumerate() { @if i > 0 { ", " } code { (f) } }
        });
    }
    if op.later_page_read == Some(false) {
        lines.push(html! { "no page after the first read" });
    }
    if !op.codes_undocumented.is_empty() {
        lines.push(html! {
            "answered codes the documents do not give: "
            @for (i, c) in op.codes_undocumented.keys().enumerate() { @if i > 0 { ", " } code { (c) } }
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Catalogue, exchange};

    #[test]
    fn a_page_names_the_gaps_and_the_doubles_escaped() {
        let batch = |seq: u64, id: &str| {
            json!({"seq": seq, "operation": "batchOrder", "method": "POST",
                "path": "/order/api/order/v1/batch",
                "requestBody": {"channelOrderId": id, "orderList": []},
                "status": 200, "code": "0"})
        };
        let journal = json!({"entries": [batch(1, "<b>CO-1</b>"), batch(2, "<b>CO-1</b>")]});
        let exchanges = exchange::read("j", &journal).unwrap();
        let report = Report::new(&Catalogue::documents().unwrap(), &exchanges);
        let page = html(&report, &|op| {
            (op == "batchOrder").then(|| format!("/j?operation={op}"))
        });
        assert!(page.contains("&lt;b&gt;CO-1&lt;/b&gt;"), "{page}");
        assert!(!page.contains("<b>"), "{page}");
        assert!(page.contains("applied by <code class=\"source\">j#seq 1</code> and again by <code class=\"source\">j#seq 2</code>"), "{page}");
        assert!(
            page.contains("<a href=\"/j?operation=batchOrder\">"),
            "{page}"
        );
        assert_eq!(page.matches("<a ").count(), 1, "{page}");
        assert!(page.contains("Suspected double submissions (1)"), "{page}");
        assert!(
            page.contains("2 exchanges, 0 retries observed, 1 suspected double submission."),
            "{page}"
        );
        // every operation but batchOrder is never called
        let never_called = page.matches("never called").count();
        assert_eq!(never_called, report.operations.len() - 1, "{page}");
        assert!(
            page.contains(&format!(
                "<td class=\"number\">1</td><td class=\"number\">{}</td>",
                report.operations.len()
            )),
            "{page}"
        );
    }
}
