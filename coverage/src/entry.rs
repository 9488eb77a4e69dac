//! The parts of a recording's entries a report reads, each read leniently: a field of
//! another type than the recorders write is read through and taken as absent, so that a
//! recording edited by hand (or by a tool that knows no better) still reads.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::{
    lenient::{Code, Lenient, key_by, reply_code},
    record::{Body, Exchange, har_exchange},
};

/// A HAR entry, as far as a report reads it, read from the entry's own text: its bodies'
/// texts are borrowed from it (a string literal, escapes and all), never copied.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct HarEntry<'a> {
    #[serde(borrow)]
    request: Lenient<HarRequest<'a>>,
    #[serde(borrow)]
    response: Lenient<HarResponse<'a>>,
    #[serde(rename = "_operationId")]
    operation: Lenient<String>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct HarRequest<'a> {
    method: Lenient<String>,
    url: Lenient<String>,
    #[serde(rename = "queryString")]
    query: Pairs,
    #[serde(rename = "postData", borrow)]
    post_data: Lenient<Text<'a>>,
}

/// A `postData` or a `content`: its `text`.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Text<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

impl Text<'_> {
    /// The text, when it is a string.
    fn text(&self) -> Option<String> {
        unescape(self.text?.get())
    }
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct HarResponse<'a> {
    status: Lenient<u64>,
    #[serde(borrow)]
    content: Lenient<Text<'a>>,
}

/// Objects of borrowed parts read as their struct, anything else as absent.
macro_rules! lenient_borrowed {
    ($($t:ident),*) => {$(
        impl<'de: 'a, 'a> de::Deserialize<'de> for Lenient<$t<'a>> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(ObjectOr::<$t<'a>>(std::marker::PhantomData))
            }
        }
    )*};
}

lenient_borrowed!(HarEntry, HarRequest, HarResponse, Text);

/// The text of a JSON string literal (quotes included), in one allocation of at most the
/// literal's length; `None` when it is no string.
fn unescape(literal: &str) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at + 1..at + 2)?;
        rest = &rest[at + 2..];
        let c = match escape {
            "\"" => '"',
            "\\" => '\\',
            "/" => '/',
            "b" => '\u{8}',
            "f" => '\u{c}',
            "n" => '\n',
            "r" => '\r',
            "t" => '\t',
            "u" => {
                let unit = |r: &str| u32::from_str_radix(r.get(..4)?, 16).ok();
                let first = unit(rest)?;
                rest = &rest[4..];
                if (0xD800..0xDC00).contains(&first) {
                    let second = rest.strip_prefix("\\u").and_then(unit)?;
                    rest = &rest[6..];
                    char::from_u32(
                        0x10000 + ((first - 0xD800) << 10) + (second.checked_sub(0xDC00)?),
                    )?
                } else {
                    char::from_u32(first)?
                }
            }
            _ => return None,
        };
        out.push(c);
    }
    out.push_str(rest);
    Some(out)
}

/// A journal entry, as far as a report reads it.
#[derive(serde::Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct JournalEntry {
    seq: Lenient<u64>,
    operation: Lenient<String>,
    method: Lenient<String>,
    path: Lenient<String>,
    query: Pairs,
    request_body: Option<Box<RawValue>>,
    status: Lenient<u64>,
    code: Lenient<String>,
    reply_body: ReplyText,
}

/// An object read as `T`, anything else as absent.
struct ObjectOr<T>(std::marker::PhantomData<T>);

impl<'de, T: de::Deserialize<'de>> Visitor<'de> for ObjectOr<T> {
    type Value = Lenient<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Lenient(Some(t)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Lenient(None))
    }
    ignore_scalars!(Lenient(None), str);
}

/// Query parameters (`[{"name", "value"}]`), those of other shapes left out.
#[derive(Default)]
struct Pairs(Vec<(String, String)>);

impl<'de> de::Deserialize<'de> for Pairs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Pair {
            name: Lenient<String>,
            value: Lenient<String>,
        }
        impl<'de> de::Deserialize<'de> for Lenient<Pair> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(ObjectOr::<Pair>(std::marker::PhantomData))
            }
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Pairs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pairs, A::Error> {
                let mut pairs = Vec::new();
                while let Some(Lenient(pair)) = seq.next_element::<Lenient<Pair>>()? {
                    if let Some(Pair {
                        name: Lenient(Some(name)),
                        value: Lenient(Some(value)),
                    }) = pair
                    {
                        pairs.push((name, value));
                    }
                }
                Ok(Pairs(pairs))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Pairs, A::Error> {
                IgnoredAny.visit_map(map).map(|_| Pairs::default())
            }
            ignore_scalars!(Pairs::default(), str);
        }
        d.deserialize_any(V)
    }
}

/// A reply body, read only for its business code: a HAR's text (JSON in a string) or a
/// journal's JSON. The text is read where the parser holds it, never copied.
#[derive(Default)]
struct ReplyText(Option<String>);

impl<'de> de::Deserialize<'de> for ReplyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ReplyText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON")
            }
            fn visit_str<E>(self, text: &str) -> Result<ReplyText, E> {
                Ok(ReplyText(reply_code(text)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ReplyText, A::Error> {
                let mut code = None;
                while let Some(key) = map.next_key::<CodeKey>()? {
                    if key.0 && code.is_none() {
                        code = map.next_value::<Lenient<Code>>()?.0.map(|c| c.0);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(ReplyText(code))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ReplyText, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| ReplyText(None))
            }
            ignore_scalars!(ReplyText(None));
        }
        d.deserialize_any(V)
    }
}

/// Whether a key is `code`.
struct CodeKey(bool);

impl<'de> de::Deserialize<'de> for CodeKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        key_by(d, |key| CodeKey(key == "code"))
    }
}

/// A journal's request body: JSON, or a string (a body that was not JSON, as the journal
/// shows one; or JSON text).
fn journal_body(raw: Option<Box<RawValue>>) -> Body {
    let Some(raw) = raw else {
        return Body::None;
    };
    if raw.get().starts_with('"') {
        match serde_json::from_str::<String>(raw.get()) {
            Ok(text) => Body::from_text(text),
            Err(_) => Body::None,
        }
    } else {
        let text: Box<str> = raw.into();
        Body::from_text(text.into_string())
    }
}

impl<'de> de::Deserialize<'de> for Lenient<JournalEntry> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectOr::<JournalEntry>(std::marker::PhantomData))
    }
}

/// The exchange of a HAR entry (`text`, its JSON), named `source`.
pub(crate) fn har(source: String, text: &str) -> Exchange {
    let entry: Lenient<HarEntry> = serde_json::from_str(text).unwrap_or_default();
    let entry = entry.0.unwrap_or_default();
    let request = entry.request.0.unwrap_or_default();
    let response = entry.response.0.unwrap_or_default();
    let body = match request.post_data.0.and_then(|p| p.text()) {
        Some(text) => Body::from_text(text),
        None => Body::None,
    };
    // The reply's text only until its code is read.
    let code = response
        .content
        .0
        .and_then(|c| c.text())
        .and_then(|text| reply_code(&text));
    har_exchange(
        source,
        entry.operation.0,
        request.method.0.as_deref().unwrap_or_default(),
        request.url.0.as_deref().unwrap_or_default(),
        request.query.0,
        body,
        response.status.0,
        code,
    )
}

/// The exchange of a journal entry of the journal `name`; `None` when it has no `seq`.
pub(crate) fn journal<'de, D: Deserializer<'de>>(
    name: &str,
    d: D,
) -> Result<Option<Exchange>, D::Error> {
    let entry: Lenient<JournalEntry> = de::Deserialize::deserialize(d)?;
    let entry = entry.0.unwrap_or_default();
    let Some(seq) = entry.seq.0 else {
        return Ok(None);
    };
    Ok(Some(Exchange {
        source: format!("{name}#seq {seq}"),
        operation: entry.operation.0,
        method: entry.method.0.unwrap_or_default().to_uppercase(),
        path: entry.path.0.unwrap_or_default(),
        query: entry.query.0,
        request: journal_body(entry.request_body),
        status: entry
            .status
            .0
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(0),
        code: entry.code.0.or(entry.reply_body.0),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_literal_is_unescaped_as_serde_json_reads_it() {
        for literal in [
            r#""plain""#,
            r#""{\"size\":1,\"a\":\"x\\\"y\"}""#,
            r#""\n\t\r\b\f\/\\""#,
            r#""\u00e9 \u0041 \ud83d\ude00 é""#,
            r#""""#,
        ] {
            let expected: String = serde_json::from_str(literal).unwrap();
            assert_eq!(
                unescape(literal).as_deref(),
                Some(expected.as_str()),
                "{literal}"
            );
        }
        for refused in ["3", "{}", r#""\x""#, r#""\ud83d""#, r#""\u12""#] {
            assert_eq!(unescape(refused), None, "{refused}");
        }
    }
}
