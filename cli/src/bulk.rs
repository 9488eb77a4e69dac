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

use std::{
    collections::{BTreeMap, HashMap},
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

/// One line's outcome, as written to the results file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The input line (1-based; a CSV file's header is line 1).
    pub line: u64,
    /// `ok`, `failed`, `invalid`, `unknown` or `not_sent`.
    pub outcome: String,
    /// The batch's `channelOrderId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_order_id: Option<String>,
    /// The order's `licenseOrderId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license_order_id: Option<String>,
    /// The order's asset numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asset_nos: Option<Vec<String>>,
    /// The platform's error code, or `transport`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// For `invalid`: the field at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What happened, for anything but `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Record {
    fn new(line: u64, outcome: &str) -> Self {
        Record {
            line,
            outcome: outcome.to_string(),
            ..Record::default()
        }
    }
}

/// An order read from the file.
struct Line {
    no: u64,
    order: LicenseOrder,
}

/// Reads the file: the orders, and an `invalid` record for each line that is not one.
fn read_orders(path: &Path, csv: bool) -> Result<(Vec<Line>, Vec<Record>), CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
    let mut lines = Vec::new();
    let mut invalid = Vec::new();
    let mut add = |no: u64, order: Result<LicenseOrder, (String, String)>| {
        let checked = order.and_then(|order| {
            // The batch's own rules, for this order alone: a line that breaks one is
            // reported and kept out, instead of failing its whole batch. The order is
            // lent to the one-order batch and taken back (a copy per line costs as much
            // as reading it).
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
        });
        match checked {
            Ok(order) => lines.push(Line { no, order }),
            Err((field, rule)) => invalid.push(Record {
                field: Some(field).filter(|f| !f.is_empty()),
                message: Some(rule),
                ..Record::new(no, "invalid")
            }),
        }
    };
    if csv {
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
        for record in reader.records() {
            let record = record.map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
            let no = record.position().map_or(0, |p| p.line());
            add(no, csv_order(&header, &record).and_then(typed));
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            add(i as u64 + 1, json_order(line));
        }
    }
    Ok((lines, invalid))
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

/// The results file: every completed batch is appended at once (flushed), and at the
/// end the file is rewritten with one record per input line, in line order.
struct Results {
    path: PathBuf,
    file: std::fs::File,
    records: BTreeMap<u64, Record>,
}

impl Results {
    fn create(path: &Path, carried: BTreeMap<u64, Record>) -> Result<Self, CliError> {
        let mut results = Results {
            path: path.to_path_buf(),
            file: tempfile_in(path)?,
            records: carried,
        };
        results.rewrite()?;
        Ok(results)
    }

    fn append(&mut self, records: Vec<Record>) -> Result<(), CliError> {
        let mut text = Vec::new();
        for record in &records {
            serde_json::to_writer(&mut text, record).expect("JSON");
            text.push(b'\n');
        }
        self.file
            .write_all(&text)
            .and_then(|()| self.file.flush())
            .map_err(|e| CliError::usage(format!("cannot write {}: {e}", self.path.display())))?;
        for record in records {
            self.records.insert(record.line, record);
        }
        Ok(())
    }

    /// Replaces the file by its records in line order, one per line.
    fn rewrite(&mut self) -> Result<(), CliError> {
        let failed = |e: std::io::Error| {
            CliError::usage(format!("cannot write {}: {e}", self.path.display()))
        };
        let temp = self.path.with_extension("tmp");
        let mut text = Vec::with_capacity(self.records.len() * 96);
        for record in self.records.values() {
            serde_json::to_writer(&mut text, record).expect("JSON");
            text.push(b'\n');
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
fn read_results(path: &Path) -> Result<BTreeMap<u64, Record>, CliError> {
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

/// What a batch's call came to.
fn outcomes(batch: Batch<Sent>, result: Result<Vec<BatchOrderResultItem>, Error>) -> Vec<Record> {
    let with_batch = |line: &Sent, outcome: &str| Record {
        channel_order_id: Some(batch.id.clone()),
        asset_nos: Some(line.asset_nos.clone()),
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
                        license_order_id: item.map(|i| i.license_order_id.clone()),
                        ..with_batch(line, "ok")
                    }
                })
                .collect()
        }
        Err(error) => {
            let (outcome, code) = match &error {
                Error::Transport {
                    may_have_been_sent: false,
                    ..
                }
                | Error::Tls { .. }
                | Error::Credentials(_) => ("failed", "transport".to_string()),
                Error::Api(e) => ("failed", e.code.to_string()),
                Error::Validation(_) | Error::Config(_) => ("invalid", "validation".to_string()),
                // A timeout or a lost reply after sending, or a reply that cannot be read:
                // the batch may have been applied.
                _ => ("unknown", error.kind_name()),
            };
            let message = error.to_string();
            batch
                .lines
                .iter()
                .map(|line| Record {
                    code: Some(code.clone()),
                    message: Some(message.clone()),
                    ..with_batch(line, outcome)
                })
                .collect()
        }
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
    let (lines, invalid) = read_orders(&file, csv)?;
    // What a previous run settled is kept; the rest is sent (again).
    let mut carried = BTreeMap::new();
    if resume {
        for (no, record) in read_results(&results_path)? {
            let settled = record.outcome == "ok" || (record.outcome == "unknown" && !retry_unknown);
            if settled {
                carried.insert(no, record);
            }
        }
    }
    let lines: Vec<Line> = lines
        .into_iter()
        .filter(|l| !carried.contains_key(&l.no))
        .collect();
    for record in invalid {
        carried.insert(record.line, record);
    }
    let mut results = Results::create(&results_path, carried)?;
    let report = submit(&client, &settings, lines, &mut results).await;
    results.rewrite()?;
    summarize(&file, &results_path, &results.records, report)
}

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// Every batch was sent and answered (or failed).
    Done,
    /// Ctrl-C: no new batch was started.
    Interrupted,
}

/// Sends the lines in batches, at most `concurrency` at a time, recording each batch's
/// outcome as it completes. The first Ctrl-C starts no new batch and waits for those in
/// flight; a second abandons them, marking their lines `unknown`.
async fn submit(
    client: &licensing_sdk::order::Client,
    settings: &Submit,
    lines: Vec<Line>,
    results: &mut Results,
) -> Result<Ended, CliError> {
    let bar = progress(lines.len() as u64);
    let mut batches = Vec::new();
    let mut lines = lines.into_iter().peekable();
    while lines.peek().is_some() {
        let chunk: Vec<Line> = lines.by_ref().take(settings.batch_size).collect();
        let id = format!(
            "{}-{}-{}",
            settings.prefix,
            chunk[0].no,
            chunk[chunk.len() - 1].no
        );
        batches.push(Batch { id, lines: chunk });
    }
    let client = Arc::new(client.clone());
    let mut pending = batches.into_iter();
    let mut in_flight = FuturesUnordered::new();
    let mut failed = 0u64;
    let mut stopping = false;
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    let mut abandoned: Vec<(String, Vec<u64>)> = Vec::new();
    let mut in_flight_lines: HashMap<String, Vec<u64>> = HashMap::new();
    loop {
        while !stopping && in_flight.len() < settings.concurrency {
            let Some(batch) = pending.next() else { break };
            let client = client.clone();
            let (batch, request) = batch.send(settings);
            let app_key = settings.app_key.clone();
            in_flight_lines.insert(batch.id.clone(), batch.lines.iter().map(|l| l.no).collect());
            in_flight.push(tokio::spawn(async move {
                let result = client.batch_order().app_key(app_key).body(request).await;
                (batch, result)
            }));
        }
        if in_flight.is_empty() {
            break;
        }
        tokio::select! {
            done = in_flight.next() => {
                let (batch, result) = done.expect("not empty").expect("a batch task does not panic");
                in_flight_lines.remove(&batch.id);
                let records = outcomes(batch, result);
                let n = records.len() as u64;
                failed += records.iter().filter(|r| r.outcome != "ok").count() as u64;
                results.append(records)?;
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
    for (id, nos) in abandoned {
        for no in nos {
            records.push(Record {
                channel_order_id: Some(id.clone()),
                code: Some("interrupted".into()),
                message: Some("abandoned by Ctrl-C after sending: it may have been applied".into()),
                ..Record::new(no, "unknown")
            });
        }
    }
    for batch in pending {
        for line in batch.lines {
            records.push(Record::new(line.no, "not_sent"));
        }
    }
    results.append(records)?;
    Ok(if stopping {
        Ended::Interrupted
    } else {
        Ended::Done
    })
}

fn summarize(
    file: &Path,
    results_path: &Path,
    records: &BTreeMap<u64, Record>,
    report: Result<Ended, CliError>,
) -> Result<(), CliError> {
    let ended = report?;
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for record in records.values() {
        *counts.entry(record.outcome.as_str()).or_default() += 1;
    }
    let count = |o: &str| counts.get(o).copied().unwrap_or(0);
    eprintln!(
        "{} lines: {} ok, {} failed, {} invalid, {} unknown, {} not sent; results in {}",
        records.len(),
        count("ok"),
        count("failed"),
        count("invalid"),
        count("unknown"),
        count("not_sent"),
        results_path.display()
    );
    let resume = format!(
        "licensing orders submit {} --resume {} …",
        file.display(),
        results_path.display()
    );
    if count("unknown") > 0 {
        let mut batches: Vec<&str> = records
            .values()
            .filter(|r| r.outcome == "unknown")
            .filter_map(|r| r.channel_order_id.as_deref())
            .collect();
        batches.dedup();
        eprintln!(
            "{} line(s) in batch(es) {} were sent but got no answer: they may have been \
             applied, and are not resent. Check each (are its assetNos in `licensing order \
             list-virtual-assets --enterprise-global-id …`?), then resend the ones that were \
             not applied with `{resume} --retry-unknown`.",
            count("unknown"),
            batches.join(", ")
        );
    }
    if ended == Ended::Interrupted {
        return Err(CliError::new(
            exit::INTERRUPTED,
            format!("interrupted; continue with `{resume}`"),
        ));
    }
    if count("unknown") > 0 {
        return Err(CliError::new(exit::TRANSPORT, ""));
    }
    if count("failed") + count("invalid") > 0 {
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
