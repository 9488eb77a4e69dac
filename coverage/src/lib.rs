//! What an integration with the licensing platform exercised, against the documents.
//!
//! Read a recording ([`exchange::read_from`] from a file, entry by entry, or
//! [`exchange::read`] from a parsed document: the conformance proxy's HAR, the
//! simulator's journal, or several merged), then a [`Tally`] (or [`Report::new`] over a
//! list) counts, per operation, the calls made, the documented business codes seen and
//! never seen, the enum values sent and never sent, the optional request fields never
//! sent, whether a page after the first was read and the retries observed, and lists the
//! suspected double submissions ([`doubles`]). [`render`] writes it as markdown or JUnit
//! XML (JSON by `serde`), and [`Minimums`] fails a run below the ratios it is given.
//!
//! Memory: a file is read one entry at a time (at most about twice the largest entry,
//! which [`exchange::Limits`] bounds, 64 MiB by default), and a tally keeps what the
//! documents bound (per operation: its fields, enum values and codes) and what the report
//! lists, not the exchanges; the double-submission check remembers its keys, at most
//! [`doubles::MAX_REMEMBERED_KEYS`] a recording.
//!
//! ```
//! use licensing_coverage::{Catalogue, Report, exchange};
//! let journal = serde_json::json!({"entries": [{
//!     "seq": 1, "operation": "allocateShellNums", "method": "POST",
//!     "path": "/order/api/order/v1/shellnums", "query": [], "requestBody": {"size": 1},
//!     "status": 200, "code": "0"
//! }]});
//! let exchanges = exchange::read("journal.json", &journal).unwrap();
//! let report = Report::new(&Catalogue::documents().unwrap(), &exchanges);
//! assert_eq!(report.totals.operations.seen, 1);
//! ```

#![forbid(unsafe_code)]

/// The visits of the scalars (a bool, a number, null) a visitor passes over, each read
/// as `$value`; with `str`, a string too. Written once for every lenient reader.
macro_rules! ignore_scalars {
    ($value:expr) => {
        fn visit_bool<Er: ::serde::de::Error>(self, _: bool) -> Result<Self::Value, Er> {
            Ok($value)
        }
        fn visit_i64<Er: ::serde::de::Error>(self, _: i64) -> Result<Self::Value, Er> {
            Ok($value)
        }
        fn visit_u64<Er: ::serde::de::Error>(self, _: u64) -> Result<Self::Value, Er> {
            Ok($value)
        }
        fn visit_f64<Er: ::serde::de::Error>(self, _: f64) -> Result<Self::Value, Er> {
            Ok($value)
        }
        fn visit_unit<Er: ::serde::de::Error>(self) -> Result<Self::Value, Er> {
            Ok($value)
        }
    };
    ($value:expr, str) => {
        ignore_scalars!($value);
        fn visit_str<Er: ::serde::de::Error>(self, _: &str) -> Result<Self::Value, Er> {
            Ok($value)
        }
    };
}

/// The map keys a reader acts on, each by its text (read where the parser holds it, never
/// copied); every other key is `Other`.
macro_rules! keys {
    ($(#[$doc:meta])* $name:ident { $($text:literal => $variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        enum $name {
            $($variant,)+
            Other,
        }

        impl<'de> ::serde::de::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                crate::lenient::key_by(d, |key| match key {
                    $($text => $name::$variant,)+
                    _ => $name::Other,
                })
            }
        }
    };
}

mod catalogue;
pub mod doubles;
mod entry;
#[cfg(feature = "html")]
pub mod html;
mod lenient;
mod read;
mod record;
pub mod render;
mod report;
mod threshold;
mod walk;

pub use catalogue::{Catalogue, Field, Operation};
pub use doubles::Double;
pub use record::{Body, Exchange};

/// The exchanges a report reads, from either source: the conformance proxy's HAR
/// recording (`log.entries`) or the simulator's journal (`entries`, as its admin API and
/// console export it, or a bare list of entries). [`read_from`](exchange::read_from) reads
/// a file entry by entry (see [`Limits`](exchange::Limits)); [`read`](exchange::read) and
/// [`from_har`](exchange::from_har) read a document already parsed.
///
/// Gathered here, at the crate root that wires the modules together: the types and the
/// readers of parsed documents (`record`) sit below the streaming reader (`read`), which
/// builds them.
pub mod exchange {
    pub use crate::read::{DEFAULT_MAX_ENTRY_BYTES, Limits, har_entries, read, read_from};
    pub use crate::record::{Body, Exchange, from_har};
}
pub use report::{EnumCoverage, OperationCoverage, Ratio, Report, Tally, Totals};
pub use threshold::Minimums;

/// A JSON scalar as text, as codes and enum values are compared (`7`, `new_buy`, `true`).
pub(crate) fn text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
