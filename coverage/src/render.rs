//! A report for a person (markdown) and for CI dashboards (JUnit XML: a test suite per
//! operation, a test case per documented code, passed when it was answered and skipped
//! when never; a failed case per suspected double submission).

use std::fmt::Write as _;

use crate::Report;

/// Markdown: the totals, a table of operations, what was never exercised, the doubles.
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
            .map(|(c, n)| format!("{c}×{n}"))
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            op.operation,
            op.calls,
            op.succeeded,
            seen.join(" "),
            op.codes_never_seen.join(" "),
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
                "`{}` never sent {}",
                e.field,
                e.never_sent.join(", ")
            ));
        }
        if !op.optional_never_sent.is_empty() {
            let fields: Vec<String> = op
                .optional_never_sent
                .iter()
                .map(|f| format!("`{f}`"))
                .collect();
            lines.push(format!("optional fields never sent: {}", fields.join(", ")));
        }
        if op.later_page_read == Some(false) {
            lines.push("no page after the first read".to_string());
        }
        if !op.codes_undocumented.is_empty() {
            let codes: Vec<&str> = op.codes_undocumented.keys().map(String::as_str).collect();
            lines.push(format!(
                "answered codes the documents do not give: {}",
                codes.join(", ")
            ));
        }
        if !lines.is_empty() {
            any = true;
            let _ = writeln!(out, "- `{}`: {}", op.operation, lines.join("; "));
        }
    }
    if !any {
        let _ = writeln!(
            out,
            "Nothing: every operation, code, value and field was exercised."
        );
    }
    let _ = writeln!(out, "\n## Suspected double submissions\n");
    if report.suspected_double_submissions.is_empty() {
        let _ = writeln!(out, "None.");
    }
    for d in &report.suspected_double_submissions {
        let _ = writeln!(
            out,
            "- `{}`: {} applied by {} and again by {}",
            d.operation, d.what, d.first, d.second
        );
    }
    out
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Not allowed in XML 1.0 at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
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
                escape(&op.operation),
                escape(&name)
            );
            match skip {
                Some(why) => {
                    s += 1;
                    let _ = writeln!(
                        cases,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        escape(&why)
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
            escape(&op.operation)
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
                escape(&d.operation),
                escape(&d.what),
                escape(&message)
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
