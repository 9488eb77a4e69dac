//! A value read leniently: a field of another type than the recorders write is read
//! through and taken as absent, so that a recording edited by hand (or by a tool that
//! knows no better) still reads; and a reply's business code read from its text.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A value of the wanted type, or none when the recording holds another (read through,
/// never kept): recordings are read as leniently as their fields allow.
pub(crate) struct Lenient<T>(pub Option<T>);

/// What [`Lenient`] reads: a string, an unsigned number, or a reply's business code (a
/// string or a number, as text).
pub(crate) trait Wanted: Sized {
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
}

impl Wanted for String {
    fn from_str(s: &str) -> Option<Self> {
        Some(s.to_string())
    }
}

impl Wanted for u64 {
    fn from_u64(n: u64) -> Option<Self> {
        Some(n)
    }
    fn from_i64(n: i64) -> Option<Self> {
        u64::try_from(n).ok()
    }
}

/// A reply's business code as text (the services send it as a number or a string).
pub(crate) struct Code(pub String);

impl Wanted for Code {
    fn from_str(s: &str) -> Option<Self> {
        Some(Code(s.to_string()))
    }
    fn from_u64(n: u64) -> Option<Self> {
        Some(Code(n.to_string()))
    }
    fn from_i64(n: i64) -> Option<Self> {
        Some(Code(n.to_string()))
    }
    fn from_f64(n: f64) -> Option<Self> {
        serde_json::Number::from_f64(n).map(|n| Code(n.to_string()))
    }
}

impl<'de, T: Wanted> de::Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Wanted> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON")
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Lenient(T::from_str(s)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
                Ok(Lenient(T::from_u64(n)))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
                Ok(Lenient(T::from_i64(n)))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
                Ok(Lenient(T::from_f64(n)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

/// A map key, told apart by `from` where the parser holds its text (never copied): the
/// keys a reader acts on, every other key one value of `K`.
pub(crate) fn key_by<'de, D: Deserializer<'de>, K>(
    d: D,
    from: fn(&str) -> K,
) -> Result<K, D::Error> {
    struct V<K>(fn(&str) -> K);
    impl<K> Visitor<'_> for V<K> {
        type Value = K;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a key")
        }
        fn visit_str<E>(self, key: &str) -> Result<K, E> {
            Ok((self.0)(key))
        }
    }
    d.deserialize_str(V(from))
}

/// The business code of a reply's JSON text (`{"code": 0, …}`), the rest read through.
pub(crate) fn reply_code(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Reply {
        #[serde(default)]
        code: Lenient<Code>,
    }
    serde_json::from_str::<Reply>(text)
        .ok()?
        .code
        .0
        .map(|c| c.0)
}
