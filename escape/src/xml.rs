//! A value in XML element text or an attribute value (a JUnit file for CI dashboards).

use std::borrow::Cow;

use crate::terminal::{needs_escape, push_notation};

/// Whether XML 1.0 forbids `c` anywhere in a document, even as a character reference:
/// outside `#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]`
/// (surrogates are not `char`s).
pub fn forbidden(c: char) -> bool {
    !matches!(
        c,
        '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..
    )
}

/// Whether [`text`] shows `c` in the `\u{…}` notation rather than writing it.
///
/// The characters XML forbids, which no parser accepts. And the ones
/// [`crate::terminal::escape`] escapes, although XML allows most of them: a JUnit file is
/// read by viewers that show its text (a CI page, a test runner's console summary), where
/// a C1 control can act on a terminal and a bidirectional override reorders a test's name;
/// a tab, newline or carriage return in an attribute value reaches a program as a space
/// (attribute-value normalisation), and a carriage return in element text as a newline,
/// so writing them as they are would not keep the value anyway.
fn shown(c: char) -> bool {
    forbidden(c) || needs_escape(c)
}

/// `s` for element text or an attribute value (quoted with `"` or `'`): `&`, `<`, `>`,
/// `"` and `'` written as the predefined entities, and the characters `shown` as
/// `\n`, `\r`, `\t` or `\u{…}` (`\u{fffe}`, `\u{1b}`, `\u{202e}`), so the document parses
/// whatever `s` holds; `s` itself, borrowed, when nothing changes.
pub fn text(s: &str) -> Cow<'_, str> {
    let changes = |c: char| matches!(c, '&' | '<' | '>' | '"' | '\'') || shown(c);
    let Some(first) = s.find(changes) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if shown(c) => push_notation(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped_and_forbidden_characters_shown() {
        assert_eq!(
            text("<a href='x'>&\"</a>"),
            "&lt;a href=&apos;x&apos;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(text("a\u{fffe}b\u{ffff}c\0"), "a\\u{fffe}b\\u{ffff}c\\u{0}");
        assert_eq!(
            text("\x1b[2J\u{9b}\u{202e}\r\n\t"),
            "\\u{1b}[2J\\u{9b}\\u{202e}\\r\\n\\t"
        );
        for plain in [
            "",
            "createOrder",
            "日本語 ✓",
            "\u{fffd}",
            "\u{10ffff}",
            "\u{e000}",
        ] {
            assert!(
                matches!(text(plain), Cow::Borrowed(t) if t == plain),
                "{plain:?}"
            );
        }
    }

    #[test]
    fn forbidden_is_the_complement_of_xml_char() {
        for (c, no) in [
            ('\0', true),
            ('\x08', true),
            ('\t', false),
            ('\n', false),
            ('\x0b', true),
            ('\r', false),
            ('\x1f', true),
            (' ', false),
            ('\u{d7ff}', false),
            ('\u{e000}', false),
            ('\u{fffd}', false),
            ('\u{fffe}', true),
            ('\u{ffff}', true),
            ('\u{10000}', false),
            ('\u{10ffff}', false),
        ] {
            assert_eq!(forbidden(c), no, "{c:?}");
        }
    }

    /// Every code point (surrogates are not `char`s), each in an attribute value and in
    /// element text, parsed by a strict XML 1.0 parser: the document is accepted, and each
    /// value reads back as itself or, where [`shown`], as its notation.
    #[test]
    fn every_code_point_parses() {
        let chars: Vec<char> = (0..=0x10ffff).filter_map(char::from_u32).collect();
        assert_eq!(chars.len(), 0x11_0000 - 0x800);
        for chunk in chars.chunks(0x1000) {
            let mut doc = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<r>");
            for &c in chunk {
                let v = text(&c.to_string()).into_owned();
                doc.push_str(&format!("<c a=\"{v}\" b='{v}'>{v}</c>"));
            }
            doc.push_str("</r>");
            let parsed = roxmltree::Document::parse(&doc)
                .unwrap_or_else(|e| panic!("from {:?}: {e}", chunk[0]));
            let elements = parsed.root_element().children().filter(|n| n.is_element());
            let mut n = 0;
            for (node, &c) in elements.zip(chunk) {
                n += 1;
                let expected = if shown(c) {
                    let mut s = String::new();
                    push_notation(&mut s, c);
                    s
                } else {
                    c.to_string()
                };
                assert_eq!(node.attribute("a"), Some(expected.as_str()), "{c:?}");
                assert_eq!(node.attribute("b"), Some(expected.as_str()), "{c:?}");
                assert_eq!(node.text().unwrap_or(""), expected, "{c:?}");
            }
            assert_eq!(n, chunk.len());
        }
    }

    /// The parser is strict: what the report wrote before (a U+FFFE as it is) is refused,
    /// so the test above would catch a character let through.
    #[test]
    fn the_parser_refuses_forbidden_characters() {
        for c in ['\u{fffe}', '\u{ffff}', '\u{1}'] {
            let doc = format!("<r a=\"{c}\">x</r>");
            assert!(roxmltree::Document::parse(&doc).is_err(), "{c:?}");
            let doc = format!("<r>{c}</r>");
            assert!(roxmltree::Document::parse(&doc).is_err(), "{c:?}");
        }
    }
}
