//! The path of the first `null` in a JSON text, read in one pass with no tree built: the
//! admin API refuses `null` where its schema gives a type, and a seed of 50,000 assets is
//! some 7 MB of text and several times that as a `serde_json::Value`. One reader for the
//! simulator's admin API and for [`parse_seed`](crate::parse_seed), so both name the same
//! field.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Where the first `null` of a JSON text is (`enterprises[0].branchName`; the empty path
/// for a text that is `null`), keys in the text's order; values under a key of `any_json`
/// may hold any JSON, `null` included, and are skipped. The error is the text's: it is
/// read to the end, found or not, so a text that is not JSON is refused as such.
pub fn first_null(json: &[u8], any_json: &[&str]) -> Result<Option<String>, serde_json::Error> {
    let mut path = String::new();
    let mut de = serde_json::Deserializer::from_slice(json);
    let found = NullSeek {
        path: &mut path,
        any_json,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

/// Reads one JSON value, remembering the path of the first `null` in it.
struct NullSeek<'p, 'k> {
    path: &'p mut String,
    any_json: &'k [&'k str],
}

impl NullSeek<'_, '_> {
    fn below(&mut self) -> NullSeek<'_, '_> {
        NullSeek {
            path: &mut *self.path,
            any_json: self.any_json,
        }
    }
}

impl<'de> DeserializeSeed<'de> for NullSeek<'_, '_> {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NullSeek<'_, '_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Some(self.path.clone()))
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Some(self.path.clone()))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if found.is_some() || self.any_json.contains(&key.as_str()) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let len = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(&key);
            found = map.next_value_seed(self.below())?;
            self.path.truncate(len);
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        let mut i = 0usize;
        loop {
            if found.is_some() {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
                continue;
            }
            let len = self.path.len();
            self.path.push_str(&format!("[{i}]"));
            let element = seq.next_element_seed(self.below())?;
            self.path.truncate(len);
            match element {
                Some(f) => found = f,
                None => break,
            }
            i += 1;
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::first_null;

    #[test]
    fn the_first_null_is_named_by_its_path() {
        for (text, want) in [
            (r#"{"a": 1, "b": {"c": [1, null]}}"#, Some("b.c[1]")),
            (r#"{"a": null, "b": null}"#, Some("a")),
            (r#"[{"x": 1}, {"y": null}]"#, Some("[1].y")),
            ("null", Some("")),
            (r#"{"n": [1, "s", true, 2.5, {}]}"#, None),
        ] {
            assert_eq!(
                first_null(text.as_bytes(), &[]).unwrap().as_deref(),
                want,
                "{text}"
            );
        }
    }

    #[test]
    fn values_under_any_json_keys_are_skipped_and_bad_text_refused() {
        let text = br#"{"match": {"equals": null}, "patch": {"a": null}, "x": 1}"#;
        assert_eq!(first_null(text, &["equals", "patch"]).unwrap(), None);
        assert_eq!(
            first_null(text, &[]).unwrap().as_deref(),
            Some("match.equals")
        );
        assert!(first_null(br#"{"a": null} trailing"#, &[]).is_err());
        assert!(first_null(br#"[null, {"a": "#, &[]).is_err());
    }
}
