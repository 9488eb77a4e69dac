//! The results file of `orders submit`, a write-ahead log of the run.
//!
//! Its first line names the run it belongs to ([`Run`]: the input's path, size and SHA-256,
//! and the flags that shape each batch's `channelOrderId`) and how many records were
//! written with it (`{"run": {...}, "records": N}`); then come records, one JSON object
//! per line: first those N, one per line in line order (what earlier runs settled, or at
//! the end of a run every line's outcome), then those the run appends as it goes. Before
//! a batch is sent, each of its lines is appended as `sending` with the batch's
//! `channelOrderId`, and the file is synced (`fdatasync`) before the request is made;
//! the answer is appended after. A line's last record is its outcome, and a line whose
//! last record is `sending` was sent without an answer recorded: it reads as `unknown`,
//! never as not sent.
//!
//! The file is replaced (never written in place) through a new file of a random name in
//! its directory, synced, then renamed over it (and the directory synced): when a run
//! starts, holding what earlier runs settled, and when it ends, by one record per line.
//! How a resume reads the file back, and what it takes as proven, is in [`super::recover`].

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashSet},
    fs::File,
    io::Write as _,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use super::lock::Lock;
use crate::error::CliError;

/// What a results file belongs to: written in its first line, `{"run": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// The input file, as given to the first run.
    pub input: String,
    /// The input's size in bytes.
    pub size: u64,
    /// The SHA-256 of the input, in hex.
    pub sha256: String,
    /// `jsonl` or `csv`: how line numbers are counted.
    pub format: String,
    /// The batches' `channelCode`.
    pub channel_code: String,
    /// The batches' `syncMode`.
    pub sync_mode: String,
    /// Each batch's `channelOrderId` starts with it.
    pub order_id_prefix: String,
    /// Which run of the file this is (1, then one more for each `--resume`): a batch sent
    /// by a later run carries it in its `channelOrderId`, so no two batches share one.
    pub attempt: u32,
}

/// A results file's first line.
#[derive(Serialize, Deserialize)]
pub struct Header<T> {
    pub run: T,
    /// How many records were written with this line, one per line in line order, before
    /// the records appended since. Files of earlier versions have none, and do not show
    /// where they end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<u64>,
}

/// One line's outcome, as written to the results file (and read back by `--resume`).
/// Its text borrows from what the outcome came from: a record is serialized once, when
/// it is appended, and its bytes are what the file is rewritten from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record<'a> {
    /// The input line (1-based; a CSV file's header is line 1).
    pub line: u64,
    /// `ok`, `failed`, `invalid`, `unknown`, `not_sent`, or `sending` (sent, no answer yet).
    pub outcome: Cow<'a, str>,
    /// The batch's `channelOrderId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_order_id: Option<Cow<'a, str>>,
    /// The order's `licenseOrderId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license_order_id: Option<Cow<'a, str>>,
    /// The order's asset numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asset_nos: Option<Cow<'a, [String]>>,
    /// The platform's error code, or `transport`, `interrupted`, `validation`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Cow<'a, str>>,
    /// For `invalid`: the field at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<Cow<'a, str>>,
    /// What happened, for anything but `ok` (and for an `ok` found by a check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Cow<'a, str>>,
}

impl Record<'_> {
    /// A record with only its line and outcome.
    pub fn new(line: u64, outcome: Outcome) -> Self {
        Record {
            line,
            outcome: Cow::Borrowed(outcome.as_str()),
            ..Record::default()
        }
    }

    /// The record as owned data.
    pub fn into_owned(self) -> Record<'static> {
        fn own<T: ToOwned + ?Sized>(c: Option<Cow<'_, T>>) -> Option<Cow<'static, T>> {
            c.map(|c| Cow::Owned(c.into_owned()))
        }
        Record {
            line: self.line,
            outcome: Cow::Owned(self.outcome.into_owned()),
            channel_order_id: own(self.channel_order_id),
            license_order_id: own(self.license_order_id),
            asset_nos: own(self.asset_nos),
            code: own(self.code),
            field: own(self.field),
            message: own(self.message),
        }
    }
}

/// The outcomes a line can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Applied.
    Ok,
    /// Refused, or not sent for a transport failure: nothing was applied.
    Failed,
    /// Breaks a documented rule: never sent.
    Invalid,
    /// Sent without an answer: it may have been applied.
    Unknown,
    /// Not sent: the run stopped first.
    NotSent,
    /// Sent; its answer is not recorded yet (a run that stopped here leaves it unknown).
    Sending,
}

impl Outcome {
    pub const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::Failed,
        Outcome::Invalid,
        Outcome::Unknown,
        Outcome::NotSent,
        Outcome::Sending,
    ];

    /// The outcome's name in the results file.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Invalid => "invalid",
            Outcome::Unknown => "unknown",
            Outcome::NotSent => "not_sent",
            Outcome::Sending => "sending",
        }
    }

    /// The outcome named `text`.
    pub fn of(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == text)
    }
}

/// A line's record in the results: its outcome, and where its text is.
struct Entry {
    outcome: Outcome,
    /// The batch, for an `unknown` or `sending` line (which the summary names).
    batch: Option<Box<str>>,
    text: std::ops::Range<usize>,
}

/// The results file of a run: records are appended as they come (a batch's `sending`
/// records synced before it is sent), and the file is replaced by one record per line,
/// in line order, from the text appended (each record is serialized once).
pub struct Results {
    path: PathBuf,
    run: Run,
    file: File,
    /// Every record's line of JSON, in the order they came.
    text: Vec<u8>,
    lines: BTreeMap<u64, Entry>,
    _lock: Lock,
}

impl Results {
    /// Writes a results file for `run` holding `carried` (what earlier runs settled),
    /// replacing any file at `path`; `lock` is held as long as the results are.
    pub fn create(
        path: &Path,
        run: &Run,
        carried: &[Record<'_>],
        lock: Lock,
    ) -> Result<Self, CliError> {
        let mut text = Vec::new();
        let mut lines = BTreeMap::new();
        add(&mut text, &mut lines, carried);
        let file = replace(path, run, &text, &lines)?;
        Ok(Results {
            path: path.to_path_buf(),
            run: run.clone(),
            file,
            text,
            lines,
            _lock: lock,
        })
    }

    /// Takes the records in and appends them to the file.
    pub fn append(&mut self, records: &[Record<'_>]) -> Result<(), CliError> {
        let start = add(&mut self.text, &mut self.lines, records);
        self.file
            .write_all(&self.text[start..])
            .map_err(|e| write_error(&self.path, &e))
    }

    /// Appends the records and waits until they are on disk: what a batch's lines are
    /// recorded with before it is sent.
    pub fn append_synced(&mut self, records: &[Record<'_>]) -> Result<(), CliError> {
        self.append(records)?;
        self.file
            .sync_data()
            .map_err(|e| write_error(&self.path, &e))
    }

    /// Replaces the file by its header and its records in line order, one per line.
    pub fn rewrite(&mut self) -> Result<(), CliError> {
        self.file = replace(&self.path, &self.run, &self.text, &self.lines)?;
        Ok(())
    }

    /// How many lines have this outcome.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.lines.values().filter(|e| e.outcome == outcome).count()
    }

    /// How many lines have a record.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// How many lines are unknown without a batch: those a results file could not account
    /// for (see [`super::recover`]).
    pub fn unaccounted(&self) -> usize {
        self.lines
            .values()
            .filter(|e| e.outcome == Outcome::Unknown && e.batch.is_none())
            .count()
    }

    /// The batches of the lines whose outcome is unknown, each once, in line order.
    pub fn unknown_batches(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.lines
            .values()
            .filter_map(|e| e.batch.as_deref())
            .filter(|b| seen.insert(*b))
            .collect()
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Takes the records in; the text they add starts at the offset returned.
fn add(text: &mut Vec<u8>, lines: &mut BTreeMap<u64, Entry>, records: &[Record<'_>]) -> usize {
    let start = text.len();
    for record in records {
        let at = text.len();
        serde_json::to_writer(&mut *text, record).expect("JSON");
        text.push(b'\n');
        let outcome = Outcome::of(&record.outcome).unwrap_or(Outcome::Failed);
        lines.insert(
            record.line,
            Entry {
                outcome,
                batch: matches!(outcome, Outcome::Unknown | Outcome::Sending)
                    .then(|| record.channel_order_id.as_deref().map(Box::from))
                    .flatten(),
                text: at..text.len(),
            },
        );
    }
    start
}

/// Writes the header (counting the records below it) and each line's record, in line
/// order, to a new file of a random name in the results' directory (never a name that
/// exists, so no planted file or link is followed), syncs it and renames it over the
/// results; the file is then open for appending.
fn replace(
    path: &Path,
    run: &Run,
    text: &[u8],
    lines: &BTreeMap<u64, Entry>,
) -> Result<File, CliError> {
    let failed = |e: std::io::Error| write_error(path, &e);
    let header = Header {
        run,
        records: Some(lines.len() as u64),
    };
    let mut whole = serde_json::to_vec(&header).expect("JSON");
    whole.reserve(text.len() + 1);
    whole.push(b'\n');
    for entry in lines.values() {
        whole.extend_from_slice(&text[entry.text.clone()]);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "results".into(), |n| n.to_string_lossy());
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(failed)?;
    temp.write_all(&whole).map_err(failed)?;
    temp.as_file().sync_all().map_err(failed)?;
    let file = temp.persist(path).map_err(|e| failed(e.error))?;
    // The rename itself is on disk once the directory is.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(file)
}

fn write_error(path: &Path, e: &std::io::Error) -> CliError {
    CliError::usage(format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::bulk::{lock::lock, recover::read};

    fn record(line: u64, outcome: Outcome, batch: &str) -> Record<'_> {
        Record {
            channel_order_id: Some(Cow::Borrowed(batch)),
            ..Record::new(line, outcome)
        }
    }

    /// A run of ten orders, as the tests of the results and of their recovery write it.
    pub(in crate::bulk) fn run() -> Run {
        Run {
            input: "orders.jsonl".into(),
            size: 10,
            sha256: "00".into(),
            format: "jsonl".into(),
            channel_code: "CH01".into(),
            sync_mode: "sync".into(),
            order_id_prefix: "b".into(),
            attempt: 1,
        }
    }

    fn lines(text: &str) -> Vec<u64> {
        text.lines()
            .skip(1)
            .map(|l| serde_json::from_str::<Record>(l).unwrap().line)
            .collect()
    }

    #[test]
    fn the_results_are_rewritten_in_line_order_from_the_text_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let carried = [record(2, Outcome::Ok, "b-2-2")];
        let mut results = Results::create(&path, &run(), &carried, lock(&path).unwrap()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("{\"run\":{\"input\":\"orders.jsonl\""),
            "{text}"
        );
        assert!(
            text.ends_with("\n{\"line\":2,\"outcome\":\"ok\",\"channelOrderId\":\"b-2-2\"}\n"),
            "{text}"
        );
        results
            .append_synced(&[
                record(5, Outcome::Sending, "b-4-5"),
                record(4, Outcome::Sending, "b-4-5"),
            ])
            .unwrap();
        results
            .append(&[record(1, Outcome::Failed, "b-1-1")])
            .unwrap();
        // Appended as they came, until the rewrite puts them in line order.
        assert_eq!(
            lines(&std::fs::read_to_string(&path).unwrap()),
            [2, 5, 4, 1]
        );
        results.rewrite().unwrap();
        assert_eq!(
            lines(&std::fs::read_to_string(&path).unwrap()),
            [1, 2, 4, 5]
        );
        assert_eq!(results.count(Outcome::Sending), 2);
        assert_eq!(results.unknown_batches(), ["b-4-5"]);
        // Appending after the rewrite goes to the new file.
        results.append(&[record(3, Outcome::NotSent, "")]).unwrap();
        assert_eq!(
            lines(&std::fs::read_to_string(&path).unwrap()),
            [1, 2, 4, 5, 3]
        );
        // Read back: the header, and a line sent without an answer as unknown.
        let back = read(&path).unwrap();
        assert_eq!(back.run, run());
        assert_eq!(back.records[&4].outcome, "unknown");
        assert_eq!(back.records[&4].code.as_deref(), Some("interrupted"));
        assert_eq!(back.records[&1], record(1, Outcome::Failed, "b-1-1"));
        // Nothing but the results and their lock is left in the directory.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["r.jsonl", "r.jsonl.lock"]);
    }

    #[test]
    fn outcomes_are_read_back_by_name() {
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::of(outcome.as_str()), Some(outcome));
        }
        assert_eq!(Outcome::of("done"), None);
    }
}
