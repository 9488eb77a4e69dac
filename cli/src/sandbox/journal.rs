//! `licensing sandbox journal`: the requests the services received and what they answered.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat};
use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use licensing_sandbox_client::{self as admin, types as t};

use super::failed;
use crate::{
    error::CliError,
    output::{Format, Json, Sink},
};

/// `journal`, with its filters, `--follow` and `--full`.
pub(super) fn command() -> Command {
    Command::new("journal")
        .about("Shows the requests the services received and what they answered")
        .long_about(
            "Shows the requests the services received and what they answered. A table \
             shows each time in RFC 3339 (UTC); JSON keeps the milliseconds since the \
             epoch.",
        )
        .arg(
            Arg::new("operation")
                .long("operation")
                .help("Only this operationId"),
        )
        .arg(
            Arg::new("code")
                .long("code")
                .help("Only this business code (0: success)"),
        )
        .arg(
            Arg::new("limit")
                .long("limit")
                .value_parser(value_parser!(u32).range(1..))
                .help("At most this many, the newest"),
        )
        .arg(
            Arg::new("follow")
                .long("follow")
                .short('f')
                .action(ArgAction::SetTrue)
                .help("Keep printing new entries, one JSON line each, until Ctrl-C"),
        )
        .arg(
            Arg::new("full")
                .long("full")
                .action(ArgAction::SetTrue)
                .help("Include the request and reply bodies in the table"),
        )
}

pub(super) async fn run(
    admin: &admin::Client,
    m: &ArgMatches,
    sink: &mut Sink,
) -> Result<(), CliError> {
    let full = m.get_flag("full");
    let list = |limit: Option<u32>| {
        let mut call = admin.list_journal();
        if let Some(op) = m.get_one::<String>("operation") {
            call = call.operation(op.clone());
        }
        if let Some(code) = m.get_one::<String>("code") {
            call = call.code(code.clone());
        }
        if let Some(limit) = limit {
            call = call.limit(limit);
        }
        call
    };
    let limit = m.get_one::<u32>("limit").copied();
    let page = list(limit).send().await.map_err(failed)?.into_inner();
    if !m.get_flag("follow") {
        return match sink.format {
            Format::Json => sink.value(&page),
            Format::Table => {
                let rows: Vec<Json> = page.entries.iter().map(|e| row(e, full)).collect();
                sink.write(crate::output::table(&Json::Array(rows)).as_bytes())
            }
        };
    }
    // Follow: every entry once, by sequence number, until Ctrl-C.
    let mut last = i64::MIN;
    let print = |entries: &[t::JournalEntry], sink: &mut Sink, last: &mut i64| {
        let seen = *last;
        for entry in entries.iter().filter(|e| e.seq > seen) {
            *last = entry.seq;
            let mut line = serde_json::to_vec(entry).expect("JSON");
            line.push(b'\n');
            sink.write(&line)?;
        }
        Ok::<_, CliError>(())
    };
    print(&page.entries, sink, &mut last)?;
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = &mut interrupted => return Ok(()),
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
        let page = list(None).send().await.map_err(failed)?.into_inner();
        print(&page.entries, sink, &mut last)?;
    }
}

/// One journal entry as a table row: its time in RFC 3339, bodies left out unless
/// `--full`.
fn row(entry: &t::JournalEntry, full: bool) -> Json {
    let Json::Object(mut fields) = Json::of(entry) else {
        unreachable!("an entry is an object")
    };
    if !full {
        fields.retain(|(k, _)| !matches!(k.as_str(), "requestBody" | "replyBody" | "query"));
    }
    for (key, value) in &mut fields {
        if key == "time" {
            *value = Json::Scalar(rfc3339(entry.time));
        }
    }
    Json::Object(fields)
}

/// Milliseconds since the Unix epoch as RFC 3339 in UTC, to the millisecond:
/// `2026-01-01T00:00:00.123Z` (a count past chrono's years, ±262,143, as the number).
fn rfc3339(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms).map_or_else(
        || ms.to_string(),
        |t| t.to_rfc3339_opts(SecondsFormat::Millis, true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_times_read_as_rfc_3339_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_767_225_600_123), "2026-01-01T00:00:00.123Z");
        // The last millisecond of a leap day, and one before the epoch.
        assert_eq!(rfc3339(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(1_709_251_199_000), "2024-02-29T23:59:59.000Z");
    }
}
