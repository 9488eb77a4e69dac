//! Reading the orders file: JSON Lines, or CSV with the spec's field names as its header,
//! into orders, a batch's worth at a time, on a thread of its own while the first batches
//! are already on their way.

use std::{borrow::Cow, collections::HashSet, path::Path};

use licensing_sdk::{
    SyncMode,
    order::types::{BatchOrderRequest, LicenseOrder},
    validate::Validate as _,
};
use serde_json::{Map, Value};
use sha2::Digest as _;
use tokio::sync::mpsc;

use super::results::{Outcome, Record};
use crate::{error::CliError, input::typed, ops::BULK_FIELDS};

/// An order read from the file.
pub struct Line {
    /// Its line number.
    pub no: u64,
    /// Where its text starts in the file, to read it again.
    pub at: usize,
    /// The order.
    pub order: LicenseOrder,
}

/// A batch's worth of lines, in file order.
pub struct Batch {
    pub lines: Vec<Line>,
}

/// What the file's reader hands the sender, in line order.
pub enum Read {
    /// A batch's worth of orders.
    Batch(Batch),
    /// A line that is not an order, or breaks a rule: never sent.
    Invalid(Record<'static>),
    /// Everything is read: how many lines were (those a resume skips not counted).
    End(u64),
}

/// The orders file, read whole and its CSV header checked before anything is sent.
pub struct Source {
    text: String,
    /// A CSV file's header.
    header: Option<Vec<String>>,
}

impl Source {
    /// Reads the file; a CSV file's header must name fields of an order.
    pub fn open(path: &Path, csv: bool) -> Result<Self, CliError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
        let header = if csv {
            let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
            let header: Vec<String> = reader
                .headers()
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?
                .iter()
                .map(|h| h.trim().to_string())
                .collect();
            for name in &header {
                if !BULK_FIELDS.iter().any(|(f, _)| f == name) {
                    return Err(CliError::usage(format!(
                        "{}: column `{name}` is not a field of an order (fields: {})",
                        path.display(),
                        BULK_FIELDS
                            .iter()
                            .map(|(f, _)| *f)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            }
            Some(header)
        } else {
            None
        };
        Ok(Source { text, header })
    }

    /// The file's size in bytes.
    pub fn size(&self) -> u64 {
        self.text.len() as u64
    }

    /// The SHA-256 of the file, in hex.
    pub fn sha256(&self) -> String {
        let digest = sha2::Sha256::digest(self.text.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The lines the file holds, for the progress bar until reading ends (less the
    /// header): blank lines, and a CSV cell holding a line break, make it an over-count.
    pub fn lines(&self) -> u64 {
        let text = self.text.as_bytes();
        let breaks = text.iter().filter(|&&b| b == b'\n').count() as u64;
        let lines = breaks + u64::from(text.last().is_some_and(|&b| b != b'\n'));
        lines.saturating_sub(u64::from(self.header.is_some()))
    }

    /// Reads every line not in `skip` and sends the orders in batches, and a record for
    /// each line that is not one; stops early if the sender has gone.
    pub fn read(&self, skip: &HashSet<u64>, mut batches: Batcher) {
        if self.each(&|no| !skip.contains(&no), |no, at, order| {
            batches.line(no, at, order)
        }) {
            batches.finish();
        }
    }

    /// Reads each line `wanted` as an order (or its fault) and hands it to `f` with its
    /// number and where it starts, until `f` says false; true when every line was read.
    fn each(
        &self,
        wanted: &dyn Fn(u64) -> bool,
        mut f: impl FnMut(u64, usize, Result<LicenseOrder, (String, String)>) -> bool,
    ) -> bool {
        if let Some(header) = &self.header {
            let mut reader = csv::ReaderBuilder::new().from_reader(self.text.as_bytes());
            for record in reader.records() {
                let (no, at, order) = match record {
                    Ok(record) => {
                        let (no, at) = record
                            .position()
                            .map_or((0, 0), |p| (p.line(), p.byte() as usize));
                        if !wanted(no) {
                            continue;
                        }
                        (no, at, csv_order(header, &record).and_then(typed))
                    }
                    // A record the CSV reader refuses (one with more or fewer cells than
                    // the header) is that line's fault, not the file's.
                    Err(e) => (
                        e.position().map_or(0, |p| p.line()),
                        0,
                        Err((String::new(), format!("not a CSV record: {e}"))),
                    ),
                };
                if wanted(no) && !f(no, at, order) {
                    return false;
                }
            }
        } else {
            let mut at = 0;
            for (i, line) in self.text.split_inclusive('\n').enumerate() {
                let start = at;
                at += line.len();
                let (no, line) = (i as u64 + 1, line.trim_end_matches(['\n', '\r']));
                if !line.trim().is_empty() && wanted(no) && !f(no, start, json_order(line)) {
                    return false;
                }
            }
        }
        true
    }

    /// The order whose text starts at `at` (a [`Line`]'s), read again: what the lines of
    /// a refused batch are sent again from, rather than a copy of every order sent.
    pub fn again(&self, no: u64, at: usize) -> Line {
        let text = &self.text[at..];
        let order = match &self.header {
            Some(header) => {
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .from_reader(text.as_bytes());
                let mut record = csv::StringRecord::new();
                match reader.read_record(&mut record) {
                    Ok(true) => csv_order(header, &record).and_then(typed),
                    _ => Err((String::new(), "the line cannot be read again".into())),
                }
            }
            None => json_order(text.lines().next().unwrap_or_default()),
        };
        // It was an order when it was first read, and the file has not changed since.
        Line {
            no,
            at,
            order: order
                .and_then(checked)
                .expect("a line read as an order reads again as one"),
        }
    }

    /// The numbers of the lines `wanted` that are orders: those a results file that does
    /// not account for them may have sent (a line that is not one never is).
    pub fn orders_where(&self, wanted: &dyn Fn(u64) -> bool) -> Vec<u64> {
        let mut nos = Vec::new();
        self.each(wanted, |no, _, order| {
            if order.and_then(checked).is_ok() {
                nos.push(no);
            }
            true
        });
        nos
    }

    /// The lines numbered `nos` that are orders (those a check looks at).
    pub fn lines_numbered(&self, nos: &HashSet<u64>) -> Vec<Line> {
        let mut wanted = Vec::new();
        self.each(&|no| nos.contains(&no), |no, at, order| {
            if let Ok(order) = order.and_then(checked) {
                wanted.push(Line { no, at, order });
            }
            true
        });
        wanted
    }
}

/// Gathers a file's orders into batches as they are read.
pub struct Batcher {
    size: usize,
    lines: Vec<Line>,
    read: u64,
    to: mpsc::Sender<Read>,
}

impl Batcher {
    /// Batches of `size` orders, handed to `to`.
    pub fn new(size: usize, to: mpsc::Sender<Read>) -> Self {
        Batcher {
            size,
            lines: Vec::with_capacity(size.min(1024)),
            read: 0,
            to,
        }
    }

    /// Takes one line; false when nobody is listening any more.
    fn line(&mut self, no: u64, at: usize, order: Result<LicenseOrder, (String, String)>) -> bool {
        self.read += 1;
        match order.and_then(checked) {
            Ok(order) => {
                self.lines.push(Line { no, at, order });
                self.lines.len() < self.size || self.flush()
            }
            Err((field, rule)) => self
                .to
                .blocking_send(Read::Invalid(Record {
                    field: (!field.is_empty()).then_some(Cow::Owned(field)),
                    message: Some(Cow::Owned(rule)),
                    ..Record::new(no, Outcome::Invalid)
                }))
                .is_ok(),
        }
    }

    /// Sends the batch gathered so far.
    fn flush(&mut self) -> bool {
        let lines = std::mem::replace(&mut self.lines, Vec::with_capacity(self.size.min(1024)));
        self.to.blocking_send(Read::Batch(Batch { lines })).is_ok()
    }

    fn finish(mut self) {
        if !self.lines.is_empty() && !self.flush() {
            return;
        }
        let _ = self.to.blocking_send(Read::End(self.read));
    }
}

/// The batch's own rules, for one order alone: a line that breaks one is reported and
/// kept out, instead of failing its whole batch. The order is lent to a one-order batch
/// and taken back (a copy per line costs as much as reading it).
fn checked(order: LicenseOrder) -> Result<LicenseOrder, (String, String)> {
    let mut alone = BatchOrderRequest {
        channel_code: String::new(),
        channel_order_id: String::new(),
        sync_mode: SyncMode::Sync,
        order_list: vec![order],
    };
    let checked = alone.validate();
    let order = alone.order_list.pop().expect("the one order");
    checked.map_err(|e| (e.field.replace("orderList[0].", ""), e.rule))?;
    Ok(order)
}

/// A JSON Lines line as an order. A line that is an order is read straight into one;
/// any other is read again through a JSON value, whose error names the line's fault
/// (not valid JSON, or the field and what it must be) as it is reported.
fn json_order(line: &str) -> Result<LicenseOrder, (String, String)> {
    if let Ok(order) = serde_json::from_str(line) {
        return Ok(order);
    }
    let value = serde_json::from_str::<Value>(line)
        .map_err(|e| (String::new(), format!("not valid JSON: {e}")))?;
    typed(value)
}

/// A CSV record as an order object: each cell read as its field's type says.
fn csv_order(header: &[String], record: &csv::StringRecord) -> Result<Value, (String, String)> {
    let mut object = Map::new();
    for (name, cell) in header.iter().zip(record.iter()) {
        if cell.is_empty() {
            continue;
        }
        let kind = BULK_FIELDS
            .iter()
            .find(|(f, _)| f == name)
            .map_or('s', |(_, k)| *k);
        let value = match kind {
            'i' => cell
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| "an integer"),
            'n' => cell
                .trim()
                .parse::<f64>()
                .map(Value::from)
                .map_err(|_| "a number"),
            'b' => cell
                .trim()
                .parse::<bool>()
                .map(Value::from)
                .map_err(|_| "true or false"),
            'j' => serde_json::from_str(cell).map_err(|_| "JSON (a list or an object)"),
            _ => Ok(Value::from(cell)),
        }
        .map_err(|expected| (name.clone(), format!("must be {expected} (is {cell:?})")))?;
        object.insert(name.clone(), value);
    }
    Ok(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_bar_starts_from_the_lines_of_the_file() {
        let source = |text: &str, csv: bool| Source {
            text: text.to_string(),
            header: csv.then(Vec::new),
        };
        assert_eq!(source("", false).lines(), 0);
        assert_eq!(source("{}\n{}\n", false).lines(), 2);
        assert_eq!(source("{}\n{}", false).lines(), 2);
        assert_eq!(source("a,b\n1,2\n3,4", true).lines(), 2);
        assert_eq!(source("a,b\n", true).lines(), 0);
    }

    #[test]
    fn the_digest_is_the_files_sha256() {
        let source = Source {
            text: "abc".into(),
            header: None,
        };
        assert_eq!(
            source.sha256(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(source.size(), 3);
    }
}
