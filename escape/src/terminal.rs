//! Text for a person's terminal. What the services, the simulator or a file hand back may
//! hold control characters: an escape sequence can retitle the window, clear the screen,
//! write the clipboard (OSC 52) or hide a link behind other text (OSC 8), a carriage
//! return can overwrite what a line said, and a bidirectional override can make a line
//! read differently from what it holds. Everything printed for a person goes through
//! [`escape`]; JSON output need not (serde_json escapes the control characters, and a bidi
//! character in a JSON string is data a program reads as it is).

use std::{borrow::Cow, fmt::Write as _};

/// Whether `c` is shown escaped: the C0 controls (newline and tab included, which would
/// break a table's rows and columns), DEL, the C1 controls (U+0080–U+009F), the line and
/// paragraph separators (U+2028, U+2029), and the bidirectional controls (U+061C,
/// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
pub fn needs_escape(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Writes `c` as [`escape`] shows a character it escapes: `\n`, `\r`, `\t`, or `\u{…}`
/// (lower-case hex, no padding). The other modules use it for their own sets.
pub(crate) fn push_notation(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// `s` with its control characters made visible: `\n`, `\r` and `\t`, and the others as
/// their code point in Rust's notation, lower-case hex without padding (`\u{1b}` for ESC,
/// `\u{202e}`); `s` itself, borrowed, when it has none. A backslash already in `s` is left
/// as it is: the text is for reading, not for parsing back.
pub fn escape(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(needs_escape) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if needs_escape(c) {
            push_notation(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`escape`], with a backslash already in `s` doubled (`\\`): an escape it shows is
/// then never ambiguous with text that only looks like one (a backslash and an `n` read
/// `\\n`, a newline `\n`). For text a person may copy back into a tool (a deviation's pointer, a log
/// line); [`escape`] for names and messages, where a path's backslashes would only be
/// noise.
pub fn escape_unambiguous(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(|c| c == '\\' || needs_escape(c)) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if needs_escape(c) {
            push_notation(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_as_it_is() {
        for text in [
            "",
            "Acme Robotics",
            "日本語 ✓ émigré",
            "C:\\path\\to",
            "a b",
        ] {
            assert!(
                matches!(escape(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn c0_del_and_c1_controls_are_escaped() {
        assert_eq!(
            escape("\x1b]0;pwned\x07\x1b[2J"),
            "\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"
        );
        assert_eq!(escape("a\nb\tc\rd"), "a\\nb\\tc\\rd");
        assert_eq!(escape("\0\x1f\x7f"), "\\u{0}\\u{1f}\\u{7f}");
        assert_eq!(escape("x\u{85}y\u{9b}z\u{9f}"), "x\\u{85}y\\u{9b}z\\u{9f}");
        // The first character after the C1 range is printable.
        assert_eq!(escape("\u{a0}"), "\u{a0}");
    }

    #[test]
    fn bidi_controls_and_separators_are_escaped() {
        for (c, shown) in [
            ('\u{061c}', "\\u{61c}"),
            ('\u{200e}', "\\u{200e}"),
            ('\u{200f}', "\\u{200f}"),
            ('\u{202a}', "\\u{202a}"),
            ('\u{202e}', "\\u{202e}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{2069}', "\\u{2069}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{2029}', "\\u{2029}"),
        ] {
            assert_eq!(escape(&format!("a{c}b")), format!("a{shown}b"));
        }
        // Neighbours of the ranges are left alone.
        for c in [
            '\u{061b}', '\u{061d}', '\u{200d}', '\u{2010}', '\u{2027}', '\u{202f}', '\u{2065}',
            '\u{206a}',
        ] {
            let text = c.to_string();
            assert!(matches!(escape(&text), Cow::Borrowed(_)), "{c:?}");
        }
    }

    #[test]
    fn unambiguous_doubles_backslashes_too() {
        assert_eq!(escape_unambiguous("\r\t\\n"), "\\r\\t\\\\n");
        assert_eq!(escape_unambiguous("a\nFORGED"), "a\\nFORGED");
        assert!(matches!(
            escape_unambiguous("/data/0/userName"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_unambiguous("\u{1b}]8;;http://evil\u{7}x\u{9b}1m\u{202e}"),
            "\\u{1b}]8;;http://evil\\u{7}x\\u{9b}1m\\u{202e}"
        );
    }

    #[test]
    fn text_before_and_after_is_kept() {
        assert_eq!(escape("évil\u{202e}txt.exe"), "évil\\u{202e}txt.exe");
    }

    /// The sequences a hostile value carries to a terminal: clear screen, an OSC 8 link,
    /// an OSC 52 clipboard write, a carriage return over the line, a bell, a right-to-left
    /// override. None of their introducing characters survives, in any code point of the
    /// sets escaped.
    #[test]
    fn no_esc_cr_bel_or_override_survives() {
        let hostile = "a\x1b[2J\x1b[H\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\
                       \x1b]52;c;cHduZWQ=\x07ok\rfake\x07\u{202e}gpj.exe\u{9b}31m\u{9d}0;t\u{9c}";
        let shown = escape(hostile);
        for bad in [
            '\x1b', '\r', '\x07', '\u{202e}', '\u{9b}', '\u{9d}', '\u{9c}',
        ] {
            assert!(!shown.contains(bad), "{bad:?} in {shown:?}");
        }
        assert!(
            shown.contains("\\u{1b}]52;c;cHduZWQ=\\u{7}ok\\rfake"),
            "{shown}"
        );
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let out = escape(&c.to_string()).into_owned();
            assert!(!out.chars().any(needs_escape), "{c:?}");
            assert_eq!(needs_escape(c), out != c.to_string(), "{c:?}");
        }
    }
}
