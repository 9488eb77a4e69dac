//! JSON text printed where a person may read it (a command's `--output json` on a
//! terminal). A serializer escapes the C0 controls inside strings but writes the C1
//! controls (U+009B is a CSI, as ESC `[`), the line and paragraph separators and the
//! bidirectional controls as they are: data for a program, but a terminal acts on them.

use std::{borrow::Cow, fmt::Write as _};

use crate::terminal::needs_escape;

/// `json` (JSON text as a serializer writes it) with every character
/// [`crate::terminal::escape`] would show, but the whitespace between tokens (tab, newline,
/// carriage return), written as a JSON `\uXXXX` escape (`\u202e`, `\u009b`, `\u001b`): the
/// same document for a program that parses it, nothing a terminal acts on for a person.
/// Outside its strings JSON holds ASCII alone, so every character changed is inside a
/// string, where the escape means the character itself. Every such character is in the
/// Basic Multilingual Plane: one escape each, no surrogate pair. `json` itself, borrowed,
/// when nothing changes.
pub fn for_terminal(json: &str) -> Cow<'_, str> {
    let changes = |c: char| needs_escape(c) && !matches!(c, '\t' | '\n' | '\r');
    let Some(first) = json.find(changes) else {
        return Cow::Borrowed(json);
    };
    let mut out = String::with_capacity(json.len() + 16);
    out.push_str(&json[..first]);
    for c in json[first..].chars() {
        if changes(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
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
    fn c1_bidi_and_separators_become_json_escapes() {
        let json = "{\n  \"k\u{202e}\": \"a\u{9b}31m\u{2028}\u{85}\\u001b\"\n}";
        assert_eq!(
            for_terminal(json),
            "{\n  \"k\\u202e\": \"a\\u009b31m\\u2028\\u0085\\u001b\"\n}"
        );
        let plain = "{\n\t\"name\": \"日本語 ✓\"\r\n}";
        assert!(matches!(for_terminal(plain), Cow::Borrowed(p) if p == plain));
    }

    /// Every character the terminal escaping shows, inside a JSON string: the text keeps
    /// none of them raw and still holds the same string, as a JSON parser reads the
    /// escape (checked here by decoding it, the crate having no JSON parser).
    #[test]
    fn every_escaped_character_reads_back_as_itself() {
        for c in (0..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|&c| needs_escape(c))
        {
            if matches!(c, '\t' | '\n' | '\r') {
                continue;
            }
            let json = format!("\"{c}\"");
            let out = for_terminal(&json);
            assert!(!out.chars().any(needs_escape), "{c:?}: {out}");
            let hex = out
                .strip_prefix("\"\\u")
                .and_then(|r| r.strip_suffix('"'))
                .unwrap_or_else(|| panic!("{c:?}: {out}"));
            assert_eq!(hex.len(), 4, "{out}");
            assert_eq!(
                char::from_u32(u32::from_str_radix(hex, 16).unwrap()),
                Some(c)
            );
        }
    }
}
