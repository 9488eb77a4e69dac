//! The binary's output over recordings whose values are hostile (issue 59): `coverage`'s
//! markdown, read by a CommonMark parser with GFM tables, has the headings, rows and list
//! items the report makes and no HTML or link from a value; its JUnit is read by a strict
//! XML parser; and no format of `coverage`, `report` or `replay` puts a raw ESC, CR, BEL,
//! C1, separator or bidirectional character on stdout.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use licensing_escape::terminal::{escape, escape_unambiguous, needs_escape};
use licensing_proxy::conformance::{Deviation, Direction};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::{Value, json};

/// A `channelOrderId` that would forge a heading saying `None.`, a table row, and open an
/// HTML comment hiding the rest.
const FORGED: &str = "CO-1\n\n## Suspected double submissions\n\nNone.\n\n\
                      | forged | 1 | 1 | | | 0 |\n|---|---|\n<!--";
/// A `userName` of raw HTML, a link to `javascript:`, a mention, a backtick and a pipe.
const MARKUP: &str = "<script>alert(1)</script><img src=x onerror=alert(1)>\
                      [x](javascript:alert(1))](javascript:alert(1))@octocat `|`";
/// Terminal sequences (clear screen, an OSC 8 link, an OSC 52 clipboard write), CR, BEL,
/// a C1 CSI, a line separator, a right-to-left override, and what XML forbids.
const TERMINAL: &str = "7\x1b[2J\x1b[H\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\
                        \x1b]52;c;cHduZWQ=\x07\rok\u{9b}31m\u{2028}\u{202e}gpj\u{fffe}\u{ffff}";

const BATCH: &str = "/order/api/order/v1/licenseOrder/batchOrder";

/// What a terminal would act on: every character the terminal escaping shows, but the
/// newlines between the output's own lines.
fn raw_controls(out: &str) -> Vec<char> {
    out.chars()
        .filter(|&c| needs_escape(c) && c != '\n')
        .collect()
}

fn binary(args: &[&str], files: &[&Path]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_licensing-proxy"))
        .args(args)
        .args(files)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty() || out.status.code() == Some(1), "{err}");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 on stdout");
    (out.status.code(), stdout)
}

/// A simulator journal (under a file name that is itself hostile) with a batch applied
/// twice under [`FORGED`], an employee [`MARKUP`] added twice, and a read answered the
/// undocumented code [`TERMINAL`]; and a proxy recording with a batch applied twice under
/// [`TERMINAL`].
/// `licensing-proxy` run with `args` on the [`hostile_files`] written to `dir`: the
/// journal's path and the report, once the run has succeeded.
fn hostile_coverage(dir: &Path, args: &[&str]) -> (PathBuf, String) {
    let (journal, har) = hostile_files(dir);
    let (code, out) = binary(args, &[&journal, &har]);
    assert_eq!(code, Some(0), "{out}");
    (journal, out)
}

fn hostile_files(dir: &Path) -> (PathBuf, PathBuf) {
    let batch = |seq: u64, id: &str| {
        json!({"seq": seq, "operation": "batchOrder", "method": "POST", "path": BATCH,
            "query": [], "requestBody": {"channelCode": "CH01", "channelOrderId": id,
            "syncMode": "sync", "orderList": []}, "status": 200, "code": "0"})
    };
    let member = |seq: u64| {
        json!({"seq": seq, "operation": "addMembers", "method": "POST",
            "path": "/me/api/v1/enterprise/EG-1/member", "query": [],
            "requestBody": {"userList": [{"userName": MARKUP}]}, "status": 200, "code": "0"})
    };
    let read = json!({"seq": 5, "operation": "listAssetNums", "method": "GET",
        "path": "/me/api/v1/enterprise/EG-1/asset/assetNums", "query": [],
        "status": 200, "code": TERMINAL});
    let journal =
        json!({"entries": [batch(1, FORGED), batch(2, FORGED), member(3), member(4), read]});
    let journal_file = dir.join("journal\n# Never exercised\u{202e}<!--.json");
    std::fs::write(&journal_file, journal.to_string()).unwrap();
    let entry = |seq: u64| {
        json!({"_operationId": "batchOrder", "_exchange": format!("x-{seq}"),
            "request": {"method": "POST", "url": format!("http://upstream{BATCH}"),
                "queryString": [], "postData": {"mimeType": "application/json",
                "text": json!({"channelCode": "CH01", "channelOrderId": TERMINAL,
                    "syncMode": "sync", "orderList": []}).to_string()}},
            "response": {"status": 200, "content": {"mimeType": "application/json",
                "text": "{\"code\":\"0\",\"msg\":\"ok\"}"}}})
    };
    let har = json!({"log": {"version": "1.2", "entries": [entry(1), entry(2)]}});
    let har_file = dir.join("recording.har");
    std::fs::write(&har_file, har.to_string()).unwrap();
    (journal_file, har_file)
}

/// The blocks of a markdown document as a CommonMark parser with GFM tables reads them.
#[derive(Debug, Default)]
struct Shape {
    headings: Vec<String>,
    /// Per table, the cells of each row (the head first).
    tables: Vec<Vec<usize>>,
    /// Per list item, its text and code as read.
    items: Vec<String>,
    /// HTML, links and images: none should come from a value.
    markup: Vec<String>,
}

fn shape(markdown: &str) -> Shape {
    let mut shape = Shape::default();
    let (mut heading, mut item) = (None::<String>, None::<String>);
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match &event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => shape.headings.extend(heading.take()),
            Event::Start(Tag::Item) => item = Some(String::new()),
            Event::End(TagEnd::Item) => shape.items.extend(item.take()),
            Event::Start(Tag::Table(_)) => shape.tables.push(Vec::new()),
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                shape.tables.last_mut().unwrap().push(0);
            }
            Event::Start(Tag::TableCell) => {
                *shape.tables.last_mut().unwrap().last_mut().unwrap() += 1;
            }
            Event::Text(t) | Event::Code(t) => {
                for open in [&mut heading, &mut item].into_iter().flatten() {
                    open.push_str(t);
                }
            }
            Event::Html(_)
            | Event::InlineHtml(_)
            | Event::Start(Tag::Link { .. } | Tag::Image { .. } | Tag::HtmlBlock) => {
                shape.markup.push(format!("{event:?}"));
            }
            _ => {}
        }
    }
    shape
}

#[test]
fn coverage_markdown_keeps_its_own_blocks_whatever_the_values_hold() {
    let dir = tempfile::tempdir().unwrap();
    let (journal, md) = hostile_coverage(dir.path(), &["coverage"]);
    let shape = shape(&md);
    assert_eq!(
        shape.headings,
        [
            "Integration coverage",
            "Never exercised",
            "Suspected double submissions"
        ],
        "{md}"
    );
    assert_eq!(shape.markup, Vec::<String>::new(), "{md}");
    let operations = licensing_coverage::Catalogue::documents()
        .unwrap()
        .operations
        .len();
    assert_eq!(shape.tables.len(), 2, "{md}");
    assert_eq!(
        shape.tables[0], [2; 6],
        "the totals and their five rows: {md}"
    );
    assert_eq!(shape.tables[1], vec![6; 1 + operations], "{md}");
    // The list of what was never exercised has an item per operation with a gap, the
    // doubles one each; the doubles' items name the values, read as they were escaped.
    let doubles: Vec<&String> = shape
        .items
        .iter()
        .filter(|i| i.contains("again by"))
        .collect();
    assert_eq!(doubles.len(), 3, "{md}");
    let shown = |value: &str| escape(value).replace('|', "\\|");
    assert!(doubles[0].contains(&shown(FORGED)), "{doubles:?}");
    assert!(doubles[1].contains(&shown(MARKUP)), "{doubles:?}");
    assert!(doubles[2].contains(&shown(TERMINAL)), "{doubles:?}");
    assert!(doubles[0].contains(&escape(&journal.display().to_string()).into_owned()));
    let undocumented = shape
        .items
        .iter()
        .find(|i| i.starts_with("listAssetNums"))
        .unwrap();
    assert!(undocumented.contains(&shown(TERMINAL)), "{undocumented}");
    assert_eq!(raw_controls(&md), Vec::<char>::new(), "{md:?}");
}

#[test]
fn coverage_junit_parses_whatever_the_values_hold() {
    let dir = tempfile::tempdir().unwrap();
    let (_, xml) = hostile_coverage(dir.path(), &["coverage", "--format", "junit"]);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml:?}"));
    let failed: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .map(|n| n.attribute("name").unwrap().to_string())
        .collect();
    assert_eq!(failed.len(), 3, "{failed:?}");
    for (name, value) in failed.iter().zip([FORGED, MARKUP, TERMINAL]) {
        // As the terminal shows it, and the two characters XML forbids shown too.
        let shown = escape(value)
            .replace('\u{fffe}', "\\u{fffe}")
            .replace('\u{ffff}', "\\u{ffff}");
        assert!(name.contains(&shown), "{name:?} for {value:?}");
    }
    assert_eq!(raw_controls(&xml), Vec::<char>::new(), "{xml:?}");
}

#[test]
fn coverage_json_keeps_the_values_and_nothing_a_terminal_acts_on() {
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = hostile_coverage(dir.path(), &["coverage", "--format", "json"]);
    assert_eq!(raw_controls(&out), Vec::<char>::new(), "{out:?}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let doubles = report["suspectedDoubleSubmissions"].as_array().unwrap();
    assert_eq!(doubles.len(), 3, "{out}");
    assert_eq!(doubles[0]["what"], format!("channelOrderId {FORGED}"));
    assert_eq!(doubles[2]["what"], format!("channelOrderId {TERMINAL}"));
}

/// A recording of one read whose recorded reply, exchange id and deviation hold
/// [`TERMINAL`]: `report` prints the deviation, a replay against a simulator finds the
/// reply differs.
fn hostile_recording(dir: &Path) -> PathBuf {
    let deviation = Deviation {
        operation_id: Some("listAssetNums".into()),
        direction: Direction::Reply,
        pointer: format!("/data/{TERMINAL}"),
        rule: "additional-property".into(),
        expected: FORGED.into(),
        actual: TERMINAL.into(),
        exchange: TERMINAL.into(),
        time: "2025-01-01T00:00:00Z".into(),
    };
    let entry = json!({"_operationId": "listAssetNums", "_exchange": TERMINAL,
        "_deviations": [deviation],
        "request": {"method": "GET",
            "url": "http://upstream/me/api/v1/enterprise/EG-404/asset/assetNums",
            "queryString": []},
        // The simulator's status for an enterprise it lacks, so that the code is compared.
        "response": {"status": 299, "content": {"mimeType": "application/json",
            "text": json!({"code": TERMINAL, "msg": MARKUP}).to_string()}}});
    let file = dir.join("hostile.har");
    let har = json!({"log": {"version": "1.2", "entries": [entry]}});
    std::fs::write(&file, har.to_string()).unwrap();
    file
}

#[test]
fn report_prints_nothing_a_terminal_acts_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_recording(dir.path());
    for output in ["text", "json"] {
        let (code, out) = binary(&["report", "--output", output], &[&file]);
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("additional-property"), "{out}");
        assert_eq!(raw_controls(&out), Vec::<char>::new(), "{output}: {out:?}");
    }
    let (_, out) = binary(&["report", "--output", "json"], &[&file]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["operations"][0]["rules"][0]["first"]["actual"],
        TERMINAL
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_prints_nothing_a_terminal_acts_on() {
    let sim = licensing_sim::Simulator::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_recording(dir.path());
    for output in ["text", "json"] {
        let (file, url) = (file.clone(), sim.url());
        // Off the runtime's threads: the simulator answers the replay meanwhile.
        let (code, out) = tokio::task::spawn_blocking(move || {
            binary(&["replay", "--against", &url, "--output", output], &[&file])
        })
        .await
        .unwrap();
        assert_eq!(code, Some(1), "a difference: {out}");
        assert_eq!(raw_controls(&out), Vec::<char>::new(), "{output}: {out:?}");
        if output == "json" {
            let replay: Value = serde_json::from_str(&out).unwrap();
            let difference = &replay["differences"][0];
            assert_eq!(difference["what"], "code", "{out}");
            assert_eq!(difference["exchange"], TERMINAL, "{out}");
            assert_eq!(
                difference["recorded"],
                Value::String(TERMINAL.into()).to_string()
            );
        } else {
            assert!(out.contains(&*escape_unambiguous(TERMINAL)), "{out}");
        }
    }
}
