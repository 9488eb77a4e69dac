//! Sending the batches: at most `--concurrency` at a time, each recorded as `sending` (and
//! synced) before it leaves, its answer recorded when it comes; what a signal does; a
//! batch the platform refuses for one of its orders, sent again without that order.

use std::{
    borrow::Cow,
    collections::{HashMap, VecDeque},
    sync::Arc,
};

use futures_util::{StreamExt as _, stream::FuturesUnordered};
use licensing_sdk::{
    Error, ErrorCode, SyncMode,
    order::types::{BatchOrderRequest, BatchOrderResultItem},
};
use tokio::sync::mpsc;

use super::{
    ids::Ids,
    read::{Batch, Line, Read, Source},
    results::{Outcome, Record, Results},
    say,
};
use crate::error::{CliError, exit};

/// Settings of a run.
pub struct Settings {
    /// The batches' `channelCode`.
    pub channel_code: String,
    /// `appKey`.
    pub app_key: String,
    /// `syncMode`.
    pub sync_mode: SyncMode,
    /// Prefix of each batch's `channelOrderId`.
    pub prefix: String,
    /// Batches in flight.
    pub concurrency: usize,
}

/// A batch's lines once their orders have gone into its request.
pub struct Sent {
    id: String,
    lines: Vec<SentLine>,
}

/// What a line's outcome needs once its order has gone into a batch's request.
struct SentLine {
    no: u64,
    at: usize,
    sequence: i32,
    asset_nos: Vec<String>,
}

fn prepare(batch: Batch, id: String, settings: &Settings) -> (Sent, BatchOrderRequest) {
    let (lines, orders) = batch
        .lines
        .into_iter()
        .map(|line| {
            let sent = SentLine {
                no: line.no,
                at: line.at,
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
        channel_order_id: id.clone(),
        sync_mode: settings.sync_mode.clone(),
        order_list: orders,
    };
    (Sent { id, lines }, request)
}

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every batch was sent and answered (or failed).
    Done,
    /// A signal stopped it: no new batch was started; the exit code it calls for.
    Stopped(u8),
}

/// SIGINT, SIGTERM and SIGHUP (Ctrl-C elsewhere), each received as the exit code it
/// calls for (128 + the signal's number). Listening starts when this is made, and a
/// signal received afterwards no longer ends the process by itself.
pub struct Signals {
    #[cfg(unix)]
    all: [(tokio::signal::unix::Signal, u8); 3],
}

impl Signals {
    /// Starts listening.
    pub fn listen() -> Result<Self, CliError> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let on = |kind: SignalKind| {
                signal(kind).map_err(|e| CliError::usage(format!("cannot handle signals: {e}")))
            };
            Ok(Signals {
                all: [
                    (on(SignalKind::interrupt())?, exit::INTERRUPTED),
                    (on(SignalKind::terminate())?, exit::TERMINATED),
                    (on(SignalKind::hangup())?, exit::HANGUP),
                ],
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// The next signal's exit code.
    pub async fn next(&mut self) -> u8 {
        #[cfg(unix)]
        {
            let [(int, a), (term, b), (hup, c)] = &mut self.all;
            tokio::select! {
                _ = int.recv() => *a,
                _ = term.recv() => *b,
                _ = hup.recv() => *c,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            exit::INTERRUPTED
        }
    }
}

/// The name of the signal behind an exit code, for messages.
pub fn signal_name(code: u8) -> &'static str {
    match code {
        exit::TERMINATED => "SIGTERM",
        exit::HANGUP => "SIGHUP",
        _ => "Ctrl-C",
    }
}

/// What a run sends: the batches a check found were not applied first, then the file's.
pub struct Sender<'a> {
    pub client: Arc<licensing_sdk::order::Client>,
    pub settings: Arc<Settings>,
    pub source: Arc<Source>,
    pub results: &'a mut Results,
    pub bar: &'a indicatif::ProgressBar,
    pub signals: &'a mut Signals,
    pub ids: Ids,
}

type Call = tokio::task::JoinHandle<(Sent, Result<Vec<BatchOrderResultItem>, Error>)>;

impl Sender<'_> {
    /// Sends the batches of `pending`, then those the reader hands over, at most
    /// `concurrency` at a time, recording each batch's lines as `sending` before it leaves
    /// and their outcomes as it completes. The first signal starts no new batch and
    /// waits for those in flight; a second abandons them, leaving their lines `unknown`.
    /// Lines read but not sent are recorded `not_sent`.
    pub async fn run(
        self,
        mut pending: VecDeque<Batch>,
        mut from: mpsc::Receiver<Read>,
    ) -> Result<Ended, CliError> {
        let Sender {
            client,
            settings,
            source,
            results,
            bar,
            signals,
            mut ids,
        } = self;
        let mut in_flight: FuturesUnordered<Call> = FuturesUnordered::new();
        let mut in_flight_lines: HashMap<String, Vec<u64>> = HashMap::new();
        let mut failed = 0u64;
        let mut stopped = None;
        let mut abandoned = false;
        let mut read = false;
        loop {
            while stopped.is_none() && in_flight.len() < settings.concurrency {
                let Some(batch) = pending.pop_front() else {
                    break;
                };
                let first = batch.lines[0].no;
                let last = batch.lines[batch.lines.len() - 1].no;
                let (sent, request) = prepare(batch, ids.next(first, last), &settings);
                // On disk before it leaves: a run stopped from here on leaves these lines
                // `unknown`, never `not_sent`.
                let records: Vec<Record<'_>> = sent
                    .lines
                    .iter()
                    .map(|line| Record {
                        channel_order_id: Some(Cow::Borrowed(&sent.id)),
                        asset_nos: Some(Cow::Borrowed(&line.asset_nos)),
                        ..Record::new(line.no, Outcome::Sending)
                    })
                    .collect();
                results.append_synced(&records)?;
                drop(records);
                in_flight_lines.insert(sent.id.clone(), sent.lines.iter().map(|l| l.no).collect());
                let client = client.clone();
                let app_key = settings.app_key.clone();
                in_flight.push(tokio::spawn(async move {
                    let result = client.batch_order().app_key(app_key).body(request).await;
                    (sent, result)
                }));
            }
            if in_flight.is_empty() && (stopped.is_some() || (read && pending.is_empty())) {
                break;
            }
            let room = stopped.is_none()
                && !read
                && pending.is_empty()
                && in_flight.len() < settings.concurrency;
            tokio::select! {
                code = signals.next() => {
                    if stopped.is_some() {
                        // A second signal: what is in flight may or may not be applied.
                        abandoned = true;
                        break;
                    }
                    stopped = Some(code);
                    bar.suspend(|| say(&format!(
                        "stopping ({}): waiting for the {} batch(es) in flight (again to abandon them)",
                        signal_name(code),
                        in_flight.len()
                    )));
                }
                done = in_flight.next(), if !in_flight.is_empty() => {
                    let (sent, result) = done
                        .expect("not empty")
                        .map_err(|e| CliError::usage(format!("a batch's task failed: {e}")))?;
                    in_flight_lines.remove(&sent.id);
                    let answered = answered(&sent, &result, &source);
                    results.append(&answered.records)?;
                    let n = answered.records.len() as u64;
                    failed += answered.failed;
                    if let Some(batch) = answered.again {
                        pending.push_front(batch);
                    }
                    bar.inc(n);
                    bar.set_message(format!("{failed} failed"));
                }
                next = from.recv(), if room => match next {
                    Some(Read::Batch(batch)) => pending.push_back(batch),
                    Some(Read::Invalid(record)) => {
                        failed += 1;
                        results.append(&[record])?;
                        bar.inc(1);
                        bar.set_message(format!("{failed} failed"));
                    }
                    Some(Read::End(lines)) => bar.set_length(lines),
                    None => read = true,
                },
            }
        }
        bar.finish_and_clear();
        let mut records = Vec::new();
        if abandoned {
            for (id, nos) in &in_flight_lines {
                for &no in nos {
                    records.push(Record {
                        channel_order_id: Some(Cow::Borrowed(id.as_str())),
                        code: Some(Cow::Borrowed("interrupted")),
                        message: Some(Cow::Borrowed(
                            "abandoned after sending, by a second signal: it may have been applied",
                        )),
                        ..Record::new(no, Outcome::Unknown)
                    });
                }
            }
        }
        // What was read (or is read now) but not sent.
        let not_sent = |batch: &Batch, records: &mut Vec<Record<'_>>| {
            records.extend(
                batch
                    .lines
                    .iter()
                    .map(|line| Record::new(line.no, Outcome::NotSent)),
            );
        };
        for batch in &pending {
            not_sent(batch, &mut records);
        }
        while let Some(next) = from.recv().await {
            match next {
                Read::Batch(batch) => not_sent(&batch, &mut records),
                Read::Invalid(record) => records.push(record),
                Read::End(_) => {}
            }
        }
        results.append(&records)?;
        Ok(stopped.map_or(Ended::Done, Ended::Stopped))
    }
}

/// What a batch's answer comes to.
struct Answered<'a> {
    /// One record per line.
    records: Vec<Record<'a>>,
    /// How many lines failed.
    failed: u64,
    /// The lines to send again, in a batch of their own: those of a batch refused for
    /// one of its orders alone.
    again: Option<Batch>,
}

/// Each line's record from a batch's answer. A batch refused with `13004`
/// ("parameter validation failure") whose cause names one of its orders
/// (`orderList[i]…`) was refused whole before anything was applied: that order's line
/// fails, with its own line number in the message, and the others are sent again.
/// Any other failure is every line's outcome.
fn answered<'a>(
    sent: &'a Sent,
    result: &'a Result<Vec<BatchOrderResultItem>, Error>,
    source: &Source,
) -> Answered<'a> {
    let with_batch = |line: &'a SentLine, outcome: Outcome| Record {
        channel_order_id: Some(Cow::Borrowed(&sent.id)),
        asset_nos: Some(Cow::Borrowed(&line.asset_nos)),
        ..Record::new(line.no, outcome)
    };
    let error = match result {
        Ok(items) => {
            // Results are matched by `sequence` when it tells the orders apart, else by
            // position.
            let by_sequence: HashMap<i32, &BatchOrderResultItem> =
                items.iter().map(|i| (i.sequence, i)).collect();
            let distinct = by_sequence.len() == sent.lines.len();
            let records = sent
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
                .collect();
            return Answered {
                records,
                failed: 0,
                again: None,
            };
        }
        Err(error) => error,
    };
    if let Some((i, refused)) = refused_order(error, sent.lines.len()) {
        let mut records = Vec::with_capacity(sent.lines.len());
        let mut again = Vec::new();
        for (j, line) in sent.lines.iter().enumerate() {
            if j == i {
                let blamed = if refused.ends_with('.') {
                    format!("line {}: ", line.no)
                } else {
                    format!("line {}", line.no)
                };
                let message = error.to_string().replace(&refused, &blamed);
                records.push(Record {
                    code: Some(Cow::Borrowed("13004")),
                    message: Some(Cow::Owned(message)),
                    ..with_batch(line, Outcome::Failed)
                });
            } else {
                // Recorded, so that a run stopped before the new batch leaves sends
                // them again without a check: the refusal applied nothing.
                records.push(Record {
                    code: Some(Cow::Borrowed("13004")),
                    message: Some(Cow::Owned(format!(
                        "its batch was refused for line {} alone; sent again without it",
                        sent.lines[i].no
                    ))),
                    ..with_batch(line, Outcome::NotSent)
                });
                again.push(source.again(line.no, line.at));
            }
        }
        return Answered {
            records,
            failed: 1,
            again: (!again.is_empty()).then_some(Batch { lines: again }),
        };
    }
    let (outcome, code) = failure(error);
    let message: Cow<'a, str> = Cow::Owned(error.to_string());
    let records: Vec<Record<'a>> = sent
        .lines
        .iter()
        .map(|line| Record {
            code: Some(code.clone()),
            message: Some(message.clone()),
            ..with_batch(line, outcome)
        })
        .collect();
    Answered {
        failed: records.len() as u64,
        records,
        again: None,
    }
}

/// The order a `13004` refusal names (`orderList[i]` in its cause, else its message),
/// when the batch has one at that place: its index and the text naming it.
fn refused_order(error: &Error, orders: usize) -> Option<(usize, String)> {
    let Error::Api(api) = error else {
        return None;
    };
    if api.code != ErrorCode::ParameterValidationFailed {
        return None;
    }
    let text = api.cause.as_deref().unwrap_or_default();
    [text, api.message.as_str()].into_iter().find_map(|text| {
        let at = text.find("orderList[")? + "orderList[".len();
        let digits = &text[at..];
        let end = digits.find(']')?;
        let i: usize = digits[..end].parse().ok()?;
        let rest = &digits[end + 1..];
        // `orderList[3].customerId` is blamed as `line N: customerId`.
        let named = if rest.starts_with('.') {
            format!("orderList[{i}].")
        } else {
            format!("orderList[{i}]")
        };
        (i < orders).then_some((i, named))
    })
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

/// The lines a check found were not applied, in batches of the run's size.
pub fn batches(lines: Vec<Line>, size: usize) -> VecDeque<Batch> {
    let mut batches = VecDeque::new();
    let mut lines = lines.into_iter().peekable();
    while lines.peek().is_some() {
        batches.push_back(Batch {
            lines: lines.by_ref().take(size).collect(),
        });
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: &str, message: &str, cause: Option<&str>) -> Error {
        Error::Api(licensing_sdk::ApiError {
            operation: "batchOrder",
            code: code.parse().unwrap(),
            message: message.into(),
            cause: cause.map(Into::into),
            http_status: 299,
            decode_failure: None,
        })
    }

    #[test]
    fn a_refusal_is_split_only_when_it_applies_nothing_and_names_an_order() {
        let named = api(
            "13004",
            "parameter validation failure",
            Some("orderList[2].customerId: no customer \"C9\""),
        );
        assert_eq!(refused_order(&named, 3), Some((2, "orderList[2].".into())));
        assert_eq!(refused_order(&named, 2), None, "no such order in the batch");
        let in_message = api("13004", "orderList[0] is malformed", None);
        assert_eq!(
            refused_order(&in_message, 1),
            Some((0, "orderList[0]".into()))
        );
        let other_code = api("500", "network exception", Some("orderList[1].x"));
        assert_eq!(refused_order(&other_code, 3), None);
        let unnamed = api("13004", "parameter validation failure", Some("channelCode"));
        assert_eq!(refused_order(&unnamed, 3), None);
    }
}
