//! A results file read back by `--resume`: what it proves, and what it cannot tell.
//!
//! The rule: a line is sent as new only if the file proves that no request for it ever
//! left. A batch's `sending` records are written, then synced (`fdatasync`), and only
//! then is its request made; so whatever stops a run (a signal, `kill -9`, a crash of
//! the machine), a batch that was sent has its records whole on disk. What a stop can
//! cut short (the record being written) or lose (what was written after the last sync)
//! is outcomes, and the records of a batch whose request had not been made: a torn
//! `sending` record means a batch that was not sent.
//!
//! The file proves that a line it has no record of was never sent when its first line
//! counts the records written with it (see [`super::results`]), at least that many
//! follow, and its last record is whole and ends its line. That is what a run stopped in
//! any way between two writes leaves, and what every run leaves when it ends.
//!
//! Any other file does not. A torn last record would mean "not sent" had a stop torn it,
//! but it cannot be told from a file cut short later (a copy that ran out of space, a
//! partial restore, an edit), which may have taken any number of records with it; a
//! file that ends before the records its first line counts was cut (a finished run's
//! file cut anywhere is one of these); a file written by an earlier version did not
//! count. What was lost may have been any line's `sending` record, and the
//! `channelOrderId` it named, so from such a file a resume takes as settled only what no
//! later record can change (`ok`, `invalid`, and `failed` or `not_sent` among the
//! counted records, which are a finished run's outcomes); every other line, one it has
//! no record of included (when it is an order), is `unknown` with no batch: never sent
//! again unless `--retry-unknown`'s check finds none of the `channelOrderId`s the run
//! could have given it on the platform. So every prefix of a results file reads
//! soundly, and a damaged record before the last is refused, with the way out: cutting
//! the file inside that record.
//!
//! What cannot be told apart: a file cut at the end of a record among those a run
//! appended reads as that run stopped there, which is what that shape means when no one
//! cuts the file by hand; a resume after a kill is not held up by a check.

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashSet},
    path::Path,
};

use super::results::{Header, Outcome, Record, Run};
use crate::error::CliError;

/// A results file read back: its run and the record each line is taken with.
pub struct Read {
    /// What the file belongs to.
    pub run: Run,
    /// Each line's last record; a `sending` one is returned as `unknown`, and one the
    /// file cannot vouch for as [`unaccounted`].
    pub records: BTreeMap<u64, Record<'static>>,
    /// Every `channelOrderId` the file names.
    pub batches: HashSet<String>,
    /// Why the file does not prove that a line it has no record of was never sent; none
    /// when it does.
    pub unproven: Option<String>,
}

/// The record of a line the results file cannot account for: `unknown`, without a batch.
pub fn unaccounted(line: u64, why: &str) -> Record<'static> {
    Record {
        code: Some(Cow::Borrowed("unrecorded")),
        message: Some(Cow::Owned(format!(
            "the results file cannot tell whether it was sent ({why}): it may have been applied"
        ))),
        ..Record::new(line, Outcome::Unknown)
    }
}

/// Reads a results file (see the module's rules); a file with no readable first line,
/// or a damaged record before its last, is refused.
pub fn read(path: &Path) -> Result<Read, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    let header: Header<Run> = serde_json::from_slice(&bytes[..end])
        .map_err(|_| not_a_header(path, bytes.len(), end == bytes.len()))?;
    let mut torn = (end == bytes.len()).then_some(end);
    let mut at = end + 1;
    let mut line = 1;
    let mut count = 0u64;
    // Each record read, and whether it is among those the first line counts.
    let mut all = Vec::new();
    while at < bytes.len() {
        line += 1;
        let start = at;
        let (text, terminated) = match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                at += i + 1;
                (&bytes[start..at - 1], true)
            }
            None => {
                at = bytes.len();
                torn = Some(start);
                (&bytes[start..], false)
            }
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match record(text) {
            Ok(record) => {
                count += 1;
                let counted = header.records.is_some_and(|n| count <= n);
                all.push((record, counted));
            }
            // Cut short: what it was cannot be told, so the file proves nothing sent.
            Err(_) if !terminated => {}
            Err(why) => return Err(damaged(path, line, start, &why)),
        }
    }
    let unproven = match (header.records, torn) {
        (_, Some(at)) if at == end => Some("it ends before its first line's break".to_string()),
        (_, Some(at)) => Some(format!("it ends inside a record, at byte {at}")),
        (None, None) => Some(
            "it was written by an earlier version of licensing, whose results files do not \
             show where they end"
                .to_string(),
        ),
        (Some(n), None) if count < n => Some(format!(
            "it ends after {count} of the {n} records its first line counts"
        )),
        (Some(_), None) => None,
    };
    let mut batches = HashSet::new();
    let mut last = BTreeMap::new();
    for (record, counted) in all {
        if let Some(id) = &record.channel_order_id {
            batches.insert(id.to_string());
        }
        last.insert(record.line, (record, counted));
    }
    let records = last
        .into_iter()
        .map(|(no, (record, counted))| (no, taken(record, counted, unproven.as_deref())))
        .collect();
    Ok(Read {
        run: header.run,
        records,
        batches,
        unproven,
    })
}

/// One record, its outcome one of ours.
fn record(text: &[u8]) -> Result<Record<'static>, String> {
    let record = serde_json::from_slice::<Record>(text).map_err(|e| e.to_string())?;
    if Outcome::of(&record.outcome).is_none() {
        return Err(format!("unknown outcome {:?}", record.outcome));
    }
    Ok(record.into_owned())
}

/// The record a line is taken with: its last, unless a file that proves nothing may have
/// lost a later one.
fn taken(record: Record<'static>, counted: bool, unproven: Option<&str>) -> Record<'static> {
    let outcome = Outcome::of(&record.outcome).expect("checked when read");
    if let Some(why) = unproven {
        // A line `ok` or `invalid` is never sent again; one failed or not sent among the
        // counted records is a run's final outcome (a run starts by counting only what is
        // `ok` or `unknown`). Anything else may have been sent after its record.
        let settled = match outcome {
            Outcome::Ok | Outcome::Invalid => true,
            Outcome::Failed | Outcome::NotSent => counted,
            Outcome::Unknown | Outcome::Sending => false,
        };
        if !settled {
            return Record {
                asset_nos: record.asset_nos,
                ..unaccounted(record.line, why)
            };
        }
    }
    if outcome == Outcome::Sending {
        return Record {
            outcome: Cow::Borrowed(Outcome::Unknown.as_str()),
            code: Some(Cow::Borrowed("interrupted")),
            message: Some(Cow::Borrowed(
                "sent, but the run stopped before its answer was recorded: it may have been applied",
            )),
            ..record
        };
    }
    record
}

fn not_a_header(path: &Path, size: usize, cut: bool) -> CliError {
    let path = path.display();
    if size == 0 || cut {
        return CliError::usage(format!(
            "{path} is {}: if a run wrote it, it was cut, and the orders it recorded may have \
             been applied; nothing was sent. Restore it from a copy, or see on the platform \
             what was applied and start a new run (--results elsewhere) with the lines still \
             to send",
            if size == 0 {
                "empty (0 bytes)".to_string()
            } else {
                format!("cut short inside its first line ({size} bytes)")
            }
        ));
    }
    CliError::usage(format!(
        "{path}:1: not the header of a results file (`{{\"run\": …}}`): it was not written by \
         this `licensing`; start a new run with --results elsewhere"
    ))
}

fn damaged(path: &Path, line: usize, at: usize, why: &str) -> CliError {
    let shown = path.display();
    let quoted =
        shlex::try_quote(&shown.to_string()).map_or_else(|_| shown.to_string(), |q| q.into_owned());
    CliError::usage(format!(
        "{shown}:{line}: the record at byte {at} is damaged ({why}): the file is not resumed, \
         as lines it holds could be sent twice; nothing was sent. Restore the file from a \
         copy; or cut it inside that record (`truncate -s {} {quoted}`), and a resume then \
         takes every line it can no longer account for as unknown, for --retry-unknown to \
         check on the platform",
        at + 1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::results::tests::run;

    fn header(records: Option<u64>) -> String {
        let line = serde_json::to_string(&Header {
            run: run(),
            records,
        })
        .unwrap();
        format!("{line}\n")
    }

    /// Each line's outcome and batch as read back from `text`, and whether it proves
    /// what it has no record of.
    fn back(text: impl AsRef<[u8]>) -> (Vec<(u64, String, Option<String>)>, bool) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, text).unwrap();
        let read = read(&path).unwrap();
        let lines = read
            .records
            .values()
            .map(|r| {
                (
                    r.line,
                    r.outcome.to_string(),
                    r.channel_order_id.as_deref().map(str::to_string),
                )
            })
            .collect();
        (lines, read.unproven.is_none())
    }

    fn refused(text: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, text).unwrap();
        read(&path).err().unwrap().message
    }

    const OK1: &str = "{\"line\":1,\"outcome\":\"ok\",\"channelOrderId\":\"b-1-2\"}\n";
    const FAILED2: &str = "{\"line\":2,\"outcome\":\"failed\",\"channelOrderId\":\"b-1-2\"}\n";
    const SENDING3: &str = "{\"line\":3,\"outcome\":\"sending\",\"channelOrderId\":\"b-3-3\"}\n";
    const UNKNOWN4: &str = "{\"line\":4,\"outcome\":\"unknown\",\"channelOrderId\":\"b-4-4\"}\n";

    fn line(n: u64, outcome: &str, batch: Option<&str>) -> (u64, String, Option<String>) {
        (n, outcome.into(), batch.map(Into::into))
    }

    #[test]
    fn a_whole_file_is_read_as_written() {
        // Counted records, then a log with a clean end: what a killed run leaves.
        let (lines, proven) = back(format!(
            "{}{OK1}{UNKNOWN4}{FAILED2}{SENDING3}",
            header(Some(2))
        ));
        assert!(proven);
        assert_eq!(
            lines,
            [
                line(1, "ok", Some("b-1-2")),
                line(2, "failed", Some("b-1-2")),
                line(3, "unknown", Some("b-3-3")),
                line(4, "unknown", Some("b-4-4")),
            ]
        );
        // A fresh run's file, killed before its first batch: nothing was sent.
        assert_eq!(back(header(Some(0))), (vec![], true));
    }

    #[test]
    fn a_file_cut_short_settles_only_what_no_later_record_changes() {
        let counted = format!("{}{OK1}{FAILED2}{SENDING3}{UNKNOWN4}", header(Some(4)));
        let lost = |n| line(n, "unknown", None);
        // Cut at the end of a counted record, inside one, or before the last line break
        // (line 4's record whole, yet what followed it, if anything, is gone).
        for (cut, through) in [
            (counted.len() - UNKNOWN4.len(), 3),
            (counted.len() - 25, 3),
            (counted.len() - 1, 4),
        ] {
            let (lines, proven) = back(&counted[..cut]);
            assert!(!proven, "{cut}");
            let mut expected = vec![
                line(1, "ok", Some("b-1-2")),
                line(2, "failed", Some("b-1-2")),
            ];
            expected.extend((3..=through).map(lost));
            assert_eq!(lines, expected, "{cut}");
        }
        // Among the appended records a failed line may have been sent again after.
        let logged = format!("{}{OK1}{FAILED2}{{\"line\":3,\"outc", header(Some(1)));
        assert_eq!(
            back(&logged),
            (vec![line(1, "ok", Some("b-1-2")), lost(2)], false)
        );
        // Cut inside its first line's break: the header stands, nothing after it is proven.
        let first = header(Some(4));
        assert_eq!(back(&first[..first.len() - 1]), (vec![], false));
        // A file of an earlier version, which did not count its records.
        let old = format!("{}{OK1}{FAILED2}", header(None));
        assert_eq!(
            back(&old),
            (vec![line(1, "ok", Some("b-1-2")), lost(2)], false)
        );
    }

    #[test]
    fn a_file_that_cannot_be_read_is_refused_with_the_way_out() {
        let head = header(Some(2));
        // A damaged record before the last: its byte, and how to go on.
        let text = format!("{head}{{\"line\":2,\"outco\n{OK1}");
        let error = refused(text.as_bytes());
        assert!(
            error.contains(&format!(
                "r.jsonl:2: the record at byte {} is damaged",
                head.len()
            )) && error.contains(&format!("truncate -s {} ", head.len() + 1)),
            "{error}"
        );
        let error = refused(format!("{head}{{\"line\":2,\"outcome\":\"done\"}}\n{OK1}").as_bytes());
        assert!(error.contains("unknown outcome \"done\""), "{error}");
        // A last record cut inside a character is a torn record, not a file refused as
        // not text.
        let mut bytes = format!("{head}{OK1}").into_bytes();
        bytes.extend_from_slice(b"{\"line\":2,\"outcome\":\"failed\",\"message\":\"\xe6\x97");
        assert_eq!(back(&bytes), (vec![line(1, "ok", Some("b-1-2"))], false));
        // Nothing to tell the run by.
        assert!(refused(b"").contains("is empty (0 bytes)"));
        assert!(
            refused(&head.as_bytes()[..40]).contains("cut short inside its first line (40 bytes)")
        );
        let error = refused(OK1.as_bytes());
        assert!(
            error.contains("not the header of a results file"),
            "{error}"
        );
    }
}
