//! The credentials of one exchange, and their values replaced wherever they appear in what
//! is kept of it. Redacting fields by their name (`password`, `clientToken`) is not enough:
//! an upstream that echoes a credential in a `message` or `cause` ("password Pass-9 is too
//! short", "token abc… expired") would leave it in clear in the recording, the console and
//! the report. So every credential the exchange carries (the secret headers and query
//! parameters, the secret fields of both bodies) is collected first, and each text kept of
//! the exchange has every occurrence of one replaced by `[REDACTED]`.

use std::{borrow::Cow, collections::HashMap, collections::HashSet, fmt};

use foldhash::fast::RandomState;
use licensing_host::{REDACTED, is_secret};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The shortest credential looked for inside a longer text: a shorter one (`"1"`) would
/// match nearly everywhere, so it is replaced only where a whole value is that credential.
pub const MIN_FOUND_INSIDE: usize = 4;

/// The most credentials one exchange is searched for, and their bytes together; past
/// either, every text of the exchange is kept as `[REDACTED]` (nothing can be shown that
/// was not searched).
const MAX_SECRETS: usize = 10_000;
const MAX_SECRET_BYTES: usize = 1024 * 1024;

/// The credentials of one exchange.
#[derive(Default)]
pub struct Secrets {
    /// Credentials of [`MIN_FOUND_INSIDE`] bytes or more, by their first four bytes: a
    /// text is searched in one pass, whatever their number.
    long: HashMap<[u8; 4], Vec<Box<str>>, RandomState>,
    /// The first bytes of `long`'s credentials, one bit each: most positions are passed
    /// over with no lookup.
    first: [u64; 4],
    /// Shorter credentials, replaced where a whole value is one.
    short: HashSet<Box<str>, RandomState>,
    count: usize,
    bytes: usize,
    /// More than [`MAX_SECRETS`] or [`MAX_SECRET_BYTES`]: every text is replaced.
    overflow: bool,
}

/// Never the values.
impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secrets")
            .field("count", &self.count)
            .field("overflow", &self.overflow)
            .finish_non_exhaustive()
    }
}

impl Secrets {
    /// No credential at all.
    pub fn is_empty(&self) -> bool {
        self.count == 0 && !self.overflow
    }

    /// A credential's value (an empty one stands for nothing).
    pub fn add(&mut self, value: &str) {
        if value.is_empty() || self.overflow {
            return;
        }
        let bytes = value.as_bytes();
        let added = match bytes.first_chunk::<4>() {
            Some(prefix) if bytes.len() >= MIN_FOUND_INSIDE => {
                let same = self.long.entry(*prefix).or_default();
                let new = !same.iter().any(|s| **s == *value);
                if new {
                    same.push(value.into());
                    self.first[usize::from(prefix[0] >> 6)] |= 1 << (prefix[0] & 63);
                }
                new
            }
            _ => self.short.insert(value.into()),
        };
        if added {
            self.count += 1;
            self.bytes += value.len();
            if self.count > MAX_SECRETS || self.bytes > MAX_SECRET_BYTES {
                self.overflow = true;
            }
        }
    }

    /// A header's credentials: the value of a secret header (and its token without the
    /// scheme, `Bearer …`), and each cookie's value.
    pub fn add_header(&mut self, name: &str, value: &str) {
        let name = name.to_ascii_lowercase();
        if is_secret(&name) {
            self.add(value);
            if let Some((_, token)) = value.trim().split_once(' ') {
                self.add(token.trim());
            }
        }
        if name.contains("cookie") {
            self.add(value);
            // `Cookie: a=1; b=2`; `Set-Cookie: a=1; Path=/`: the values before the
            // attributes.
            let pairs = if name == "set-cookie" {
                value.split(';').take(1).collect::<Vec<_>>()
            } else {
                value.split(';').collect()
            };
            for pair in pairs {
                if let Some((_, v)) = pair.split_once('=') {
                    self.add(v.trim());
                }
            }
        }
    }

    /// A query parameter's or form field's value when its name says it is a secret.
    pub fn add_pair(&mut self, name: &str, value: &str) {
        if is_secret(name) {
            self.add(value);
        }
    }

    /// The secret fields of a JSON body (at any depth; every value below a secret field);
    /// a body that is not JSON is read as a form (`password=…&…`). Read as it is parsed,
    /// building no tree: its size is the body's business, not this one's.
    pub fn add_body(&mut self, body: &[u8]) {
        if body.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let mut de = serde_json::Deserializer::from_slice(body);
        let seed = Collect {
            secrets: self,
            under: false,
        };
        if seed.deserialize(&mut de).and_then(|()| de.end()).is_err() {
            for (name, value) in form_urlencoded::parse(body) {
                self.add_pair(&name, &value);
            }
        }
    }

    /// Whether a whole value is a credential.
    pub fn is_whole(&self, text: &str) -> bool {
        if self.overflow {
            return !text.is_empty();
        }
        match text.as_bytes().first_chunk::<4>() {
            Some(prefix) => self
                .long
                .get(prefix)
                .is_some_and(|same| same.iter().any(|s| **s == *text)),
            None => self.short.contains(text),
        }
    }

    /// `text` with every credential in it replaced by `[REDACTED]` (the longest where
    /// two start at one place); borrowed when it holds none.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.is_whole(text) {
            return Cow::Borrowed(REDACTED);
        }
        let b = text.as_bytes();
        if self.long.is_empty() || b.len() < MIN_FOUND_INSIDE {
            return Cow::Borrowed(text);
        }
        let mut out: Option<String> = None;
        let (mut last, mut i) = (0, 0);
        while i + MIN_FOUND_INSIDE <= b.len() {
            if self.first[usize::from(b[i] >> 6)] & (1 << (b[i] & 63)) != 0
                && let Some(same) = self.long.get(&[b[i], b[i + 1], b[i + 2], b[i + 3]])
                && let Some(len) = same
                    .iter()
                    .filter(|s| b[i..].starts_with(s.as_bytes()))
                    .map(|s| s.len())
                    .max()
            {
                // A credential is whole UTF-8, so a match starts and ends on a character
                // boundary of `text`.
                let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                o.push_str(&text[last..i]);
                o.push_str(REDACTED);
                i += len;
                last = i;
            } else {
                i += 1;
            }
        }
        match out {
            Some(mut o) => {
                o.push_str(&text[last..]);
                Cow::Owned(o)
            }
            None => Cow::Borrowed(text),
        }
    }
}

/// Collects the values below secret fields as a body is parsed.
struct Collect<'a> {
    secrets: &'a mut Secrets,
    /// Below a secret field: every scalar is a credential.
    under: bool,
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Collect<'_> {
    fn scalar(self, text: &str) {
        if self.under {
            self.secrets.add(text);
        }
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.scalar(&v.to_string());
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.scalar(&v.to_string());
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        if let Some(n) = serde_json::Number::from_f64(v) {
            self.scalar(&n.to_string());
        }
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.scalar(v);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // A list's items are credentials when the list is a secret field's.
        while seq
            .next_element_seed(Collect {
                secrets: &mut *self.secrets,
                under: self.under,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let under = self.under || is_secret(&key);
            if !self.secrets.overflow {
                map.next_value_seed(Collect {
                    secrets: &mut *self.secrets,
                    under,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        let mut s = Secrets::default();
        s.add_header("Authorization", "Bearer tok-en-1234");
        s.add_header("clientToken", "client-abcdef");
        s.add_header("Cookie", "sid=cookie-value-9; theme=dark");
        s.add_pair("appKey", "app-key-77");
        s.add_pair("pageNum", "1");
        s.add_body(br#"{"userList": [{"password": "Pass-word-55x", "name": "Dave"}], "pin": {"token": 4242}, "passwords": ["pw-one-1", 7]}"#);
        s
    }

    #[test]
    fn every_credential_is_replaced_wherever_it_appears() {
        let s = secrets();
        let echoed = "bad password Pass-word-55x for tok-en-1234 (Bearer tok-en-1234) \
                      with app-key-77, cookie-value-9, 4242 and pw-one-1";
        let shown = s.redact(echoed);
        for secret in [
            "Pass-word-55x",
            "tok-en-1234",
            "app-key-77",
            "cookie-value-9",
            "4242",
            "pw-one-1",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.starts_with("bad password [REDACTED] for [REDACTED]"));
        assert_eq!(s.redact("Dave"), "Dave");
        assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
        // A short credential only as a whole value.
        assert_eq!(s.redact("7"), REDACTED);
        assert_eq!(s.redact("17 items"), "17 items");
        assert_eq!(
            s.redact("dark"),
            REDACTED,
            "every cookie's value: which is a session's is not known"
        );
        assert_eq!(s.redact("theme"), "theme", "a cookie's name is no secret");
        assert_eq!(s.redact("1"), "1", "pageNum is no secret");
        assert_eq!(s.redact("中文tok-en-1234中文"), "中文[REDACTED]中文");
    }

    #[test]
    fn form_bodies_and_too_many_credentials() {
        let mut s = Secrets::default();
        s.add_body(b"user=a&password=form-pass-1");
        assert_eq!(s.redact("x form-pass-1"), "x [REDACTED]");
        let mut many = Secrets::default();
        for i in 0..=MAX_SECRETS {
            many.add(&format!("secret-{i}"));
        }
        assert_eq!(
            many.redact("anything"),
            REDACTED,
            "past the bound, nothing is shown"
        );
        assert!(format!("{many:?}").contains("overflow: true"));
        assert!(!format!("{:?}", secrets()).contains("tok-en"));
    }
}
