//! `orders submit --resume` on a results file cut short: a completed run's file cut at
//! every byte of its last records (and at a sample of the bytes before them), and a
//! killed run's at every byte inside its records, each cut resumed, then checked with
//! `--retry-unknown`; and a damaged record refused with the way out, which is then taken.
//! No order is applied twice, and no line is reported `ok` unless the simulator shows it
//! applied.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::{Command, Output},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    Sim,
    bulk::{fault, numbers, order},
    stderr,
};

fn submit(sim: &Sim, file: &Path, results: &Path, resume: bool, retry_unknown: bool) -> Output {
    command(sim, file, results, resume, retry_unknown)
        .output()
        .unwrap()
}

fn command(sim: &Sim, file: &Path, results: &Path, resume: bool, retry_unknown: bool) -> Command {
    let mut cmd = sim.submit(file, results, resume, retry_unknown, "t");
    // One batch at a time, so that the first run's file is the same from run to run.
    cmd.args(["--batch-size", "2", "--concurrency", "1"]);
    cmd
}

/// A simulator, the input written to `o.jsonl` ([`input`]), and where its results go.
fn started() -> (Sim, PathBuf, PathBuf, BTreeMap<u64, Option<String>>) {
    let sim = Sim::start();
    let file = sim.path("o.jsonl");
    let results = sim.path("o.results.jsonl");
    let lines = input(&sim, &file);
    (sim, file, results, lines)
}

/// `fault` for the one batch whose channel order id is `channel_order_id`, once.
fn batch_fault(sim: &Sim, channel_order_id: &str, what: Value) {
    fault(
        sim,
        json!({"operation": "batchOrder", "times": 1,
               "bodyField": {"pointer": "/channelOrderId", "equals": channel_order_id},
               "fault": what}),
    );
}

/// The input: line → the asset number of its order (none for the line that is not one).
/// The batch of lines 1 and 2 is applied but its answer lost, line 3 names a customer
/// the platform does not have (refused, never applied), and line 6 is not an order.
fn input(sim: &Sim, path: &Path) -> BTreeMap<u64, Option<String>> {
    let numbers = numbers(sim, 8);
    let mut lines = BTreeMap::new();
    let mut text = String::new();
    let mut numbers = numbers.into_iter();
    for no in 1..=9u64 {
        if no == 6 {
            // Not an order: recorded `invalid` with a message that is not ASCII alone.
            text.push_str("{\"orderType\":\"новый\"}\n");
            lines.insert(no, None);
            continue;
        }
        let number = numbers.next().unwrap();
        let mut line = order(&number);
        if no == 3 {
            line["customerId"] = json!("C99999é");
        }
        text.push_str(&line.to_string());
        text.push('\n');
        lines.insert(no, Some(number));
    }
    std::fs::write(path, text).unwrap();
    lines
}

/// License orders applied to each asset, from the simulator's state.
fn applied(sim: &Sim, lines: &BTreeMap<u64, Option<String>>) -> BTreeMap<u64, usize> {
    let state = sim.sim.export_state();
    lines
        .iter()
        .filter_map(|(no, n)| Some((*no, n.as_ref()?)))
        .map(|(no, n)| {
            let orders = state["state"]["assets"][n]["orders"]
                .as_array()
                .map_or(0, Vec::len);
            (no, orders)
        })
        .collect()
}

/// Each line's last outcome in a results file (its header checked, a torn line skipped).
fn outcomes(path: &Path) -> BTreeMap<u64, String> {
    records(path)
        .into_iter()
        .map(|(no, r)| (no, r["outcome"].as_str().unwrap().to_string()))
        .collect()
}

/// Each line's last record in a results file.
fn records(path: &Path) -> BTreeMap<u64, Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert!(header["run"]["sha256"].is_string(), "{header}");
    lines
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| (r["line"].as_u64().unwrap(), r))
        .collect()
}

/// What a resume must leave: no order applied more than once, none but line 3's left
/// unapplied, and each line `ok` in `results` (when it is one) only if its order is
/// applied.
fn sound(sim: &Sim, lines: &BTreeMap<u64, Option<String>>, results: Option<&Path>, cut: usize) {
    let applied = applied(sim, lines);
    let wrong: Vec<_> = applied
        .iter()
        .filter(|(no, n)| **n != usize::from(**no != 3))
        .collect();
    assert!(
        wrong.is_empty(),
        "cut at {cut}: applied other than once: {wrong:?}"
    );
    for (no, outcome) in results.map(outcomes).unwrap_or_default() {
        if outcome == "ok" {
            assert_eq!(applied.get(&no), Some(&1), "cut at {cut}: line {no} ok");
        }
    }
}

#[test]
fn a_results_file_cut_anywhere_sends_no_order_twice() {
    let (sim, file, results, lines) = started();
    batch_fault(&sim, "t-1-2", json!({"kind": "dropConnection"}));
    let first = submit(&sim, &file, &results, false, false);
    assert_eq!(first.status.code(), Some(3), "{}", stderr(&first));
    let expected: BTreeMap<u64, String> = [
        "unknown", "unknown", "failed", "ok", "ok", "invalid", "ok", "ok", "ok",
    ]
    .iter()
    .zip(1..)
    .map(|(o, no)| (no, o.to_string()))
    .collect();
    assert_eq!(outcomes(&results), expected);
    sound(&sim, &lines, Some(&results), 0);
    let whole = std::fs::read(&results).unwrap();
    assert!(
        !whole.is_ascii(),
        "a record holds text that is not ASCII, so that some cuts fall inside a character"
    );
    let header = whole.iter().position(|&b| b == b'\n').unwrap();
    // Every byte of the last 200 (the last two records), every thirteenth before, and each end
    // of the first line.
    let dense = whole.len().saturating_sub(200);
    let mut cuts: Vec<usize> = (0..dense).step_by(13).chain(dense..=whole.len()).collect();
    cuts.extend([header, header + 1]);
    cuts.sort_unstable();
    cuts.dedup();
    // Cuts that left unknown a line the run had settled.
    let mut lost = 0;
    let mut checked = 0;
    // From the end: the cuts a stop would make first.
    for &cut in cuts.iter().rev() {
        std::fs::write(&results, &whole[..cut]).unwrap();
        let output = submit(&sim, &file, &results, true, false);
        let text = stderr(&output);
        if cut < header {
            // Nothing to tell the run by: refused, nothing sent.
            assert_eq!(output.status.code(), Some(2), "cut at {cut}: {text}");
            assert!(text.contains("nothing was sent"), "cut at {cut}: {text}");
            assert_eq!(std::fs::read(&results).unwrap(), &whole[..cut]);
            sound(&sim, &lines, None, cut);
            continue;
        }
        // Lines 1 and 2 are unknown whatever the cut.
        assert_eq!(output.status.code(), Some(3), "cut at {cut}: {text}");
        sound(&sim, &lines, Some(&results), cut);
        let after = outcomes(&results);
        for (no, line) in &lines {
            let outcome = after.get(no).map_or("none", String::as_str);
            let allowed: &[&str] = match (no, line) {
                (_, None) => &["invalid"],
                // Sent again when its record says failed, or unknown when lost.
                (3, _) => &["failed", "unknown"],
                _ => &["ok", "unknown"],
            };
            assert!(
                allowed.contains(&outcome),
                "cut at {cut}: line {no} {outcome}: {text}"
            );
        }
        lost += usize::from(
            after
                .iter()
                .any(|(no, o)| *no > 2 && o.as_str() == "unknown"),
        );
        // Line 3 sent again after a cut: under an id of this run's own, which no batch
        // the cut took away can have had.
        if after[&3] == "failed" {
            let id = &records(&results)[&3]["channelOrderId"];
            let tagged = if cut == whole.len() {
                "t-3-3"
            } else {
                "t-3-3-r2"
            };
            assert_eq!(id, tagged, "cut at {cut}");
        }
        // The check settles what the cut left unknown, sending again only what it shows
        // was not applied (line 3, refused again). One cut in eight, to stay quick.
        if cut % 8 == 0 || cut == whole.len() - 25 {
            checked += 1;
            let output = submit(&sim, &file, &results, true, true);
            let text = stderr(&output);
            assert_eq!(output.status.code(), Some(1), "cut at {cut}: {text}");
            sound(&sim, &lines, Some(&results), cut);
            let mut settled = expected.clone();
            settled.insert(1, "ok".into());
            settled.insert(2, "ok".into());
            assert_eq!(outcomes(&results), settled, "cut at {cut}: {text}");
        }
    }
    assert!(
        cuts.len() > 300 && checked > 40,
        "{} cuts, {checked} checked",
        cuts.len()
    );
    assert!(
        lost > 200,
        "{lost} of {} cuts left a line unknown",
        cuts.len()
    );
}

#[test]
fn a_damaged_record_is_refused_and_the_way_out_it_names_settles_the_file() {
    let (sim, file, results, lines) = started();
    let first = submit(&sim, &file, &results, false, false);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let whole = std::fs::read_to_string(&results).unwrap();
    // Line 4's record, its outcome overwritten in place.
    let at = whole.find("{\"line\":4,").unwrap();
    let damaged = whole.replacen(
        "{\"line\":4,\"outcome\":\"ok\"",
        "{\"line\":4,\"outcome\":\"o\u{0}\"",
        1,
    );
    std::fs::write(&results, &damaged).unwrap();
    let output = submit(&sim, &file, &results, true, false);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    let way_out = format!("truncate -s {} ", at + 1);
    assert!(
        text.contains(&format!(
            "o.results.jsonl:5: the record at byte {at} is damaged"
        )) && text.contains("nothing was sent")
            && text.contains(&way_out),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&results).unwrap(), damaged);
    sound(&sim, &lines, Some(&results), at);
    // The way out: cut inside that record. What followed it is then unknown, not resent.
    let status = Command::new("truncate")
        .args(["-s", &(at + 1).to_string()])
        .arg(&results)
        .status()
        .unwrap();
    assert!(status.success());
    let output = submit(&sim, &file, &results, true, false);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(
        text.contains("does not show every line that was sent (it ends inside a record")
            && text
                .contains("line(s) may have been sent in a batch the results file no longer names"),
        "{text}"
    );
    sound(&sim, &lines, Some(&results), at);
    let output = submit(&sim, &file, &results, true, true);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("checked 5 unknown line(s): 5 applied"),
        "{text}"
    );
    sound(&sim, &lines, Some(&results), at);
    let outcomes = outcomes(&results);
    assert_eq!(
        outcomes.values().filter(|o| *o == "ok").count(),
        7,
        "{outcomes:?}"
    );
}

/// No order applied more than once, and each line `ok` in `results` applied.
fn at_most_once(sim: &Sim, lines: &BTreeMap<u64, Option<String>>, results: &Path, cut: usize) {
    let applied = applied(sim, lines);
    let twice: Vec<_> = applied.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "cut at {cut}: applied twice: {twice:?}");
    for (no, outcome) in outcomes(results) {
        if outcome == "ok" {
            assert_eq!(applied.get(&no), Some(&1), "cut at {cut}: line {no} ok");
        }
    }
}

#[test]
fn a_killed_runs_file_cut_inside_any_record_sends_no_order_twice() {
    let (sim, file, results, lines) = started();
    // Lines 5 and 7 are held, never applied, until the run is killed; line 4 goes again
    // in a batch of its own after line 3's refusal, so the file records it `not_sent`
    // before `sending` and `ok`; lines 8 and 9 are never sent.
    batch_fault(&sim, "t-5-7", json!({"kind": "delay", "ms": 600_000}));
    let mut child = command(&sim, &file, &results, false, false)
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !std::fs::read_to_string(&results)
        .unwrap_or_default()
        .contains("\"outcome\":\"sending\",\"channelOrderId\":\"t-5-7\"")
    {
        assert!(started.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(2));
    }
    crate::signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let log = std::fs::read(&results).unwrap();
    let text = String::from_utf8_lossy(&log);
    assert!(
        text.contains("\"records\":0}")
            && text.contains("{\"line\":4,\"outcome\":\"not_sent\"")
            && text.contains("{\"line\":4,\"outcome\":\"ok\""),
        "{text}"
    );
    let header = log.iter().position(|&b| b == b'\n').unwrap();
    // The file as the kill left it first: lines 8 and 9 are then sent, as nothing
    // recorded them. Then, from the end, every byte inside a record in the last 100 and
    // every thirteenth before: a cut at the end of a record the run appended reads as the
    // run killed there (what cannot be told apart, and is not tried).
    let dense = log.len().saturating_sub(100);
    let cuts = std::iter::once(log.len()).chain(
        (header + 1..log.len())
            .rev()
            .filter(|&c| log[c - 1] != b'\n' && (c >= dense || c % 13 == 0)),
    );
    let mut checked = 0;
    for cut in cuts {
        std::fs::write(&results, &log[..cut]).unwrap();
        let output = submit(&sim, &file, &results, true, false);
        let text = stderr(&output);
        // Lines 5 and 7 are unknown whatever the cut.
        assert_eq!(output.status.code(), Some(3), "cut at {cut}: {text}");
        at_most_once(&sim, &lines, &results, cut);
        if cut == log.len() || cut % 6 == 0 {
            checked += 1;
            let output = submit(&sim, &file, &results, true, true);
            let text = stderr(&output);
            assert_eq!(output.status.code(), Some(1), "cut at {cut}: {text}");
            at_most_once(&sim, &lines, &results, cut);
            let settled: BTreeMap<u64, String> = (1..=9)
                .map(|no| {
                    let outcome = match no {
                        3 => "failed",
                        6 => "invalid",
                        _ => "ok",
                    };
                    (no, outcome.to_string())
                })
                .collect();
            assert_eq!(outcomes(&results), settled, "cut at {cut}: {text}");
        }
    }
    assert!(checked > 20, "{checked} checked");
    // Every order but line 3's applied, once.
    let applied = applied(&sim, &lines);
    assert!(
        applied.iter().all(|(no, n)| *n == usize::from(*no != 3)),
        "{applied:?}"
    );
}
