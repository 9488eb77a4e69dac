//! JSON rewritten as it is read, never held as a tree: a body kept for the recording or
//! the console (compact, its secret fields and every credential of its exchange
//! replaced), the start of a value quoted in a finding (cut at a bound however large the
//! value), and a kept body shown indented. A `serde_json::Value` of a body holds up to 30
//! times the body (a number in a list is 2 bytes of text and a 32-byte value); what is
//! rewritten here holds what it writes.

use std::{borrow::Cow, fmt};

use licensing_host::{REDACTED, is_secret};
use serde::de::{self, Deserialize, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

use super::secrets::Secrets;

/// Where rewritten JSON goes: compact text, at most `cap` bytes of it (past which the
/// rest of the value is read and dropped); optionally with the values of fields named as
/// secrets, and an exchange's credentials wherever they appear, replaced.
pub struct JsonOut<'a> {
    text: String,
    cap: usize,
    /// Fields whose name says they hold a secret are written as `[REDACTED]`.
    secret_fields: bool,
    secrets: Option<&'a Secrets>,
    cut: bool,
}

impl<'a> JsonOut<'a> {
    /// Text of at most `cap` bytes, secret fields written as `[REDACTED]`.
    pub fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            cap,
            secret_fields: true,
            secrets: None,
            cut: false,
        }
    }

    /// Also every credential of `secrets` replaced wherever it appears (keys, strings, a
    /// number that is one).
    pub fn credentials(mut self, secrets: &'a Secrets) -> Self {
        self.secrets = Some(secrets);
        self
    }

    /// A string value written (escaped, credentials replaced).
    pub fn string_value(&mut self, s: &str) {
        self.string(s);
    }

    /// The text, and whether it was cut at the cap.
    pub fn finish(self) -> (String, bool) {
        (self.text, self.cut)
    }

    fn full(&self) -> bool {
        self.text.len() >= self.cap
    }

    fn push(&mut self, s: &str) {
        let room = self.cap.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
        } else {
            self.text.push_str(&s[..floor(s, room)]);
            self.cut = true;
        }
    }

    /// A string as JSON writes it (`"`, `\` and control characters escaped, as
    /// `serde_json` does), credentials replaced.
    fn string(&mut self, s: &str) {
        let s = match self.secrets {
            Some(secrets) => secrets.redact(s),
            None => Cow::Borrowed(s),
        };
        // Each byte of text writes at least one: no more than the room is escaped.
        let room = self.cap.saturating_sub(self.text.len());
        let shown = &s[..floor(&s, room.saturating_sub(1))];
        self.text.push('"');
        let mut start = 0;
        for (i, b) in shown.bytes().enumerate() {
            let escape = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0..0x20 => "",
                _ => continue,
            };
            self.text.push_str(&shown[start..i]);
            if escape.is_empty() {
                self.text.push_str(&format!("\\u{b:04x}"));
            } else {
                self.text.push_str(escape);
            }
            start = i + 1;
        }
        self.text.push_str(&shown[start..]);
        if shown.len() < s.len() {
            self.cut = true;
        } else {
            self.text.push('"');
        }
        // Escapes write more than they read: what passed the cap goes.
        if self.text.len() > self.cap {
            let end = floor(&self.text, self.cap);
            self.text.truncate(end);
            self.cut = true;
        }
    }

    fn number(&mut self, n: &Number) {
        let text = n.to_string();
        if self.secrets.is_some_and(|s| s.is_whole(&text)) {
            self.string(REDACTED);
        } else {
            self.push(&text);
        }
    }
}

/// The largest character boundary of `s` at most `at` (`str::floor_char_boundary`, not
/// stable in the supported Rust).
fn floor(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Rewrites the JSON document `body` into `out`; an error when it is not one JSON
/// document.
pub fn rewrite(body: &[u8], out: &mut JsonOut<'_>) -> serde_json::Result<()> {
    let mut de = serde_json::Deserializer::from_slice(body);
    Emit { out }.deserialize(&mut de)?;
    de.end()
}

/// A value written as it is read.
pub struct Emit<'o, 'a> {
    /// Where it goes.
    pub out: &'o mut JsonOut<'a>,
}

impl<'de> DeserializeSeed<'de> for Emit<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.out.full() {
            self.out.cut = true;
            IgnoredAny::deserialize(deserializer)?;
            return Ok(());
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Emit<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.out.push("null");
        Ok(())
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.out.push(if v { "true" } else { "false" });
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.out.number(&v.into());
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.out.number(&v.into());
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let n = Number::from_f64(v).ok_or_else(|| E::custom("a number JSON cannot hold"))?;
        self.out.number(&n);
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.out.string(v);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        emit_seq(self.out, seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        emit_map(self.out, map)
    }
}

/// The rest of a list being read, written to `out` (for a reader that met the list
/// before knowing it would quote it).
pub fn emit_seq<'de, A: SeqAccess<'de>>(out: &mut JsonOut<'_>, mut seq: A) -> Result<(), A::Error> {
    out.push("[");
    let mut first = true;
    loop {
        if out.full() {
            out.cut = true;
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        // The comma goes before an item, which is known to follow only once read: written
        // first, and taken back when none did.
        if !first {
            out.push(",");
        }
        let len = out.text.len();
        if seq.next_element_seed(Emit { out: &mut *out })?.is_none() {
            if !first {
                out.text.truncate(len - 1);
            }
            break;
        }
        first = false;
    }
    out.push("]");
    Ok(())
}

/// The rest of an object being read, written to `out`.
pub fn emit_map<'de, A: MapAccess<'de>>(out: &mut JsonOut<'_>, mut map: A) -> Result<(), A::Error> {
    out.push("{");
    let mut first = true;
    while let Some(key) = map.next_key::<Cow<'de, str>>()? {
        if out.full() {
            out.cut = true;
            map.next_value::<IgnoredAny>()?;
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        if !first {
            out.push(",");
        }
        first = false;
        out.string(&key);
        out.push(":");
        if out.secret_fields && is_secret(&key) {
            map.next_value::<IgnoredAny>()?;
            out.string(REDACTED);
        } else {
            map.next_value_seed(Emit { out: &mut *out })?;
        }
    }
    out.push("}");
    Ok(())
}

/// Compact JSON text (as [`rewrite`] writes it) indented as `serde_json`'s pretty printer
/// does, two spaces a level; read once, building no tree.
pub fn pretty(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    let bytes = compact.as_bytes();
    for (i, c) in compact.char_indices() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                // `{}` and `[]` stay on one line.
                if !matches!(bytes.get(i + 1), Some(b'}' | b']')) {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                if !matches!(bytes.get(i.wrapping_sub(1)), Some(b'{' | b'[')) {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                }
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn compact(body: &str, cap: usize, secrets: Option<&Secrets>) -> (String, bool) {
        let mut out = JsonOut::new(cap);
        if let Some(secrets) = secrets {
            out = out.credentials(secrets);
        }
        rewrite(body.as_bytes(), &mut out).unwrap();
        out.finish()
    }

    #[test]
    fn rewritten_as_serde_json_writes_it() {
        let docs = [
            json!({"a": [1, -2, 3.5, 1e20, "x\"y\\z\n\u{1}\u{7f}中"], "b": {}, "c": [], "d": null, "e": true}),
            json!([]),
            json!("text"),
            json!([[[]], {"k": [{}]}]),
        ];
        for doc in docs {
            let text = doc.to_string();
            assert_eq!(compact(&text, usize::MAX, None), (text.clone(), false));
            assert_eq!(pretty(&text), serde_json::to_string_pretty(&doc).unwrap());
        }
        // Whitespace in the input is not kept.
        assert_eq!(
            compact(" { \"a\" : [ 1 , 2 ] } ", 100, None).0,
            r#"{"a":[1,2]}"#
        );
    }

    #[test]
    fn cut_at_the_cap_whatever_the_value() {
        let big = format!("[{}0]", "0,".repeat(100_000));
        let (text, cut) = compact(&big, 10, None);
        assert!(cut && text.len() <= 10, "{text}");
        assert!(text.starts_with("[0,0,0,0,0"));
        let (text, cut) = compact(&format!("\"{}\"", "é".repeat(1000)), 9, None);
        assert!(cut && text.len() <= 9 && text.starts_with("\"éé"), "{text}");
        let (text, cut) = compact(r#"{"a":1,"b":2}"#, 13, None);
        assert_eq!((text.as_str(), cut), (r#"{"a":1,"b":2}"#, false));
    }

    #[test]
    fn secret_fields_and_credentials_replaced() {
        let mut secrets = Secrets::default();
        secrets.add("tok-en-1234");
        secrets.add("987654");
        let body = r#"{"password": {"x": 1}, "message": "token tok-en-1234 expired", "n": 987654, "tok-en-1234": 1}"#;
        let (text, _) = compact(body, usize::MAX, Some(&secrets));
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            json!({"password": "[REDACTED]", "message": "token [REDACTED] expired", "n": "[REDACTED]", "[REDACTED]": 1})
        );
    }
}
