//! Text for people, on a terminal or in a log: whatever a request, a reply or a recording
//! put in a value (a key, a path, an upstream's message) is shown escaped, so that it can
//! neither start a line of its own (a forged report line) nor reach the terminal as a
//! control sequence (ESC, OSC, CSI: colours, titles, hyperlinks, a cleared screen).

use std::borrow::Cow;

/// Whether a character is shown escaped: the control characters (C0, DEL and C1, where
/// the terminal's sequences start), the line and paragraph separators, the marks that
/// reorder text (bidirectional overrides and isolates: what is shown would not be what is
/// there), and the backslash that starts an escape, so that an escape is never ambiguous
/// with text that looks like one.
fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\\' | '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// `text` as one line of plain text: `\n`, `\r`, `\t`, `\\` and `\u{…}` for every other
/// control character, line or paragraph separator and bidirectional mark; borrowed when
/// there is none (nearly always).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if escaped(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn nothing_starts_a_line_or_a_sequence() {
        assert!(matches!(
            escape("/data/list/0/userName"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(escape("a\nFORGED-LINE"), "a\\nFORGED-LINE");
        assert_eq!(escape("\r\t\\n"), "\\r\\t\\\\n");
        assert_eq!(
            escape("\u{1b}]8;;http://evil\u{7}x\u{1b}[2J\u{9b}1m\u{7f}"),
            "\\u{1b}]8;;http://evil\\u{7}x\\u{1b}[2J\\u{9b}1m\\u{7f}"
        );
        assert_eq!(escape("a\u{2028}b\u{202e}c"), "a\\u{2028}b\\u{202e}c");
        assert_eq!(escape("Grüße 中文"), "Grüße 中文");
        let shown = escape("k\n\u{1b}[31m");
        assert!(!shown.chars().any(char::is_control), "{shown}");
    }
}
