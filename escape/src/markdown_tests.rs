//! Judged by a real CommonMark parser with GFM's tables: whatever a value holds, the
//! document keeps the blocks, rows and cells it was written with, and the value reads
//! back as `terminal::escape` shows it, as text or code and nothing else.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::{code, text};
use crate::terminal::escape;

const HOSTILE: &[&str] = &[
    "CO-1\n# Suspected double submissions\n\nNone.",
    "x\n\n## Never exercised\n\nNothing: every operation was exercised.",
    "<!--",
    "a <!-- rest of the comment",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "](javascript:alert(1))",
    "[click](javascript:alert(1))",
    "![i](https://evil.example/x.png)",
    "<https://evil.example>",
    "[x]\n\n[x]: javascript:alert(1)",
    "| forged | 2 |\n| row | 3 |",
    "a|b",
    "\\|",
    "a\\",
    "\\",
    "\\`",
    "`",
    "``x``",
    " ` ",
    "a `b` c",
    "&amp; &#x3c; &lt;",
    "*em* __strong__ ~~gone~~",
    "    indented code",
    "  ",
    " ",
    "",
    "trailing  ",
    "1. item",
    "- item",
    "- [ ] task",
    "> quote",
    "===",
    "---",
    "~~~",
    "```rust",
    "[^1]",
    "foo\\\nbar",
    "x\r\ny",
    "a\u{2028}b\u{2029}c",
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]52;c;cHduZWQ=\x07\x1b[2J",
    "\u{202e}gpj.exe",
    "<div>\n\n*x*\n\n</div>",
    "日本語 ✓ émigré",
];

fn parse(doc: &str) -> Vec<Event<'_>> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    Parser::new_ext(doc, options).collect()
}

/// What a piece of inline content reads as: plain text only, or (`want_code`) one code
/// span first and then plain text.
fn read_inline(events: &[Event<'_>], want_code: bool) -> String {
    let mut read = String::new();
    for (i, e) in events.iter().enumerate() {
        match e {
            Event::Code(t) if want_code && i == 0 => read.push_str(t),
            Event::Text(t) if !want_code || i > 0 => read.push_str(t),
            other => panic!("{other:?} among {events:?}"),
        }
    }
    read
}

/// The value at the start of a paragraph (the start of a line, where blocks start), after
/// a heading and before another: the same two headings, one paragraph.
fn in_prose(value: &str, written: &str, want_code: bool) {
    let doc = format!("# Title\n\n{written} end\n\n## After\n\nNone.\n");
    let events = parse(&doc);
    let heading_starts = events
        .iter()
        .filter(|e| matches!(e, Event::Start(Tag::Heading { .. })))
        .count();
    assert_eq!(heading_starts, 2, "{value:?} as {written:?}: {events:?}");
    let start = events
        .iter()
        .position(|e| matches!(e, Event::End(TagEnd::Heading(_))))
        .unwrap();
    assert_eq!(
        events[start + 1],
        Event::Start(Tag::Paragraph),
        "{value:?}: {events:?}"
    );
    let end = start
        + 2
        + events[start + 2..]
            .iter()
            .position(|e| matches!(e, Event::End(TagEnd::Paragraph)))
            .unwrap();
    assert!(
        matches!(events[end + 1], Event::Start(Tag::Heading { .. })),
        "{value:?} as {written:?}: {events:?}"
    );
    let read = read_inline(&events[start + 2..end], want_code);
    let expected = if want_code && value.is_empty() {
        // No code span is empty: the empty value is a span of one space.
        " ".to_string()
    } else if want_code {
        escape(value).replace('|', "\\|")
    } else {
        escape(value).into_owned()
    };
    // An empty value leaves the paragraph starting at its space, which is not content.
    let expected = if written.is_empty() {
        "end".to_string()
    } else {
        expected + " end"
    };
    assert_eq!(read, expected, "{value:?} as {written:?}");
}

/// The value in a list item's text and in the first cell of a table's only body row:
/// one item, one body row of two cells, the cell reading as the value.
fn in_table_and_list(value: &str, written: &str, want_code: bool) {
    let doc = format!("- `op`: {written} applied\n\n| name | n |\n|---|---:|\n| {written} | 1 |\n");
    let events = parse(&doc);
    let count = |f: fn(&Event<'_>) -> bool| events.iter().filter(|e| f(e)).count();
    assert_eq!(
        count(|e| matches!(e, Event::Start(Tag::Item))),
        1,
        "{value:?}: {events:?}"
    );
    assert_eq!(
        count(|e| matches!(e, Event::Start(Tag::TableRow))),
        1,
        "{value:?}: {events:?}"
    );
    assert_eq!(
        count(|e| matches!(e, Event::Start(Tag::TableCell))),
        4,
        "{value:?}: {events:?}"
    );
    let first_cell = events
        .iter()
        .position(|e| matches!(e, Event::Start(Tag::TableRow)))
        .unwrap()
        + 1;
    assert_eq!(events[first_cell], Event::Start(Tag::TableCell));
    let end = first_cell
        + events[first_cell..]
            .iter()
            .position(|e| matches!(e, Event::End(TagEnd::TableCell)))
            .unwrap();
    let read = read_inline(&events[first_cell + 1..end], want_code);
    let expected = if want_code && value.is_empty() {
        " ".into()
    } else {
        escape(value)
    };
    assert_eq!(read, expected, "{value:?} as {written:?} in a cell");
    let forbidden = events.iter().find(|e| {
        matches!(
            e,
            Event::Html(_)
                | Event::InlineHtml(_)
                | Event::HardBreak
                | Event::SoftBreak
                | Event::Start(
                    Tag::Link { .. }
                        | Tag::Image { .. }
                        | Tag::Emphasis
                        | Tag::Strong
                        | Tag::Strikethrough
                        | Tag::Heading { .. }
                        | Tag::CodeBlock(_)
                        | Tag::BlockQuote(_)
                        | Tag::HtmlBlock
                )
                | Event::TaskListMarker(_)
                | Event::FootnoteReference(_)
        )
    });
    assert_eq!(forbidden, None, "{value:?} as {written:?}: {events:?}");
}

fn judge(value: &str) {
    in_prose(value, &text(value), false);
    in_prose(value, &code(value), true);
    in_table_and_list(value, &text(value), false);
    in_table_and_list(value, &code(value), true);
}

#[test]
fn hostile_values_stay_one_inline_piece() {
    for value in HOSTILE {
        judge(value);
    }
}

#[test]
fn a_forged_heading_is_one_inline_piece() {
    let value = "CO-1\n# Suspected double submissions\n\nNone.";
    assert_eq!(
        text(value),
        "CO\\-1\\n\\# Suspected double submissions\\n\\nNone\\."
    );
    assert_eq!(
        code(value),
        "`CO-1\\n# Suspected double submissions\\n\\nNone.`"
    );
}

#[test]
fn punctuation_is_escaped_and_plain_text_borrowed() {
    assert_eq!(
        text("<!-- <script> | [a](javascript:x) &amp; `c`"),
        "\\<\\!\\-\\- \\<script\\> \\| \\[a\\]\\(javascript\\:x\\) \\&amp\\; \\`c\\`"
    );
    for plain in ["", "Acme Robotics", "日本語 ✓ émigré", "a b"] {
        assert!(matches!(text(plain), std::borrow::Cow::Borrowed(t) if t == plain));
    }
    assert_eq!(text(" a "), "&#32;a&#32;");
}

#[test]
fn code_fences_and_pads() {
    assert_eq!(code("a"), "`a`");
    assert_eq!(code(""), "` `");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`"), "`` ` ``");
    assert_eq!(code("x``"), "``` x`` ```");
    assert_eq!(code(" a"), "`  a `");
    assert_eq!(code("  "), "`  `");
    assert_eq!(code("a|b"), "`a\\|b`");
    assert_eq!(code("\x1b[2J\u{202e}"), "`\\u{1b}[2J\\u{202e}`");
}

/// Every string of up to eight pieces from the characters that mean something in
/// markdown, drawn by a fixed generator (the same strings every run).
#[test]
fn generated_values_stay_one_inline_piece() {
    const PIECES: &[&str] = &[
        "`", "|", "\\", " ", "\n", "<", ">", "!", "[", "]", "(", ")", "*", "_", "#", "&", ";", "-",
        "=", "a", "1", ".", ":", "~", "\t", "é", "\u{202e}", "{", "}", "\"", "'", "+", "amp",
        "!--", "http", "www.", "@", "^", "  ", "\r\n",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    for _ in 0..6_000 {
        let len = next(9);
        let value: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
        judge(&value);
    }
}
