//! What a resumed run takes over from its results file: the run's settings, the lines
//! it does not send again (`ok`, and `unknown` unless checked), and the ids it used.

use std::{
    collections::{BTreeMap, HashSet},
    path::Path,
};

use super::{
    read::Source,
    recover::{self, Read},
    results::{Outcome, Record, Run},
    same_file, say,
};
use crate::error::CliError;

/// What a run starts from.
#[derive(Default)]
pub struct Start {
    /// The lines it does not send again, as their records.
    pub carried: Vec<Record<'static>>,
    /// With `--retry-unknown`: each unknown line and its batch's `channelOrderId`, none
    /// when the results file lost it.
    pub unknown: BTreeMap<u64, Option<String>>,
    /// Every `channelOrderId` the results file names.
    pub used: HashSet<String>,
    /// Whether some unknown line's batch is lost: the run then tags its own ids.
    pub lost: bool,
}

/// The settings a resume gives, for [`resume`] to check against the recorded ones.
pub struct Given<'a> {
    pub channel_code: Option<String>,
    pub sync_mode: Option<String>,
    pub order_id_prefix: Option<String>,
    pub retry_unknown: bool,
    pub file: &'a Path,
    pub results: &'a Path,
}

/// A resumed run of `read`: the run it continues (its settings, one attempt on) and what
/// it starts from, refused when `run`'s input is not the recorded one or a setting given
/// differs. A line the file cannot account for is `unknown` (see [`recover`]).
pub fn resume(
    read: Read,
    run: Run,
    source: &Source,
    given: Given<'_>,
) -> Result<(Run, Start), CliError> {
    let before = &read.run;
    let results = given.results;
    if (before.size, &before.sha256) != (run.size, &run.sha256) {
        return Err(CliError::usage(format!(
            "{} belongs to another input: {} ({} bytes, SHA-256 {}), not {} ({} bytes, \
             SHA-256 {}){}; nothing was sent",
            results.display(),
            before.input,
            before.size,
            before.sha256,
            run.input,
            run.size,
            run.sha256,
            if same_file(Path::new(&before.input), given.file) {
                ": the file changed since its run (a line fixed after it failed goes in a \
                 file of its own)"
            } else {
                ""
            }
        )));
    }
    let run = Run {
        input: before.input.clone(),
        channel_code: agree(
            "channel-code",
            given.channel_code,
            &before.channel_code,
            results,
        )?,
        sync_mode: agree("sync-mode", given.sync_mode, &before.sync_mode, results)?,
        order_id_prefix: agree(
            "order-id-prefix",
            given.order_id_prefix,
            &before.order_id_prefix,
            results,
        )?,
        attempt: before.attempt + 1,
        ..run
    };
    let mut records = read.records;
    if let Some(why) = &read.unproven {
        let unrecorded = source.orders_where(&|no| !records.contains_key(&no));
        for &no in &unrecorded {
            records.insert(no, recover::unaccounted(no, why));
        }
        let unaccounted = records
            .values()
            .filter(|r| r.outcome == Outcome::Unknown.as_str() && r.channel_order_id.is_none())
            .count();
        if unaccounted > 0 {
            say(&format!(
                "{} does not show every line that was sent ({}): {unaccounted} line(s) it \
                 cannot account for ({} of them with no record) are taken as unknown, never \
                 resent as new",
                crate::terminal::escape(&results.display().to_string()),
                crate::terminal::escape(why),
                unrecorded.len()
            ));
        }
    }
    let mut start = Start {
        used: read.batches,
        ..Start::default()
    };
    for record in records.into_values() {
        match Outcome::of(&record.outcome) {
            Some(Outcome::Ok) => start.carried.push(record),
            Some(Outcome::Unknown) => {
                let batch = record.channel_order_id.as_deref().map(str::to_string);
                start.lost |= batch.is_none();
                if given.retry_unknown {
                    start.unknown.insert(record.line, batch);
                }
                start.carried.push(record);
            }
            _ => {}
        }
    }
    Ok((run, start))
}

/// What a resumed run must agree on with its results file: a setting given now must be
/// the one recorded; one not given is taken from the record.
fn agree(
    flag: &str,
    given: Option<String>,
    recorded: &str,
    results: &Path,
) -> Result<String, CliError> {
    match given {
        Some(given) if given != recorded => Err(CliError::usage(format!(
            "--{flag} {given:?} differs from the run {} belongs to ({recorded:?}): a resumed \
             run keeps its settings; leave --{flag} out",
            results.display()
        ))),
        _ => Ok(recorded.to_string()),
    }
}
