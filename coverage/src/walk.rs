//! A request body read from its JSON text as a list of fields, without building it: every
//! object and list by its path, every scalar by its path and value, the items of a tagged
//! list named by their tag (`orderList[new_buy].assets[].assetNos[]`).
//!
//! A tag may come after the fields it names in its item, so a body with tagged lists is
//! read twice: once for the tags, in the order their items come, then for the fields.
//! What either pass holds besides the text is the path being read and one tag per tagged
//! item, so a body costs little more than its text however it is shaped.

use std::{borrow::Cow, collections::BTreeMap, fmt};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The lists whose items are named by a tag: the list's items path with every tag read as
/// `[]` (`orderList[]`), and the tag's property (`orderType`).
pub(crate) type Tags = BTreeMap<String, String>;

/// A scalar of a body (null is no value).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scalar<'a> {
    Str(&'a str),
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Scalar<'_> {
    /// As codes and enum values are compared: a string as itself, anything else as JSON.
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match *self {
            Scalar::Str(s) => Cow::Borrowed(s),
            Scalar::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
            Scalar::U64(n) => Cow::Owned(n.to_string()),
            Scalar::I64(n) => Cow::Owned(n.to_string()),
            Scalar::F64(n) => Cow::Owned(
                serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string()),
            ),
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// An object or a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Container {
    Object,
    List,
}

/// What a body's fields are handed to, in the order of its text.
pub(crate) trait Sink {
    /// An object or list at `path` (the body itself is at `""`).
    fn container(&mut self, path: &str, kind: Container);
    /// A scalar at `path`.
    fn scalar(&mut self, path: &str, value: Scalar<'_>);
}

/// A body's JSON text, ready to be read for its fields (the tags of its tagged items
/// found, when it has tagged lists).
pub(crate) struct Walk<'t> {
    text: &'t str,
    tags: &'t Tags,
    slots: Vec<Option<String>>,
}

impl<'t> Walk<'t> {
    /// `text` with the lists `tags` names; `None` when it is not JSON.
    pub(crate) fn new(text: &'t str, tags: &'t Tags) -> Option<Self> {
        let mut slots = Vec::new();
        if !tags.is_empty() {
            let mut finder = TagFinder {
                untagged: String::new(),
                tags,
                slots: Vec::new(),
            };
            let mut de = serde_json::Deserializer::from_str(text);
            Find {
                finder: &mut finder,
                tag_of: None,
            }
            .deserialize(&mut de)
            .ok()?;
            de.end().ok()?;
            slots = finder.slots;
        }
        Some(Walk { text, tags, slots })
    }

    /// Hands every field to `sink`; false when the text is not JSON (the fields before
    /// the fault have been handed on).
    pub(crate) fn fields(&self, sink: &mut dyn Sink) -> bool {
        let mut walker = Walker {
            path: String::new(),
            untagged: String::new(),
            tags: self.tags,
            slots: &self.slots,
            next: 0,
            sink,
        };
        let mut de = serde_json::Deserializer::from_str(self.text);
        Node(&mut walker).deserialize(&mut de).is_ok() && de.end().is_ok()
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// The first pass: the tag of every tagged item, in the order the items begin.
struct TagFinder<'t> {
    untagged: String,
    tags: &'t Tags,
    slots: Vec<Option<String>>,
}

/// One value of the first pass. `tag_of`: the value is an item of a tagged list, whose
/// tag property this is; the value it gives is the tag (a string), if it has one.
struct Find<'f, 't> {
    finder: &'f mut TagFinder<'t>,
    tag_of: Option<&'t str>,
}

/// One value of the first pass that is a tag property's: its string, if it is one.
struct FindTag<'f, 't>(&'f mut TagFinder<'t>);

impl<'de> DeserializeSeed<'de> for Find<'_, '_> {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> DeserializeSeed<'de> for FindTag<'_, '_> {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// A key, appended to a path as it is read (no copy of its own).
struct Key<'p>(&'p mut String);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<(), E> {
        push_key(self.0, key);
        Ok(())
    }
}

impl<'de> Visitor<'de> for Find<'_, '_> {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    // The scalars of the first pass mean nothing but a tag's.
    ignore_scalars!(None, str);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let finder = self.finder;
        let mut tag = None;
        let at = finder.untagged.len();
        let key_at = at + usize::from(at > 0);
        while let Some(()) = map.next_key_seed(Key(&mut finder.untagged))? {
            if self.tag_of.is_some_and(|t| t == &finder.untagged[key_at..]) {
                tag = map.next_value_seed(FindTag(finder))?;
            } else {
                map.next_value_seed(Find {
                    finder: &mut *finder,
                    tag_of: None,
                })?;
            }
            finder.untagged.truncate(at);
        }
        Ok(tag)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let finder = self.finder;
        let at = finder.untagged.len();
        finder.untagged.push_str("[]");
        let tag_of = finder
            .tags
            .get(finder.untagged.as_str())
            .map(String::as_str);
        loop {
            let slot = finder.slots.len();
            if tag_of.is_some() {
                finder.slots.push(None);
            }
            let Some(tag) = seq.next_element_seed(Find {
                finder: &mut *finder,
                tag_of,
            })?
            else {
                if tag_of.is_some() {
                    finder.slots.pop();
                }
                break;
            };
            if tag_of.is_some() {
                finder.slots[slot] = tag;
            }
        }
        finder.untagged.truncate(at);
        Ok(None)
    }
}

impl<'de> Visitor<'de> for FindTag<'_, '_> {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    ignore_scalars!(None);
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(s.to_string()))
    }
    // A tag that is no string names nothing, but what it holds is read as any value is:
    // the second pass meets the same tagged items in the same order.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.untagged().visit_map(map).map(|_| None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.untagged().visit_seq(seq).map(|_| None)
    }
}

impl<'f, 't> FindTag<'f, 't> {
    /// The first pass over a value with no tag of its own.
    fn untagged(self) -> Find<'f, 't> {
        Find {
            finder: self.0,
            tag_of: None,
        }
    }
}

/// The second pass.
struct Walker<'t, 's> {
    /// The path being read, tags in place.
    path: String,
    /// The same with every tag read as `[]`.
    untagged: String,
    tags: &'t Tags,
    /// The first pass's tags, and the next one to give.
    slots: &'t [Option<String>],
    next: usize,
    sink: &'s mut dyn Sink,
}

struct Node<'w, 't, 's>(&'w mut Walker<'t, 's>);

impl<'de> DeserializeSeed<'de> for Node<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Node<'_, '_, '_> {
    fn scalar<E>(self, value: Scalar<'_>) -> Result<(), E> {
        self.0.sink.scalar(&self.0.path, value);
        Ok(())
    }
}

impl<'de> Visitor<'de> for Node<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.scalar(Scalar::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(Scalar::I64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(Scalar::U64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.scalar(Scalar::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.scalar(Scalar::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let w = self.0;
        w.sink.container(&w.path, Container::Object);
        let (at, untagged_at) = (w.path.len(), w.untagged.len());
        while let Some(()) = map.next_key_seed(Key(&mut w.path))? {
            let key_at = at + usize::from(at > 0);
            let key = &w.path[key_at..];
            push_key(&mut w.untagged, key);
            map.next_value_seed(Node(&mut *w))?;
            w.path.truncate(at);
            w.untagged.truncate(untagged_at);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let w = self.0;
        w.sink.container(&w.path, Container::List);
        let (at, untagged_at) = (w.path.len(), w.untagged.len());
        w.untagged.push_str("[]");
        let tagged = w.tags.contains_key(w.untagged.as_str());
        if !tagged {
            w.path.push_str("[]");
        }
        loop {
            if tagged {
                // Each item's path names its tag (none: `[]`), as the first pass found it.
                let tag = w.slots.get(w.next).cloned().flatten();
                w.next += 1;
                w.path.truncate(at);
                w.path.push('[');
                w.path.push_str(tag.as_deref().unwrap_or_default());
                w.path.push(']');
            }
            if seq.next_element_seed(Node(&mut *w))?.is_none() {
                // No item: its slot is the next list's.
                w.next -= usize::from(tagged);
                break;
            }
        }
        w.path.truncate(at);
        w.untagged.truncate(untagged_at);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Seen(Vec<String>);

    impl Sink for Seen {
        fn container(&mut self, path: &str, kind: Container) {
            self.0.push(format!("{path} {kind:?}"));
        }
        fn scalar(&mut self, path: &str, value: Scalar<'_>) {
            self.0.push(format!("{path}={}", value.text()));
        }
    }

    fn fields(text: &str, tags: &[(&str, &str)]) -> Vec<String> {
        let tags: Tags = tags
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let mut seen = Seen::default();
        assert!(Walk::new(text, &tags).unwrap().fields(&mut seen), "{text}");
        seen.0
    }

    #[test]
    fn every_field_by_its_path_and_tagged_items_by_a_tag_that_comes_last() {
        let text = r#"{"a": 1, "l": [{"x": [true, "s"], "t": "k"}, {"x": 2.5}, 3, {"t": {"t": "no"}}],
            "m": {"n": null, "o": -4}}"#;
        assert_eq!(
            fields(text, &[("l[]", "t")]),
            [
                " Object",
                "a=1",
                "l List",
                "l[k] Object",
                "l[k].x List",
                "l[k].x[]=true",
                "l[k].x[]=s",
                "l[k].t=k",
                "l[] Object",
                "l[].x=2.5",
                "l[]=3",
                "l[] Object",
                "l[].t Object",
                "l[].t.t=no",
                "m Object",
                "m.o=-4",
            ]
        );
        // Untagged, the same list's items are all `l[]`.
        assert!(fields(text, &[]).contains(&"l[].x[]=s".to_string()));
        // Tags nested in a tagged item, each found by its own item.
        let nested =
            r#"{"l": [{"i": [{"u": 1, "k": "b"}], "t": "a"}, {"t": "c", "i": [{"k": "d"}]}]}"#;
        let seen = fields(nested, &[("l[]", "t"), ("l[].i[]", "k")]);
        assert!(seen.contains(&"l[a].i[b].u=1".to_string()), "{seen:?}");
        assert!(seen.contains(&"l[c].i[d].k=d".to_string()), "{seen:?}");
    }

    #[test]
    fn text_that_is_no_json_is_refused() {
        let mut seen = Seen::default();
        let tags = Tags::new();
        assert!(!Walk::new("{\"a\": ", &tags).unwrap().fields(&mut seen));
        assert!(!Walk::new("[1] 2", &tags).unwrap().fields(&mut seen));
        let tagged: Tags = [("l[]".to_string(), "t".to_string())].into();
        assert!(Walk::new("{\"l\": [", &tagged).is_none());
    }
}
