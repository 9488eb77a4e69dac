//! `licensing probe`: asks a deployment whether it does what the platform documents say,
//! one named check at a time, each citing the sentence or spec pointer it tests.
//!
//! Three tiers. By default, reads and refusals that cannot write (GETs, and GETs a
//! conforming platform refuses: a replayed `g_nonce`, a wrong token, no `Content-Type`
//! on the order service). With `--writes`, reversible writes on the allow-listed ids
//! alone (`--enterprise`, `--asset`), at most `--max-writes`, each announced in a ledger
//! on disk before it is sent and undone before the run ends, on a signal too, or by
//! `--finish LEDGER` after a kill ([`ledger`], [`undo`]). With `--irreversible`, against
//! a simulator only, writes that cannot be taken back. Politely: `--rate` requests a
//! second, a bounded total, a backoff on `429`, every reply read within bounds ([`http`]).
//!
//! Results: markdown, JSON and JUnit ([`report`]), the traffic as HAR ([`har`]), and
//! with `--compare-with URL` the checks whose outcome differs on a second deployment.

mod context;
mod har;
mod http;
mod ledger;
mod outcome;
mod plan;
mod quotes;
mod reads;
mod redact;
mod report;
mod run;
mod schema;
mod signals;
mod spec;
mod undo;
mod writes;

use clap::{Arg, ArgAction, Command, value_parser};
use ledger::DEFAULT_MAX_WRITES;

pub use run::run;

/// The `probe` command.
pub fn command() -> Command {
    let flag = |name: &'static str, help: &'static str| {
        Arg::new(name)
            .long(name)
            .action(ArgAction::SetTrue)
            .help(help)
    };
    let value = |name: &'static str, value_name: &'static str, help: String| {
        Arg::new(name).long(name).value_name(value_name).help(help)
    };
    Command::new("probe")
        .about("Asks a deployment whether it does what the documents say: reads by default, undone writes on allow-listed ids with --writes")
        .long_about(
            "Runs the documents' checks against the deployment of the profile (--order-url, \
             --member-url): each named, each citing the documented sentence or spec pointer it \
             tests, each `as documented`, `departs` (with the exact request and reply, secrets \
             redacted) or `not run` (why). By default only reads, and requests a conforming \
             platform refuses that would not write if it did not. --writes adds reversible \
             writes on the allow-listed ids alone (--enterprise, --asset), at most --max-writes, \
             each recorded in a ledger before it is sent and undone before the run ends, on \
             SIGINT, SIGTERM or SIGHUP too; `--finish LEDGER` undoes what a killed run left. \
             --irreversible adds writes that cannot be taken back, against a simulator only. \
             Exits 0 when every check ran as documented or could not run, 1 when one departs \
             (or --compare-with finds a difference), 2 on a usage error (nothing sent), 3 when \
             the deployment was not reached or a write is not undone yet, 130, 143 or 129 when \
             stopped by SIGINT, SIGTERM or SIGHUP (after undoing).",
        )
        .arg(flag("plan", "Print the plan (every check and what it tests) and send nothing"))
        .arg(flag("writes", "Also run the reversible writes, on the allow-listed ids only, each undone"))
        .arg(flag(
            "irreversible",
            "Also run writes that cannot be undone (asset numbers); against a simulator only",
        ))
        .arg(flag(
            "simulator",
            "The deployment is a simulator (otherwise recognised by its admin API)",
        ))
        .arg(
            value("enterprise", "ID", "An enterprise the probe reads and may write to (repeat for more)".into())
                .action(ArgAction::Append),
        )
        .arg(
            value("asset", "NUM", "A lock the probe may disable and enable again (repeat for more)".into())
                .action(ArgAction::Append),
        )
        .arg(value("channel-code", "CODE", "The channelCode the enterprise query asks for".into()))
        .arg(value(
            "channel-customer-id",
            "ID",
            "The channelCustomerId the enterprise query asks for".into(),
        ))
        .arg(
            value("max-writes", "N", format!("The most writes the run makes [default: {DEFAULT_MAX_WRITES}]"))
                .value_parser(value_parser!(u64)),
        )
        .arg(value(
            "ledger",
            "FILE",
            "Where --writes records each write and its undo (default: licensing-probe-<time>.ledger.jsonl; never overwritten)".into(),
        ))
        .arg(
            value("finish", "LEDGER", "Undo what a stopped run's ledger left, and nothing else".into())
                .conflicts_with_all(["plan", "writes", "irreversible", "compare-with", "ledger"]),
        )
        .arg(
            value("rate", "PER_SECOND", format!("Requests a second [default: {}]", http::DEFAULT_RATE))
                .value_parser(value_parser!(f64)),
        )
        .arg(
            value(
                "max-requests",
                "N",
                format!("The most requests the run sends, undos aside [default: {}]", http::DEFAULT_MAX_REQUESTS),
            )
            .value_parser(value_parser!(u64).range(1..)),
        )
        .arg(
            value(
                "max-reply-bytes",
                "BYTES",
                format!("The most of a reply read [default: {}]", http::DEFAULT_MAX_REPLY_BYTES),
            )
            .value_parser(value_parser!(usize)),
        )
        .arg(value(
            "compare-with",
            "URL",
            "Run the reads and refusals against this deployment too (both services at URL, the same tokens) and list the checks whose outcome differs".into(),
        ))
        .arg(value("report-md", "FILE", "Write the report as markdown".into()))
        .arg(value("report-json", "FILE", "Write the report as JSON".into()))
        .arg(value("junit", "FILE", "Write the report as JUnit XML".into()))
        .arg(value("har", "FILE", "Write the run's traffic as HAR 1.2 (redacted)".into()))
}
