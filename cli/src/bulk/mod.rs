//! `licensing orders submit FILE`: license orders from a JSON Lines or CSV file (one order
//! per line, the spec's field names), sent as `batchOrder` batches with bounded
//! concurrency, with a results file holding one outcome per input line.
//!
//! Outcomes: `ok` (with the license order id and asset numbers), `failed` (the platform's
//! code and message, or a transport failure before sending: nothing was applied),
//! `invalid` (the line breaks a documented rule; never sent), `unknown` (sent, but no
//! answer came back: it may have been applied, so it is never resent unless asked with
//! `--retry-unknown`, which checks first) and `not_sent` (the run was stopped first).
//! `--resume` sends again only the lines that are not `ok` (nor `unknown`).
//!
//! Each order is applied at most once whatever stops the run: the results file is a
//! write-ahead log (see [`results`]), one run holds it at a time ([`lock`]), and it
//! belongs to one input, which a resume must match. A resume sends a line as new only
//! if the file proves no request for it ever left; a file cut short, damaged at its end
//! or written by an earlier version leaves what it cannot account for `unknown` (see
//! [`recover`]).
//!
//! The file is read into orders on a thread of its own, a few batches ahead of the
//! sending (bounded by the concurrency), so a large file is sent while it is read and
//! is never held as orders all at once.

mod check;
mod ids;
mod lock;
mod read;
mod recover;
mod results;
mod resume;
mod send;

use std::{
    collections::{HashSet, VecDeque},
    ffi::OsString,
    io::{IsTerminal as _, Write as _},
    path::{Path, PathBuf},
    sync::Arc,
};

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use tokio::sync::mpsc;

use crate::{
    config::Context,
    error::{CliError, exit},
    output::Format,
};
use ids::Ids;
use read::{Batcher, Source};
use results::{Outcome, Results, Run};
use resume::{Given, Start};
use send::{Ended, Sender, Settings, Signals};

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
             invalid, unknown (sent without an answer: --retry-unknown checks it on the \
             platform before resending) or not_sent. Each batch is recorded in the results \
             file before it is sent, so a run stopped in any way, even killed, never sends an \
             order twice; --resume RESULTS (the same input, unchanged) sends only what is not \
             done. Exits 1 when a line failed, 2 on a usage error (nothing sent), 3 when an \
             outcome is unknown, 130 on Ctrl-C (SIGINT), 143 on SIGTERM, 129 on SIGHUP.",
        )
        .arg(Arg::new("file").required(true).value_name("FILE").help("Orders, one per line"))
        .arg(
            Arg::new("channel-code")
                .long("channel-code")
                .required_unless_present("resume")
                .help("The batches' channelCode (a resumed run keeps its own)"),
        )
        .arg(Arg::new("app-key").long("app-key").value_name("KEY").help(
            "The appKey of batchOrder: - reads it from stdin [default: LICENSING_APP_KEY, \
             else the profile's app_key]",
        ))
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
                .help("With --resume: check each line whose outcome is unknown on the platform, and resend those it shows were not applied"),
        )
}

/// Writes a line to stderr; a terminal gone away (after a hang-up) is not an error.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The input's format: `--format`, else by its extension.
fn is_csv(m: &ArgMatches, file: &Path) -> bool {
    match m.get_one::<String>("format").map(String::as_str) {
        Some("csv") => true,
        Some(_) => false,
        None => file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv")),
    }
}

/// The same file, whatever the name it goes by.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Runs `orders submit`.
pub async fn run(ctx: &Context, m: &ArgMatches, _format: Format) -> Result<(), CliError> {
    // From here on a signal stops the run as Ctrl-C does, recording what is in flight.
    let mut signals = Signals::listen()?;
    let file = PathBuf::from(m.get_one::<String>("file").expect("required"));
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
    if same_file(&file, &results_path) || file == results_path {
        return Err(CliError::usage(format!(
            "the results file {} is the input itself: name another with --results",
            results_path.display()
        )));
    }
    let retry_unknown = m.get_flag("retry-unknown");
    // One run per results file, from before it is read until the process ends.
    let lock = lock::lock(&results_path)?;
    let given = |name: &str| m.get_one::<String>(name).cloned();
    let before = if resume {
        Some(recover::read(&results_path)?)
    } else {
        if results_path.symlink_metadata().is_ok() {
            return Err(CliError::usage(format!(
                "{} exists: continue its run with `--resume {0}`, or name another file with \
                 --results (it is never overwritten, so that no outcome is lost)",
                results_path.display()
            )));
        }
        None
    };
    // A resumed run reads the file as the run it continues did.
    let csv = match &before {
        Some(read) => {
            let csv = read.run.format == "csv";
            if m.get_one::<String>("format").is_some() && csv != is_csv(m, &file) {
                return Err(CliError::usage(format!(
                    "--format differs from the run {} belongs to ({}): leave --format out",
                    results_path.display(),
                    read.run.format
                )));
            }
            csv
        }
        None => is_csv(m, &file),
    };
    let source = Source::open(&file, csv)?;
    let run = Run {
        input: file.display().to_string(),
        size: source.size(),
        sha256: source.sha256(),
        format: if csv { "csv" } else { "jsonl" }.into(),
        channel_code: given("channel-code").unwrap_or_default(),
        sync_mode: given("sync-mode").unwrap_or_else(|| "sync".into()),
        order_id_prefix: given("order-id-prefix").unwrap_or_else(|| {
            file.file_stem()
                .map_or("orders".into(), |s| s.to_string_lossy().into_owned())
        }),
        attempt: 1,
    };
    // What a previous run settled is kept; the rest is sent (again).
    let (run, start) = match before {
        Some(read) => {
            let given = Given {
                channel_code: given("channel-code"),
                sync_mode: given("sync-mode"),
                order_id_prefix: given("order-id-prefix"),
                retry_unknown,
                file: &file,
                results: &results_path,
            };
            resume::resume(read, run, &source, given)?
        }
        None if run.channel_code.is_empty() => {
            return Err(CliError::usage("--channel-code is required"));
        }
        None => (run, Start::default()),
    };
    let settings = Arc::new(Settings {
        channel_code: run.channel_code.clone(),
        app_key: ctx.app_key(m.get_one::<String>("app-key").map(String::as_str))?,
        sync_mode: run.sync_mode.parse().map_err(|_| {
            CliError::usage(format!("syncMode {:?} is not sync or async", run.sync_mode))
        })?,
        prefix: run.order_id_prefix.clone(),
        concurrency,
    });
    let settings_prefix = settings.prefix.clone();
    let client = Arc::new(ctx.order_client()?);
    let Start {
        carried,
        unknown,
        used,
        lost,
    } = start;
    let mut results = Results::create(&results_path, &run, &carried, lock)?;
    let skip: HashSet<u64> = carried.iter().map(|r| r.line).collect();
    drop(carried);
    let source = Arc::new(source);
    let again = check::reconcile(
        ctx,
        &source,
        &unknown,
        (&settings.sync_mode, &settings.prefix),
        &mut results,
    )
    .await?;
    let bar = progress(source.lines().saturating_sub(skip.len() as u64) + again.len() as u64);
    let pending: VecDeque<_> = send::batches(again, batch_size);
    let (to, from) = mpsc::channel(concurrency);
    let reader = {
        let source = source.clone();
        std::thread::spawn(move || source.read(&skip, Batcher::new(batch_size, to)))
    };
    let report = Sender {
        client,
        settings,
        source,
        results: &mut results,
        bar: &bar,
        signals: &mut signals,
        ids: Ids::new(settings_prefix, used, lost.then_some(run.attempt)),
    }
    .run(pending, from)
    .await;
    // The reader ends once the sender is gone, whatever it was doing.
    reader
        .join()
        .map_err(|_| CliError::usage(format!("reading {} failed", file.display())))?;
    results.rewrite()?;
    summarize(&results, report)
}

/// The command to continue this run: every argument it was given, less the results
/// file, `--retry-unknown` and an appKey's value (never repeated on a screen), plus
/// `--resume RESULTS`, quoted for a POSIX shell.
fn resume_command(results: &Path) -> String {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    let mut kept: Vec<String> = Vec::new();
    let mut skip_value = false;
    for (i, arg) in args.drain(..).enumerate() {
        let text = arg.to_string_lossy().into_owned();
        if skip_value {
            skip_value = false;
            continue;
        }
        if i == 0 {
            let name = Path::new(&text)
                .file_name()
                .map_or("licensing".into(), |n| n.to_string_lossy().into_owned());
            kept.push(name);
            continue;
        }
        match text.as_str() {
            "--results" | "--resume" => skip_value = true,
            "--app-key" => {
                skip_value = true;
                kept.push("--app-key".into());
                kept.push("-".into());
            }
            "--retry-unknown" => {}
            t if t.starts_with("--results=") || t.starts_with("--resume=") => {}
            t if t.starts_with("--app-key=") => kept.push("--app-key=-".into()),
            _ => kept.push(text),
        }
    }
    kept.push("--resume".into());
    kept.push(results.display().to_string());
    kept.iter()
        .map(|a| shlex::try_quote(a).map_or_else(|_| a.clone(), |q| q.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
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
            // `per_sec` reads its width as the precision: whole orders a second.
            "{bar:30} {pos}/{len} orders  {per_sec:0}  ETA {eta}  {msg}",
        )
        .expect("a valid template"),
    );
    bar.set_message("0 failed");
    bar
}

fn summarize(results: &Results, report: Result<Ended, CliError>) -> Result<(), CliError> {
    let ended = report?;
    let count = |o: Outcome| results.count(o);
    say(&format!(
        "{} lines: {} ok, {} failed, {} invalid, {} unknown, {} not sent; results in {}",
        results.len(),
        count(Outcome::Ok),
        count(Outcome::Failed),
        count(Outcome::Invalid),
        count(Outcome::Unknown) + count(Outcome::Sending),
        count(Outcome::NotSent),
        crate::terminal::escape(&results.path().display().to_string())
    ));
    let resume = resume_command(results.path());
    let unknown = count(Outcome::Unknown) + count(Outcome::Sending);
    let unaccounted = results.unaccounted();
    if unknown > unaccounted {
        say(&format!(
            "{} line(s) in batch(es) {} were sent but got no answer: they may have been \
             applied, and are not resent.",
            unknown - unaccounted,
            crate::terminal::escape(&results.unknown_batches().join(", "))
        ));
    }
    if unaccounted > 0 {
        say(&format!(
            "{unaccounted} line(s) may have been sent in a batch the results file no longer \
             names (it was cut short, damaged at its end, or written by an earlier version): \
             they may have been applied, and are not resent."
        ));
    }
    if unknown > 0 {
        say(&format!(
            "`{resume} --retry-unknown` checks each on the platform (through the member \
             center) and resends only those it shows were not applied."
        ));
    }
    if let Ended::Stopped(code) = ended {
        return Err(CliError::new(
            code,
            format!(
                "stopped by {}; continue with `{resume}`",
                send::signal_name(code)
            ),
        ));
    }
    if unknown > 0 {
        return Err(CliError::new(exit::TRANSPORT, ""));
    }
    if count(Outcome::Failed) + count(Outcome::Invalid) > 0 {
        return Err(CliError::new(
            exit::API,
            format!(
                "some lines failed (see {}): `{resume}` sends the failed ones again; a line \
                 refused for its content fails again until fixed, in a file of its own",
                results.path().display()
            ),
        ));
    }
    Ok(())
}
