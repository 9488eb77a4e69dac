//! What a run found, for people and programs: markdown (a table of every check, then each
//! departure with its exact request and reply, redacted), JSON, and JUnit XML for CI
//! dashboards; with `--compare-with`, the checks whose outcome differs between the two
//! deployments, side by side. Text from a deployment is escaped for where it goes.

use std::fmt::Write as _;

use licensing_escape::{markdown, terminal, xml};
use serde::Serialize;

use super::{
    http::Shown,
    outcome::{Outcome, Verdict},
    plan::{Check, Source, Tier},
};

/// The deployment a run asked.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    pub order_url: String,
    pub member_url: String,
}

/// Counts of a run.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub as_documented: usize,
    pub departs: usize,
    pub not_run: usize,
    pub requests: u64,
    pub writes: u64,
    /// Writes still to undo (`licensing probe --finish`).
    pub not_undone: usize,
}

/// A check whose outcome differs between two deployments.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    pub check: String,
    pub here: Verdict,
    pub here_why: String,
    pub there: Verdict,
    pub there_why: String,
}

/// The comparison with a second deployment.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Its URL.
    pub with: String,
    pub differences: Vec<Difference>,
}

/// A run's report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub deployment: Deployment,
    pub summary: Summary,
    pub outcomes: Vec<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

impl Report {
    /// The report of `outcomes`.
    pub fn new(deployment: Deployment, outcomes: Vec<Outcome>, requests: u64, writes: u64) -> Self {
        let count = |v: Verdict| outcomes.iter().filter(|o| o.verdict == v).count();
        let summary = Summary {
            as_documented: count(Verdict::AsDocumented),
            departs: count(Verdict::Departs),
            not_run: count(Verdict::NotRun),
            requests,
            writes,
            not_undone: 0,
        };
        Report {
            deployment,
            summary,
            outcomes,
            comparison: None,
        }
    }
}

/// The checks run on both sides (reads and refusals) whose outcomes differ.
pub fn compare(here: &[Outcome], there: &[Outcome]) -> Vec<Difference> {
    here.iter()
        .filter(|o| o.check.tier <= Tier::Refusal)
        .filter_map(|a| {
            let b = there.iter().find(|b| b.check.id == a.check.id)?;
            (a.verdict != b.verdict).then(|| Difference {
                check: a.check.id.clone(),
                here: a.verdict,
                here_why: a.why.clone(),
                there: b.verdict,
                there_why: b.why.clone(),
            })
        })
        .collect()
}

fn source_text(source: &Source) -> String {
    match source {
        Source::Doc { document, quote } => format!("{document}: “{quote}”"),
        Source::Spec { spec, pointer } => format!("{spec}{pointer}"),
    }
}

/// The plan as markdown: each check, its tier, what it asks and what it rests on.
pub fn plan_markdown(checks: &[Check]) -> String {
    let mut out = String::from("| check | tier | asks | tests |\n|---|---|---|---|\n");
    for c in checks {
        let sources: Vec<String> = c
            .sources
            .iter()
            .map(|s| markdown::code(&source_text(s)))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            markdown::code(&c.id),
            c.tier.as_str(),
            markdown::text(&c.title),
            sources.join("<br>")
        );
    }
    out
}

/// Text in a fenced block: long enough a fence for any run of backticks inside, and no
/// control character left to act on a terminal. Its own line breaks stay breaks (a
/// request's headers one a line); a control character inside a line is shown escaped.
fn fenced(text: &str) -> String {
    let text: Vec<_> = text.lines().map(terminal::escape).collect();
    let text = text.join("\n");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{text}\n{fence}\n")
}

/// An exchange as text: the request line, headers and body, then the reply.
pub fn exchange_text(x: &Shown) -> String {
    let mut out = format!("{} {}\n", x.method, x.url);
    for (name, value) in &x.request_headers {
        let _ = writeln!(out, "{name}: {value}");
    }
    if let Some(body) = &x.request_body {
        let _ = writeln!(out, "\n{body}");
    }
    match x.status {
        0 => out.push_str("\n(no reply)\n"),
        status => {
            let _ = writeln!(out, "\nHTTP {status}");
            if let Some(body) = &x.reply_body {
                let _ = writeln!(out, "{body}");
            }
        }
    }
    if let Some(note) = &x.note {
        let _ = writeln!(out, "({note})");
    }
    out
}

/// The report as markdown.
pub fn markdown(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::from("# licensing probe\n\n");
    let _ = writeln!(
        out,
        "Order service {}, member center {}: {} checks, {} as documented, {} departing, {} not run; \
         {} requests, {} writes{}.\n",
        markdown::code(&report.deployment.order_url),
        markdown::code(&report.deployment.member_url),
        report.outcomes.len(),
        s.as_documented,
        s.departs,
        s.not_run,
        s.requests,
        s.writes,
        match s.not_undone {
            0 if s.writes > 0 => ", every one undone".to_string(),
            0 => String::new(),
            n => format!(", {n} not undone yet (`licensing probe --finish`)"),
        }
    );
    out.push_str("| check | tier | outcome | note |\n|---|---|---|---|\n");
    for o in &report.outcomes {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            markdown::code(&o.check.id),
            o.check.tier.as_str(),
            o.verdict.as_str(),
            markdown::text(&o.why)
        );
    }
    let departing: Vec<&Outcome> = report
        .outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Departs)
        .collect();
    if !departing.is_empty() {
        out.push_str("\n## Departures\n");
    }
    for o in departing {
        let _ = writeln!(
            out,
            "\n### {}\n\n{}\n",
            markdown::code(&o.check.id),
            markdown::text(&o.check.title)
        );
        for source in &o.check.sources {
            let _ = writeln!(out, "- tests {}", markdown::code(&source_text(source)));
        }
        let _ = writeln!(out, "\n{}\n", markdown::text(&o.why));
        for x in &o.exchanges {
            out.push_str(&fenced(&exchange_text(x)));
        }
    }
    if let Some(c) = &report.comparison {
        let _ = writeln!(
            out,
            "\n## Differences with {}\n\n{} checks differ.\n",
            markdown::code(&c.with),
            c.differences.len()
        );
        if !c.differences.is_empty() {
            out.push_str("| check | here | there |\n|---|---|---|\n");
            for d in &c.differences {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} |",
                    markdown::code(&d.check),
                    side(d.here.as_str(), &d.here_why),
                    side(d.there.as_str(), &d.there_why)
                );
            }
        }
    }
    out
}

/// One side of a difference: its outcome, and why when there is something to say.
fn side(verdict: &str, why: &str) -> String {
    match why {
        "" => verdict.to_string(),
        why => format!("{verdict}: {}", markdown::text(why)),
    }
}

/// The report as JUnit XML: a test case per check, departures as failures, checks not
/// run as skipped.
pub fn junit(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"licensing probe\" tests=\"{0}\" failures=\"{1}\" skipped=\"{2}\">\n\
         <testsuite name=\"licensing probe\" tests=\"{0}\" failures=\"{1}\" skipped=\"{2}\">",
        report.outcomes.len(),
        s.departs,
        s.not_run
    );
    for o in &report.outcomes {
        let _ = write!(
            out,
            "<testcase classname=\"licensing.probe.{}\" name=\"{}\"",
            o.check.tier.as_str(),
            xml::text(&o.check.id)
        );
        match o.verdict {
            Verdict::AsDocumented => out.push_str("/>\n"),
            Verdict::NotRun => {
                let _ = writeln!(
                    out,
                    "><skipped message=\"{}\"/></testcase>",
                    xml::text(&o.why)
                );
            }
            Verdict::Departs => {
                let details: String = o.exchanges.iter().map(exchange_text).collect();
                let _ = writeln!(
                    out,
                    "><failure message=\"{}\">{}</failure></testcase>",
                    xml::text(&o.why),
                    xml::text(&details)
                );
            }
        }
    }
    out.push_str("</testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_any_run_of_backticks_inside() {
        let block = fenced("a ```` b \u{1b}[2J");
        assert!(block.starts_with("`````text\n"), "{block}");
        assert!(!block.contains('\u{1b}'), "{block}");
        assert!(fenced("plain").starts_with("```text\n"));
    }

    #[test]
    fn a_fenced_exchange_keeps_its_lines_and_escapes_controls_inside_them() {
        let block = fenced("GET /x\nAccept: a\rb\n\nHTTP 200\n");
        assert_eq!(block, "```text\nGET /x\nAccept: a\\rb\n\nHTTP 200\n```\n");
    }
}
