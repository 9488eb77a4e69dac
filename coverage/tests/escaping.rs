//! The report's markdown and JUnit over a journal whose values hold every code point
//! (issue 59): the markdown, read by a CommonMark parser with GFM tables, has exactly the
//! headings, rows and doubles the report makes, no HTML and no link; the JUnit is read by
//! a strict XML 1.0 parser; neither holds a character a terminal acts on.

use licensing_coverage::{Catalogue, Report, exchange, render};
use licensing_escape::terminal::needs_escape;
use pulldown_cmark::{Event, Options, Parser, Tag};
use serde_json::json;

/// A value that forges a heading saying `None.`, a table row and an HTML comment.
const FORGED: &str =
    "CO-1\n\n## Suspected double submissions\n\nNone.\n\n| x | 1 |\n|---|---|\n<!--";

/// The `channelOrderId`s: one forged, and every code point (surrogates are not `char`s)
/// in runs of 4,096, so that each class of character is in some value, next to its
/// neighbours.
fn values() -> Vec<String> {
    let chars: Vec<char> = (0..=0x10ffff).filter_map(char::from_u32).collect();
    let mut values = vec![FORGED.to_string()];
    values.extend(chars.chunks(4096).map(|run| run.iter().collect::<String>()));
    values
}

/// Each value applied twice under the same `channelOrderId`, and once as the code a read
/// was answered (not a documented one).
fn report(values: &[String]) -> Report {
    let mut entries = Vec::new();
    for (i, id) in values.iter().enumerate() {
        for seq in [2 * i, 2 * i + 1] {
            entries.push(
                json!({"seq": seq, "operation": "batchOrder", "method": "POST",
                "path": "/order/api/order/v1/licenseOrder/batchOrder",
                "requestBody": {"channelCode": "CH01", "channelOrderId": id,
                    "syncMode": "sync", "orderList": []},
                "status": 200, "code": "0"}),
            );
        }
    }
    let codes = values.len() * 2;
    for (i, code) in values.iter().enumerate() {
        entries.push(
            json!({"seq": codes + i, "operation": "listAssetNums", "method": "GET",
            "path": "/me/api/v1/enterprise/EG-1/asset/assetNums",
            "status": 200, "code": code}),
        );
    }
    let journal = json!({"entries": entries});
    let exchanges = exchange::read("journal.json", &journal).unwrap();
    let report = Report::new(&Catalogue::documents().unwrap(), &exchanges);
    assert_eq!(report.suspected_double_submissions.len(), values.len());
    report
}

fn raw_controls(out: &str) -> usize {
    out.chars()
        .filter(|&c| needs_escape(c) && c != '\n')
        .count()
}

#[test]
fn markdown_holds_every_code_point_as_inline_text() {
    let values = values();
    let report = report(&values);
    let md = render::markdown(&report);
    let (mut headings, mut rows, mut items, mut markup) = (0, 0, 0, Vec::new());
    for event in Parser::new_ext(&md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. }) => headings += 1,
            Event::Start(Tag::TableRow) => rows += 1,
            Event::Start(Tag::Item) => items += 1,
            Event::Html(_)
            | Event::InlineHtml(_)
            | Event::Start(Tag::Link { .. } | Tag::Image { .. } | Tag::HtmlBlock) => {
                markup.push(format!("{event:?}"));
            }
            _ => {}
        }
    }
    assert_eq!(
        headings, 3,
        "Integration coverage, Never exercised, the doubles"
    );
    assert_eq!(
        rows,
        5 + report.operations.len(),
        "the body rows of both tables"
    );
    let gaps = md
        .split("## Never exercised")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("- "))
        .count();
    assert_eq!(
        items,
        gaps + values.len(),
        "one item per gap and per double"
    );
    assert!(markup.is_empty(), "{:?}", &markup[..markup.len().min(5)]);
    assert_eq!(raw_controls(&md), 0);
}

#[test]
fn junit_parses_with_every_code_point_in_its_values() {
    let values = values();
    let xml = render::junit(&report(&values));
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(raw_controls(&xml), 0);
    let failed: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    assert_eq!(failed.len(), values.len());
    for name in &failed {
        assert!(name.starts_with("batchOrder: channelOrderId "), "{name:?}");
        assert_eq!(raw_controls(name), 0, "{name:?}");
    }
    // Every printable character a value held reads back as itself; the rest as its
    // notation.
    let all: String = failed.concat();
    for c in [
        '<',
        '&',
        '"',
        '\'',
        '>',
        '\u{e000}',
        '\u{fffd}',
        '\u{10ffff}',
        'é',
    ] {
        assert!(all.contains(c), "{c:?}");
    }
    for shown in [
        "\\u{fffe}",
        "\\u{ffff}",
        "\\u{1b}",
        "\\u{202e}",
        "\\u{9b}",
        "\\n",
    ] {
        assert!(all.contains(shown), "{shown}");
    }
    let suite = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("double submissions"))
        .unwrap();
    assert_eq!(
        suite.attribute("failures").map(str::parse::<usize>),
        Some(Ok(values.len()))
    );
}
