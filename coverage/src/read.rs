//! Recordings and journals read from a file entry by entry: `log.entries` of a HAR,
//! `entries` of a journal (or a bare list of entries), each entry made the small
//! [`Exchange`] a report needs and handed on before the next is read; everything else of
//! the document is read through without being kept.
//!
//! What reading holds at once is one entry: the bodies of its request and reply as text
//! (a reply's only until its business code is read), and the parser's buffer, which keeps
//! the room of the longest string read so far; so at most about twice the largest entry,
//! plus a constant. [`Limits::max_entry_bytes`] bounds an entry (and any stretch of the
//! document between entries), so that a file of any size is read in bounded memory or
//! refused, naming the entry.

use std::{
    cell::Cell,
    fmt,
    io::{self, BufReader, Read},
};

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, value::RawValue};

use crate::{entry, record::Exchange};

/// The most one entry of a recording may have unless told otherwise: 64 MiB (the
/// simulator's largest request body, and the SDK's largest reply).
pub const DEFAULT_MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;

/// Bounds of reading a recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes of the file one entry may take (and any stretch of the document
    /// between two entries, or before the first, or after the last); a larger one is
    /// refused with an error naming the file and the entry.
    pub max_entry_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES,
        }
    }
}

impl Limits {
    /// No bound: for a document already in memory.
    pub fn unbounded() -> Self {
        Limits {
            max_entry_bytes: u64::MAX,
        }
    }
}

/// Counts what the parser has read, and refuses to read an entry past the bound.
struct Meter {
    read: Cell<u64>,
    /// Where the current stretch (an entry, or what lies between entries) began.
    start: Cell<u64>,
    limit: u64,
    /// Which entry is being read (`None`: between entries), and whether the bound was hit.
    entry: Cell<Option<usize>>,
    over: Cell<bool>,
}

impl Meter {
    fn begin(&self, entry: Option<usize>) {
        self.start.set(self.read.get());
        self.entry.set(entry);
    }
}

struct Metered<'m, R> {
    inner: R,
    meter: &'m Meter,
}

impl<R: Read> Read for Metered<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let m = self.meter;
        if m.read.get().saturating_sub(m.start.get()) > m.limit {
            m.over.set(true);
            return Err(io::Error::other("past the bound on one entry"));
        }
        let n = self.inner.read(buf)?;
        m.read.set(m.read.get() + n as u64);
        Ok(n)
    }
}

/// What is done with each entry.
trait Entries {
    /// Whether a journal's entries are wanted too, or only a HAR's.
    const JOURNALS: bool;
    fn har<'de, D: Deserializer<'de>>(&mut self, index: usize, d: D) -> Result<(), D::Error>;
    fn journal<'de, D: Deserializer<'de>>(&mut self, index: usize, d: D) -> Result<(), D::Error>;
    /// The error that stopped the reading, in its own words, if it was this one's.
    fn failed(&mut self) -> Option<String>;
}

/// Which list of entries a document had.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Found {
    har: bool,
    journal: bool,
}

/// Reads a whole document with `entries`; the number of entries read.
fn document<R: Read, E: Entries>(
    name: &str,
    reader: R,
    limits: &Limits,
    entries: &mut E,
) -> Result<(Found, usize), String> {
    let meter = Meter {
        read: Cell::new(0),
        start: Cell::new(0),
        limit: limits.max_entry_bytes,
        entry: Cell::new(None),
        over: Cell::new(false),
    };
    let reader = BufReader::with_capacity(
        64 * 1024,
        Metered {
            inner: reader,
            meter: &meter,
        },
    );
    let mut de = serde_json::Deserializer::from_reader(reader);
    let failed = |e: serde_json::Error, meter: &Meter| {
        if meter.over.get() {
            let limit = meter.limit;
            match meter.entry.get() {
                Some(i) => format!(
                    "{name}: entry {i} is larger than {limit} bytes, the most one entry may have (--max-entry-bytes)"
                ),
                None => format!(
                    "{name}: more than {limit} bytes outside the entries (--max-entry-bytes)"
                ),
            }
        } else {
            format!("{name}: not JSON: {e}")
        }
    };
    let mut count = 0;
    let found = Doc {
        meter: &meter,
        entries,
        count: &mut count,
    }
    .deserialize(&mut de);
    if let Some(e) = entries.failed() {
        return Err(format!("{name}: {e}"));
    }
    let found = found.map_err(|e| failed(e, &meter))?;
    de.end().map_err(|e| failed(e, &meter))?;
    if found.har && found.journal {
        return Err(format!(
            "{name}: both a HAR recording's `log.entries` and a journal's `entries`"
        ));
    }
    Ok((found, count))
}

struct Doc<'a, E> {
    meter: &'a Meter,
    entries: &'a mut E,
    count: &'a mut usize,
}

/// The seeds that are their own visitors, of any JSON value.
macro_rules! seed_is_visitor {
    ($($name:ident => $value:ty),+) => {$(
        impl<'de, E: Entries> DeserializeSeed<'de> for $name<'_, E> {
            type Value = $value;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<$value, D::Error> {
                d.deserialize_any(self)
            }
        }
    )+};
}

seed_is_visitor!(Doc => Found, Log => bool, List => bool);

keys! {
    /// The keys of a document that are read.
    DocKey { "log" => Log, "entries" => Entries }
}

impl<'de, E: Entries> Visitor<'de> for Doc<'_, E> {
    type Value = Found;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a HAR recording or a journal")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let mut found = Found::default();
        while let Some(key) = map.next_key::<DocKey>()? {
            match key {
                DocKey::Log => {
                    found.har |= map.next_value_seed(Log {
                        list: List {
                            meter: self.meter,
                            entries: &mut *self.entries,
                            count: &mut *self.count,
                            har: true,
                        },
                    })?;
                }
                DocKey::Entries if E::JOURNALS => {
                    found.journal |= map.next_value_seed(List {
                        meter: self.meter,
                        entries: &mut *self.entries,
                        count: &mut *self.count,
                        har: false,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Found, A::Error> {
        let list = List {
            meter: self.meter,
            entries: self.entries,
            count: self.count,
            har: false,
        };
        if E::JOURNALS {
            list.visit_seq(seq)?;
        } else {
            IgnoredAny.visit_seq(seq)?;
        }
        Ok(Found {
            journal: E::JOURNALS,
            har: false,
        })
    }
    // Anything else is neither.
    ignore_scalars!(Found::default(), str);
}

/// A HAR's `log`: its `entries`, the rest read through. True when it had a list of them.
struct Log<'a, E> {
    list: List<'a, E>,
}

impl<'de, E: Entries> Visitor<'de> for Log<'_, E> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a HAR log")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut list = Some(self.list);
        let mut found = false;
        while let Some(key) = map.next_key::<DocKey>()? {
            match (key, list.take()) {
                (DocKey::Entries, Some(l)) => found = map.next_value_seed(l)?,
                (_, l) => {
                    list = l;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| false)
    }
    ignore_scalars!(false, str);
}

/// A list of entries (of a HAR when `har`); true when it was a list.
struct List<'a, E> {
    meter: &'a Meter,
    entries: &'a mut E,
    count: &'a mut usize,
    har: bool,
}

impl<'de, E: Entries> Visitor<'de> for List<'_, E> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of entries")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        loop {
            let index = *self.count;
            self.meter.begin(Some(index));
            let one = One {
                entries: &mut *self.entries,
                index,
                har: self.har,
            };
            if seq.next_element_seed(one)?.is_none() {
                break;
            }
            *self.count += 1;
        }
        self.meter.begin(None);
        Ok(true)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
        IgnoredAny.visit_map(map).map(|_| false)
    }
    ignore_scalars!(false, str);
}

struct One<'a, E> {
    entries: &'a mut E,
    index: usize,
    har: bool,
}

impl<'de, E: Entries> DeserializeSeed<'de> for One<'_, E> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.har {
            self.entries.har(self.index, d)
        } else {
            self.entries.journal(self.index, d)
        }
    }
}

/// Makes each entry an [`Exchange`].
struct ToExchanges<'a> {
    name: &'a str,
    each: &'a mut dyn FnMut(Exchange),
    failed: Option<String>,
}

impl Entries for ToExchanges<'_> {
    const JOURNALS: bool = true;

    fn har<'de, D: Deserializer<'de>>(&mut self, index: usize, d: D) -> Result<(), D::Error> {
        // The entry's text first, then its parts borrowed from it: the bodies are copied
        // once, unescaped, and the text is dropped before the exchange is counted.
        let text: Box<RawValue> = de::Deserialize::deserialize(d)?;
        let x = entry::har(format!("{}#{index}", self.name), text.get());
        drop(text);
        (self.each)(x);
        Ok(())
    }

    fn journal<'de, D: Deserializer<'de>>(&mut self, index: usize, d: D) -> Result<(), D::Error> {
        match entry::journal(self.name, d)? {
            Some(x) => {
                (self.each)(x);
                Ok(())
            }
            None => {
                self.failed = Some(format!("journal entry {index} is without `seq`"));
                Err(de::Error::custom("stopped"))
            }
        }
    }

    fn failed(&mut self) -> Option<String> {
        self.failed.take()
    }
}

/// Reads a recording or a journal from `reader` entry by entry, handing each exchange to
/// `each` in order; `name` labels their sources. The number of entries read, or an error
/// saying what the document is not, or which entry is past `limits`.
pub fn read_from(
    name: &str,
    reader: impl Read,
    limits: &Limits,
    each: &mut dyn FnMut(Exchange),
) -> Result<usize, String> {
    let mut to = ToExchanges {
        name,
        each,
        failed: None,
    };
    let (found, count) = document(name, reader, limits, &mut to)?;
    if found == Found::default() {
        return Err(format!(
            "{name}: neither a HAR recording (`log.entries`) nor a journal (`entries`)"
        ));
    }
    Ok(count)
}

/// Hands on each entry of a HAR recording.
struct HarValues<'a> {
    each: &'a mut dyn FnMut(usize, Value) -> Result<(), String>,
    failed: Option<String>,
}

impl Entries for HarValues<'_> {
    const JOURNALS: bool = false;

    fn har<'de, D: Deserializer<'de>>(&mut self, index: usize, d: D) -> Result<(), D::Error> {
        let entry: Value = de::Deserialize::deserialize(d)?;
        (self.each)(index, entry).map_err(|e| {
            self.failed = Some(e);
            de::Error::custom("stopped")
        })
    }

    fn journal<'de, D: Deserializer<'de>>(&mut self, _: usize, d: D) -> Result<(), D::Error> {
        d.deserialize_ignored_any(IgnoredAny).map(|_| ())
    }

    fn failed(&mut self) -> Option<String> {
        self.failed.take()
    }
}

/// Reads a HAR recording's entries from `reader` one at a time, each as JSON, handing each
/// with its index to `each` (whose error stops the reading, and is returned after the
/// file's name). The number of entries read.
pub fn har_entries(
    name: &str,
    reader: impl Read,
    limits: &Limits,
    each: &mut dyn FnMut(usize, Value) -> Result<(), String>,
) -> Result<usize, String> {
    let mut values = HarValues { each, failed: None };
    match document(name, reader, limits, &mut values)? {
        (Found { har: true, .. }, count) => Ok(count),
        _ => Err(format!("{name}: not a HAR document (no log.entries array)")),
    }
}

/// The exchanges of one recording or journal already parsed, in order; `name` labels
/// their sources. An error says what the document is not. ([`read_from`] reads a file
/// without holding it.)
pub fn read(name: &str, document: &Value) -> Result<Vec<Exchange>, String> {
    let mut exchanges = Vec::new();
    let text = document.to_string();
    read_from(name, text.as_bytes(), &Limits::unbounded(), &mut |x| {
        exchanges.push(x);
    })?;
    Ok(exchanges)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str, limit: u64) -> Result<usize, String> {
        let limits = Limits {
            max_entry_bytes: limit,
        };
        read_from("f.json", text.as_bytes(), &limits, &mut |_| {})
    }

    #[test]
    fn an_entry_past_the_bound_is_refused_by_its_index() {
        let small = r#"{"seq": 1, "method": "GET"}"#;
        let big = format!(r#"{{"seq": 2, "requestBody": "{}"}}"#, "x".repeat(300_000));
        let text = format!(r#"{{"entries": [{small}, {small}, {big}]}}"#);
        assert_eq!(count(&text, 1_000_000), Ok(3));
        let e = count(&text, 100_000).unwrap_err();
        assert!(
            e.starts_with("f.json: entry 2 is larger than 100000 bytes"),
            "{e}"
        );
        let text = format!(r#"{{"pad": "{}", "entries": []}}"#, "x".repeat(300_000));
        let e = count(&text, 100_000).unwrap_err();
        assert!(e.contains("outside the entries"), "{e}");
    }

    #[test]
    fn what_is_no_recording_is_refused() {
        let e = |t: &str| count(t, u64::MAX).unwrap_err();
        assert!(e("{\"a\": 1}").contains("neither a HAR"));
        assert!(e("{\"entries\": 3}").contains("neither a HAR"));
        assert!(e("{\"entries\": [], \"log\": {\"entries\": []}}").contains("both"));
        assert!(e("{\"entries\": [").contains("not JSON"));
        assert!(e("[] []").contains("not JSON"));
        let mut n = 0;
        let har = r#"{"log": {"pages": [1], "entries": [{"x": 1}, {"y": [2]}]}}"#;
        har_entries("h", har.as_bytes(), &Limits::default(), &mut |i, v| {
            n += i + v.as_object().map_or(0, |o| o.len());
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 3);
        let stopped = har_entries("h", har.as_bytes(), &Limits::default(), &mut |_, _| {
            Err("enough".into())
        });
        assert_eq!(stopped, Err("h: enough".into()));
        assert!(
            har_entries(
                "h",
                b"{\"entries\": []}".as_slice(),
                &Limits::default(),
                &mut |_, _| Ok(())
            )
            .unwrap_err()
            .contains("not a HAR")
        );
    }
}
