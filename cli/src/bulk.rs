//! `licensing orders submit FILE`: license orders from a JSON Lines or CSV file (one order
//! per line, the spec's field names), sent as `batchOrder` batches with bounded
//! concurrency, with a results file holding one outcome per input line.
//!
//! Outcomes: `ok` (with the license order id and asset numbers), `failed` (the platform's
//! code and message, or a transport failure before sending: nothing was applied),
//! `invalid` (the line breaks a documented rule; never sent), `unknown` (sent, but no
//! answer came back: it may have been applied, so it is never resent unless asked with
//! `--retry-unknown`) and `not_sent` (the run was interrupted first). `--resume` sends
//! again only the lines that are not `ok` (nor `unknown`).
//!
//! The file is read into orders on a thread of its own, a few batches ahead of the
//! sending (bounded by the concurrency), so a large file is sent while it is read and
//! is never held as orders all at once.

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashMap, HashSet},
    io::{IsTerminal as _, Write as _},
    path::{Path, PathBuf},
    sync::Arc,
};

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use futures_util::{StreamExt as _, stream::FuturesUnordered};
use licensing_sdk::{
    Error, SyncMode,
    order::types::{BatchOrderRequest, BatchOrderResultItem, LicenseOrder},
    validate::Validate as _,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::{
    config::Context,
    error::{CliError, exit},
    input::typed,
    ops::BULK_FIELDS,
    output::Format,
};

/// Orders per batch when `--batch-size` is not given. The order document shows no
/// maximum batch size; this keeps a batch's request and reply small (about 1 MB) and a
/// failed batch's share of the file small.
pub const DEFAULT_BATCH_SIZE: usize = 500;
/// Batches in flight at once when `--concurrency` is not given.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// The `orders submit` command.
pub fn command() -> Command {
    Command::new("submit")
        .about("Submits license orders from a JSON Lines or CSV file, in batches")
        .long_about(
            "Submits license orders from FILE (JSON Lines, or CSV with the spec's field names \
             as its header; JSON in the cells of lists and objects) as batchOrder batches, a few \
             at a time. Writes one outcome per input line to the results file: ok, failed, \
             invalid, unknown (sent without an answer: check it was applied before resending \
             with --retry-unknown) or not_sent. --resume RESULTS sends only what is not done. \
             Exits 1 when a line failed, 3 when an outcome is unknown, 130 on Ctrl-C.",
        )
        .arg(Arg::new("file").required(true).value_name("FILE").help("Orders, one per line"))
        .arg(
            Arg::new("channel-code")
                .long("channel-code")
                .required(true)
                .help("The batches' channelCode"),
        )
        .arg(Arg::new("app-key").long("app-key").required(true).help("The appKey of batchOrder"))
        .arg(
            Arg::new("sync-mode")
                .long("sync-mode")
                .value_parser(["sync", "async"])
                .default_value("sync"),
        )
        .arg(
            Arg::new("order-id-prefix")
                .long("order-id-prefix")
                .help("Prefix of each batch's channelOrderId, which ends with its first and last line (default: FILE's name)"),
        )
        .arg(
            Arg::new("batch-size")
                .long("batch-size")
                .value_parser(value_parser!(usize))
                .help(format!("Orders per batch [default: {DEFAULT_BATCH_SIZE}]")),
        )
        .arg(
            Arg::new("concurrency")
                .long("concurrency")
                .value_parser(value_parser!(usize))
                .help(format!("Batches in flight at once [default: {DEFAULT_CONCURRENCY}]")),
        )
        .arg(
            Arg::new("format")
                .long("format")
                .value_parser(["jsonl", "csv"])
                .help("The file's format (default: by its extension, .csv or else JSON Lines)"),
        )
        .arg(
            Arg::new("results")
                .long("results")
                .value_name("RESULTS")
                .help("Where to write the outcomes (default: FILE.results.jsonl)"),
        )
        .arg(
            Arg::new("resume")
                .long("resume")
                .value_name("RESULTS")
                .conflicts_with("results")
                .help("Continue a run: skip the lines RESULTS has as ok (or unknown), update it"),
        )
        .arg(
            Arg::new("retry-unknown")
                .long("retry-unknown")
                .requires("resume")
                .action(ArgAction::SetTrue)
                .help("With --resume: also resend the lines whose outcome is unknown (after checking they were not applied)"),
        )
}

/// One line's outcome, as written to the results file (and read back by `--resume`).
/// Its text borrows from what the outcome came from: a record is serialized once, when
/// it is appended, and its bytes are what the file is rewritten from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record<'a> {
    /// The input line (1-based; a CSV file's header is line 1).
    line: u64,
    /// `ok`, `failed`, `invalid`, `unknown` or `not_sent`.
    outcome: Cow<'a, str>,
    /// The batch's `channelOrderId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    channel_order_id: Option<Cow<'a, str>>,
    /// The order's `licenseOrderId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    license_order_id: Option<Cow<'a, str>>,
    /// The order's asset numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    asset_nos: Option<Cow<'a, [String]>>,
    /// The platform's error code, or `transport`.
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<Cow<'a, str>>,
    /// For `invalid`: the field at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<Cow<'a, str>>,
    /// What happened, for anything but `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Cow<'a, str>>,
}

impl Record<'_> {
    fn new(line: u64, outcome: Outcome) -> Self {
        Record {
            line,
            outcome: Cow::Borrowed(outcome.as_str()),
            ..Record::default()
        }
    }
}

/// The outcomes a line can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Ok,
    Failed,
    Invalid,
    Unknown,
    NotSent,
}

impl Outcome {
    const ALL: [Outcome; 5] = [
        Outcome::Ok,
        Outcome::Failed,
        Outcome::Invalid,
        Outcome::Unknown,
        Outcome::NotSent,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Invalid => "invalid",
            Outcome::Unknown => "unknown",
            Outcome::NotSent => "not_sent",
        }
    }

    fn of(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == text)
    }
}

/// An order read from the file.
struct Line {
    no: u64,
    order: LicenseOrder,
}

/// What the file's reader hands the sender, in line order.
enum Read {
    /// A batch's worth of orders.
    Batch(Batch),
    /// A line that is not an order, or breaks a rule: never sent.
    Invalid(Record<'static>),
    /// Everything is read: how many lines were (those a resume skips not counted).
    End(u64),
}

/// The orders file, read whole and its CSV header checked before anything is sent; its
/// lines are then read into orders on a thread of their own while the first batches
/// are already on their way, so reading a large file and sending it overlap.
struct Source {
    text: String,
    /// A CSV file's header.
    header: Option<Vec<String>>,
}

impl Source {
    fn open(path: &Path, csv: bool) -> Result<Self, CliError> {
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

    /// The lines the file holds, for the progress bar until reading ends (less the
    /// header): blank lines, and a CSV cell holding a line break, make it an over-count.
    fn lines(&self) -> u64 {
        let text = self.text.as_bytes();
        let breaks = text.iter().filter(|&&b| b == b'\n').count() as u64;
        let lines = breaks + u64::from(text.last().is_some_and(|&b| b != b'\n'));
        lines.saturating_sub(u64::from(self.header.is_some()))
    }

    /// Reads every line not in `skip` and sends the orders in batches, and a record for
    /// each line that is not one; stops early if the sender has gone.
    fn read(self, skip: &HashSet<u64>, mut batches: Batcher) {
        if let Some(header) = &self.header {
            let mut reader = csv::ReaderBuilder::new().from_reader(self.text.as_bytes());
            for record in reader.records() {
                let (no, order) = match record {
                    Ok(record) => {
                        let no = record.position().map_or(0, |p| p.line());
                        (no, csv_order(header, &record).and_then(typed))
                    }
                    // A record the CSV reader refuses (one with more or fewer cells than
                    // the header) is that line's fault, not the file's.
                    Err(e) => (
                        e.position().map_or(0, |p| p.line()),
                        Err((String::new(), format!("not a CSV record: {e}"))),
                    ),
                };
                if !skip.contains(&no) && !batches.line(no, order) {
                    return;
                }
            }
        } else {
            for (i, line) in self.text.lines().enumerate() {
                let no = i as u64 + 1;
                if line.trim().is_empty() || skip.contains(&no) {
                    continue;
                }
                if !batches.line(no, json_order(line)) {
                    return;
                }
            }
        }
        batches.finish();
    }
}

/// Gathers a file's orders into batches as they are read.
struct Batcher {
    size: usize,
    prefix: String,
    lines: Vec<Line>,
    read: u64,
    to: mpsc::Sender<Read>,
}

impl Batcher {
    /// Takes one line; false when nobody is listening any more.
    fn line(&mut self, no: u64, order: Result<LicenseOrder, (String, String)>) -> bool {
        self.read += 1;
        match order.and_then(checked) {
            Ok(order) => {
                self.lines.push(Line { no, order });
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
        let id = format!(
            "{}-{}-{}",
            self.prefix,
            lines[0].no,
            lines[lines.len() - 1].no
        );
        self.to
            .blocking_send(Read::Batch(Batch { id, lines }))
            .is_ok()
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

/// A line's record in the results: its outcome, and where its text is.
struct Entry {
    outcome: Outcome,
    /// The batch, for an `unknown` line (which the summary names).
    batch: Option<Box<str>>,
    text: std::ops::Range<usize>,
}

/// The results file: every completed batch is appended at once, and at the end the
/// file is rewritten with one record per input line, in line order, from the text
/// appended (each record is serialized once).
struct Results {
    path: PathBuf,
    file: std::fs::File,
    /// Every record's line of JSON, in the order they came.
    text: Vec<u8>,
    lines: BTreeMap<u64, Entry>,
}

impl Results {
    fn create(path: &Path, carried: &[Record<'_>]) -> Result<Self, CliError> {
        let mut results = Results {
            path: path.to_path_buf(),
            file: tempfile_in(path)?,
            text: Vec::new(),
            lines: BTreeMap::new(),
        };
        results.add(carried);
        results.rewrite()?;
        Ok(results)
    }

    /// Takes the records in; the text they add starts at the offset returned.
    fn add(&mut self, records: &[Record<'_>]) -> usize {
        let start = self.text.len();
        for record in records {
            let at = self.text.len();
            serde_json::to_writer(&mut self.text, record).expect("JSON");
            self.text.push(b'\n');
            let outcome = Outcome::of(&record.outcome).unwrap_or(Outcome::Failed);
            self.lines.insert(
                record.line,
                Entry {
                    outcome,
                    batch: (outcome == Outcome::Unknown)
                        .then(|| record.channel_order_id.as_deref().map(Box::from))
                        .flatten(),
                    text: at..self.text.len(),
                },
            );
        }
        start
    }

    /// Takes the records in and appends them to the file.
    fn append(&mut self, records: &[Record<'_>]) -> Result<(), CliError> {
        let start = self.add(records);
        self.file
            .write_all(&self.text[start..])
            .map_err(|e| CliError::usage(format!("cannot write {}: {e}", self.path.display())))
    }

    /// Replaces the file by its records in line order, one per line.
    fn rewrite(&mut self) -> Result<(), CliError> {
        let failed = |e: std::io::Error| {
            CliError::usage(format!("cannot write {}: {e}", self.path.display()))
        };
        let temp = self.path.with_extension("tmp");
        let mut text = Vec::with_capacity(self.text.len());
        for entry in self.lines.values() {
            text.extend_from_slice(&self.text[entry.text.clone()]);
        }
        {
            let mut file = std::fs::File::create(&temp).map_err(failed)?;
            file.write_all(&text).map_err(failed)?;
            file.sync_all().map_err(failed)?;
        }
        std::fs::rename(&temp, &self.path).map_err(failed)?;
        self.file = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(failed)?;
        Ok(())
    }

    /// How many lines have this outcome.
    fn count(&self, outcome: Outcome) -> usize {
        self.lines.values().filter(|e| e.outcome == outcome).count()
    }
}

fn tempfile_in(path: &Path) -> Result<std::fs::File, CliError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))
}

/// The last record of each line in a results file (a run killed hard may have appended
/// a line's outcome after an earlier one).
fn read_results(path: &Path) -> Result<BTreeMap<u64, Record<'static>>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
    let mut records = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(line).map_err(|e| {
            CliError::usage(format!(
                "{}:{}: not a results record: {e}",
                path.display(),
                i + 1
            ))
        })?;
        records.insert(record.line, record);
    }
    Ok(records)
}

/// One batch: its lines and its `channelOrderId`.
struct Batch<L = Line> {
    id: String,
    lines: Vec<L>,
}

/// What a line's outcome needs once its order has gone into a batch's request.
struct Sent {
    no: u64,
    sequence: i32,
    asset_nos: Vec<String>,
}

impl Batch {
    /// The batch's request, the orders moved into it, and what stays to record outcomes.
    fn send(self, settings: &Submit) -> (Batch<Sent>, BatchOrderRequest) {
        let (sent, orders) = self
            .lines
            .into_iter()
            .map(|line| {
                let sent = Sent {
                    no: line.no,
                    sequence: line.order.sequence(),
                    asset_nos: line
                        .order
                        .asset_entries()
                        .iter()
                        .flat_map(|e| e.asset_nos.iter().cloned())
                        .collect(),
                };
                (sent, line.order)
            })
            .unzip();
        let request = BatchOrderRequest {
            channel_code: settings.channel_code.clone(),
            channel_order_id: self.id.clone(),
            sync_mode: settings.sync_mode.clone(),
            order_list: orders,
        };
        (
            Batch {
                id: self.id,
                lines: sent,
            },
            request,
        )
    }
}

/// What a batch's call came to, one record per line, borrowing from the batch and the
/// answer.
fn outcomes<'a>(
    batch: &'a Batch<Sent>,
    result: &'a Result<Vec<BatchOrderResultItem>, Error>,
    message: &'a str,
) -> Vec<Record<'a>> {
    let with_batch = |line: &'a Sent, outcome: Outcome| Record {
        channel_order_id: Some(Cow::Borrowed(&batch.id)),
        asset_nos: Some(Cow::Borrowed(&line.asset_nos)),
        ..Record::new(line.no, outcome)
    };
    match result {
        Ok(items) => {
            // Results are matched by `sequence` when it tells the orders apart, else by
            // position.
            let by_sequence: HashMap<i32, &BatchOrderResultItem> =
                items.iter().map(|i| (i.sequence, i)).collect();
            let distinct = by_sequence.len() == batch.lines.len();
            batch
                .lines
                .iter()
                .enumerate()
                .map(|(i, line)| {
                    let item = if distinct {
                        by_sequence.get(&line.sequence).copied()
                    } else {
                        items.get(i)
                    };
                    Record {
                        license_order_id: item.map(|i| Cow::Borrowed(i.license_order_id.as_str())),
                        ..with_batch(line, Outcome::Ok)
                    }
                })
                .collect()
        }
        Err(error) => {
            let (outcome, code) = failure(error);
            batch
                .lines
                .iter()
                .map(|line| Record {
                    code: Some(code.clone()),
                    message: Some(Cow::Borrowed(message)),
                    ..with_batch(line, outcome)
                })
                .collect()
        }
    }
}

/// A failed batch's outcome and code.
fn failure(error: &Error) -> (Outcome, Cow<'static, str>) {
    match error {
        Error::Transport {
            may_have_been_sent: false,
            ..
        }
        | Error::Tls { .. }
        | Error::Credentials(_) => (Outcome::Failed, Cow::Borrowed("transport")),
        Error::Api(e) => (Outcome::Failed, Cow::Owned(e.code.to_string())),
        Error::Validation(_) | Error::Config(_) => (Outcome::Invalid, Cow::Borrowed("validation")),
        // A timeout or a lost reply after sending, or a reply that cannot be read: the
        // batch may have been applied.
        _ => (Outcome::Unknown, Cow::Owned(error.kind_name())),
    }
}

fn progress(total: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr_with_hz(5),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} orders  {per_sec}  ETA {eta}  {msg}",
        )
        .expect("a valid template"),
    );
    bar.set_message("0 failed");
    bar
}

/// Settings of a run.
struct Submit {
    /// The batches' `channelCode`.
    pub channel_code: String,
    /// `appKey`.
    pub app_key: String,
    /// `syncMode`.
    pub sync_mode: SyncMode,
    /// Prefix of each batch's `channelOrderId`.
    pub prefix: String,
    /// Orders per batch.
    pub batch_size: usize,
    /// Batches in flight.
    pub concurrency: usize,
}

/// Runs `orders submit`.
pub async fn run(ctx: &Context, m: &ArgMatches, _format: Format) -> Result<(), CliError> {
    let file = PathBuf::from(m.get_one::<String>("file").expect("required"));
    let csv = match m.get_one::<String>("format").map(String::as_str) {
        Some("csv") => true,
        Some(_) => false,
        None => file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv")),
    };
    let batch_size = m
        .get_one::<usize>("batch-size")
        .copied()
        .unwrap_or(DEFAULT_BATCH_SIZE);
    let concurrency = m
        .get_one::<usize>("concurrency")
        .copied()
        .unwrap_or(DEFAULT_CONCURRENCY);
    if batch_size == 0 || concurrency == 0 {
        return Err(CliError::usage(
            "--batch-size and --concurrency must be at least 1",
        ));
    }
    let settings = Submit {
        channel_code: m
            .get_one::<String>("channel-code")
            .expect("required")
            .clone(),
        app_key: m.get_one::<String>("app-key").expect("required").clone(),
        sync_mode: m
            .get_one::<String>("sync-mode")
            .expect("defaulted")
            .parse()
            .expect("one of the spec's values"),
        prefix: m
            .get_one::<String>("order-id-prefix")
            .cloned()
            .unwrap_or_else(|| {
                file.file_stem()
                    .map_or("orders".into(), |s| s.to_string_lossy().into_owned())
            }),
        batch_size,
        concurrency,
    };
    let (resume, results_path) = match m.get_one::<String>("resume") {
        Some(r) => (true, PathBuf::from(r)),
        None => (
            false,
            m.get_one::<String>("results").map_or_else(
                || PathBuf::from(format!("{}.results.jsonl", file.display())),
                PathBuf::from,
            ),
        ),
    };
    let retry_unknown = m.get_flag("retry-unknown");
    let client = ctx.order_client()?;
    let source = Source::open(&file, csv)?;
    // What a previous run settled is kept; the rest is sent (again).
    let mut carried = Vec::new();
    if resume {
        for (_, record) in read_results(&results_path)? {
            if record.outcome == "ok" || (record.outcome == "unknown" && !retry_unknown) {
                carried.push(record);
            }
        }
    }
    let skip: HashSet<u64> = carried.iter().map(|r| r.line).collect();
    let mut results = Results::create(&results_path, &carried)?;
    drop(carried);
    let bar = progress(source.lines().saturating_sub(skip.len() as u64));
    let (to, from) = mpsc::channel(settings.concurrency);
    let batches = Batcher {
        size: settings.batch_size,
        prefix: settings.prefix.clone(),
        lines: Vec::with_capacity(settings.batch_size.min(1024)),
        read: 0,
        to,
    };
    let reader = std::thread::spawn(move || source.read(&skip, batches));
    let report = submit(&client, &settings, from, &bar, &mut results).await;
    // The reader ends once the sender is gone, whatever it was doing.
    reader
        .join()
        .map_err(|_| CliError::usage(format!("reading {} failed", file.display())))?;
    results.rewrite()?;
    summarize(&file, &results_path, &results, report)
}

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// Every batch was sent and answered (or failed).
    Done,
    /// Ctrl-C: no new batch was started.
    Interrupted,
}

/// Sends the batches as the reader hands them over, at most `concurrency` at a time,
/// recording each batch's outcome as it completes. The first Ctrl-C starts no new batch
/// and waits for those in flight; a second abandons them, marking their lines `unknown`.
/// Lines read but not sent are recorded `not_sent`.
async fn submit(
    client: &licensing_sdk::order::Client,
    settings: &Submit,
    mut from: mpsc::Receiver<Read>,
    bar: &indicatif::ProgressBar,
    results: &mut Results,
) -> Result<Ended, CliError> {
    let client = Arc::new(client.clone());
    let mut in_flight = FuturesUnordered::new();
    let mut failed = 0u64;
    let mut stopping = false;
    let mut read = false;
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    let mut abandoned: Vec<(String, Vec<u64>)> = Vec::new();
    let mut in_flight_lines: HashMap<String, Vec<u64>> = HashMap::new();
    loop {
        if in_flight.is_empty() && (stopping || read) {
            break;
        }
        let room = !stopping && !read && in_flight.len() < settings.concurrency;
        tokio::select! {
            next = from.recv(), if room => match next {
                Some(Read::Batch(batch)) => {
                    let client = client.clone();
                    let (batch, request) = batch.send(settings);
                    let app_key = settings.app_key.clone();
                    in_flight_lines.insert(batch.id.clone(), batch.lines.iter().map(|l| l.no).collect());
                    in_flight.push(tokio::spawn(async move {
                        let result = client.batch_order().app_key(app_key).body(request).await;
                        (batch, result)
                    }));
                }
                Some(Read::Invalid(record)) => {
                    failed += 1;
                    results.append(&[record])?;
                    bar.inc(1);
                    bar.set_message(format!("{failed} failed"));
                }
                Some(Read::End(lines)) => bar.set_length(lines),
                None => read = true,
            },
            done = in_flight.next(), if !in_flight.is_empty() => {
                let (batch, result) = done.expect("not empty").expect("a batch task does not panic");
                in_flight_lines.remove(&batch.id);
                let message = result.as_ref().err().map(ToString::to_string).unwrap_or_default();
                let records = outcomes(&batch, &result, &message);
                let n = records.len() as u64;
                if result.is_err() {
                    failed += n;
                }
                results.append(&records)?;
                bar.inc(n);
                bar.set_message(format!("{failed} failed"));
            }
            _ = &mut interrupt => {
                if stopping {
                    // Second Ctrl-C: what is in flight may or may not be applied.
                    abandoned = in_flight_lines.drain().collect();
                    break;
                }
                stopping = true;
                bar.suspend(|| {
                    eprintln!(
                        "stopping: waiting for the {} batch(es) in flight (Ctrl-C again to abandon them)",
                        in_flight.len()
                    )
                });
                interrupt.set(tokio::signal::ctrl_c());
            }
        }
    }
    bar.finish_and_clear();
    let mut records = Vec::new();
    for (id, nos) in &abandoned {
        for &no in nos {
            records.push(Record {
                channel_order_id: Some(Cow::Borrowed(id)),
                code: Some(Cow::Borrowed("interrupted")),
                message: Some(Cow::Borrowed(
                    "abandoned by Ctrl-C after sending: it may have been applied",
                )),
                ..Record::new(no, Outcome::Unknown)
            });
        }
    }
    // What the reader still has (or reads now) was not sent.
    while let Some(next) = from.recv().await {
        match next {
            Read::Batch(batch) => records.extend(
                batch
                    .lines
                    .iter()
                    .map(|line| Record::new(line.no, Outcome::NotSent)),
            ),
            Read::Invalid(record) => records.push(record),
            Read::End(_) => {}
        }
    }
    results.append(&records)?;
    Ok(if stopping {
        Ended::Interrupted
    } else {
        Ended::Done
    })
}

fn summarize(
    file: &Path,
    results_path: &Path,
    results: &Results,
    report: Result<Ended, CliError>,
) -> Result<(), CliError> {
    let ended = report?;
    let count = |o: Outcome| results.count(o);
    eprintln!(
        "{} lines: {} ok, {} failed, {} invalid, {} unknown, {} not sent; results in {}",
        results.lines.len(),
        count(Outcome::Ok),
        count(Outcome::Failed),
        count(Outcome::Invalid),
        count(Outcome::Unknown),
        count(Outcome::NotSent),
        results_path.display()
    );
    let resume = format!(
        "licensing orders submit {} --resume {} …",
        file.display(),
        results_path.display()
    );
    let unknown = count(Outcome::Unknown);
    if unknown > 0 {
        let mut batches: Vec<&str> = results
            .lines
            .values()
            .filter_map(|e| e.batch.as_deref())
            .collect();
        batches.dedup();
        eprintln!(
            "{unknown} line(s) in batch(es) {} were sent but got no answer: they may have been \
             applied, and are not resent. Check each (are its assetNos in `licensing order \
             list-virtual-assets --enterprise-global-id …`?), then resend the ones that were \
             not applied with `{resume} --retry-unknown`.",
            batches.join(", ")
        );
    }
    if ended == Ended::Interrupted {
        return Err(CliError::new(
            exit::INTERRUPTED,
            format!("interrupted; continue with `{resume}`"),
        ));
    }
    if unknown > 0 {
        return Err(CliError::new(exit::TRANSPORT, ""));
    }
    if count(Outcome::Failed) + count(Outcome::Invalid) > 0 {
        return Err(CliError::new(
            exit::API,
            format!(
                "some lines failed (see {}); after fixing them, `{resume}`",
                results_path.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: u64, outcome: Outcome, batch: &str) -> Record<'_> {
        Record {
            channel_order_id: Some(Cow::Borrowed(batch)),
            ..Record::new(line, outcome)
        }
    }

    #[test]
    fn the_results_are_rewritten_in_line_order_from_the_text_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let carried = [record(2, Outcome::Ok, "b-2-2")];
        let mut results = Results::create(&path, &carried).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"line\":2,\"outcome\":\"ok\",\"channelOrderId\":\"b-2-2\"}\n"
        );
        results
            .append(&[
                record(5, Outcome::Unknown, "b-4-5"),
                record(4, Outcome::Unknown, "b-4-5"),
            ])
            .unwrap();
        results
            .append(&[record(1, Outcome::Failed, "b-1-1")])
            .unwrap();
        // Appended as they came, until the rewrite puts them in line order.
        let lines = |text: String| -> Vec<u64> {
            text.lines()
                .map(|l| serde_json::from_str::<Record>(l).unwrap().line)
                .collect()
        };
        assert_eq!(lines(std::fs::read_to_string(&path).unwrap()), [2, 5, 4, 1]);
        results.rewrite().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(lines(text.clone()), [1, 2, 4, 5]);
        assert_eq!(
            read_results(&path).unwrap()[&4],
            record(4, Outcome::Unknown, "b-4-5")
        );
        assert_eq!(results.count(Outcome::Unknown), 2);
        let batches: Vec<&str> = results
            .lines
            .values()
            .filter_map(|e| e.batch.as_deref())
            .collect();
        assert_eq!(
            batches,
            ["b-4-5", "b-4-5"],
            "only unknown lines keep their batch"
        );
        // Appending after the rewrite goes to the new file.
        results.append(&[record(3, Outcome::NotSent, "")]).unwrap();
        assert_eq!(
            lines(std::fs::read_to_string(&path).unwrap()),
            [1, 2, 4, 5, 3]
        );
    }

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
    fn outcomes_are_read_back_by_name() {
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::of(outcome.as_str()), Some(outcome));
        }
        assert_eq!(Outcome::of("done"), None);
    }
}
