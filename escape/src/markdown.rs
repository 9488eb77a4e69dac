//! A value inside a CommonMark/GFM document (a pull-request comment, a report): as
//! escaped inline [`text`] or as a [`code`] span. Either way the value is one inline piece
//! wherever the document puts it, a paragraph, a list item or a table cell: it holds no
//! line break, so it cannot start a line, a heading, a list or a table row of its own, and
//! nothing in it opens an HTML comment or tag, an entity, emphasis or a link.
//!
//! What neither can stop: GitHub's own references in text (`@name`, `#123`) and its
//! extended autolinks (`www.example.com`, `https://…`), which it finds after parsing.
//! An autolink shows its own target, so it cannot hide where it leads; a value that
//! should not mention anyone is better written as [`code`], which GitHub leaves alone.

use std::borrow::Cow;

use crate::terminal::{needs_escape, push_notation};

/// Whether `c` changes in [`text`] wherever it stands: a character the terminal would
/// act on, or ASCII punctuation (every character CommonMark lets a backslash escape, so
/// every character that can mean markup, `|` for GFM tables included).
fn changes(c: char) -> bool {
    needs_escape(c) || c.is_ascii_punctuation()
}

/// `s` as inline text: the characters [`crate::terminal::escape`] escapes shown as it
/// shows them (`\n`, `\u{1b}`: a value holds no line break, so no part of it starts a
/// line), every ASCII punctuation character backslash-escaped (`\|`, `\<`, `\[`, `` \` ``,
/// `\#`, `\&`, `\*`, …: nothing opens a heading, a row, an HTML comment or tag, an
/// entity, emphasis, a code span or a link), and a space at either end written `&#32;`,
/// which a table cell does not trim and which cannot make an indented code block.
/// Rendered, it reads as `escape(s)` does; `s` itself, borrowed, when nothing changes.
pub fn text(s: &str) -> Cow<'_, str> {
    let edge_space = s.starts_with(' ') || s.ends_with(' ');
    if !edge_space && !s.contains(changes) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let last = s.len().saturating_sub(1);
    for (i, c) in s.char_indices() {
        if needs_escape(c) {
            // The notation's backslash is always followed by a letter: inert.
            push_notation(&mut out, c);
        } else if c.is_ascii_punctuation() {
            out.push('\\');
            out.push(c);
        } else if c == ' ' && (i == 0 || i == last) {
            out.push_str("&#32;");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` as an inline code span: the characters [`crate::terminal::escape`] escapes shown
/// as it shows them, fenced by one backtick more than the longest run of backticks inside,
/// and padded with a space on each side when `s` starts or ends with a backtick or a space
/// (CommonMark takes one space off each side again). An empty `s` is a span of one space.
///
/// `|` is written `\|`. GFM splits a table row into cells before it reads code spans, so a
/// bare `|` inside a span would end the cell; in a cell, `\|` reads as `|`. Outside a table
/// a code span shows its content as it is, so there the value reads `\|` where it held `|`.
/// One function serves table cells and prose alike on purpose: a renderer that picked one
/// per place would sooner or later pick the prose one for a cell, and a value would then
/// forge a cell, while the only cost of this one in prose is a visible backslash.
pub fn code(s: &str) -> String {
    let mut body = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if needs_escape(c) {
            push_notation(&mut body, c);
        } else if c == '|' {
            body.push_str("\\|");
        } else {
            body.push(c);
        }
    }
    let (mut longest, mut run) = (0, 0);
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if body.is_empty() {
        return "` `".to_string();
    }
    // Content of spaces alone is kept whole by CommonMark: no padding to take off.
    let all_spaces = body.bytes().all(|b| b == b' ');
    let edge = body.starts_with(['`', ' ']) || body.ends_with(['`', ' ']);
    let pad = if edge && !all_spaces { " " } else { "" };
    format!("{fence}{pad}{body}{pad}{fence}")
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
