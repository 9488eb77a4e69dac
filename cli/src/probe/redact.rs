//! What the probe keeps of an exchange, with every credential out of it: the secret
//! headers, parameters and fields by their name (as the workspace names secrets: holding
//! `password`, `token`, `secret`, `appKey` or `authorization`), and every credential the
//! probe sent, by its value, wherever else it appears (an upstream echoing a token in a
//! `message` leaves no copy in a report). Bodies are kept up to [`MAX_KEPT_BODY`].

use serde_json::Value;

/// What stands for a secret.
pub const REDACTED: &str = "[REDACTED]";

/// The most of one body a report or a recording keeps; a larger one is kept as its size.
pub const MAX_KEPT_BODY: usize = 64 * 1024;

/// The shortest credential replaced inside a longer text: a shorter one would match
/// nearly everywhere.
const MIN_FOUND_INSIDE: usize = 4;

/// Whether a header, parameter or field name carries a secret.
pub fn is_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["password", "token", "secret", "appkey", "authorization"]
        .iter()
        .any(|s| lower.contains(s))
}

/// The credentials of a run: every value the probe sent that is secret.
#[derive(Clone, Default)]
pub struct Secrets {
    values: Vec<String>,
}

/// Never the values.
impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}

impl Secrets {
    /// A credential's value.
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        if !value.is_empty() && !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_string());
            // The longest first, so that a credential holding another is replaced whole.
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// `text` with every credential's value replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for value in &self.values {
            if value.len() >= MIN_FOUND_INSIDE {
                out = out.replace(value.as_str(), REDACTED);
            } else if out == *value {
                out = REDACTED.to_string();
            }
        }
        out
    }

    /// A header's value as kept.
    pub fn header(&self, name: &str, value: &str) -> String {
        if is_secret(name) || name.to_ascii_lowercase().contains("cookie") {
            REDACTED.to_string()
        } else {
            self.text(value)
        }
    }

    /// A query parameter's value as kept.
    pub fn param(&self, name: &str, value: &str) -> String {
        if is_secret(name) {
            REDACTED.to_string()
        } else {
            self.text(value)
        }
    }

    /// A body as kept: JSON with its secret fields replaced and the credentials taken out,
    /// text with the credentials taken out, or its size alone when it is large.
    pub fn body(&self, bytes: &[u8]) -> Option<String> {
        if bytes.is_empty() {
            return None;
        }
        if bytes.len() > MAX_KEPT_BODY {
            return Some(serde_json::json!({ "omitted": bytes.len() }).to_string());
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(mut value) => {
                fields(&mut value);
                Some(self.text(&value.to_string()))
            }
            Err(_) => Some(self.text(&String::from_utf8_lossy(bytes))),
        }
    }
}

/// Replaces the value of every secret field, at any depth.
fn fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if is_secret(key) {
                    *v = Value::String(REDACTED.into());
                } else {
                    fields(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(fields),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_leave_nothing_behind() {
        let mut secrets = Secrets::default();
        secrets.add("tok-123456");
        secrets.add("ab");
        assert_eq!(secrets.header("Authorization", "Bearer x"), REDACTED);
        assert_eq!(secrets.header("userToken", "y"), REDACTED);
        assert_eq!(
            secrets.header("X-Trace", "t tok-123456 u"),
            "t [REDACTED] u"
        );
        assert_eq!(secrets.param("appKey", "k"), REDACTED);
        assert_eq!(secrets.param("g_nonce", "ab"), REDACTED);
        assert_eq!(secrets.param("g_nonce", "abc"), "abc");
        let body = br#"{"userList":[{"userName":"p1","password":"Pw-1"}],"cause":"token tok-123456 expired"}"#;
        let kept = secrets.body(body).unwrap();
        assert!(
            !kept.contains("Pw-1") && !kept.contains("tok-123456"),
            "{kept}"
        );
        assert!(kept.contains("\"userName\":\"p1\""), "{kept}");
        assert_eq!(
            secrets.body(b"plain tok-123456").as_deref(),
            Some("plain [REDACTED]")
        );
        let large = vec![b' '; MAX_KEPT_BODY + 1];
        assert_eq!(
            secrets.body(&large).unwrap(),
            format!("{{\"omitted\":{}}}", MAX_KEPT_BODY + 1)
        );
        assert!(!format!("{secrets:?}").contains("tok"));
    }
}
