//! `orders submit` applies each order exactly once whatever stops it: SIGINT, SIGTERM,
//! SIGHUP and SIGKILL at several points of a run, then `--resume` until done, checked
//! against the simulator's state; one run per results file; a results file belongs to
//! its input; no temporary name is followed; a batch refused for one order fails that
//! order's line alone.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    Sim,
    bulk::{fault, numbers, order, results as results_of, write_orders},
    stderr,
};

/// Where in a run the signal lands.
#[derive(Clone, Copy, Debug)]
enum Point {
    /// A batch is recorded as sending, none has answered.
    BeforeFirstAnswer,
    /// Some batches have answered, others are in flight or not sent.
    MidRun,
    /// Every line has its answer: the run is writing its results in line order.
    FinalRewrite,
}

/// The signals of the matrix, by number.
const SIGNALS: [(i32, &str); 4] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
    (libc::SIGKILL, "SIGKILL"),
];

fn submit(sim: &Sim, file: &Path, results: &Path, resume: bool, retry_unknown: bool) -> Command {
    let mut cmd = sim.submit(file, results, resume, retry_unknown, "k");
    cmd.args(["--batch-size", "4", "--concurrency", "2"]);
    cmd
}

/// The records of a results file as it is now (the header and a torn last line skipped).
fn records_now(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("line").is_some())
        .collect()
}

/// Waits for `point` in the run of `child`, then sends `signal`; false when the run
/// ended first (nothing was killed).
fn kill_at(child: &mut Child, results: &Path, lines: usize, point: Point, signal: i32) -> bool {
    let carried_ok = records_now(results)
        .iter()
        .filter(|r| r["outcome"] == "ok")
        .count();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{point:?} never came"
        );
        let records = records_now(results);
        let answered = |r: &&Value| r["outcome"] != "sending";
        let reached = match point {
            Point::BeforeFirstAnswer => records.iter().any(|r| r["outcome"] == "sending"),
            Point::MidRun => {
                records.iter().filter(|r| r["outcome"] == "ok").count() >= carried_ok + 4
            }
            Point::FinalRewrite => {
                let mut last: BTreeMap<u64, &Value> = BTreeMap::new();
                for r in &records {
                    last.insert(r["line"].as_u64().unwrap(), r);
                }
                last.len() == lines && last.values().all(answered)
            }
        };
        if reached {
            crate::signal(child, signal);
            return true;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// License orders applied to each asset, from the simulator's state.
fn applied(sim: &Sim, numbers: &[String]) -> BTreeMap<String, usize> {
    let state = sim.sim.export_state();
    numbers
        .iter()
        .map(|n| {
            let orders = state["state"]["assets"][n]["orders"]
                .as_array()
                .map_or(0, Vec::len);
            (n.clone(), orders)
        })
        .collect()
}

#[test]
fn each_order_is_applied_exactly_once_whatever_stops_the_run() {
    let sim = Sim::start();
    // Every batch answers after 120 ms, so that a signal lands while batches are in flight.
    fault(
        &sim,
        json!({"operation": "batchOrder", "fault": {"kind": "delay", "ms": 120}}),
    );
    const ROUNDS: usize = 4;
    const LINES: usize = 24;
    let all = numbers(&sim, SIGNALS.len() * ROUNDS * LINES);
    let mut kills = 0;
    let mut exits: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    // What --retry-unknown's checks found, over every resume: (applied, not applied).
    let mut checked = (0, 0);
    let mut tally = |output: &std::process::Output| {
        let text = stderr(output);
        if let Some(at) = text.find("unknown line(s): ") {
            let words: Vec<&str> = text[at..].split_whitespace().collect();
            checked.0 += words[2].parse::<usize>().unwrap();
            checked.1 += words[4].parse::<usize>().unwrap();
        }
    };
    let mut chunks = all.chunks(LINES);
    for (signal, name) in SIGNALS {
        for round in 0..ROUNDS {
            let numbers = chunks.next().unwrap();
            let file = sim.path(&format!("{name}-{round}.jsonl"));
            let results = sim.path(&format!("{name}-{round}.results.jsonl"));
            write_orders(&file, numbers);
            // A run for each point, each stopped there; then resumes until done.
            let mut resume = false;
            for point in [Point::BeforeFirstAnswer, Point::MidRun, Point::FinalRewrite] {
                let unknown = records_now(&results)
                    .iter()
                    .any(|r| r["outcome"] == "unknown" || r["outcome"] == "sending");
                let mut child = submit(&sim, &file, &results, resume, unknown)
                    .spawn()
                    .unwrap();
                if kill_at(&mut child, &results, LINES, point, signal) {
                    kills += 1;
                    // A second SIGINT/SIGTERM/SIGHUP in every other round: what is in
                    // flight is abandoned, and left unknown.
                    if round % 2 == 1 && signal != libc::SIGKILL {
                        std::thread::sleep(Duration::from_millis(5));
                        crate::signal(&child, signal);
                    }
                }
                let output = child.wait_with_output().unwrap();
                tally(&output);
                let code = output.status.code().unwrap_or_else(|| {
                    -std::os::unix::process::ExitStatusExt::signal(&output.status).unwrap()
                });
                exits.entry(name.to_string()).or_default().insert(code);
                resume = true;
            }
            // Resumed, checking what is unknown, until every line is done.
            let mut runs = 0;
            loop {
                let records = records_now(&results);
                let last: BTreeMap<u64, &Value> = records
                    .iter()
                    .map(|r| (r["line"].as_u64().unwrap(), r))
                    .collect();
                if last.len() == LINES && last.values().all(|r| r["outcome"] == "ok") {
                    break;
                }
                runs += 1;
                assert!(
                    runs <= 4,
                    "{name} round {round}: not done after {runs} resumes: {records:?}"
                );
                let unknown = last
                    .values()
                    .any(|r| r["outcome"] == "unknown" || r["outcome"] == "sending");
                let output = submit(&sim, &file, &results, true, unknown)
                    .output()
                    .unwrap();
                tally(&output);
                assert!(
                    matches!(output.status.code(), Some(0 | 1 | 3)),
                    "{name} round {round}: {}",
                    stderr(&output)
                );
            }
            // A last resume finds nothing to send, and leaves one record per line however
            // the run before it ended; each order applied once, by the simulator's state.
            let output = submit(&sim, &file, &results, true, false).output().unwrap();
            assert_eq!(
                output.status.code(),
                Some(0),
                "{name} round {round}: {}",
                stderr(&output)
            );
            let records = results_of(&results);
            let lines: Vec<u64> = records
                .iter()
                .map(|r| r["line"].as_u64().unwrap())
                .collect();
            assert_eq!(
                lines,
                (1..=LINES as u64).collect::<Vec<_>>(),
                "{name} round {round}"
            );
            let applied = applied(&sim, numbers);
            let wrong: Vec<_> = applied.iter().filter(|(_, n)| **n != 1).collect();
            assert!(
                wrong.is_empty(),
                "{name} round {round}: applied other than once: {wrong:?}"
            );
        }
    }
    assert!(kills >= 40, "only {kills} kills landed");
    // Lines left unknown by a kill were checked before anything was sent again.
    assert!(checked.0 + checked.1 > 0, "checks: {checked:?}");
    eprintln!(
        "{kills} kills; exit codes {exits:?}; unknown lines checked: {} applied, {} not",
        checked.0, checked.1
    );
    // Each signal's exit code (a run the signal reached after its last batch ends as it would).
    assert!(exits["SIGINT"].contains(&130), "{exits:?}");
    assert!(exits["SIGTERM"].contains(&143), "{exits:?}");
    assert!(exits["SIGHUP"].contains(&129), "{exits:?}");
    assert!(exits["SIGKILL"].contains(&-libc::SIGKILL), "{exits:?}");
}

fn spawn_slow(sim: &Sim, file: &Path, results: &Path) -> Child {
    submit(sim, file, results, false, false).spawn().unwrap()
}

#[test]
fn a_second_run_on_the_same_results_file_is_refused() {
    let sim = Sim::start();
    fault(
        &sim,
        json!({"operation": "batchOrder", "fault": {"kind": "delay", "ms": 300}}),
    );
    let numbers = numbers(&sim, 8);
    let file = sim.path("o.jsonl");
    let results = sim.path("o.results.jsonl");
    write_orders(&file, &numbers);
    let mut first = spawn_slow(&sim, &file, &results);
    let started = Instant::now();
    while !records_now(&results)
        .iter()
        .any(|r| r["outcome"] == "sending")
    {
        assert!(started.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(2));
    }
    let second = submit(&sim, &file, &results, true, false).output().unwrap();
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    let message = stderr(&second);
    assert!(
        message.contains("in use by another run")
            && message.contains(&format!("process {}", first.id()))
            && message.contains("o.results.jsonl"),
        "{message}"
    );
    assert!(first.wait().unwrap().success());
    assert!(applied(&sim, &numbers).values().all(|n| *n == 1));
    // Once the first has ended, a resume runs (and has nothing left to send).
    let again = submit(&sim, &file, &results, true, false).output().unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(applied(&sim, &numbers).values().all(|n| *n == 1));
}

#[test]
fn a_results_file_belongs_to_its_input() {
    let sim = Sim::start();
    let numbers = numbers(&sim, 4);
    let a = sim.path("a.jsonl");
    let b = sim.path("b.jsonl");
    write_orders(&a, &numbers[..2]);
    write_orders(&b, &numbers[2..]);
    let results = sim.path("a.results.jsonl");
    let output = submit(&sim, &a, &results, false, false).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    // Another input's results.
    let output = submit(&sim, &b, &results, true, false).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("belongs to another input") && message.contains("a.jsonl"),
        "{message}"
    );
    // The same input, changed.
    let text = std::fs::read_to_string(&a).unwrap();
    std::fs::write(&a, text.replace("Ada", "Adb")).unwrap();
    let output = submit(&sim, &a, &results, true, false).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("the file changed since its run"),
        "{}",
        stderr(&output)
    );
    // A setting that shapes channelOrderId.
    std::fs::write(&a, text).unwrap();
    let mut cmd = submit(&sim, &a, &results, true, false);
    cmd.args(["--order-id-prefix", "other"]);
    let output = cmd.output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--order-id-prefix"),
        "{}",
        stderr(&output)
    );
    // Without --resume an existing results file is never overwritten.
    let output = submit(&sim, &a, &results, false, false).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--resume"), "{}", stderr(&output));
    // The input itself as the results file.
    let before = std::fs::read(&b).unwrap();
    let output = submit(&sim, &b, &b, false, false).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is the input itself"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(&b).unwrap(), before);
    // Nothing of b was sent by any of these.
    assert_eq!(
        applied(&sim, &numbers),
        numbers
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), usize::from(i < 2)))
            .collect()
    );
}

#[test]
fn planted_files_and_links_at_temporary_names_are_left_alone() {
    let sim = Sim::start();
    let numbers = numbers(&sim, 2);
    let file = sim.path("batch.tmp");
    write_orders(&file, &numbers);
    let input = std::fs::read(&file).unwrap();
    // `--results batch` once replaced `batch.tmp`, the input.
    let results = sim.path("batch");
    let victim = sim.path("victim");
    std::fs::write(&victim, "keep me").unwrap();
    for name in ["batch.tmp.tmp", ".batch.tmp", "batch.jsonl.tmp"] {
        std::os::unix::fs::symlink(&victim, sim.path(name)).unwrap();
    }
    std::fs::write(sim.path("results.tmp"), "planted").unwrap();
    let output = submit(&sim, &file, &results, false, false)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        input,
        "the input is untouched"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert_eq!(
        std::fs::read_to_string(sim.path("results.tmp")).unwrap(),
        "planted"
    );
    assert_eq!(results_of(&results).len(), 2);
    // The results file replaced by a link: the resume replaces the link, not its target.
    let moved = sim.path("moved.jsonl");
    std::fs::rename(&results, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &results).unwrap();
    let output = submit(&sim, &file, &results, true, false).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!results.symlink_metadata().unwrap().file_type().is_symlink());
    let planted: PathBuf = sim.path("other.results.jsonl.lock");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let output = submit(&sim, &file, &sim.path("other.results.jsonl"), false, false)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(applied(&sim, &numbers).values().all(|n| *n == 1));
}

#[test]
fn a_batch_refused_for_one_order_fails_that_line_alone() {
    let sim = Sim::start();
    let numbers = numbers(&sim, 4);
    let file = sim.path("o.jsonl");
    let mut text = String::new();
    for (i, n) in numbers.iter().enumerate() {
        let mut line = order(n);
        if i == 2 {
            // A customer the platform does not have: refused by the platform, not by the
            // checks made before sending.
            line["customerId"] = json!("C999999");
        }
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(&file, text).unwrap();
    let results = sim.path("o.results.jsonl");
    let output = submit(&sim, &file, &results, false, false)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let records = results_of(&results);
    let outcomes: Vec<(u64, &str)> = records
        .iter()
        .map(|r| (r["line"].as_u64().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes, [(1, "ok"), (2, "ok"), (3, "failed"), (4, "ok")]);
    let failed = &records[2];
    assert_eq!(failed["code"], "13004");
    let message = failed["message"].as_str().unwrap();
    assert!(message.contains("line 3: customerId"), "{message}");
    assert!(!message.contains("orderList["), "{message}");
    // The others went in a batch of their own, with a channelOrderId of its own.
    assert_eq!(records[0]["channelOrderId"], "k-1-4-a2");
    assert_eq!(failed["channelOrderId"], "k-1-4");
    let applied = applied(&sim, &numbers);
    assert_eq!(applied.values().copied().collect::<Vec<_>>(), [1, 1, 0, 1]);
}

#[test]
fn unknown_lines_are_checked_and_only_those_not_applied_are_sent_again() {
    let sim = Sim::start();
    let numbers = numbers(&sim, 8);
    let file = sim.path("o.jsonl");
    let results = sim.path("o.results.jsonl");
    write_orders(&file, &numbers);
    // The first batch is applied and its answer lost; the second is held until the run
    // is killed, and never applied.
    fault(
        &sim,
        json!({"operation": "batchOrder", "times": 1,
               "bodyField": {"pointer": "/channelOrderId", "equals": "k-1-4"},
               "fault": {"kind": "dropConnection"}}),
    );
    fault(
        &sim,
        json!({"operation": "batchOrder", "times": 1,
               "bodyField": {"pointer": "/channelOrderId", "equals": "k-5-8"},
               "fault": {"kind": "delay", "ms": 10_000}}),
    );
    let mut child = submit(&sim, &file, &results, false, false).spawn().unwrap();
    let started = Instant::now();
    loop {
        let records = records_now(&results);
        let unknown = records.iter().filter(|r| r["outcome"] == "unknown").count();
        let sending = records
            .iter()
            .filter(|r| r["outcome"] == "sending" && r["channelOrderId"] == "k-5-8")
            .count();
        if unknown == 4 && sending == 4 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{records:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    crate::signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    assert_eq!(applied(&sim, &numbers).values().sum::<usize>(), 4);
    // Without --retry-unknown nothing unknown is sent.
    let output = submit(&sim, &file, &results, true, false).output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("k-1-4, k-5-8"),
        "{}",
        stderr(&output)
    );
    assert_eq!(applied(&sim, &numbers).values().sum::<usize>(), 4);
    // With it, the check finds the first batch applied and the second not.
    let output = submit(&sim, &file, &results, true, true).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "checked 8 unknown line(s): 4 applied, 4 not applied (sent again), 0 left unknown"
        ),
        "{}",
        stderr(&output)
    );
    let records = results_of(&results);
    assert!(records.iter().all(|r| r["outcome"] == "ok"), "{records:?}");
    assert_eq!(records[0]["channelOrderId"], "k-1-4");
    assert!(records[0]["licenseOrderId"].is_string());
    assert_eq!(records[4]["channelOrderId"], "k-5-8-a2");
    assert!(applied(&sim, &numbers).values().all(|n| *n == 1));
}
