//! Text for people, on a terminal or in a log: whatever a request, a reply or a recording
//! put in a value (a key, a path, an upstream's message) is shown escaped, so that it can
//! neither start a line of its own (a forged report line) nor reach the terminal as a
//! control sequence (ESC, OSC, CSI: colours, titles, hyperlinks, a cleared screen).

use std::borrow::Cow;

/// `text` as one line of plain text: `\n`, `\r`, `\t`, `\\` and `\u{…}` for every other
/// control character (C0, DEL and C1, where the terminal's sequences start), line or
/// paragraph separator and bidirectional mark (what is shown would not be what is there);
/// borrowed when there is none (nearly always). The backslash is doubled so that an escape
/// is never ambiguous with text that looks like one. The workspace's terminal escaping
/// ([`licensing_escape::terminal::escape_unambiguous`]), which the CLI shares.
pub fn escape(text: &str) -> Cow<'_, str> {
    licensing_escape::terminal::escape_unambiguous(text)
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
