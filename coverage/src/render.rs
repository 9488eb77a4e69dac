//! A report for a person (markdown) and for CI dashboards (JUnit XML: a test suite per
//! operation, a test case per documented code, passed when it was answered and skipped
//! when never; a failed case per suspected double submission).
//!
//! Every value is escaped for where it goes, whatever a recording put in it: in the
//! markdown (a pull-request comment, or a terminal) a value is a code span or escaped text
//! ([`licensing_escape::markdown`]), so none starts a line, a heading, a row, a comment or
//! a link, mentions anyone or reaches a terminal as a control sequence; in the JUnit, text
//! for XML ([`licensing_escape::xml`]), so the file parses whatever the recording held.

use std::fmt::Write as _;

use licensing_escape::{
    markdown::{code, text},
    xml,
};

use crate::Report;

/// Values joined, each written by `write` (`code` or `text`).
fn each<'a, S: AsRef<str> + 'a>(
    values: impl IntoIterator<Item = &'a S>,
    write: impl Fn(&str) -> String,
    separator: &str,
) -> String {
    let written: Vec<String> = values.into_iter().map(|v| write(v.as_ref())).collect();
    written.join(separator)
}

fn plain(value: &str) -> String {
    text(value).into_owned()
}

/// Markdown: the totals, a table of operations, what was never exercised, the doubles.
/// Names from the documents and values from the recordings (codes answered, the
/// `channelOrderId` or `userName` of a double, the sources) are code spans; documented
/// codes in the table are escaped text.
pub fn markdown(report: &Report) -> String {
    let t = &report.totals;
    let mut out = String::new();
    let _ = writeln!(out, "# Integration coverage\n");
    let _ = writeln!(
        out,
        "{} exchanges ({} matching no documented operation), {} retries observed.\n",
        t.exchanges, t.unmatched, t.retries
    );
    let _ = writeln!(out, "| total | covered |\n|---|---|");
    for (name, ratio) in [
        ("operations called", t.operations),
        ("documented codes answered", t.codes),
        ("enum values sent", t.enums),
        ("optional fields sent", t.optional),
        ("list operations read past page 1", t.paging),
    ] {
        let _ = writeln!(out, "| {name} | {ratio} |");
    }
    let _ = writeln!(
        out,
        "\n| operation | calls | succeeded | codes seen | codes never seen | retries |\n|---|---:|---:|---|---|---:|"
    );
    for op in &report.operations {
        let seen: Vec<String> = op
            .codes_seen
            .iter()
            .map(|(c, n)| format!("{}×{n}", text(c)))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            code(&op.operation),
            op.calls,
            op.succeeded,
            seen.join(" "),
            each(&op.codes_never_seen, plain, " "),
            op.retries
        );
    }
    let _ = writeln!(out, "\n## Never exercised\n");
    let mut any = false;
    for op in &report.operations {
        let mut lines = Vec::new();
        if op.calls == 0 {
            lines.push("never called".to_string());
        }
        for e in op.enums.iter().filter(|e| !e.never_sent.is_empty()) {
            lines.push(format!(
                "{} never sent {}",
                code(&e.field),
                each(&e.never_sent, code, ", ")
            ));
        }
        if !op.optional_never_sent.is_empty() {
            lines.push(format!(
                "optional fields never sent: {}",
                each(&op.optional_never_sent, code, ", ")
            ));
        }
        if op.later_page_read == Some(false) {
            lines.push("no page after the first read".to_string());
        }
        if !op.codes_undocumented.is_empty() {
            lines.push(format!(
                "answered codes the documents do not give: {}",
                each(op.codes_undocumented.keys(), code, ", ")
            ));
        }
        if !lines.is_empty() {
            any = true;
            let _ = writeln!(out, "- {}: {}", code(&op.operation), lines.join("; "));
        }
    }
    if !any {
        let _ = writeln!(
            out,
            "Nothing: every operation, code, value and field was exercised."
        );
    }
    let _ = writeln!(out, "\n## Suspected double submissions\n");
    if let Some(note) = report.doubles_note() {
        let _ = writeln!(out, "{note}\n");
    }
    if report.suspected_double_submissions.is_empty() {
        let _ = writeln!(out, "None.");
    }
    for d in &report.suspected_double_submissions {
        // `what` as code, not text: a `userName` such as `@team` in text would mention
        // everyone in it on GitHub, which reads mentions after the markdown.
        let _ = writeln!(
            out,
            "- {}: {} applied by {} and again by {}",
            code(&d.operation),
            code(&d.what),
            code(&d.first),
            code(&d.second)
        );
    }
    out
}

/// JUnit XML (the schema Jenkins, GitLab and most dashboards read).
pub fn junit(report: &Report) -> String {
    let mut suites = String::new();
    // `<testsuites>` carries no `skipped` count in the Jenkins (Surefire) schema.
    let (mut tests, mut failures) = (0, 0);
    for op in &report.operations {
        let mut cases = String::new();
        let (mut t, mut s) = (0, 0);
        let mut case = |name: String, skip: Option<String>| {
            t += 1;
            let _ = write!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
                xml::text(&op.operation),
                xml::text(&name)
            );
            match skip {
                Some(why) => {
                    s += 1;
                    let _ = writeln!(
                        cases,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        xml::text(&why)
                    );
                }
                None => {
                    let _ = writeln!(cases, "/>");
                }
            }
        };
        case(
            "called".to_string(),
            (op.calls == 0).then(|| "never called".to_string()),
        );
        for (code, n) in &op.codes_seen {
            let _ = n;
            case(format!("code {code}"), None);
        }
        for code in &op.codes_never_seen {
            case(format!("code {code}"), Some("never answered".to_string()));
        }
        tests += t;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{t}\" failures=\"0\" errors=\"0\" skipped=\"{s}\" time=\"0\">\n{cases}  </testsuite>",
            xml::text(&op.operation)
        );
    }
    if !report.suspected_double_submissions.is_empty() {
        let mut cases = String::new();
        for d in &report.suspected_double_submissions {
            failures += 1;
            tests += 1;
            let message = format!("applied by {} and again by {}", d.first, d.second);
            let _ = writeln!(
                cases,
                "    <testcase classname=\"double submissions\" name=\"{}: {}\" time=\"0\">\n      <failure message=\"{}\" type=\"double submission\"/>\n    </testcase>",
                xml::text(&d.operation),
                xml::text(&d.what),
                xml::text(&message)
            );
        }
        let n = report.suspected_double_submissions.len();
        let _ = writeln!(
            suites,
            "  <testsuite name=\"double submissions\" tests=\"{n}\" failures=\"{n}\" errors=\"0\" skipped=\"0\" time=\"0\">\n{cases}  </testsuite>"
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"integration coverage\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"0\">\n{suites}</testsuites>\n"
    )
}
